"""Small helpers with no concept of the game: numeric bounds of options, lazy package exports, plural
words, and reading user files (size limits, encodings, symlinks) with errors that say what to do.

May import: errors.
"""

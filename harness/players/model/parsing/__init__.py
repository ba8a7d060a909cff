"""The move parser: from a model's free text to C, D or "unreadable", with the reason. ``policy`` holds the
rules (which decision counts when a reply names several), ``decisions`` finds every place a reply names its
move, ``grammar`` compiles the regexes for a game's labels, ``words`` is the vocabulary in fifteen
languages, ``doubt`` refuses an answer followed by doubt about it, ``shorthand`` reads "DDDD" and a
handshake emoji. ``last_line`` is the strict reader a model player may choose instead (``parse.reader:
last_line``): Payne & Alloui-Cros (2025)'s rule, the label alone on the last of at least two lines. Pure: no I/O."""

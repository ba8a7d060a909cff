"""The players a built-in run plays when none are named: an eval's opponents and a tournament's field.

Kept apart from :mod:`~harness.config.presets.evaluation` and :mod:`~harness.config.presets.tournament`
(which re-export them) because the command line shows them as defaults in ``--help``, which must not wait
for the config models to load.
"""

from __future__ import annotations

DEFAULT_PANEL = ("ALLC", "ALLD", "TFT", "GRIM", "GTFT", "WSLS", "TF2T", "STFT", "RAND")
DEFAULT_PLAYERS = ("ALLC", "ALLD", "TFT", "GRIM", "GTFT", "WSLS", "TF2T", "STFT", "ALT", "RAND")

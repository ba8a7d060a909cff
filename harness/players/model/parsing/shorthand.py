"""Whole replies in shorthand: a label repeated for emphasis ("DDDD", "CCC!") and a handshake emoji alone.

Part of the move parser (:mod:`harness.players.model.parsing`). Informal replies repeat a one-letter label
the way people repeat letters ("nooo"): the repetition adds emphasis, not a second move. Only a reply that
is one label repeated and nothing else counts; "CD" (two labels) and "CCD" stay unreadable. A handshake
emoji alone (🤝, with any skin tone) offers cooperation, the one emoji with an unambiguous move; other
emoji are dropped by normalisation and read as nothing.
"""

from __future__ import annotations

import re

from harness.game.rules import Action
from harness.players.model.parsing.grammar import JUNK, Grammar

_HANDSHAKE_RE = re.compile("^[\\s.!]*\U0001f91d[\U0001f3fb-\U0001f3ff\ufe0f]*[\\s.!]*$")


def shorthand(text: str, g: Grammar) -> Action | None:
    """The move of a reply that is a handshake alone or one one-letter label repeated; else None."""
    if _HANDSHAKE_RE.match(text):
        return "C"
    core = text.strip(JUNK)
    if len(core) < 2 or len(set(core.casefold())) != 1:
        return None
    return g.lookup.get(core[0].casefold()) if core.isupper() and len(g.names[0]) == len(g.names[1]) == 1 else None

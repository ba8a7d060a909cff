"""The strict last-line reader (``parse: {reader: last_line}``): Payne & Alloui-Cros (2025)'s rule, exactly.

Their code (github.com/HCSS-Data-Lab/Strategic-LLM-IPD, ``evolutionary_PD_expanded.py``, ``make_move``) asks for
reasoning first and the move alone on the last line, and reads a reply so: the lines split at ``\\n``, each
stripped, the empty ones dropped; fewer than two lines is unreadable (no reasoning), and so is a last line that,
upper-cased, is not exactly ``C`` or ``D``. "**D**", "Move: D" and "D." on the last line are unreadable, and so
is a reply that is "D" alone, which the free-text parser would read. Replaying their protocol needs their reader:
the same reply read two ways is two different games.

With other labels (J/F), the last line upper-cased must equal one of them upper-cased. Pure code, no I/O.
"""

from __future__ import annotations

from harness.players.model.labels import ActionLabels
from harness.players.model.parsing.policy import ParseResult

METHOD = "last_line"
"""``ParseResult.method`` of a reply this reader decided (read or refused)."""


def read_last_line(text: str, labels: ActionLabels) -> ParseResult:
    """The move on the reply's last non-empty line, or why there is none (see the module docstring)."""
    lines = [line.strip() for line in text.strip().split("\n") if line.strip()]
    c, d = labels.cooperate, labels.defect
    if len(lines) < 2:
        return ParseResult(None, f"the reply needs reasoning first, then {c} or {d} alone on its last line", METHOD)
    last = lines[-1].upper()
    if last == c.upper():
        return ParseResult("C", method=METHOD)
    if last == d.upper():
        return ParseResult("D", method=METHOD)
    return ParseResult(None, f"the last line is not {c} or {d} alone", METHOD)

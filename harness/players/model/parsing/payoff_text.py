"""The option named by its payoffs instead of its label: "I'll take the option where we both get 8".

Part of the move parser (:mod:`harness.players.model.parsing`). The prompt shows each option's payoffs, so a
model may choose by describing them: "the 10-point option", "the one that gives me 10 if they choose J",
"Let's both take the 3 points again", "the option that can't leave me with 0 points". In a prisoner's
dilemma the four payoffs T > R > P > S are distinct, and each belongs to one of my moves: R and S follow my
cooperation, T and P my defection; for both players at once, R is mutual cooperation and P mutual defection.
So a payoff that the reply says I (or we both, or they) will get names one move, given the game's matrix.

Read only as a last resort (the policy calls it when no decision was found), only in a sentence where I
choose ("I'll take", "I pick", "Taking", "Let's both take"), not negated, asked or supposed; every payoff
named there must point at the same move, else nothing is read. Without the game's matrix nothing is read.
"""

from __future__ import annotations

import re

from harness.game.rules import Action, PayoffMatrix

_I = re.IGNORECASE
_CHOICE_RE = re.compile(
    r"\b(?:i(?:['’]ll|\s+will|['’]d(?:\s+rather)?|\s+would(?:\s+rather)?)?\s+(?:take|pick|choose|select|grab|go\s+(?:for|with)"
    r"|opt\s+for|play|prefer)|let['’]s\s+(?:both\s+)?(?:take|pick|go\s+for|choose)|taking|picking|choosing|selecting"
    r"|give\s+me"
    r"|going\s+(?:for|with))\b",
    _I,
)
_NOT_CHOSEN_RE = re.compile(r"(?:\b(?:not|never|no)\s+|n['’]t\s+)(?:\w+\s+){0,2}$|\b(?:if|unless|should|whether)\b", _I)
_SENTENCE_RE = re.compile(r"[^.!?\n]+[.!?]?")
_NUMBER = r"(\d+(?:\.\d+)?)"  # one group per alternative: the first that matched holds the number
# Whose payoff a phrase names: mine, both players' (the same number each), or the other player's.
_MUTUAL_RE = re.compile(
    rf"\b(?:we|us)\s+(?:both|each|all)\s+(?:get|gets|earn|receive|score|take|walk\s+away\s+with)\s+(?:the\s+)?{_NUMBER}"
    rf"|\b(?:both(?:\s+of\s+us)?|each\s+of\s+us)\s+(?:get|gets|earn|receive|score|take)\s+(?:the\s+)?{_NUMBER}"
    rf"|{_NUMBER}\s*(?:points?\s+)?(?:each|apiece|for\s+both(?:\s+of\s+us)?|for\s+each\s+of\s+us)\b"
    rf"|\b(?:gives?|earns?|pays?|gets?)\s+(?:both\s+of\s+us|us\s+both|us\s+each|each\s+of\s+us|us)\s+{_NUMBER}"
    rf"|\bmutual\s+{_NUMBER}",
    _I,
)
_MINE_RE = re.compile(
    rf"\bgives?\s+me\s+(?:the\s+)?{_NUMBER}|\bpays?\s+(?:me\s+)?{_NUMBER}"
    rf"|\b{_NUMBER}[- ]points?\s+(?:option|temptation|payoff|one)"
    rf"|\b(?:take|grab|get|keep|pocket|go\s+for|going\s+for)\s+(?:the\s+)?(?:(?:guaranteed|safe|sure|full)\s+)?"
    rf"{_NUMBER}\b(?!\s*(?:points?\s+)?each)",
    _I,
)
_MINE_AVOIDED_RE = re.compile(
    rf"\b(?:can(?:no|['’])t|won['’]t|never|doesn['’]t|does\s+not)\s+leaves?\s+me\s+(?:with\s+)?{_NUMBER}"
    rf"|\b(?:risk|avoid|risking|avoiding)\s+(?:ending\s+up\s+with|getting|being\s+left\s+with)\s+{_NUMBER}",
    _I,
)
_ALTERNATIVES_RE = re.compile(r"\d\s*(?:points?\s+)?(?:each\s+)?(?:or|/|to|-)\s*\d", _I)
_THEIRS_RE = re.compile(rf"\bleave\s+them\s+(?:with\s+)?{_NUMBER}|\bgives?\s+them\s+{_NUMBER}", _I)


def move_from_payoffs(t: str, payoffs: PayoffMatrix | None) -> Action | None:
    """The move the reply chose by naming its payoffs, or None (see the module docstring)."""
    if payoffs is None or not any(ch.isdigit() for ch in t):
        return None
    implied: set[Action] = set()
    for sentence in _SENTENCE_RE.finditer(t):
        text = sentence.group()
        choice = _CHOICE_RE.search(text)
        if choice is None or text.rstrip().endswith("?") or _NOT_CHOSEN_RE.search(text, 0, choice.start()):
            continue
        implied |= _moves_named(text[choice.start() :], payoffs)
    return implied.pop() if len(implied) == 1 else None


def _moves_named(text: str, m: PayoffMatrix) -> set[Action]:
    """Every move the payoffs named in ``text`` belong to; a number that is no payoff of its kind names none."""
    mine: dict[float, Action] = {m.R: "C", m.S: "C", m.T: "D", m.P: "D"}
    mutual: dict[float, Action] = {m.R: "C", m.P: "D"}
    theirs: dict[float, Action] = {m.cc[1]: "C", m.dc[1]: "D", m.cd[1]: "C", m.dd[1]: "D"}
    if len({m.R, m.S, m.T, m.P}) < 4 or len(theirs) < 4:
        return set()  # two outcomes share a payoff: a number may not tell the moves apart
    if _ALTERNATIVES_RE.search(text):
        return {"C", "D"}  # "gives me 3 or 5": two payoffs offered, no choice made
    found: set[Action] = set()
    spans: list[tuple[int, int]] = []
    for pattern, table, flip in (
        (_MUTUAL_RE, mutual, False),
        (_MINE_AVOIDED_RE, mine, True),
        (_THEIRS_RE, theirs, False),
    ):
        for match in pattern.finditer(text):
            spans.append(match.span())
            found |= _lookup(match, table, flip)
    for match in _MINE_RE.finditer(text):
        if not any(start <= match.start() < end for start, end in spans):
            found |= _lookup(match, mine, False)
    return found


def _lookup(match: re.Match[str], table: dict[float, Action], avoided: bool) -> set[Action]:
    """The move a matched payoff belongs to; an avoided payoff names a move only when it is the sucker's (the
    lowest of mine): avoiding it means not cooperating."""
    number = next(float(value) for value in match.groups() if value is not None)
    move = table.get(number)
    if move is None:
        return set()
    if avoided:
        return {"D"} if number == min(table) else set()
    return {move}

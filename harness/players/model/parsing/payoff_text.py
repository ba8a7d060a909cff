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
from harness.players.model.parsing.grammar import Grammar, key

_I = re.IGNORECASE
_CHOICE_RE = re.compile(
    r"\b(?:i(?:['’]ll|\s+will|['’]d(?:\s+rather)?|\s+would(?:\s+rather)?)?\s+(?:take|pick|choose|select|grab|go\s+(?:for|with)"
    r"|opt\s+for|play|prefer)|let['’]s\s+(?:both\s+)?(?:take|pick|go\s+for|choose)|taking|picking|choosing|selecting"
    r"|give\s+me|i\s+(?:go|am\s+going|['’]m\s+going)\s+(?:for|with)|i\s+want"
    r"|going\s+(?:for|with))\b"
    # a reply that is the option's description alone: "The option where we each get 3.", "Option with 10 for me."
    r"|^\s*(?:the\s+)?(?:option|one|choice)\b"
    r"|^\s*(?:the\s+)?(?:[\w-]+\s+){1,3}(?:option|one|choice)\s*(?:[.!:]|$)",  # "The mutual 3-point option."
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
    rf"|\bmutual\s+{_NUMBER}"
    rf"|\b(?:we|us)(?:['’]d|\s+would|\s+will|['’]ll)?\s+both\s+(?:get|earn|receive|score)\s+(?:the\s+)?{_NUMBER}"
    rf"|(?<![\d.])(\d+)\s*[-/]\s*(\d+)(?![\d.])",  # "the 8/8 outcome", "the 5-5 option": equal pairs only
    _I,
)
_MINE_RE = re.compile(
    rf"\bgives?\s+me\s+(?:the\s+)?{_NUMBER}|\bpays?\s+(?:me\s+)?{_NUMBER}"
    rf"|\b{_NUMBER}[- ]points?\s+(?:option|temptation|payoff|one)"
    rf"|\b(?:gets?|earns?|nets?)\s+me\s+(?:the\s+)?{_NUMBER}|\bpayoff\s+of\s+{_NUMBER}\s+(?:points?\s+)?for\s+me"
    rf"|\b(?:take|grab|get|keep|pocket|go\s+for|going\s+for)\s+(?:the\s+)?(?:(?:guaranteed|safe|sure|full)\s+)?"
    rf"{_NUMBER}\b(?!\s*(?:points?\s+)?each)"
    rf"|\bthe\s+{_NUMBER}\s+points?\b(?!\s+each)",
    _I,
)
_MINE_AVOIDED_RE = re.compile(
    rf"\b(?:can(?:no|['’])t|can\s+never|won['’]t|will\s+never|never|doesn['’]t|does\s+not)\s+"
    rf"(?:leaves?|gives?|pays?|gets?|earns?)\s+me\s+(?:with\s+)?(?:the\s+)?{_NUMBER}"
    rf"|\b(?:rather\s+than|instead\s+of)\s+risk(?:ing)?\s+(?:ending\s+up\s+with\s+|getting\s+|being\s+left\s+with\s+)?"
    rf"(?:the\s+)?{_NUMBER}"
    rf"|\b(?:avoid|avoids|avoiding)\s+(?:ending\s+up\s+with|getting|being\s+left\s+with)\s+(?:the\s+)?{_NUMBER}",
    _I,
)
# What the reader does not understand in a sentence, once the avoided payoffs above are taken out: a negation, a
# condition, a comparison or a quantifier may turn a payoff into the other move's ("the option that never
# gives me 10", "at worst 5", "whatever gives me at least 5", "8 unless they switch"), so the sentence is skipped.
_UNREAD_RE = re.compile(
    r"\b(?:not|no|never|nothing|none|neither|nor|without|n['’]t|cannot|unless|if|when|whenever|once|until|otherwise"
    r"|else|or|either|whether|except|only|least|most|worst|best|more|less|than|fewer|whatever|whichever|any|anything"
    r"|risk|risking|instead|rather|avoid|avoids|avoiding|lose|losing|regardless)\b|n['’]t\b",
    _I,
)
# The one condition the reader understands: the other player's move, named ("if they pick J", "when they
# cooperate"). Under it, a payoff of mine names the cell of that move and mine, so it must be mine in one cell only.
_CONDITION_RE = re.compile(
    r"\b(?:if|when|whenever)\s+(?:they|the\s+other(?:\s+player)?|my\s+opponent|the\s+opponent)"
    r"(?:\s+(?:also|still|too|both|each|all|do|does|will))*"
    r"(?:\s+(?:choose|chooses|pick|picks|play|plays|select|selects|go\s+(?:for|with)|goes\s+(?:for|with)"
    r"|stay\s+(?:on|with)|stays\s+(?:on|with)|take|takes)(?:\s+option)?)?\s+(?P<move>[^\W\d_]+(?:\s+me)?)",
    _I,
)
# Both players on the same option restates a mutual payoff: "if we both choose it", "if they pick the same".
_MUTUAL_CONDITION_RE = re.compile(
    r",?\s*\b(?:if|when|whenever|once)\s+(?:we\s+both|both\s+of\s+us|we\s+each)\s+(?:choose|pick|play|take|select"
    r"|go\s+for|coordinate\s+on)\s+(?:it|that\s+one|this\s+one|the\s+same)"
    r"|,?\s*\b(?:if|when)\s+(?:they|the\s+other(?:\s+player)?)\s+(?:also\s+)?(?:choose|chooses|pick|picks|play|plays"
    r"|go\s+for|goes\s+for|take|takes)\s+(?:it\s+too|it\s+as\s+well|the\s+same(?:\s+one)?)\s*,?",
    _I,
)
_ALTERNATIVES_RE = re.compile(r"\d\s*(?:points?\s+)?(?:each\s+)?(?:or|/|to|-)\s*\d", _I)
_EQUAL_PAIR_RE = re.compile(r"(?<![\d.])(\d+)\s*[-/]\s*\1(?![\d.])")
_THEIRS_RE = re.compile(rf"\bleave\s+them\s+(?:with\s+)?{_NUMBER}|\bgives?\s+them\s+{_NUMBER}", _I)


# An option described by its profile of payoffs for me, in a cell or over both cells of my move (fourth pass):
# the payoff when the other player picks the other option ("10 if they choose the other one": my move against
# theirs differs, so T or S), when we match ("8 each when we match": R or P), the worst I can get ("5 at worst",
# "at least 1", "never end up with 0": P, or not S), and both payoffs of one move ("the 10-or-5 option").
_COND_VERB = r"(?:choose|chooses|pick|picks|play|plays|go\s+(?:for|with)|goes\s+(?:for|with)|take|takes|select|selects)"
_OFF_DIAGONAL_RE = re.compile(
    rf"{_NUMBER}\s*(?:points?\s+)?(?:for\s+me\s+)?(?:if|when|whenever)\s+(?:they|the\s+other(?:\s+player)?)\s+"
    rf"(?:{_COND_VERB}\s+the\s+other(?:\s+(?:one|option))?|(?:do\s+not|don['’]t)\s+match(?:\s+me)?|pick\s+differently)"
    rf"|{_NUMBER}\s*(?:points?\s+)?(?:if|when)\s+we\s+(?:differ|mismatch|don['’]t\s+match)",
    _I,
)
_DIAGONAL_RE = re.compile(
    rf"{_NUMBER}\s*(?:points?\s+)?(?:each\s+|apiece\s+)?(?:for\s+me\s+)?(?:if|when|whenever)\s+"
    rf"(?:they\s+match(?:\s+me)?|we\s+match|(?:we\s+)?both(?:\s+of\s+us)?\s+{_COND_VERB}\s+it"
    rf"|they\s+{_COND_VERB}\s+the\s+same(?:\s+one)?)",
    _I,
)
_WORST_RE = re.compile(
    rf"\bat\s+worst\s+(?:i\s+(?:still\s+)?(?:get|earn|receive)\s+)?{_NUMBER}|{_NUMBER}\s*(?:points?\s+)?at\s+worst"
    rf"|\b(?:guarantees?|guaranteed)\s+(?:me\s+)?at\s+least\s+{_NUMBER}|\bworst[-\s]case\s+(?:of\s+)?{_NUMBER}",
    _I,
)
_NEVER_RE = re.compile(
    rf"\b(?:i\s+(?:will\s+|can\s+)?never|guarantees?\s+(?:that\s+)?i\s+(?:will\s+)?never|can(?:no|['’])t\s+ever)\s+"
    rf"(?:end\s+up\s+with|get|receive|be\s+left\s+with|walk\s+away\s+with|score)\s+(?:the\s+|just\s+)?{_NUMBER}",
    _I,
)
_PAIR_RE = re.compile(rf"(?<![\d.]){_NUMBER}\s*(?:points?\s+)?(?:-\s*or\s*-|\s+or\s+)\s*{_NUMBER}(?![\d.])", _I)


def _profiles(text: str, m: PayoffMatrix) -> tuple[set[Action], str] | None:
    """The moves the option profiles in ``text`` name, and the text without them; None when a profile's number
    is no payoff of its kind (the reader cannot tell what it means, so the reply is refused)."""
    cells: tuple[tuple[re.Pattern[str], dict[float, Action]], ...] = (
        (_OFF_DIAGONAL_RE, {m.S: "C", m.T: "D"}),
        (_DIAGONAL_RE, {m.R: "C", m.P: "D"}),
        (_WORST_RE, {m.S: "C", m.P: "D"}),
        (_NEVER_RE, {m.S: "D", m.P: "C"}),  # never the worst of one move: the other
    )
    found: set[Action] = set()
    for pattern, table in cells:
        for match in pattern.finditer(text):
            number = next(float(value) for value in match.groups() if value is not None)
            if number not in table:
                return None
            found.add(table[number])
        text = pattern.sub(" ", text)
    for match in _PAIR_RE.finditer(text):
        pair = {float(match.group(1)), float(match.group(2))}
        move: Action | None = "C" if pair == {m.R, m.S} else "D" if pair == {m.T, m.P} else None
        if move is None:
            return None  # "the option that pays 10 or 8": no option pays those two
        found.add(move)
    return found, _PAIR_RE.sub(" ", text)


def move_from_payoffs(t: str, payoffs: PayoffMatrix | None, g: Grammar) -> Action | None:
    """The move the reply chose by naming its payoffs, or None (see the module docstring)."""
    if payoffs is None or not any(ch.isdigit() for ch in t):
        return None
    implied: set[Action] = set()
    for sentence in _SENTENCE_RE.finditer(t):
        text = sentence.group()
        choice = _CHOICE_RE.search(text)
        if choice is None or text.rstrip().endswith("?") or _NOT_CHOSEN_RE.search(text, 0, choice.start()):
            continue
        profiled = _profiles(text, payoffs) if len({payoffs.R, payoffs.S, payoffs.T, payoffs.P}) == 4 else None
        if profiled is None:
            return None
        profile_moves, text = profiled
        implied |= profile_moves
        mutual = _MUTUAL_CONDITION_RE.search(text) is not None
        text = _MUTUAL_CONDITION_RE.sub(" ", text)
        conditions = list(_CONDITION_RE.finditer(text))
        bare = _CONDITION_RE.sub(" ", _MINE_AVOIDED_RE.sub(" ", text))
        if _UNREAD_RE.search(bare) or len(conditions) > 1 or (mutual and conditions):
            return None  # a word that may turn a payoff into the other move's: refuse the whole reply
        if conditions:
            theirs = g.lookup.get(key(conditions[0].group("move").removesuffix(" me")))
            if theirs is None:
                return None  # "if they go the other way": a condition the reader cannot name
            implied |= _moves_given(text[choice.start() : conditions[0].start()], theirs, payoffs)
        elif mutual:
            implied |= _moves_given(text[choice.start() :], None, payoffs)
        else:
            implied |= _moves_named(text[choice.start() :], payoffs)
    return implied.pop() if len(implied) == 1 else None


def _moves_given(text: str, theirs: Action | None, m: PayoffMatrix) -> set[Action]:
    """Under the other player's move ``theirs`` (None: the same as mine), every move of mine a payoff of mine
    names; only plain payoffs of mine ("gives me 10", "the 5 points"), and under the same move both players'
    ("we each get 5"), are read there: anything else is both moves, so nothing is read."""
    moves: tuple[Action, Action] = ("C", "D")
    mine: dict[float, Action] = {m.table()[(my, theirs or my)][0]: my for my in moves}
    if len(mine) < 2 or _THEIRS_RE.search(text) or _MINE_AVOIDED_RE.search(text):
        return {"C", "D"}
    if theirs is not None and _MUTUAL_RE.search(text):
        return {"C", "D"}
    found: set[Action] = set()
    matches = [*_MUTUAL_RE.finditer(text), *_MINE_RE.finditer(text)] if theirs is None else _MINE_RE.finditer(text)
    for match in matches:
        number = next(float(value) for value in match.groups() if value is not None)
        found |= {mine[number]} if number in mine else set(moves)
    return found


def _moves_named(text: str, m: PayoffMatrix) -> set[Action]:
    """Every move the payoffs named in ``text`` belong to; a number that is no payoff of its kind names none."""
    mine: dict[float, Action] = {m.R: "C", m.S: "C", m.T: "D", m.P: "D"}
    mutual: dict[float, Action] = {m.R: "C", m.P: "D"}
    theirs: dict[float, Action] = {m.cc[1]: "C", m.dc[1]: "D", m.cd[1]: "C", m.dd[1]: "D"}
    if len({m.R, m.S, m.T, m.P}) < 4 or len(theirs) < 4:
        return set()  # two outcomes share a payoff: a number may not tell the moves apart
    if _ALTERNATIVES_RE.search(_EQUAL_PAIR_RE.sub(" ", text)):
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
    """The move a matched payoff belongs to; an avoided payoff names the other move: each of my payoffs follows
    one of my moves only, so the option that can never give it is the other ("never gives me 0": not C)."""
    values = [float(value) for value in match.groups() if value is not None]
    if len(values) == 2 and values[0] != values[1]:
        return {"C", "D"}  # "the 10/0 outcome": whose number is first is not said
    number = values[0]
    move = table.get(number)
    if move is None:
        return set()
    if avoided:
        return {"D" if move == "C" else "C"}
    return {move}

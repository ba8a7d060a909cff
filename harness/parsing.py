"""Model free text -> a move, or the reason none could be read; and what to do when that fails.

Pure code, no I/O. Models rarely answer with a bare letter: they bold it, wrap it in JSON,
reason at length and end with "Final answer: C", or say "I will cooperate". The parser
accepts those forms and refuses anything it would have to guess at, because a guessed move
silently biases every metric computed from it; a refusal instead leads to a re-ask and, at
worst, a *flagged* fallback move that analyses can exclude.

Precedence (the first rule that fires decides; a rule that finds a contradiction refuses
rather than letting a weaker rule guess):

1. ``json``: a JSON object (bare or in a fenced block) with a key ``action``, ``move``,
   ``choice``, ``decision`` or ``answer``. Its value must name exactly one move; an invalid
   value or JSON objects that disagree are refused.
2. ``final_answer``: "Final answer/choice/move/decision: X" anywhere in a line, or
   ``\\boxed{X}``. All such lines must agree: a model that states two different final
   answers has contradicted itself, so it is refused.
3. ``answer_line``: a line that starts with "Answer/Action/Move/Choice/Decision: X"; the last
   such line wins (earlier ones are drafts or echoes of the instructions).
4. ``bare``: the whole reply is one label (markdown, quotes and punctuation stripped).
5. ``last_line``: the last line, or its last sentence, is one label (reasoning first, answer
   last: "...so I keep trusting them. C").
6. ``first_line``: the first line, or its first sentence, is one label (answer first,
   explanation after: "C - to keep building trust"). Rules 5 and 6 are refused when a
   statement (rule 7) in the same reply names the other move.
7. ``statement``: "I will / I'll / I choose (to) / I decide to / my move is ... X". Every such
   statement must agree; statements in a hypothetical ("if I defect, ...") or a question
   are ignored.

Labels are matched case-insensitively with letter boundaries, so "Decision" never reads as
D and "CD" is no move. Inside free prose (rule 7) a one-letter label must be written in its
own case, because lower-case one-letter words ("a", "i") are ordinary English.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from harness.game import Action

Move = Literal["C", "D", "both"]
FailureMode = Literal["defect", "cooperate", "random", "fail"]

_JUNK = " \t\r\n*_`~#>\"'“”‘’()[]{}<>.,!?:;-–—|"  # markdown, quotes, brackets, punctuation
_JSON_KEYS = frozenset({"action", "move", "choice", "decision", "answer", "final_answer", "your_move", "my_move"})
_KEYS = r"(?:answer|action|move|choice|decision|response)"
_FINAL_RE = re.compile(
    rf"(?<![^\W_])final\s+{_KEYS}\s*[*_]*\s*(?:[:=]|is\b:?|will\s+be\b:?)(?P<value>.*)$", re.IGNORECASE
)
_BOXED_RE = re.compile(r"\\boxed\{\s*(?:\\text(?:bf)?\{)?(?P<value>[^{}]*)", re.IGNORECASE)
_LINE_RE = re.compile(rf"^[\s>#*_\-+•]*(?:\d+[.)]\s*)?(?:my\s+)?{_KEYS}\s*[*_]*\s*[:=](?P<value>.*)$", re.IGNORECASE)
_PREFIX_RE = re.compile(r"^(?:(?:option|action|move|to)\s+)+", re.IGNORECASE)
_SEPARATOR = r"[\s*_`'\"“”)\]]*(?:/|\\|\||,|&|\+|-|–|\bor\b|\band\b|\bvs\b\.?|\bversus\b)[\s*_`'\"“”(\[]*"
_SUBJECT = r"""
    (?<![^\W_])
    (?:
        i(?:\s+will|\s+shall|['’]ll|\s+am\s+going\s+to|['’]m\s+going\s+to|\s+want\s+to|\s+would\s+like\s+to)
         (?:\s+(?:definitely|certainly|probably|now|again|also|still|just|therefore|thus|then))?
         (?:\s+(?:choose|pick|select|play|go\s+with|opt\s+for|stick\s+with|stay\s+with|continue\s+to
                |keep|respond\s+with|answer\s+with|reply\s+with|say))?
      | i(?:\s+am|['’]m)\s+(?:choosing|picking|playing|going\s+with|sticking\s+with)
      | i\s+(?:choose|pick|select|play|opt\s+for|decide|have\s+decided|decided|go\s+with)
      | my\s+(?:final\s+)?(?:move|choice|action|decision|answer|response)\s+(?:is|will\s+be)
    )
    (?:\s+to)?\s*:?\s*[*_`'"“]*
"""
_SEGMENT_RE = re.compile(r"(?<=[.!?])\s+|\s+[-—–]\s+")
_HYPOTHETICAL_RE = re.compile(
    r"\b(?:if|whether|unless|suppose|supposing|assuming|imagine|hypothetically)\b", re.IGNORECASE
)


@dataclass(frozen=True, slots=True)
class ActionLabels:
    """What the two moves are called in prompts and replies.

    The default C/D also accepts the words "cooperate"/"defect". Neutral labels (the
    literature uses J/F to avoid priming) are matched as themselves only: the parser never
    maps "cooperate" or "defect" onto them, so a primed answer cannot sneak through.
    """

    cooperate: str = "C"
    defect: str = "D"
    cooperate_words: tuple[str, ...] = ("cooperate", "cooperation", "cooperating")
    defect_words: tuple[str, ...] = ("defect", "defection", "defecting")

    def __post_init__(self) -> None:
        for name in ("cooperate", "defect"):
            _check_label(name, getattr(self, name))
        if self.cooperate.casefold() == self.defect.casefold():
            raise ValueError(f"the two labels must differ (ignoring case), both are {self.cooperate!r}")
        for words in (self.cooperate_words, self.defect_words):
            if any(not isinstance(w, str) or not w.strip() for w in words):
                raise ValueError("cooperate_words and defect_words must be non-empty strings")
        if {w.casefold() for w in self.cooperate_words} & {w.casefold() for w in self.defect_words}:
            raise ValueError("cooperate_words and defect_words must not share a word")

    @property
    def uses_words(self) -> bool:
        """True for the default C/D labels: only then do "cooperate"/"defect" count as moves."""
        return self.cooperate.casefold() == "c" and self.defect.casefold() == "d"

    def label(self, action: Action) -> str:
        """The label shown to the model for a canonical move."""
        return self.cooperate if action == "C" else self.defect


def _check_label(name: str, value: object) -> None:
    """Labels must survive stripping markdown and punctuation, hence alphanumeric ends."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"the {name} label must be a non-empty string, got {value!r}")
    if not (value[0].isalnum() and value[-1].isalnum()):
        raise ValueError(f"the {name} label {value!r} must begin and end with a letter or digit")


@dataclass(frozen=True, slots=True)
class ParseResult:
    """A canonical move, or ``reason`` why none was read. ``method`` names the rule that decided."""

    action: Action | None
    reason: str | None = None
    method: str | None = None

    @property
    def ok(self) -> bool:
        return self.action is not None


@dataclass(frozen=True, slots=True)
class ParsePolicy:
    """How hard to try: ``max_retries`` re-asks after the first failed parse, then ``on_failure``.

    The default counts an unreadable reply as D and flags the round, which keeps a game
    going while letting analyses drop flagged rounds; ``fail`` stops the game instead.
    """

    max_retries: int = 2
    on_failure: FailureMode = "defect"

    def __post_init__(self) -> None:
        if isinstance(self.max_retries, bool) or not isinstance(self.max_retries, int) or self.max_retries < 0:
            raise ValueError(f"max_retries must be an integer >= 0, got {self.max_retries!r}")
        if self.on_failure not in ("defect", "cooperate", "random", "fail"):
            raise ValueError(f"on_failure must be defect, cooperate, random or fail, got {self.on_failure!r}")


def fallback_action(policy: ParsePolicy, rng: random.Random) -> Action | None:
    """The move played after the last failed attempt, or None when the game must fail."""
    if policy.on_failure == "defect":
        return "D"
    if policy.on_failure == "cooperate":
        return "C"
    if policy.on_failure == "random":
        return rng.choice(("C", "D"))
    return None


def correction_message(result: ParseResult, labels: ActionLabels) -> str:
    """The re-ask sent after a failed parse; names the moves only by their labels when neutral."""
    head = f"I could not tell your move: {result.reason}." if result.reason else "I could not tell your move."
    c, d = labels.cooperate, labels.defect
    if labels.uses_words:
        return f"{head} Reply with exactly one letter: {c} to cooperate or {d} to defect."
    return f"{head} Reply with exactly one of {c} or {d}."


# --- grammar -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Grammar:
    """The regexes for one set of labels, compiled once."""

    lookup: dict[str, Action]
    start: re.Pattern[str]  # a token at the start of a value (any case)
    whole: re.Pattern[str]  # a whole line that is one token
    alternative: re.Pattern[str]  # "/ D", " or defect": a second move right after the first
    statement: re.Pattern[str]  # "I will cooperate", "my move is D"
    mention: re.Pattern[str]  # a label anywhere in prose, for the failure reason
    names: tuple[str, str]


def _token(alternatives: list[str], group: str) -> str:
    """A move token bounded by non-alphanumerics, so "Decision" holds no D and "I'd" no d."""
    return rf"(?<![^\W_])(?<![^\W_]['’])(?P<{group}>{'|'.join(alternatives)})(?![^\W_])(?!['’][^\W_])"


@lru_cache(maxsize=64)
def _grammar(labels: ActionLabels) -> _Grammar:
    lookup: dict[str, Action] = {labels.cooperate.casefold(): "C", labels.defect.casefold(): "D"}
    if labels.uses_words:
        lookup.update({w.casefold(): "C" for w in labels.cooperate_words})
        lookup.update({w.casefold(): "D" for w in labels.defect_words})
    keys = sorted(lookup, key=len, reverse=True)
    loose = [re.escape(k) for k in keys]
    prose = [f"(?-i:{re.escape(k.upper())})" if len(k) == 1 else re.escape(k) for k in keys]
    label_only = [re.escape(labels.cooperate), re.escape(labels.defect)]
    flags = re.IGNORECASE
    return _Grammar(
        lookup=lookup,
        start=re.compile(_token(loose, "tok"), flags),
        whole=re.compile(rf"(?:i\s+|option\s+)?{_token(loose, 'tok')}", flags),
        alternative=re.compile(_SEPARATOR + _token(loose, "alt"), flags),
        statement=re.compile(_SUBJECT + _token(prose, "tok"), flags | re.VERBOSE),
        mention=re.compile(_token(label_only, "tok")),
        names=(labels.cooperate, labels.defect),
    )


# --- rules -------------------------------------------------------------------------------


def parse_action(text: str, labels: ActionLabels) -> ParseResult:
    """Read the move a model chose from its reply; see the module docstring for the rules."""
    if not text or not text.strip(_JUNK):
        return ParseResult(None, "the reply was empty")
    g = _grammar(labels)
    for rule in (_by_json, _by_final_answer, _by_answer_line, _by_bare_text, _by_statement):
        result = rule(text, g)
        if result is not None:
            return result
    return ParseResult(None, _no_move_reason(text, g))


def _decide(moves: list[Move], method: str, g: _Grammar, conflict: str) -> ParseResult | None:
    """One move if all ``moves`` agree, a refusal (``conflict`` with {c}, {d}) if not, None if none."""
    if not moves:
        return None
    distinct = set(moves)
    if len(distinct) == 1 and "both" not in distinct:
        return ParseResult("C" if "C" in distinct else "D", method=method)
    return ParseResult(None, conflict.format(c=g.names[0], d=g.names[1]), method)


def _by_json(text: str, g: _Grammar) -> ParseResult | None:
    moves: list[Move] = []
    for obj in _json_objects(text):
        for key, value in _move_fields(obj):
            move = _value_move(value, g) if isinstance(value, str) else None
            if move is None:
                reason = f"the JSON field {key!r} holds neither {g.names[0]} nor {g.names[1]}"
                return ParseResult(None, reason, "json")
            moves.append(move)
    return _decide(moves, "json", g, "the JSON in the reply names both {c} and {d}")


def _json_objects(text: str) -> Iterator[dict[object, object]]:
    """Every top-level JSON object in the text, fenced or not."""
    decoder = json.JSONDecoder()
    pos = text.find("{")
    while pos != -1:
        try:
            obj, end = decoder.raw_decode(text, pos)
        except ValueError:
            pos = text.find("{", pos + 1)
            continue
        if isinstance(obj, dict):
            yield obj
        pos = text.find("{", end)


def _move_fields(obj: dict[object, object]) -> Iterator[tuple[object, object]]:
    """The move-like fields of an object and of the objects nested in it ({"response": {...}})."""
    for key, value in obj.items():
        if isinstance(value, dict):
            yield from _move_fields(value)
        elif str(key).strip().casefold().replace(" ", "_") in _JSON_KEYS:
            yield key, value


def _by_final_answer(text: str, g: _Grammar) -> ParseResult | None:
    lines = text.splitlines()
    moves: list[Move] = []
    for i, line in enumerate(lines):
        for match in (*_FINAL_RE.finditer(line), *_BOXED_RE.finditer(line)):
            move = _value_move(_value_or_next_line(match.group("value"), lines, i), g)
            if move is not None:
                moves.append(move)
    return _decide(moves, "final_answer", g, "the reply gives both {c} and {d} as its final answer")


def _by_answer_line(text: str, g: _Grammar) -> ParseResult | None:
    lines = text.splitlines()
    last: Move | None = None
    for i, line in enumerate(lines):
        match = _LINE_RE.match(line)
        if match:
            last = _value_move(_value_or_next_line(match.group("value"), lines, i), g) or last
    return None if last is None else _decide([last], "answer_line", g, "the answer line names both {c} and {d}")


def _value_or_next_line(value: str, lines: list[str], i: int) -> str:
    """'Final answer:' followed by the answer on the next non-empty line is common."""
    if value.strip(_JUNK):
        return value
    return next((line for line in lines[i + 1 :] if line.strip(_JUNK)), "")


def _by_bare_text(text: str, g: _Grammar) -> ParseResult | None:
    move = _bare(text, g)
    if move is not None:
        return ParseResult(move, method="bare")
    lines = [line for line in text.splitlines() if line.strip(_JUNK)]
    for method, segment in (("last_line", _segments(lines[-1])[-1]), ("first_line", _segments(lines[0])[0])):
        move = _bare(segment, g)
        if move is not None:
            return _cross_check(move, method, text, g)
    return None


def _segments(line: str) -> list[str]:
    """A line cut at sentence ends and dashes: "...so I pick. D" and "C - to build trust"."""
    return [s for s in _SEGMENT_RE.split(line) if s.strip(_JUNK)] or [line]


def _cross_check(move: Action, method: str, text: str, g: _Grammar) -> ParseResult:
    """A label alone on a line is a weaker sign than a statement, so they must not disagree."""
    stated = set(_statements(text, g))
    if stated and stated != {move}:
        return ParseResult(None, f"the reply gives both {g.names[0]} and {g.names[1]} as your move", method)
    return ParseResult(move, method=method)


def _bare(text: str, g: _Grammar) -> Action | None:
    match = g.whole.fullmatch(text.strip(_JUNK))
    return g.lookup[match.group("tok").casefold()] if match else None


def _by_statement(text: str, g: _Grammar) -> ParseResult | None:
    return _decide(_statements(text, g), "statement", g, "the reply states both {c} and {d} as your move")


def _statements(text: str, g: _Grammar) -> list[Move]:
    """Moves announced in first-person statements, skipping hypotheticals and questions."""
    moves: list[Move] = []
    for match in g.statement.finditer(text):
        if _is_hypothetical(text, match.start(), match.end()):
            continue
        moves.append(_with_alternative(g.lookup[match.group("tok").casefold()], text[match.end() :], g))
    return moves


def _is_hypothetical(text: str, start: int, end: int) -> bool:
    """ "If I choose D, ..." and "Should I pick C?" announce nothing."""
    sentence_start = max(text.rfind(ch, 0, start) for ch in ".!?;\n") + 1
    if _HYPOTHETICAL_RE.search(text[sentence_start:start]):
        return True
    ends = [i for i in (text.find(ch, end) for ch in ".!?\n") if i != -1]
    return bool(ends) and text[min(ends)] == "?"


def _value_move(value: str, g: _Grammar) -> Move | None:
    """The move a value names: a leading token ("C", "**D**", "to defect") or a statement."""
    s = _PREFIX_RE.sub("", value.strip(_JUNK), count=1)
    match = g.start.match(s)
    if match is None:
        bare = _bare(s, g)
        if bare is not None:
            return bare
        moves = _statements(s, g)
        return None if not moves else moves[0] if len(set(moves)) == 1 else "both"
    return _with_alternative(g.lookup[match.group("tok").casefold()], s[match.end() :], g)


def _with_alternative(move: Action, rest: str, g: _Grammar) -> Move:
    """'C or D', 'C/D', 'cooperate or defect' name both moves and so choose neither."""
    alt = g.alternative.match(rest)
    if alt and g.lookup[alt.group("alt").casefold()] != move:
        return "both"
    return move


def _no_move_reason(text: str, g: _Grammar) -> str:
    """Say what was wrong, so the re-ask can point at it."""
    found = {g.lookup[m.group("tok").casefold()] for m in g.mention.finditer(text)}
    c, d = g.names
    if len(found) == 2:
        return f"the reply mentions both {c} and {d} but never says which one you play"
    if found:
        return f"the reply mentions {c if 'C' in found else d} but does not clearly state it as your move"
    return f"the reply names neither {c} nor {d}"

"""Fields beside a structured answer that doubt it: {"move": "D", "final": false}, "confidence: low".

Part of the move parser (:mod:`harness.players.model.parsing`). A model that answers in JSON or in "key: value"
lines may mark its own answer as unsure in another field: a flag ("final": false, "tentative": true, "draft":
true, "certain": "no"), a level ("confidence": "low", 0.3, "50%", "3/10"), a status ("status": "undecided") or a
note that says so in words ("note": "not sure, may switch"). Such an answer has not been chosen, and the parsing
policy's first rule is to refuse rather than guess, so the reply is refused. A field that affirms the answer
("final": true, "confidence": 0.9) or says nothing about it changes nothing.

The same judgement reads JSON objects (``object_doubts``) and "key: value" lines after the answer
(``lines_doubt``), so "move: D / final: false" and {"move": "D", "final": false} are read alike.
"""

from __future__ import annotations

import re

from harness.players.model.parsing.doubt import doubts_answer


def _set(names: str) -> frozenset[str]:
    return frozenset(names.split())


# Flags that affirm the answer when true: false, "no" or 0 doubts it.
_AFFIRMING = _set(
    "final is_final final_answer_ready confident is_confident certain is_certain sure is_sure committed decided"
    " is_decided locked locked_in definitive firm confirmed is_confirmed"
)
# Flags that doubt the answer when true.
_DOUBTING = _set(
    "tentative is_tentative draft is_draft provisional is_provisional preliminary unsure uncertain undecided"
    " hesitant needs_review pending placeholder may_change subject_to_change"
)
_LEVELS = _set("confidence certainty conf confidence_level certainty_level sureness confidence_score")
_STATUSES = _set("status state stage")
# A level or status in words that is not confident enough to count as a choice.
_LOW_WORDS = _set(
    "low very_low medium moderate mid middling meh unsure uncertain undecided none so_so shaky weak tentative"
    " draft pending provisional preliminary unconfirmed open not_final"
)
_FALSE = _set("false no n 0 not_yet not_really nope")
_TRUE = _set("true yes y 1")
# Reasoning written before the answer may weigh doubts the answer then settles; after it, it is a note.
_REASONING = _set("reasoning reason rationale explanation thoughts thinking analysis why justification strategy")
_NUMBER_RE = re.compile(r"^(\d+(?:\.\d+)?)\s*(%|/\s*(\d+(?:\.\d+)?))?$")
_CONFIDENT_SHARE = 0.7  # a confidence below this share of its scale doubts the answer
# A "key: value" line: "final: false", "- Confidence: low", "Status = draft".
_LINE_RE = re.compile(
    r"^[ \t>*_\-•#\"']*(?P<key>[^\W\d][\w \-]{1,30}?)[ \t*_\"']*[:=][ \t*_\"']*(?P<value>[^\n,;{}\"']{1,30}?)"
    r"[ \t*_\"'.]*$",
    re.MULTILINE,
)


def _name(text: str) -> str:
    return "_".join(text.strip().casefold().replace("-", " ").split())


def _share(value: str) -> float | None:
    """A number as a share of its scale: 0.3 -> 0.3, "50%" -> 0.5, "3/10" -> 0.3, 85 -> 0.85, 6 -> 0.6."""
    match = _NUMBER_RE.match(value.strip())
    if match is None:
        return None
    number = float(match.group(1))
    if match.group(2) == "%":
        return number / 100
    if match.group(3):
        scale = float(match.group(3))
        return number / scale if scale else None
    if number <= 1:
        return number
    return number / 10 if number <= 10 else number / 100 if number <= 100 else None


def field_doubts(field: str, value: object) -> bool:
    """Whether one field beside the answer marks it as unsure; ``value`` as JSON decodes it or as a line writes it."""
    name = _name(field)
    text = _name(str(value)) if not isinstance(value, bool) else ("true" if value else "false")
    if name in _AFFIRMING:
        return text in _FALSE
    if name in _DOUBTING:
        return text in _TRUE
    if name in _LEVELS:
        if text in _LOW_WORDS:
            return True
        share = _share(str(value)) if not isinstance(value, bool) else None
        return share is not None and share < _CONFIDENT_SHARE
    if name in _STATUSES:
        return text in _LOW_WORDS
    return False


def object_doubts(obj: dict[object, object], move_keys: frozenset[str], after_move: bool = False) -> bool:
    """Whether a JSON object (or one nested in it) marks its answer as unsure, in a flag, a level, a status or a
    note; the move fields themselves (``move_keys``) are not read here."""
    for field, value in obj.items():
        name = _name(str(field))
        if isinstance(value, dict):
            if object_doubts(value, move_keys, after_move):
                return True
            continue
        if name in move_keys:
            after_move = True
            continue
        if field_doubts(name, value):
            return True
        if isinstance(value, str) and (after_move or name not in _REASONING) and doubts_answer(value, 0):
            return True  # "note": "honestly could go either way"
    return False


def lines_doubt(t: str, after: int) -> bool:
    """Whether a "key: value" line after position ``after`` marks the answer as unsure ("final: false")."""
    return any(field_doubts(m.group("key"), m.group("value")) for m in _LINE_RE.finditer(t, after))

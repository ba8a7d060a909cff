"""Where a reply names its move: every decision, with its position (rules 1 to 4 of the parsing policy).

Part of the move parser. What to make of the decisions found (revisions, agreement) is decided
in harness.players.model.parsing.policy; this module only finds them and drops what is not a decision.
"""

from __future__ import annotations

import ast
import itertools
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from harness.game.rules import Action
from harness.players.model.parsing import words
from harness.players.model.parsing.fields import object_doubts
from harness.players.model.parsing.grammar import (
    BOXED_RE,
    CLAUSE_END_RE,
    CLAUSE_START_RE,
    DOUBT_LEAD_RE,
    DOUBT_RE,
    EMBEDDED_RE,
    FOREIGN_JSON_KEY_RE,
    FOREIGN_KEY_RE,
    GENERIC_KEY_RE,
    GLOSS_RE,
    HEDGE_AFTER_RE,
    HEDGE_BEFORE_RE,
    HYPOTHETICAL_AFTER_RE,
    HYPOTHETICAL_BEFORE_RE,
    JUNK,
    LATE_NEGATION_RE,
    LATER_RE,
    LOOSE_FIELD_RE,
    MARKUP,
    NEGATED_LEAD_RE,
    NEGATION_AFTER_RE,
    NEGATION_BEFORE_RE,
    NEGATION_IN_CLAUSE_RE,
    OTHER_PLAYER_RE,
    PREFIX_RE,
    REVISION_AFTER_RE,
    ROUND_BOUND_RE,
    ROUND_KEY_RE,
    SECOND_THOUGHTS_RE,
    SENTENCE_END_RE,
    SPLIT_RE,
    THINK_BLOCK_RE,
    THINK_CLOSE_RE,
    VALUE_END_RE,
    VALUE_GLOSS_RE,
    WORD_RE,
    XML_RE,
    Grammar,
    key,
)

Move = Literal["C", "D", "both"]

_HYPOTHETICAL_MODAL_RE = re.compile(r"\s+(?:would|could|might)\b", re.IGNORECASE)  # "D would be greedy"
# A label alone is short once its gloss is cut: "On second thought, all things considered: C." fits.
# Longer sentences are not tried, which keeps long reasoning cheap to read.
_ALONE_MAX = 80
# What a loose label's few words never hold: keys, tags, objects, formulas, lines, Chinese, Japanese, Korean.
_NOT_LOOSE_RE = re.compile(r"[:=<>{}\[\]\n/\\|#@$^&+~;?\d\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_NEGATIONS = frozenset({"not", "no", "never", "nicht", "non", "niet", "не"})  # may lead a label: "Not D."
_NEGATIONS_EITHER = _NEGATIONS | {"either"}
_UNLESS_RE = re.compile(r"\b(?:unless|except\s+if)\s+(?:(?:the\s+)?option\s+)?[*_`'\"]*$", re.IGNORECASE)
# A label followed by a verb in the third person is the subject of a comment: "F limits my downside".
_THIRD_PERSON_RE = re.compile(
    r"(?!(?:this|thanks|thx|pls|plz|plus|yes|always|as|is|was|has|does|guys|folks|cheers|obvs|srs)\b)[a-z]+[^\Wsiu]s\b"
)  # not "guess", "thus", "this": a verb in the third person ends in -s after another letter
# Words that keep a closing phrase from introducing the answer: a doubt, a condition, a modal, a negation.
_CLOSING_BLOCK = frozenset(
    [
        "maybe",
        "perhaps",
        "possibly",
        "if",
        "unless",
        "when",
        "whenever",
        "whether",
        "or",
        "either",
        "nor",
        "not",
        "never",
        "no",
        "would",
        "could",
        "might",
        "should",
        "may",
        "can",
        "otherwise",
        "else",
        "open",
        "considering",
        "tempted",
        "torn",
        "unsure",
    ]
)
# What may join a label to itself repeated: "J, definitely J", "D. D!", "C... yes, C".
_REPEAT_GLUE_RE = re.compile(
    r"[\s,.!…*_`'\"-]*(?:(?:yes|yeah|definitely|certainly|surely|absolutely|really|again|for\s+sure|just|only|simply)"
    r"[\s,.!…*_`'\"-]*)*",
    re.IGNORECASE,
)
# An arrow from a key naming the other player: "Opponent → D" is theirs ("They defected last round → D" is mine).
_SHORT_FOREIGN_KEY_RE = re.compile(
    r"[\s*_`>#-]*(?:the\s+|their\s+)?(?:opponent|opp|other(?:\s+player)?|they|them|partner|player\s+b)(?:['’]s)?"
    r"(?:\s+(?:move|choice|action|pick))?[\s*_`:]*",
    re.IGNORECASE,
)
# "D (revised from C)": the other move named as the one given up.
_REVISED_FROM_RE = re.compile(
    r"\b(?:revised|changed|switched|updated|moved|corrected|changing|switching|was)\s+from\s+(?:option\s+)?[*_`'\"]*$",
    re.IGNORECASE,
)
# "D (edit: C)": a gloss that corrects the label before it.
_GLOSS_REVISION_RE = re.compile(
    r"\s*(?:edit(?:ed)?|correction|corrected|update[d]?|revised|i\s+meant|make\s+(?:that|it)|actually)(?!\s*from\b)\s*[:,—–-]?\s*",
    re.IGNORECASE,
)
_ONE_LETTER_WORDS = frozenset("aiou")
_FILLER_RE = re.compile(words.FILLERS, re.IGNORECASE)  # never a label in a reply written in lower case
# An answer said to be this round's: "C this round.", "D for now", "Option F now."
_PRESENT_RE = re.compile(
    r"[ \t*_`'\")]*(?:\([^()\n]{1,12}\)[ \t]*)?(?:for\s+)?(?:this\s+(?:round|time|turn)|now|today|right\s+now)"
    r"\b(?!\s+on\b)",
    re.IGNORECASE,
)
_ROUND_MENTION_RE = re.compile(
    r"\bround\s*#?\d+|\b(?:last|final)\s+round|\d+\s*(?:st|nd|rd|th)?\s+round", re.IGNORECASE
)
_MARKER_LEAD_RE = re.compile(rf"[\s*_`]*(?:{words.SECOND_THOUGHTS})", re.IGNORECASE)
_OR_NEXT_RE = re.compile(r"[\s.,;…]*\b(?:or|nor)\s+(?:option\s+)?", re.IGNORECASE)
_EITHER_RE = re.compile(r"\s+either\b", re.IGNORECASE)
# "I don't want to defect, but I don't want to be exploited either": the other move refused in other words.
_EITHER_LATER_RE = re.compile(
    r"[^.!?;\n]*?\bbut\b[^.!?;\n]*?(?:\bnot\b|n['’]t\b|\bnever\b)[^.!?;\n]*?\beither\b", re.IGNORECASE
)
# Japanese kana, Korean, Hindi, and the Turkish verbs "seçiyorum"/"oynuyorum": the verb comes after the move.
_VERB_AFTER_SCRIPT_RE = re.compile(
    rf"[\u3040-\u30ff\uac00-\ud7af\u0900-\u097f]|seç|oyn|\b{words.MY_CHOICE}", re.IGNORECASE
)
_ARROW_AFTER_RE = re.compile(r"[ \t]*(?:=>|->|→|⇒|>>)")
_ALONE_MAX_GLOSSED = 240
_PLAN_LEAD_MAX = 32  # how far into the clause after a comma its move may stand: "back to J next round"
_SUBJECTLESS_FROM = 2  # the grammar's statements after the subject ones: self-statements, then verbs after
_REJECT_LEAD_RE = re.compile(
    r"(?:(?:definitely|certainly|absolutely|clearly|surely)\s+)?(?:not|never|no(?:\s+more)?|zero|niet|geen|nicht|kein"
    r"|keine|non|не|nie|nunca|jamais|pas\s+de)\s+(?:option\s+)?",
    re.IGNORECASE,
)
_REJECT_REST_RE = re.compile(
    r"(?P<mid>(?:[ \t]+[^\W\d_]+){0,4}?)[ \t]*[,:;—–-][ \t]*(?:(?:but(?:\s+rather)?|rather|instead|maar|sondern|sino|ma"
    r"|mais|mas|а|но)[ \t]+)?(?:option[ \t]+)?",
    re.IGNORECASE,
)
# A key whose last clause refuses a move: "They keep exploiting me, so no more C: D".
_KEY_TAIL_RE = re.compile(r"[,;][ \t]*(?:(?:so|and|thus|hence|therefore|then)[ \t]+)?(?P<tail>[^,;]+)$", re.IGNORECASE)
# Words after a loose label that only place it in this round: "No defection from me this round."
_TAIL_FILLER_RE = re.compile(
    r"\b(?:(?:from|for)\s+me|this\s+(?:round|time|turn)|today|again|now|fingers\s+crossed(?:\s+(?:it|this)\s+works)?)\b",
    re.IGNORECASE,
)
# A key that concedes, then commits: "I'm not totally certain, and C is tempting, but I'll commit: D".
_BUT_TAIL_RE = re.compile(r"\bbut\s+(?P<tail>[^,;]+)$", re.IGNORECASE)
_NEGATED_KEY_RE = re.compile(
    r"(?:no|not|never|no\s+more)\s+\S+(?:\s+(?:from|for)\s+me)?(?:\s+[^\W\d_]+)?$", re.IGNORECASE
)
# An arrow pointing back at the label from a word that says it is the answer: "C <- my move", "D <-- final".
_POINTER_RE = re.compile(
    r"[ \t]*(?:<-+|<=+|←+)[ \t]*(?:(?:my|the|final|move|choice|answer|pick|decision|this|one|here)\b[ \t]*)+[.!]*$",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Decision:
    """One place where the reply names its move; ``method`` names the kind (see the parsing policy)."""

    start: int
    end: int
    move: Move
    method: str
    revises: bool = False  # an answer or final-answer line replaces what came before it
    weak: bool = False  # never replaces anything: "I'd cooperate", "in round 10 I'll defect"
    round_bound: bool = False  # tied to a numbered or last round: after an answer for this round, a plan


class InvalidStructure(Exception):
    """A structured answer that is wrong in itself: a JSON move field that names no single move."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def answer_part(text: str) -> str:
    """Rule 1: the reply without its reasoning blocks when anything else is left; else all of it."""
    if "</" not in text:
        return text
    rest = THINK_BLOCK_RE.sub(" ", text)
    closes = list(THINK_CLOSE_RE.finditer(rest))
    if closes:
        rest = rest[closes[-1].end() :]
    return rest if rest.strip(JUNK) else text


def whole_reply(t: str, g: Grammar) -> Decision | None:
    """The common short replies, read directly: one label, one JSON object, or a last "Key: label" line (or
    the last sentence of a one-line reply, when nothing before it is keyed: see :func:`_last_sentence_start`).

    The general reading would find exactly this one decision in force: the first two are the
    whole reply, and an answer line revises everything before it (rule 5) while nothing follows
    the last line. Reading them directly keeps the common case cheap: "I will cooperate this round.
    Final answer: C" costs a sixth of what the general reading does.
    """
    alone = _label_alone(t, 0, len(t), g)
    if alone is not None and alone[0] != "both":
        return Decision(0, alone[2], alone[0], "bare")  # ends at the label: doubt may follow it ("D. Hmm.")
    body = t.strip()
    if body.startswith("```"):
        body = body.strip("`").removeprefix("json").strip()
    if body.startswith("{") and body.endswith("}"):
        try:
            obj = _DECODER.decode(body)
        except ValueError:
            return None
        moves = {move for _, move in _move_fields(obj, g)} if isinstance(obj, dict) else set()
        if len(moves) != 1:
            return None
        _refuse_doubt(obj, g)
        return Decision(0, len(t), moves.pop(), "json")
    if ":" not in body and "=" not in body:
        return None
    last = body[body.rfind("\n") + 1 :]
    if last != body and ("{" in body or "<" in body):
        return None  # a JSON field or a tag before it may refuse the reply, or be more than it seems
    keyed = g.key_value.fullmatch(last)
    if keyed is None and last == body and (start := _last_sentence_start(body, g)) is not None:
        keyed = g.key_value.fullmatch(body, start)  # "I will cooperate this round. Final answer: C"
    if keyed is None:
        return None
    return Decision(0, len(t), g.lookup[key(keyed.group("tok"))], "final_answer" if keyed["final"] else "answer_line")


def _last_sentence_start(body: str, g: Grammar) -> int | None:
    """Where a one-line reply's last sentence starts, when what comes before it holds no key, tag, object or
    arrow (whose value could run on into that sentence): then a "Key: label" sentence there is an answer line
    at a sentence start, the reply's last decision, and revises every one before it (rule 5), as when it is
    the last line. None: the reply is one sentence, or its start may hold more than it seems."""
    cut = max(body.rfind(". "), body.rfind("! "), body.rfind("? "))
    if cut == -1:
        return None
    before = body[:cut]
    if any(mark in before for mark in ":=>→⇒{<") or "boxed" in before or g.final.search(before):
        return None
    return cut + 1


def find_decisions(t: str, g: Grammar) -> list[Decision]:
    """Rules 3 and 4: every decision in the reply, in no particular order.

    Raises InvalidStructure for a JSON move field that names no single move.
    """
    found: list[Decision] = []
    taken: list[tuple[int, int]] = []  # what a decision was read from, so nothing is read twice
    _structured(t, g, found, taken)
    lower = t.lower()
    keyed = (
        (g.final, "final_answer", any(gate in lower for gate in words.FINAL_GATES)),
        (BOXED_RE, "final_answer", "boxed" in t),
        (g.answer_line, "answer_line", ":" in t or "=" in t),
    )
    for pattern, method, possible in keyed:
        for match in pattern.finditer(t) if possible else ():
            if _inside(match.start(), taken):
                continue
            value, at = _value_or_next_line(t, match)
            move, used = _value(value, g)
            if move is not None:
                taken.append((match.start(), at + used))
                found.append(Decision(match.start(), at + used, move, method, revises=True))
    if ":" in t or "=" in t or "→" in t or "⇒" in t or "->" in t or ">>" in t:
        _generic_keys(t, g, found, taken)
    # refusals first: "I won't defect" holds no "will defect", "я не буду сотрудничать" no "буду сотрудничать"
    for match in g.negated.finditer(t):
        start, end = match.span("tok")
        if _inside(match.start(), taken) or _inside(start, taken):
            continue
        before, after = _clause(t, match.start(), end)
        if not _decides(t, start, end, before, after, negated=True):
            continue
        taken.append((match.start(), end))
        move = with_alternative(_other(g.lookup[key(match.group("tok"))]), t, end, g)
        or_next = _OR_NEXT_RE.match(t, end)
        named_next = g.token.match(t, or_next.end()) if or_next else None
        if named_next and g.lookup[key(named_next.group("tok"))] == move:
            move = "both"  # "I'm not picking J. Or F.": the refusal goes on to the other move
        if _EITHER_RE.match(after) or _EITHER_LATER_RE.match(t, end):
            move = "both"  # "..., but I won't cooperate either": both moves refused, none chosen
        bound = bool(ROUND_BOUND_RE.search(before + after))
        found.append(Decision(match.start(), end, move, "statement", weak=bound, round_bound=bound))
    statements = (*g.statements, g.verb_after) if _VERB_AFTER_SCRIPT_RE.search(t) else g.statements
    for index, pattern in enumerate(statements):
        subjectless = index >= _SUBJECTLESS_FROM  # "Coopero.", "Cを選びます": no subject says whose move it is
        for match in pattern.finditer(t):
            start, end = match.span("tok")
            if _inside(match.start(), taken) or _inside(start, taken):
                continue
            before, after = _clause(t, match.start(), end)
            if subjectless and OTHER_PLAYER_RE.search(before):
                continue  # "相手は協力しません": the other player's move
            late = _negated_late(after, g)
            if not _decides(t, start, end, before, after, negated=late):
                continue
            taken.append((match.start(), end))
            move = with_alternative(g.lookup[key(match.group("tok"))], t, end, g)
            if move != "both" and late:
                move = _other(move)  # "Ich kooperiere diesmal nicht": the negation closes the clause
            bound = bool(ROUND_BOUND_RE.search(before) or ROUND_BOUND_RE.search(after))
            weak = bool(match.groupdict().get("would")) or bound
            found.append(Decision(match.start(), end, move, "statement", weak=weak, round_bound=bound))
    segments = _segments(t)
    for i, (start, end) in enumerate(segments):
        if _ARROW_AFTER_RE.match(t, end):
            _transition(t, segments, i, g, found)
            continue  # "C → 3 points": a key, not a choice
        after_arrow = i > 0 and _ARROW_AFTER_RE.match(t, segments[i - 1][1])
        before_arrow = t[segments[i - 1][0] : segments[i - 1][1]] if after_arrow else ""
        if after_arrow and (
            HYPOTHETICAL_BEFORE_RE.search(before_arrow) or _SHORT_FOREIGN_KEY_RE.fullmatch(before_arrow)
        ):
            continue  # "If they defect -> D": the consequence of a condition ("They defected → D" is a choice)
        pointer = _POINTER_RE.search(t, start, end)
        if pointer:
            end = pointer.start()  # "C <- my move": the arrow points at the label
        alone = _label_alone(t, start, end, g) or _before_plan(t, start, end, g)
        if alone is None and i == len(segments) - 1:
            alone = _closing_label(t, start, end, g)
        if alone is not None and not _inside(alone[1], taken):
            method = "last_line" if i == len(segments) - 1 else "first_line" if i == 0 else "label_line"
            found.append(Decision(alone[1], alone[2], alone[0], method))
    return found


def _before_plan(t: str, start: int, end: int, g: Grammar) -> tuple[Move, int, int] | None:
    """A label, then after a comma the other move planned for later: "J now, F later if they keep choosing F",
    "D this round, C again once they cooperate", "F this round, back to J next round". The plan is no decision
    for this round (the policy's rule 4), so the label before it is read alone."""
    comma = t.find(", ", start, end)
    if comma == -1:
        return None
    rest = t[comma + 2 : end]
    first = g.token.search(rest, 0, _PLAN_LEAD_MAX)  # "J later if ...", "back to J next round"
    if first is None:
        return None
    if not (HYPOTHETICAL_AFTER_RE.search(rest, first.end()) or LATER_RE.search(rest, 0, first.start())):
        return None  # "..., il prossimo turno forse D": the later round may come first
    alone = _label_alone(t[:comma], start, comma, g)  # cut at the comma: the plan is no alternative
    return alone if alone is not None and alone[0] != g.lookup[key(first.group("tok"))] else None


def _closing_label(t: str, start: int, end: int, g: Grammar) -> tuple[Move, int, int] | None:
    """The reply's last sentence as a phrase, a comma and a label: "Judging from the last two rounds, J."

    The phrase must name no move, no condition, no other player's past move and no later round (the
    words of a foreign key: "If they pick F, F." and "After what they did, F." are not read)."""
    segment = t[start:end]
    comma = segment.rfind(", ")
    if comma == -1:
        return None
    lead = segment[:comma]
    if (
        len(WORD_RE.findall(lead)) > words.CLOSING_KEY_WORDS_MAX
        or g.token.search(lead)
        or FOREIGN_KEY_RE.search(lead.strip(JUNK))
        or HYPOTHETICAL_BEFORE_RE.search(lead)
        or ROUND_KEY_RE.search(lead)
        or _NOT_LOOSE_RE.search(lead)
        or any(not ch.isascii() and ch.isalpha() for ch in lead)  # "А может, D" (and maybe C): other languages
        or any(w.casefold() in _CLOSING_BLOCK for w in WORD_RE.findall(lead))
    ):
        return None
    value = segment[comma + 2 :].strip(MARKUP)
    if not value or value[-1] in "?:":
        return None
    return _label_alone(t, start + comma + 2, end, g)  # "Jolly good, J it is."


def _transition(t: str, segments: list[tuple[int, int]], i: int, g: Grammar, found: list[Decision]) -> None:
    """ "C -> D" as a whole segment pair: one move turning into the other, which names both and chooses
    neither (a draft and its revision, or a plan: the parser cannot tell)."""
    if i + 1 >= len(segments) or _MARKER_LEAD_RE.match(t, segments[i + 1][0]):
        return  # "C → no wait, D": a correction, read as one (rule 5)
    here, there = _label_alone(t, *segments[i], g), _label_alone(t, *segments[i + 1], g)
    if here and there and here[0] != there[0]:
        found.append(Decision(here[1], there[2], "both", "label"))


def _other(move: Action) -> Action:
    return "D" if move == "C" else "C"


def _negated_late(after: str, g: Grammar) -> bool:
    """A negation closing the statement's clause, a few words after the move, with no other move in between:
    "Ich verrate sie heute nicht", "Je ne coopère pas", "kooperiere heute nicht mehr"."""
    late = LATE_NEGATION_RE.match(after)
    return late is not None and g.token.search(after, 0, late.end()) is None


def _generic_keys(t: str, g: Grammar, found: list[Decision], taken: list[tuple[int, int]]) -> None:
    """ "Key: label" of any key, at a line or sentence start: "Selected: D", "Draft answer: C", "=> D".

    The key is a few words that name no other move than the value ("Keep cooperating: C"), nor the
    other player, the past, a condition or a fallback ("Opponent: D", "Last round: C", "If they defect:
    D" are no decision of mine), and the value up to its sentence end is a label alone. Like an answer
    line, it revises what came before it, except under a numbered round ("Round 4: C"), which may be
    history.
    """
    for match in GENERIC_KEY_RE.finditer(t):
        if _inside(match.start("key"), taken):
            continue
        name = match.group("key").strip(JUNK)
        tail = _KEY_TAIL_RE.search(name)
        if tail and _NEGATED_KEY_RE.match(tail["tail"]) and not HYPOTHETICAL_BEFORE_RE.search(name):
            name = tail["tail"]  # "They keep exploiting me, so no more C: D": the key refuses the other move
        conceded = _BUT_TAIL_RE.search(name)
        if conceded and _commits(conceded["tail"], name, g):
            name = conceded["tail"]  # "..., and C is tempting, but I'll commit: D": what comes before is conceded
        end = VALUE_END_RE.search(t, match.end())
        value_end = end.end() if end else len(t)
        # the reply's closing "key: label" may be a whole phrase: "So my choice for this round is clear: C."
        closing = not t[value_end:].strip(JUNK)
        limit = words.CLOSING_KEY_WORDS_MAX if closing else words.KEY_WORDS_MAX
        if len(WORD_RE.findall(name)) > limit or FOREIGN_KEY_RE.search(name):
            continue
        alone = _label_alone(t, match.end(), value_end, g)
        named = {g.lookup[key(m.group("tok"))] for m in g.token.finditer(name)}
        if alone is not None and alone[0] != "both" and _NEGATED_KEY_RE.match(name) and named == {_other(alone[0])}:
            named = {alone[0]}  # "No J from me: F": the key refuses the other move
        if alone is None or (named and named != {alone[0]}):
            # "Revised: C or D" chooses both; "Option C: 3 points" and "C → 5" are no choice
            if not named and not ROUND_KEY_RE.search(name) and _value(t[match.end() : value_end], g)[0] == "both":
                found.append(Decision(match.start("key"), value_end, "both", "answer_line", revises=True))
            continue
        taken.append((match.start("key"), alone[2]))
        round_keyed = bool(ROUND_KEY_RE.search(name))
        found.append(
            Decision(match.start("key"), alone[2], alone[0], "answer_line", revises=not round_keyed, weak=round_keyed)
        )


def _commits(tail: str, name: str, g: Grammar) -> bool:
    """Whether a key's words after "but" commit to the value: a few plain words (no move, other player, condition,
    negation or doubt) after a concession that names no condition ("I'm not sure, but I'll commit: D")."""
    return not (
        len(WORD_RE.findall(tail)) > words.KEY_WORDS_MAX
        or g.token.search(tail)
        or FOREIGN_KEY_RE.search(tail.strip(JUNK))
        or OTHER_PLAYER_RE.search(tail)
        or HYPOTHETICAL_BEFORE_RE.search(name)
        or NEGATION_IN_CLAUSE_RE.search(tail)
        or DOUBT_RE.search(tail)
    )


def _structured(t: str, g: Grammar, found: list[Decision], taken: list[tuple[int, int]]) -> None:
    """JSON objects, quoted key-value pairs of broken JSON, and XML tags."""
    for start, end, obj in _json_objects(t):
        taken.append((start, end))
        moves = [Decision(start, end, move, "json") for _, move in _move_fields(obj, g)]
        if moves:
            _refuse_doubt(obj, g)
        found.extend(moves)
    for match in LOOSE_FIELD_RE.finditer(t) if ":" in t else ():
        if not _inside(match.start(), taken):
            taken.append(match.span())
            found.append(Decision(match.start(), match.end(), _json_move(match["key"], match["value"], g), "json"))
    for match in XML_RE.finditer(t) if "<" in t else ():
        taken.append(match.span())
        move = _value(match.group("value"), g)[0]
        if move is not None:
            found.append(Decision(match.start(), match.end(), move, "xml"))


def second_thoughts(t: str, after: int, move: Move, g: Grammar) -> bool:
    """Whether the reply, after position ``after``, seems to change its mind in words not known here.

    That is: the other move, stated as if chosen (not supposed, negated, discussed with "would", or said
    of the other player), after a change-of-mind marker ("Actually, I want to switch over to D", "F.
    Wait. J, definitely J.") or followed by "instead" in its clause; or asked after such a marker
    ("D. Wait. Hmm, C?").
    """
    present = said_present(t, after)
    for token in g.token.finditer(t, after):
        if g.lookup[key(token.group("tok"))] == move:
            continue
        before, rest = _clause(t, token.start(), token.end())
        sentence_start = max(t.rfind(ch, after, token.start()) for ch in ".!?;\n") + 1
        if _hedges(t, max(after, sentence_start), token, before, present=present):
            return True
        if _HYPOTHETICAL_MODAL_RE.match(t, token.end()):
            continue
        # the marker may stand in a sentence of its own: "F. Wait. J, definitely J."
        marked = SECOND_THOUGHTS_RE.search(t, after, token.start())
        if not (marked or REVISION_AFTER_RE.search(rest)) or OTHER_PLAYER_RE.search(before):
            continue
        if present and _other_round(t[sentence_start : token.start()]):
            continue  # "C this round. Round 8: maybe D": a plan for another round
        asked = SENTENCE_END_RE.search(t, token.end())
        if asked and asked.group() == "?" and t[sentence_start : asked.start()].strip(JUNK) == token.group():
            return True  # "D... or not. C?": the other move alone, asked after the answer
        if marked and asked and asked.group() == "?" and not HYPOTHETICAL_BEFORE_RE.search(before):
            return True  # "D. Wait. Hmm, C?": the answer put in doubt
        if _decides(t, token.start(), token.end(), before, rest):
            return True
    return False


def _hedges(t: str, sentence_start: int, token: re.Match[str], before: str, *, present: bool) -> bool:
    """Doubt about the answer: the other move offered after it ("C. Although... D might be better.",
    "D, but maybe C is wiser.", "Answer: D. Hmm, or perhaps C."), not said of the other player,
    negated, or placed under a condition or a later round."""
    if _UNLESS_RE.search(t, sentence_start, token.start()):
        return True  # "D — unless C is better here": the other move as the exception to the answer
    if OTHER_PLAYER_RE.search(before) or HYPOTHETICAL_BEFORE_RE.search(before):
        return False
    if present and _other_round(t[sentence_start : token.start()]):
        return False  # "C this round. In the final round I might defect": a plan for another round
    if NEGATION_BEFORE_RE.search(t, max(0, token.start() - 8), token.start()):
        return False
    return bool(HEDGE_BEFORE_RE.search(t, sentence_start, token.start()) or HEDGE_AFTER_RE.match(t, token.end()))


def _refuse_doubt(obj: dict[object, object], g: Grammar) -> None:
    """A JSON answer whose other fields mark it as unsure ("final": false, "confidence": "low") chose nothing."""
    if object_doubts(obj, words.JSON_KEYS):
        raise InvalidStructure(f"the JSON marks its answer as unsure; give just {g.names[0]} or {g.names[1]}")


def _pairs(pairs: list[tuple[str, object]]) -> dict[object, object]:
    """A JSON object, refused when it repeats a move field with another value ({"move": "C", "move": "D"})."""
    obj: dict[object, object] = {}
    for field, value in pairs:
        name = field.strip().casefold().replace(" ", "_").replace("-", "_")
        if name in words.JSON_KEYS and field in obj and obj[field] != value:
            raise InvalidStructure(f"the JSON gives the field {field!r} twice, with different values")
        obj[field] = value
    return obj


_DECODER = json.JSONDecoder(object_pairs_hook=_pairs)


def said_present(t: str, end: int) -> bool:
    """Whether the answer ending at ``end`` is said, right after it, to be this round's ("C this round.", "Cooperating
    now;", "Cooperate this round (C)"); said anywhere else in its sentence, it may be about something else. A reply
    that names rounds more than once may say which round this is ("Wait, this is round 10"): then no answer is
    taken for this round's against a plan for a numbered or last round."""
    return bool(_PRESENT_RE.match(t, end)) and len(_ROUND_MENTION_RE.findall(t)) <= 1


def _other_round(lead: str) -> bool:
    """Whether the words before a move in its sentence tie it to a numbered or last round ("Round 8: maybe D",
    "In the final round I might defect"): after an answer said to be this round's ("C this round."), a plan, not
    a second thought. Without that contrast the parser cannot tell whether the round named is this one."""
    return bool(ROUND_BOUND_RE.search(lead) or ROUND_KEY_RE.match(lead.strip(JUNK)))


def _json_move(field: object, value: object, g: Grammar) -> Action:
    """A JSON move field must name exactly one move: the model chose a format and broke it."""
    if isinstance(value, str) and value.strip(" \t*_`'\".!").endswith("?"):
        raise InvalidStructure(f"the JSON field {field!r} asks rather than answers ({value!r})")
    move = _value(value, g)[0] if isinstance(value, str) else None
    if move == "both":
        raise InvalidStructure(f"the JSON field {field!r} holds both {g.names[0]} and {g.names[1]}")
    if move is None:
        raise InvalidStructure(f"the JSON field {field!r} holds neither {g.names[0]} nor {g.names[1]}")
    return move


def _json_objects(text: str) -> Iterator[tuple[int, int, dict[object, object]]]:
    """Every top-level JSON object in the text, fenced or not, with its span."""
    decoder = _DECODER
    pos = text.find("{")
    while pos != -1:
        try:
            obj, end = decoder.raw_decode(text, pos)
        except ValueError:
            obj, end = _python_dict(text, pos)
            if obj is None:
                pos = text.find("{", pos + 1)
                continue
        if isinstance(obj, dict):
            yield pos, end, obj
        pos = text.find("{", end)


def _python_dict(text: str, pos: int) -> tuple[dict[object, object] | None, int]:
    """A flat Python dict literal, as models write it when asked for JSON: {'pick': 'D', 'why': '...'}.

    ``ast.literal_eval`` evaluates literals only, never code."""
    end = text.find("}", pos)
    if end == -1 or "'" not in text[pos:end]:
        return None, pos
    try:
        obj = ast.literal_eval(text[pos : end + 1])
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None, pos
    return (obj, end + 1) if isinstance(obj, dict) else (None, pos)


def _move_fields(obj: dict[object, object], g: Grammar) -> Iterator[tuple[object, Action]]:
    """The move fields of an object and of the objects nested in it ({"response": {...}}), with their move.

    A field of a known move key (action, move, choice, ...) must name one move (see _json_move). A field
    of any other key counts when its value is a move alone ({"selected_option": "D"}), unless its key
    names the other player, the past, a fallback or an explanation ({"opponent_last": "D"}).
    """
    for field, value in obj.items():
        name = str(field).strip().casefold().replace(" ", "_").replace("-", "_")
        if isinstance(value, dict):
            yield from _move_fields(value, g)
        elif name in words.JSON_KEYS:
            yield field, _json_move(field, value, g)
        elif isinstance(value, str) and len(value) <= _ALONE_MAX and not FOREIGN_JSON_KEY_RE.search(name):
            alone = _label_alone(value, 0, len(value), g)
            if alone is not None and alone[0] != "both":
                yield field, alone[0]


def _inside(pos: int, spans: list[tuple[int, int]]) -> bool:
    return any(start <= pos < end for start, end in spans)


def _value_or_next_line(t: str, match: re.Match[str]) -> tuple[str, int]:
    """A key's value and where it starts: 'Final answer:' then the answer on the next line is common."""
    value = match.group("value")
    if value.strip(JUNK):
        return value, match.start("value")
    pos = match.end()
    while pos < len(t):
        line_end = t.find("\n", pos + 1)
        line_end = len(t) if line_end == -1 else line_end
        if t[pos:line_end].strip(JUNK):
            return t[pos:line_end], pos
        pos = line_end
    return "", pos


def _value(value: str, g: Grammar) -> tuple[Move | None, int]:
    """The move a key's value names, and how many of its characters name it.

    A leading token ("C", "**D** (defect)", "to defect"), a value that is a label alone
    ("I cooperate"), or a statement ("I will defect").
    """
    only = g.lookup.get(key(value.strip(JUNK)))  # the label and nothing else, the common case
    if only is not None:
        return only, len(value)
    lead = len(value) - len(value.lstrip(JUNK.replace("(", "")))
    prefix = PREFIX_RE.match(value, lead)
    match = g.token.match(value, prefix.end() if prefix else lead)
    if match is not None:
        move = g.lookup[key(match.group("tok"))]
        alternative = g.alternative.match(value, match.end())
        if alternative and g.lookup[key(alternative.group("alt"))] != move:
            return "both", alternative.end()
        gloss = VALUE_GLOSS_RE.match(value, match.end())
        if gloss and _names_other(gloss.group("inner"), move, g):
            return "both", len(value)
        return move, match.end()
    alone = _label_alone(value, lead, len(value), g)
    if alone is not None:
        return alone[0], len(value)
    moves = [
        with_alternative(g.lookup[key(m.group("tok"))], value, m.end("tok"), g)
        for pattern in g.statements
        for m in pattern.finditer(value)
        if _decides(value, m.start("tok"), m.end("tok"), *_clause(value, m.start(), m.end("tok")))
    ]
    if not moves:
        return None, 0
    return (moves[0] if len(set(moves)) == 1 else "both"), len(value)


def _names_other(text: str, move: Move, g: Grammar) -> bool:
    """Whether ``text`` (a gloss) names the other move, other than to reject it ("not defect")."""
    return any(
        g.lookup[key(m.group("tok"))] != move
        and not NEGATION_BEFORE_RE.search(text, 0, m.start())
        and not _REVISED_FROM_RE.search(text, 0, m.start())
        and not LATER_RE.search(text, 0, m.start())  # "D (next round: C if they come back)"
        for m in g.token.finditer(text)
    )


def with_alternative(move: Action, t: str, end: int, g: Grammar) -> Move:
    """'C or D', 'C/D', 'cooperate or defect' name both moves and so choose neither."""
    alternative = g.alternative.match(t, end)
    if alternative and g.lookup[key(alternative.group("alt"))] != move:
        return "both"
    return move


def _clause(t: str, start: int, token_end: int) -> tuple[str, str]:
    """A statement's clause around it: from the clause start to the subject, and after the move.

    "In a one-shot game I would defect, but this game is repeated, so I will cooperate": the
    clause of "I will cooperate" starts after "so", so the hypothetical before it is not its own.
    """
    sentence_start = max(t.rfind(ch, 0, start) for ch in ".!?;\n") + 1
    before = t[sentence_start:start]
    starts = [clause.end() for clause in CLAUSE_START_RE.finditer(before)]
    if starts:
        before = before[starts[-1] :]
    clause_end = CLAUSE_END_RE.search(t, token_end)
    return before, t[token_end : clause_end.start() if clause_end else len(t)]


def _decides(t: str, token_start: int, token_end: int, before: str, after: str, *, negated: bool = False) -> bool:
    """Rule 4: whether a statement decides, rather than asks, supposes, negates or reports a belief.

    ``negated``: the statement is a refusal ("I won't defect", "Je ne coopère pas", "Ich kooperiere nicht"), so
    the negation is its own, not a reason to drop it."""
    if HYPOTHETICAL_BEFORE_RE.search(before) or EMBEDDED_RE.search(before) or HYPOTHETICAL_AFTER_RE.search(after):
        return False
    if not negated and NEGATION_BEFORE_RE.search(t, max(0, token_start - 8), token_start):
        return False
    if not negated and NEGATION_IN_CLAUSE_RE.search(before):
        return False  # "No voy a traicionar": the negation stands before the subject
    if DOUBT_LEAD_RE.search(before):
        return False  # "I'm not sure I'll cooperate"
    if not negated and NEGATION_AFTER_RE.match(t[token_end : token_end + 8]):
        return False
    sentence_end = SENTENCE_END_RE.search(t, token_end)
    return not (sentence_end and sentence_end.group() == "?")


def _segments(t: str) -> list[tuple[int, int]]:
    """The reply cut at line ends, sentence ends, dashes and explaining commas ("D, because ...")."""
    spans: list[tuple[int, int]] = []
    pos = 0
    for cut in (*SPLIT_RE.finditer(t), None):
        end = cut.start() if cut else len(t)
        if t[pos:end].strip(JUNK):
            spans.append((pos, end))
        if cut:
            pos = cut.end()
    return spans


def _label_alone(t: str, start: int, end: int, g: Grammar) -> tuple[Move, int, int] | None:
    """The move of a sentence that is only a label, and where its token starts and ends; or None.

    Around the label may stand markdown and punctuation, a gloss ("C (cooperate)"), an
    interjection or connective ("No, cooperate.", "So D."), a rejected other move ("C, not D")
    and "it is"/"again" after it. A question ("Defect?") or a heading ("C:") is not a decision.
    """
    body = t[start:end].strip(MARKUP)
    if not body or body[-1] in "?:" or len(body) > _ALONE_MAX_GLOSSED:
        return None
    gloss = GLOSS_RE.search(body) if body[-1] in ").!,;" else None
    inner = ""
    if gloss and gloss.start() > 0:
        inner, body = gloss.group("inner"), body[: gloss.start()]
    if len(body) > _ALONE_MAX:
        return None
    core = body.strip(JUNK)
    label = g.lookup.get(key(core))  # the label and nothing else, the common case
    token_at, token_end = 0, len(core)
    if label is None:
        match = g.whole.fullmatch(core)
        if match is None:
            whole = not (t[:start].strip(JUNK) or t[end:].strip(JUNK))
            loose = _rejected_then_chosen(core, g) or _loose_label(core, g, casual=t.islower(), whole=whole)
            if loose is None:
                return None
            loose_move, token_at, token_end = loose
            at = t.find(core, start, end)
            if loose_move != "both":
                loose_move = with_alternative(loose_move, t, at + len(core), g)
            return loose_move, at + token_at, at + token_end
        label = g.lookup[key(match.group("tok"))]
        if match.group("rejected") and g.lookup[key(match.group("rejected"))] == label:
            return None  # "C, not C"
        token_at, token_end = match.span("tok")
    at = t.find(core, start, end)  # core is a slice of the segment: only its ends were cut
    revised = _GLOSS_REVISION_RE.match(inner)
    if revised:
        corrected = _label_alone(inner, revised.end(), len(inner), g)
        if corrected is not None and corrected[0] != "both":
            return corrected[0], at + token_at, at + token_end  # "D (edit: C)": the gloss corrects the label
    move: Move = "both" if _names_other(inner, label, g) else with_alternative(label, t, at + len(core), g)
    return move, at + token_at, at + token_end


def _rejected_then_chosen(core: str, g: Grammar) -> tuple[Move, int, int] | None:
    """One move refused, then the other named after a comma or a dash: "Not C this time, D.", "No J from me today,
    F.", "Niet C, maar D", "Kein D, sondern C". The words between may not name the other player, a condition,
    the past or a doubt (words.NOT_ALONE_WORDS), and nothing but punctuation may follow the chosen move."""
    lead = _REJECT_LEAD_RE.match(core)
    first = g.token.match(core, lead.end()) if lead else None
    rest = _REJECT_REST_RE.match(core, first.end()) if first else None
    second = g.token.match(core, rest.end()) if rest else None
    if first is None or rest is None or second is None or core[second.end() :].strip(" .!*_`'\""):
        return None
    if any(len(m.group("tok")) == 1 and not m.group("tok").isupper() for m in (first, second)):
        return None  # in prose a one-letter label is written in its own case
    if any(w.casefold() in words.NOT_ALONE_WORDS for w in WORD_RE.findall(rest.group("mid"))):
        return None  # "Not C if they defect, D"
    chosen = g.lookup[key(second.group("tok"))]
    return (chosen, second.start(), second.end()) if chosen != g.lookup[key(first.group("tok"))] else None


def _loose_label(core: str, g: Grammar, *, casual: bool = False, whole: bool = False) -> tuple[Move, int, int] | None:
    """A label with a few ordinary words around it: "ok C", "d, obviously", "Frankly, Option F.", "Not D."

    ``casual``: the reply is written all in lower case ("i pick c", "kk c"), so a one-letter label in lower case
    is still the label (except a, i, o, u, which are words). ``whole``: the words are the whole reply, so a label
    said three times ("J J J") is emphasis, not a list of rounds ("My moves: C C C").

    Exactly one move token; at most a few words before and after it, none of which makes the label something
    other than a choice (a condition, the other player, the past, a doubt, a comment such as
    "D is tempting": words.NOT_ALONE_WORDS) and no digits. A negation just before the label ("Not D.",
    "No more cooperation") chooses the other move.
    """
    core = _FILLER_RE.sub(lambda filler: " " * len(filler.group()), core)  # positions kept: "이번에도 J입니다"
    if len(core.split()) > words.LEAD_WORDS_MAX + words.TAIL_WORDS_MAX + 3 or _NOT_LOOSE_RE.search(core):
        return None  # a sentence, or a key, a tag, an object, a formula or lines: not a few words around a label
    folded = [w.casefold().replace("’", "'") for w in WORD_RE.findall(words.IDIOMS.sub(" ", core))]
    if any((w in words.NOT_ALONE_WORDS and w not in _NEGATIONS_EITHER) or w.endswith("n't") for w in folded):
        return None  # checked again below, once the words before and after the label are known
    tokens = list(g.token.finditer(core))
    if not tokens or len({g.lookup[key(m.group("tok"))] for m in tokens}) != 1:
        return None
    if len(tokens) > 2 and not whole:
        return None
    if any(not _REPEAT_GLUE_RE.fullmatch(core[a.end() : b.start()]) for a, b in itertools.pairwise(tokens)):
        return None  # "J, definitely J", "J J J" repeat one label; other words between two labels make a sentence
    token = tokens[0]
    if not token.group("tok").isascii():
        return None  # a verb form of another language may be another person's ("L'autre joueur coopère")
    lower_ok = casual and key(token.group("tok")) not in _ONE_LETTER_WORDS
    if len(token.group("tok")) == 1 and token.start() > 0 and not token.group("tok").isupper() and not lower_ok:
        return None  # in prose a one-letter label is written in its own case: "i choose j" is no J
    lead, tail = core[: token.start()], _TAIL_FILLER_RE.sub(" ", words.IDIOMS.sub(" ", core[tokens[-1].end() :]))
    negated = NEGATED_LEAD_RE.search(lead)
    if negated:
        lead = lead[: negated.start()]
    lead_words, tail_words = WORD_RE.findall(lead), WORD_RE.findall(tail)
    if len(lead_words) > words.LEAD_WORDS_MAX or len(tail_words) > words.TAIL_WORDS_MAX:
        return None
    if any(not ch.isascii() and ch.isalpha() for ch in lead + tail):
        return None  # words of other languages are read by their statements, not around a label: their
        # negation may be a suffix ("İhanet etmeyeceğim", I will not betray)
    for word in (*lead_words, *tail_words):
        folded = word.casefold().replace("’", "'")
        if negated and folded == "either":
            return "both", token.start(), token.end()  # "Not F either": both moves refused, none chosen
        if word[0].isdigit() or folded in words.NOT_ALONE_WORDS or folded.endswith("n't"):
            return None
    if any(word.casefold().endswith("ed") for word in tail_words):
        return None  # "Cooperating worked.": a comment on a move, not a choice
    if any(_THIRD_PERSON_RE.fullmatch(word.casefold()) for word in tail_words):
        return None  # "F limits my downside", "D also makes sense": the label is the subject of a comment
    if HYPOTHETICAL_BEFORE_RE.search(lead) or OTHER_PLAYER_RE.search(lead) or NEGATION_BEFORE_RE.search(lead):
        return None
    move = g.lookup[key(token.group("tok"))]
    return (_other(move) if negated else move), token.start(), token.end()

"""The move parser's regexes, compiled once per set of labels, and the text normalisation.

Part of the move parser (:mod:`harness.players.model.parsing`): the rules are in ``policy``, the vocabulary
in ``words``, the search for decisions in ``decisions``. A move *token* is a label or move word bounded by
letters of spaced scripts, so "Decision" holds no D, "CD" is no move and "I'd" no d; Chinese words are not spaced,
so Chinese tokens need no boundary.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache
from typing import overload

from harness.game.rules import Action
from harness.players.model.parsing import words

JUNK = " \t\r\n*_`~#>\"'“”‘’()[]{}<>.,!?:;-–—|¡¿…"  # markdown, quotes, brackets, punctuation
MARKUP = " \t\r\n*_`~#>\"'“”‘’"  # what surrounds a sentence without being its punctuation

# Letters and digits of spaced scripts: a move token must not touch one. Chinese, Japanese and
# Korean characters are left out because those languages do not put spaces between words. The class is
# matched case-sensitively (``(?-i:...)``; no character in it has a case, so it means the same): under
# IGNORECASE, compiling its 39,000 code points of ranges cost re about 6 ms for each of the ~200 places it is
# used, 1.3 s at the first reply a process read.
_W = r"(?-i:[^\W_\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af])"
_I = re.IGNORECASE
_CJK_PUNCT = str.maketrans(  # Chinese punctuation is not followed by a space; ours is
    {"。": ". ", "？": "? ", "！": "! ", "，": ", ", "；": "; ", "：": ": ", "、": ", "}
    | {"।": ". ", "॥": ". ", "؟": "? ", "،": ", ", "؛": "; "}  # Hindi and Arabic punctuation
    | {"「": '"', "」": '"', "『": '"', "』": '"', "【": "[", "】": "]"}
)
_SEPARATOR = (  # what joins two moves offered together: "C/D", "C or D", "D. Or maybe C"
    r"[ \t*_`'\"“”)\].…]*(?:/|\\|\||,|&|\+|-|–|\bor\b|\band\b|\bvs\b\.?|\bversus\b|\bo\b|\bou\b|\boder\b|或|还是)"
    r"[ \t*_`'\"“”(\[]*(?:(?:maybe|perhaps|possibly|probably|even)[ \t]+)?"
)

# Label-independent patterns.
PREFIX_RE = re.compile(rf"(?:(?:option|action|move|to|opci[oó]n|op[cç][ãa]o|{words.OPTION_WORDS})\s*)+", _I)
BOXED_RE = re.compile(r"\\boxed\{\s*(?:\\text(?:bf)?\{)?(?P<value>[^{}]*)", _I)
XML_RE = re.compile(rf"<(?P<tag>{words.XML_TAGS})>(?P<value>[^<]*)</(?P=tag)>", _I)
LOOSE_FIELD_RE = re.compile(  # a quoted pair of JSON that does not parse: {'action': 'D'}, trailing commas
    r"[\"'](?P<key>action|move|choice|decision|answer|final_answer|my_move|your_move)[\"']\s*:\s*"
    r"[\"'](?P<value>[^\"'\n]*)[\"']",
    _I,
)
THINK_BLOCK_RE = re.compile(rf"<(?P<tag>{words.THINK_TAGS})>.*?</(?P=tag)>", _I | re.DOTALL)
THINK_CLOSE_RE = re.compile(rf"</(?:{words.THINK_TAGS})>", _I)
GLOSS_RE = re.compile(r"[ \t*_`]*\((?P<inner>[^()]*)\)[\s.!,;*_`]*$")  # "C (cooperate)" ending a sentence
VALUE_GLOSS_RE = re.compile(r"[ \t*_`]*\((?P<inner>[^()]*)\)")  # "C (cooperate) because ..." after a key
SPLIT_RE = re.compile(
    rf"\n|(?<=[.!?])[ \t]+|[ \t]+[-—–]+[ \t]+|[—–]|;[ \t]*|[ \t]*(?:=>|->|→|⇒|>>)[ \t]*"
    rf"|,[ \t]+(?={words.EXPLANATION})|[ \t,]+(?={words.CORRECTION})|[ \t,]+(?:{words.SLANG})\b[ \t,]*",
    _I,
)
SENTENCE_END_RE = re.compile(r"[.!?\n]")
HYPOTHETICAL_BEFORE_RE = re.compile(words.HYPOTHETICAL_BEFORE, _I)
HYPOTHETICAL_AFTER_RE = re.compile(words.HYPOTHETICAL_AFTER, _I)
LATER_RE = re.compile(words.LATER, _I)
ROUND_BOUND_RE = re.compile(words.ROUND_BOUND, _I)
CLAUSE_START_RE = re.compile(words.CLAUSE_START, _I)
CLAUSE_END_RE = re.compile(words.CLAUSE_END, _I)
EMBEDDED_RE = re.compile(words.EMBEDDED_BEFORE, _I)
NEGATION_BEFORE_RE = re.compile(words.NEGATION_BEFORE, _I)
NEGATION_AFTER_RE = re.compile(words.NEGATION_AFTER, _I)
LATE_NEGATION_RE = re.compile(words.LATE_NEGATION, _I)
NEGATION_IN_CLAUSE_RE = re.compile(words.NEGATION_IN_CLAUSE, _I)
DOUBT_RE = re.compile(words.DOUBT, _I)
DOUBT_LEAD_RE = re.compile(words.DOUBT_LEAD, _I)
REVISION_BEFORE_RE = re.compile(words.REVISION_BEFORE, _I)
REVISION_AFTER_RE = re.compile(words.REVISION_AFTER, _I)
SECOND_THOUGHTS_RE = re.compile(words.SECOND_THOUGHTS, _I)
OTHER_PLAYER_RE = re.compile(words.OTHER_PLAYER, _I)
HEDGE_BEFORE_RE = re.compile(words.HEDGE_BEFORE, _I)
HEDGE_AFTER_RE = re.compile(words.HEDGE_AFTER, _I)
NEGATED_LEAD_RE = re.compile(rf"(?:^|(?<=\s)){words.NEGATED_LEAD}$", _I)
FOREIGN_KEY_RE = re.compile(words.FOREIGN_KEY, _I)
FOREIGN_JSON_KEY_RE = re.compile(words.FOREIGN_JSON_KEY, _I)
ROUND_KEY_RE = re.compile(r"^(?:round|turn|game|r)\s*#?\d+|\d+\s*(?:round|turn)", _I)
WORD_RE = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?|\d+")
# Any "key: value" line or sentence; the key is checked in code (harness.players.model.parsing.decisions).
GENERIC_KEY_RE = re.compile(
    r"(?:^|(?<=[.!?;])[ \t]+)[ \t>#*_\-+•`]*(?P<key>[^\n:=.!?;→⇒<>{}\[\]\"]{1,60}?)[ \t*_`]*(?:=>|->|>>|[:=→⇒])(?!//)",
    re.MULTILINE,
)
VALUE_END_RE = re.compile(r"[.!?;](?=\s|$)|\n")
_EMOJI_RE = re.compile("[\U0001f000-\U0001faff\u2600-\u27bf\u2b00-\u2bff\ufe0f\u200d]")
_EMPTY_BOX_RE = re.compile(r"(?:\[[ \t]\]|☐)[^\[\n☐☑✅{}]{0,30}(?=[\[\n☐☑✅]|$)")
_TICKED_BOX_RE = re.compile(r"\[[xX✓✔][ \t]*\]|☑\ufe0f?|✅")
_WITH_RE = re.compile(r"(?<![^\W\d_])w/(?=\s)", re.IGNORECASE)
_TLDR_RE = re.compile(r"\btl;\s?dr\b", re.IGNORECASE)
_STRUCK_RE = re.compile(r"~~[^~\n]*~~")  # struck-out text is a draft: "~~C~~ D"
# A word marked as struck out in words is a draft too: "J (crossed out) F", "C [deleted] D".
_MARKED_STRUCK_RE = re.compile(
    r"[^\s()\[\]]+[ \t]*[(\[](?:crossed[ \t]+out|struck(?:[ \t]+out|[ \t]+through)?|scratched(?:[ \t]+out)?|deleted"
    r"|strike(?:through)?)[)\]]",
    re.IGNORECASE,
)
# A Cyrillic С standing alone where a label stands ("Ответ: С"): Russian keyboards type it for the Latin C.
_CYRILLIC_C_RE = re.compile(r"(?<![^\W\d_])С(?=[ \t]*(?:[.!,;)*_`\"'\n]|$))")


class _Rule:
    """One of a :class:`Grammar`'s regexes, compiled the first time a reply needs it.

    A grammar is ~0.4 s of compiling (its alternations hold every move word in every language), and most replies
    are read by the first rules tried ("C", "Answer: D"): a process that reads a few replies, such as a short
    ``pdbench eval``, should not pay for the rules it never reaches. A race between threads compiles twice and
    keeps either result; both are the same pattern."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, grammar: None, owner: type) -> _Rule: ...
    @overload
    def __get__(self, grammar: Grammar, owner: type) -> re.Pattern[str]: ...
    def __get__(self, grammar: Grammar | None, owner: type) -> _Rule | re.Pattern[str]:
        if grammar is None:
            return self
        compiled = grammar._compiled.get(self.name)
        if compiled is None:
            source, flags = grammar._sources[self.name]
            compiled = grammar._compiled[self.name] = re.compile(source, flags)
        return compiled


class Grammar:
    """The label-dependent regexes for one set of labels (built by :func:`grammar`, compiled as they are used)."""

    token = _Rule()  # a move token (any case)
    whole = _Rule()  # a sentence that is one token: "C", "So, I cooperate", "Option D", "D it is"
    alternative = _Rule()  # "/ D", " or defect": a second move right after the first
    negated = _Rule()  # "I won't defect": the other move
    verb_after = _Rule()  # Japanese and Korean, the verb after the move: "Cを選びます", "협력하겠습니다"
    final = _Rule()  # "Final answer: X" anywhere in a line
    answer_line = _Rule()  # "Answer: X" at a line or sentence start, "my move: X"
    key_value = _Rule()  # a line that is only "Key: label"
    mention = _Rule()  # a label anywhere, in its own case, for the failure reason

    __slots__ = ("_compiled", "_sources", "_statement_sources", "_statements", "lookup", "names")

    def __init__(
        self,
        *,
        lookup: dict[str, Action],
        names: tuple[str, str],
        rules: dict[str, tuple[str, int]],
        statements: tuple[tuple[str, int], ...],
    ) -> None:
        missing = set(RULES) - set(rules)
        if missing:
            raise ValueError(f"a grammar needs every rule; missing {sorted(missing)}")
        self.lookup = lookup  # token (see key) -> move
        self.names = names  # the labels as the prompt shows them
        self._sources = rules
        self._compiled: dict[str, re.Pattern[str]] = {}
        self._statement_sources = statements
        self._statements: tuple[re.Pattern[str], ...] | None = None

    @property
    def statements(self) -> tuple[re.Pattern[str], ...]:
        """ "I will cooperate", "my move is D", "Coopero": tried together, so compiled together."""
        if self._statements is None:
            self._statements = tuple(re.compile(source, flags) for source, flags in self._statement_sources)
        return self._statements


RULES: tuple[str, ...] = tuple(name for name, value in vars(Grammar).items() if isinstance(value, _Rule))
"""The names of a grammar's rules (each compiled on first use)."""


def key(token: str) -> str:
    """The lookup key of a matched token: "Faire  Défection" -> "faire défection"."""
    return " ".join(token.casefold().split())


def normalize(text: str) -> str:
    """NFKC (full-width "：" and "Ｃ" become ":" and "C"; accents stay), spaced Chinese punctuation, emoji
    turned into spaces ("🤝 Cooperate!"), and struck-out drafts ("~~C~~ D", "J (crossed out) F") dropped."""
    if "~~" in text:
        text = _STRUCK_RE.sub(" ", text)
    if "(" in text or "[" in text:
        text = _MARKED_STRUCK_RE.sub(" ", text)
    if ";" in text:
        text = _TLDR_RE.sub("TLDR", text)  # its ";" is no clause end
    if "[" in text or "☐" in text:
        text = _ticked(text)
    if "/" in text or ":=" in text:
        text = _WITH_RE.sub("with", text).replace(":=", ":")  # "going w/ D", "Choice := F"
    if text.isascii():
        return text
    text = _CYRILLIC_C_RE.sub("C", text.replace("İ", "I"))  # Turkish İ casefolds to two characters
    return _EMOJI_RE.sub(" ", unicodedata.normalize("NFKC", text.translate(_CJK_PUNCT)))


def _ticked(text: str) -> str:
    """A checklist: what follows an empty box ("[ ] C") is not chosen and is dropped; a ticked box ("[x] D", "☑ J")
    leaves its text. Two ticked boxes leave both labels, which choose nothing. Only a list with a ticked box is a
    checklist, and only a short item up to the next box or the line's end is dropped: "Review: [ ] done. Final
    answer: D" keeps its answer."""
    if not (_EMPTY_BOX_RE.search(text) and _TICKED_BOX_RE.search(text)):
        return text
    return _TICKED_BOX_RE.sub(" ", _EMPTY_BOX_RE.sub(" ", text))


def _is_cjk(word: str) -> bool:
    return any("\u3040" <= ch <= "\u9fff" or "\uac00" <= ch <= "\ud7af" for ch in word)


def _token(keys: Iterable[str], group: str, *, prose: bool = False, suffix: bool = False) -> str:
    """A move token; with ``prose`` a one-letter label must be in its own (upper) case; with ``suffix`` it may
    carry a case ending after an apostrophe (Turkish "C'yi")."""
    # Longest first: every word of two or more characters comes before every one-letter label.
    long_spaced: list[str] = []
    short_spaced: list[str] = []
    long_unspaced: list[str] = []
    short_unspaced: list[str] = []
    for k in sorted(set(keys), key=len, reverse=True):
        pattern = r"\s+".join(re.escape(part) for part in k.split())
        if prose and len(k) == 1:
            pattern = f"(?-i:{re.escape(k.upper())})"
        if _is_cjk(k):
            (long_unspaced if len(k) > 1 else short_unspaced).append(pattern)
        else:
            (long_spaced if len(k) > 1 else short_spaced).append(pattern)
    spaced = _alternatives(long_spaced, short_spaced)
    unspaced = _alternatives(long_unspaced, short_unspaced)
    tail = "" if suffix else rf"(?!['’]{_W})"
    parts = [rf"(?<!{_W})(?<!{_W}['’])(?:{spaced})(?!{_W}){tail}"] if spaced else []
    return rf"(?P<{group}>{'|'.join(parts + ([unspaced] if unspaced else []))})"


def _alternatives(long: list[str], short: list[str]) -> str:
    """``long`` then ``short`` as one alternation; a word of ``long`` is no move after a hyphenated prefix
    ("non-cooperative", "un-cooperative"). The prefix test is written once for all of them: written before each
    word, Python's regex compiler spent ~45 s building the grammar of one label set."""
    head = [rf"(?<!{_W}-)(?<!{_W}‐)(?:{'|'.join(long)})"] if long else []
    return "|".join(head + short)


@lru_cache(maxsize=64)
def grammar(
    cooperate: str, defect: str, cooperate_words: tuple[str, ...] = (), defect_words: tuple[str, ...] = ()
) -> Grammar:
    """The regexes for labels ``cooperate``/``defect``.

    ``cooperate_words``/``defect_words`` are the English move words, given only for the default
    C/D labels; with them come their translations (harness.players.model.parsing.words). Neutral labels give
    none, so no word ever maps onto them.
    """
    lookup: dict[str, Action] = {key(normalize(cooperate)): "C", key(normalize(defect)): "D"}
    if cooperate_words or defect_words:
        lookup.update({key(w): "C" for w in (*cooperate_words, *words.COOPERATE_WORDS)})
        lookup.update({key(w): "D" for w in (*defect_words, *words.DEFECT_WORDS)})
    keys = list(lookup)
    subjects = rf"(?<!{_W})(?:(?P<would>{'|'.join(words.WOULD_SUBJECTS)})|(?:{'|'.join(words.SUBJECTS)}))"
    subject = rf"(?:{subjects}(?:\s+to)?|{'|'.join(words.CJK_SUBJECTS)})\s*:?\s*{words.OPTION}[*_`'\"“(\[]*"
    statements = [(subject + _token(keys, "tok", prose=True), _I)]
    refusal = rf"(?<!{_W})(?:{'|'.join(words.NEGATED_SUBJECTS)})\s*{words.OPTION}[*_`'\"“(\[]*"
    negated = (refusal + _token(keys, "tok", prose=True), _I)
    if cooperate_words or defect_words:
        english = [key(w) for w in (*cooperate_words, *defect_words)]
        statements.append(  # "I cooperate." at the end of a sentence
            (
                rf"(?<!{_W})i\s+{_token(english, 'tok')}(?:\s+(?:with\s+)?(?:them|him|her|the\s+other\s+player))?"
                r"(?:(?:\s+(?:again|now|here|this\s+(?:round|time)|today))"
                r"(?=[ \t]*(?:[.!,;\n]|$))|(?=[ \t]*(?:[.!\n]|$)))",
                _I,
            )
        )
        statements.append((_token([key(w) for w in words.SELF_STATEMENTS], "tok"), _I))
    final_keys = "|".join(words.FINAL_KEYS)
    line_start = (
        rf"(?:^[ \t>#*_\-+•`]*(?:\d+[.)][ \t]*)?|(?<=[.!?;:])[ \t]+"
        rf"|(?<!{_W})(?:so|thus|then|therefore|hence|ok|okay),?[ \t]+|(?<!{_W})(?={words.POSSESSIVES}\s))"
    )
    return Grammar(
        lookup=lookup,
        names=(cooperate, defect),
        statements=tuple(statements),
        rules=dict(
            token=(_token(keys, "tok"), _I),
            whole=(
                rf"(?:{words.LEAD})?{words.PRONOUN_PREFIX}{_token(keys, 'tok')}"
                rf"(?:{words.REJECTED}\s+{_token(keys, 'rejected')})?(?:{words.TRAIL})?",
                _I,
            ),
            alternative=(_SEPARATOR + _token(keys, "alt"), _I),
            negated=negated,
            verb_after=(
                _token(keys, "tok", prose=True, suffix=True)
                + rf"(?=\s*(?:{words.CJK_VERBS_AFTER})|{words.VERBS_AFTER})",
                _I,
            ),
            final=(
                rf"(?:(?<!{_W})(?:{final_keys})[ \t]*[*_]*[ \t]*{words.FINAL_VERBS}|{words.CJK_FINAL_KEYS}[ \t]*[:=]?)"
                r"(?P<value>[^\n]*)",
                _I,
            ),
            answer_line=(
                rf"(?:{line_start}(?:{words.POSSESSIVES}\s+)?[*_]*(?:{words.LINE_KEYS})|{words.CJK_LINE_KEYS})"
                r"(?:\s+(?:for|in)\s+this\s+round|\s+this\s+round|\s+now|\s+here)?[*_]*[ \t]*[:=](?P<value>[^\n]*)",
                _I | re.MULTILINE,
            ),
            key_value=(
                rf"[ \t>#*_\-`]*(?:(?P<final>{final_keys})|(?:{words.POSSESSIVES}\s+)?(?:{words.LINE_KEYS}))"
                rf"[ \t*_`]*[:=][ \t*_`]*{_token(keys, 'tok')}[ \t*_`.!]*",
                _I,
            ),
            mention=(_token([normalize(cooperate), normalize(defect)], "tok"), 0),
        ),
    )

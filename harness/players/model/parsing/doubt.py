"""Doubt written after an answer: "C, but honestly I'm not sure", "Answer: D. Not confident at all.".

Part of the move parser (:mod:`harness.players.model.parsing`). A reply that states a move and then says it
is unsure, undecided or torn has not chosen: reading its move would be a guess, and the parsing policy's
first rule is to refuse rather than guess (a refusal costs a re-ask; a guessed move corrupts a result).
Doubt *before* the answer is fine ("I hesitated between C and D, but my decision is D"), and so is doubt
about the other player ("Not sure what they'll do. C."), about a later round, or doubt answered in its
own sentence ("I'm not sure it's the nicest move, but it protects me."). The words are in
``harness.players.model.parsing.words.DOUBT``, in the parser's languages.
"""

from __future__ import annotations

import re

from harness.players.model.parsing.grammar import DOUBT_RE, HYPOTHETICAL_BEFORE_RE, OTHER_PLAYER_RE

_SENTENCE_ENDS = ".!?;\n"
# Doubt answered in its own sentence: "I'm not sure it's the nicest move, but it protects me."
_COUNTERED_RE = re.compile(r"\b(?:but|still|anyway|regardless|nonetheless)\b", re.IGNORECASE)


def doubts_answer(t: str, after: int) -> bool:
    """Whether ``t``, after position ``after`` (the end of the last decision), doubts its own answer."""
    for match in DOUBT_RE.finditer(t, after):
        start = max(t.rfind(ch, after, match.start()) for ch in _SENTENCE_ENDS) + 1
        # a doubt that ends its sentence ("I guess?") leaves nothing after it to answer it
        sentence_end = match.end() - 1 if t[match.end() - 1] in _SENTENCE_ENDS else match.end()
        ends = [i for i in (t.find(ch, sentence_end) for ch in _SENTENCE_ENDS) if i != -1]
        sentence = t[max(start, after) : min(ends, default=len(t))]
        rest = t[match.end() : min(ends, default=len(t))]
        if OTHER_PLAYER_RE.search(sentence) or HYPOTHETICAL_BEFORE_RE.search(sentence):
            continue  # doubt about the other player, or about a later round: "Tomorrow, who knows"
        if not _COUNTERED_RE.search(rest):
            return True
    return False

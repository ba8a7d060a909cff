"""Model free text -> a move, or the reason none could be read; and what to do when that fails.

Pure code, no I/O. Models rarely answer with a bare letter: they bold it, wrap it in JSON or
XML, reason at length and end with "Final answer: C", say "I will cooperate", correct
themselves ("Answer: C ... wait, they defected, so I will defect instead") or answer in another
language. The parser reads those forms and refuses anything it would have to guess at, because
a guessed move silently biases every metric computed from it, and the opposite of the chosen
move is the worst guess of all; a refusal instead leads to a re-ask and, at worst, a *flagged*
fallback move that analyses can exclude.

How a reply is read:

1. Normalise it (NFKC: full-width punctuation becomes ASCII; emoji become spaces; struck-out
   text, ``~~C~~``, is dropped as a draft, and so is a checklist's unticked item, "[ ] C [x] D"; "w/"
   is "with" and ":=" is ":"). When a reasoning block
   (``<think>...</think>``, or everything before a lone ``</think>``) is followed by more text,
   only that text is read: the block is a draft.
2. A reply that is one label and nothing else ("C", "**D**", "Defect.", "C (cooperate)") is
   that move (``bare``). (A reply that is one JSON object, or ends with a "Key: label" line, is
   also read at once: rules 3 to 6 would give the same, at more cost.)
3. Otherwise find every *decision* in the reply, with its position:

   - ``json``: a JSON field action/move/choice/decision/answer, in an object (fenced or not)
     or a quoted ``"key": "value"`` pair of broken JSON. Its value must name exactly one move,
     or the whole reply is refused. A field of any other key counts when its value is one move
     alone ({"selected_option": "D"}), unless the key names the other player, the past, a
     fallback or an explanation ({"opponent_last": "D"}, {"backup_action": "D"}). A move field
     repeated with another value, or asked ("D?"), refuses the reply; so does another field that
     marks the answer as unsure ("final": false, "confidence": "low" or 0.3, "tentative": true,
     "status": "undecided", a note that doubts: harness.players.model.parsing.fields).
   - ``xml``: ``<answer>X</answer>`` (also action, move, choice, decision, final_answer).
   - ``final_answer``: "Final answer/choice/move/decision: X" or "... is X" anywhere in a line,
     and ``\\boxed{X}``.
   - ``answer_line``: "Answer/Action/Move/Choice/Decision: X" at the start of a line or a
     sentence, or after "my" anywhere ("So, my move: D"); and "Key: X" or "Key => X" of any key
     of a few words that names neither the other player, the past, a condition nor another move
     ("Selected: D", "Draft answer: C", "This round: me D"; not "Opponent: D", "Last round: C").
   - ``statement``: a first-person statement, "I will / I'll / I choose / I'm going with /
     My move is / The answer is / Let's ... X", or "I cooperate." at a sentence end.
     "I'd X" / "I would X" is a *would* statement: see rule 5. A refusal of one move chooses
     the other: "I won't defect", "I refuse to cooperate", "Not D.".
   - a label alone in a sentence, named ``first_line``, ``last_line`` or ``label_line`` by
     where it stands: "C - to build trust", "...so I keep trusting them. D", "No, cooperate.";
     also with a few ordinary words around it ("ok C", "d, obviously", "Frankly, Option F."),
     none of them a condition, the other player, the past, a doubt or a comment on the move.

   A value, statement or label that names both moves ("C or D", "C/D", "C (or D ...)") is a
   decision for *both*, which is never accepted.
4. Drop what is not a decision: a statement in a question ("Should I defect?"), in a
   hypothetical or a conditional ("If I defect, ...", "I will cooperate if you cooperate",
   "In a one-shot game I would defect", "one more defection and I'll defect"), about a later
   round in any language ("Next round I'll defect", "for the rest of the game", "au prochain
   tour, je coopérerai"), about someone else's belief ("They expect that
   I will cooperate", "They said: 'I will cooperate.'") or negated anywhere before its move in
   its clause ("No coopero", "No voy a traicionar"; a refusal the grammar knows chooses the other
   move instead: "I won't defect", "Ich kooperiere diesmal nicht"); a label alone that is a
   question ("Defect?") or a heading ("C:"); a move turned into the other ("C -> D") is both.
5. Read the decisions in order. A decision *revises* the ones before it when it is an answer
   or final-answer line, or when a revision marker stands between it and the previous decision
   ("actually", "on second thought", "wait", "but", "no,", ...) or right after it in its
   clause ("instead"). A revision replaces every earlier decision; any other decision joins
   them. A would-statement never revises, nor does a statement tied to a numbered or last round
   ("in round 10 I'll defect"): the parser cannot tell whether that round is this one.
6. The decisions left must all name the same move, or the reply is refused: "C\\nD" (two labels
   with nothing to choose between them), "Answer: D\\nI'll cooperate to rebuild trust". The
   reply is also refused when, after its last decision, a change-of-mind marker is followed by
   the other move stated as if chosen ("Answer: C. Actually, D is better."): it may have changed
   its mind in words the parser does not know; or when it doubts its answer, the other move
   offered after it ("C. Although... D might be better.", "D, but maybe C is wiser").
7. Doubt after the last decision ("C, but honestly I'm not sure", "Draft: C / Final: (undecided)",
   "D. Actually, hold on.", a "final: false" line) refuses the reply, the short replies read at once
   in rule 2 included (harness.players.model.parsing.doubt and .fields); a label repeated alone ("DDDD") or a
   handshake emoji alone is read first (harness.players.model.parsing.shorthand).
8. A reply with no decision at all may still choose by the option's payoffs, when the caller passes
   the game's matrix: "I'll take the 10-point option", "Let's both take the 3 points again"
   (harness.players.model.parsing.payoff_text), or by its profile: "10 if they choose the other one",
   "5 at worst", "the 10-or-5 option". Every payoff it names must point at one move.

Labels are matched case-insensitively with letter boundaries, so "Decision" never reads as
D and "CD" is no move. Inside free prose (statements) a one-letter label must be written in
its own case, because lower-case one-letter words ("a", "i") are ordinary English, unless the whole
reply is written in lower case ("i pick c", "kk c"). The words
"cooperate"/"defect"/"betray" and their equivalents in the other fourteen languages count as
moves whatever the labels (harness.players.model.parsing.words holds that vocabulary): under
J/F, "I will cooperate" chose the cooperative option, J.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import lru_cache

from harness.game.rules import Action, PayoffMatrix
from harness.players.model.labels import ActionLabels
from harness.players.model.parsing.decisions import (
    Decision,
    InvalidStructure,
    Move,
    answer_part,
    find_decisions,
    said_present,
    second_thoughts,
    whole_reply,
)
from harness.players.model.parsing.doubt import doubts_answer
from harness.players.model.parsing.fields import lines_doubt
from harness.players.model.parsing.grammar import (
    CLAUSE_END_RE,
    JUNK,
    REVISION_AFTER_RE,
    REVISION_BEFORE_RE,
    Grammar,
    grammar,
    key,
    normalize,
)
from harness.players.model.parsing.payoff_text import move_from_payoffs
from harness.players.model.parsing.shorthand import shorthand
from harness.players.model.settings import ParsePolicy

__all__ = [
    "Move",
    "ParseResult",
    "correction_message",
    "fallback_action",
    "parse_action",
]


@dataclass(frozen=True, slots=True)
class ParseResult:
    """A canonical move, or ``reason`` why none was read. ``method`` names the rule that decided."""

    action: Action | None
    reason: str | None = None
    method: str | None = None

    @property
    def ok(self) -> bool:
        return self.action is not None


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


# --- reading a reply ---------------------------------------------------------------------


def parse_action(text: str, labels: ActionLabels, payoffs: PayoffMatrix | None = None) -> ParseResult:
    """Read the move a model chose from its reply; see the module docstring for the rules.

    ``payoffs``, the game's matrix as the prompt showed it, lets a reply that names no label choose by the
    option's payoffs ("the option where we both get 8"; rule 8); without it such a reply is unreadable."""
    if not text or not text.strip(JUNK):
        return ParseResult(None, "the reply was empty")
    g = _grammar(labels)
    short = shorthand(text, g)
    if short is not None:
        return ParseResult(short, method="bare")
    t = answer_part(normalize(text))
    try:
        quick = whole_reply(t, g)
        if quick is not None:
            if doubts_answer(t, quick.end) or lines_doubt(t, quick.end):  # "D. Actually, hold on."
                return ParseResult(None, _DOUBT.format(c=g.names[0], d=g.names[1]), quick.method)
            return ParseResult(quick.move, method=quick.method)  # type: ignore[arg-type]
        found = find_decisions(t, g)
    except InvalidStructure as invalid:
        return ParseResult(None, invalid.reason, "json")
    if not found:
        by_payoff = move_from_payoffs(t, payoffs, g)
        if by_payoff is not None and not doubts_answer(t, 0):
            return ParseResult(by_payoff, method="payoff_text")
        return ParseResult(None, _no_move_reason(t, g))
    return _resolve(found, t, g)


@lru_cache(maxsize=64)
def _grammar(labels: ActionLabels) -> Grammar:
    return grammar(labels.cooperate, labels.defect, labels.cooperate_words, labels.defect_words)


def _resolve(found: list[Decision], t: str, g: Grammar) -> ParseResult:
    """Rules 5 and 6: a revision replaces what came before it; what is left must agree."""
    found.sort(key=lambda d: d.start)
    in_force: list[Decision] = []
    previous_end = 0
    for decision in found:
        if decision.round_bound and any(not d.weak and said_present(t, d.end) for d in in_force):
            continue  # "Cooperating now; I plan to defect in the last round": a plan after this round's answer
        if in_force and not decision.weak and _revises(decision, t, previous_end):
            in_force = [decision]
        else:
            in_force.append(decision)
        previous_end = max(previous_end, decision.end)
    moves = {d.move for d in in_force}
    if len(moves) == 1 and "both" not in moves:
        if second_thoughts(t, previous_end, in_force[0].move, g):
            return ParseResult(None, _CHANGED_MIND.format(c=g.names[0], d=g.names[1]), in_force[-1].method)
        if doubts_answer(t, previous_end) or lines_doubt(t, previous_end):
            return ParseResult(None, _DOUBT.format(c=g.names[0], d=g.names[1]), in_force[-1].method)
        return ParseResult(in_force[0].move, method=in_force[0].method)  # type: ignore[arg-type]
    methods = {d.method for d in in_force}
    reason = _BOTH.get(methods.pop(), _BOTH["label"]) if len(methods) == 1 else _BOTH["label"]
    return ParseResult(None, reason.format(c=g.names[0], d=g.names[1]), in_force[-1].method)


_DOUBT = "the reply doubts its own answer; give just {c} or {d}"
_CHANGED_MIND = "the reply seems to change its mind after its last answer; give just {c} or {d}"
_BOTH = {
    "json": "the JSON in the reply names both {c} and {d}",
    "xml": "the answer tag names both {c} and {d}",
    "final_answer": "the reply gives both {c} and {d} as its final answer",
    "answer_line": "the answer line names both {c} and {d}",
    "statement": "the reply states both {c} and {d} as your move",
    "label": "the reply gives both {c} and {d} as your move",
}


def _revises(decision: Decision, t: str, previous_end: int) -> bool:
    """An answer line, or a revision marker before the decision (since the last one) or just after it."""
    # A statement's own words count too: "I'm changing my answer to D".
    marker_end = decision.end if decision.method == "statement" else decision.start
    if decision.revises or REVISION_BEFORE_RE.search(t, previous_end, marker_end):
        return True
    clause_end = CLAUSE_END_RE.search(t, decision.end)
    return bool(REVISION_AFTER_RE.search(t, decision.end, clause_end.start() if clause_end else len(t)))


def _no_move_reason(text: str, g: Grammar) -> str:
    """Say what was wrong, so the re-ask can point at it."""
    found = {g.lookup[key(m.group("tok"))] for m in g.mention.finditer(text)}
    c, d = g.names
    if len(found) == 2:
        return f"the reply mentions both {c} and {d} but never says which one you play"
    if found:
        return f"the reply mentions {c if 'C' in found else d} but does not clearly state it as your move"
    return f"the reply names neither {c} nor {d}"

"""What a prompt template sees: the variables of one round, from one player's own perspective.

Only actions cross between players: the context is built from a
:class:`~harness.game.view.RoundView` (moves, payoffs, scores), never from another model's text.
The wording is driven by the configured labels, so neutral labels (J/F) produce prompts that never
say "cooperate" or "defect". The prompt settings live here too, as most of them shape this context
(labels, history window, option order, reply format); the rest name the template files.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, model_validator

from harness.game.horizon import FixedHorizonInfo, GeometricHorizonInfo, HorizonInfo
from harness.game.rules import MAX_ROUNDS, Action, PayoffMatrix
from harness.game.view import RoundView
from harness.players.model.labels import ActionLabels

OptionOrder = Literal["CD", "DC"]
AnswerFormat = Literal["free", "json", "label"]
ORDERS: tuple[OptionOrder, OptionOrder] = ("CD", "DC")
_WORDS = {"C": "cooperate", "D": "defect"}
CACHE_BREAK = "\ue000"
"""What ``{{ cache_break }}`` writes: a private-use character that the builder cuts the prompt at and removes.
Each one marks where a prefix that later rounds repeat ends (see :class:`~harness.providers.base.CacheHints`)."""


class PromptLayout(StrEnum):
    """Which shipped templates word the prompt (a user's ``template_dir`` overrides either).

    ``cached`` (the default): what is fixed comes first and is the same in every round (the rules, the
    payoffs in a fixed order, the reply format), then the history, one line per round, only ever extended,
    then what changes (the round number, the totals, the question with this round's option order). Each
    round's prompt repeats the last one's, so a provider's prompt cache reads all but the newest lines.
    ``classic``: the layout of PDBench 0.1 (``prompts/classic/``), which starts each prompt with "This is round
    N" and so shares nothing but the system prompt with the round before; kept to replicate runs made with it.
    Both show the same facts."""

    CACHED = "cached"
    CLASSIC = "classic"


class PromptSettings(BaseModel):
    """Which templates and persona to use, how much history to show, what the moves are called, in
    which order the options are shown and in which form the model is asked to reply."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    layout: PromptLayout = Field(
        PromptLayout.CACHED,
        description="cached (the default: each round's prompt extends the last, for provider prompt caching) or "
        "classic (PDBench 0.1's prompts)",
    )
    system_template: str = "system.j2"
    round_template: str = "round.j2"
    question_template: str = "question.j2"
    template_dir: str | None = None
    persona: str | None = None
    history_window: StrictInt | None = Field(default=None, ge=1, le=MAX_ROUNDS)
    labels: ActionLabels = Field(default_factory=ActionLabels)
    shuffle_options: StrictBool = Field(
        False, description="show the two options in a seeded random order, drawn per round and seat"
    )
    shared_order: StrictBool = Field(
        False,
        description="with shuffle_options: one order per round shown to both players (as Akata et al. 2023 drew "
        "it), instead of one per round and seat",
    )
    answer_format: AnswerFormat = Field(
        "free", description="free (a reply naming one option), json ({'action': label}) or label (the label only)"
    )

    @model_validator(mode="after")
    def _shared_needs_shuffle(self) -> PromptSettings:
        if self.shared_order and not self.shuffle_options:
            raise ValueError(
                "shared_order shares the shuffled option order between the players, but shuffle_options is off: "
                "turn shuffle_options on, or remove shared_order"
            )
        return self


class Ask(BaseModel):
    """One comprehension question as the question template sees it (variable ``ask``)."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["payoff", "horizon", "last_move"]
    you: str | None = None  # payoff: your option's label
    they: str | None = None  # payoff: the other player's option's label
    round: int | None = None  # last_move: the round asked about
    expected: str  # canonical right answer (see QuestionFacts); not shown to templates

    def context(self) -> dict[str, object]:
        return {"kind": self.kind, "you": self.you, "they": self.they, "round": self.round}


def round_context(view: RoundView, settings: PromptSettings, order: OptionOrder = "CD") -> dict[str, object]:
    """Every variable the templates may use, from one player's own perspective, with the options in
    ``order`` (the canonical move shown first, then the other)."""
    labels = settings.labels
    played = len(view.own_moves)
    start = first_shown(played, settings)
    return {
        "round": view.round,
        "rounds_played": played,
        "labels": {"cooperate": labels.cooperate, "defect": labels.defect},
        "use_words": labels.uses_words,
        "options": [{"label": labels.label(m), "word": _WORDS[m]} for m in option_moves(order)],
        "options_unshuffled": [{"label": labels.label(m), "word": _WORDS[m]} for m in option_moves("CD")],
        "answer_format": settings.answer_format,
        "horizon": _horizon(view.horizon),
        "payoffs": _payoff_rows(view.payoffs, view.seat, labels, order),
        "payoffs_unshuffled": _payoff_rows(view.payoffs, view.seat, labels, "CD"),
        "history": _history_rows(view, labels, start, played),
        "counts": {"you": _counts(view.own_moves), "they": _counts(view.opponent_moves)},
        "rounds_hidden": start,
        "your_score": number_text(view.own_score),
        "their_score": number_text(view.opponent_score),
        "question": None,
        "ask": None,
        "cache_break": CACHE_BREAK,
    }


def option_moves(order: OptionOrder) -> tuple[Action, Action]:
    """The two canonical moves in the order the options are shown."""
    return ("C", "D") if order == "CD" else ("D", "C")


def first_shown(played: int, settings: PromptSettings) -> int:
    """Index of the first played round the history shows."""
    return 0 if settings.history_window is None else max(0, played - settings.history_window)


def _history_rows(view: RoundView, labels: ActionLabels, start: int, stop: int) -> list[dict[str, object]]:
    """The history rows of rounds ``start + 1`` to ``stop``."""
    own, opp, own_p, opp_p = view.own_moves, view.opponent_moves, view.own_payoffs, view.opponent_payoffs
    return [
        {
            "round": i + 1,
            "you": labels.label(own[i]),
            "they": labels.label(opp[i]),
            "you_got": number_text(own_p[i]),
            "they_got": number_text(opp_p[i]),
        }
        for i in range(start, stop)
    ]


def _counts(moves: Sequence[Action]) -> dict[str, int]:
    """How often a player chose each move over the whole game (not only the rounds the window shows)."""
    cooperations = sum(1 for m in moves if m == "C")
    return {"cooperate": cooperations, "defect": len(moves) - cooperations}


def number_text(x: float) -> str:
    """A number as prompts show it: 3.0 -> "3", 2.5 -> "2.5" (models read "3" more naturally than "3.0")."""
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def _horizon(info: HorizonInfo) -> dict[str, object]:
    """What the player may know: the length of a fixed game, only the odds of a geometric one."""
    match info:
        case FixedHorizonInfo(n_rounds):
            return {"kind": info.kind.value, "n_rounds": n_rounds}
        case GeometricHorizonInfo(continuation_prob):
            return {"kind": info.kind.value, "continuation_prob": number_text(continuation_prob)}


def payoff_outcomes(
    payoffs: PayoffMatrix, seat: str, order: OptionOrder = "CD"
) -> list[tuple[Action, Action, float, float]]:
    """The four joint outcomes as (your move, their move, your points, their points) for ``seat``, in the
    order the options are shown: (first, first), (first, second), (second, first), (second, second)."""
    table = payoffs.table()
    moves = option_moves(order)
    out: list[tuple[Action, Action, float, float]] = []
    for mine in moves:
        for theirs in moves:
            if seat == "a":
                you_get, they_get = table[(mine, theirs)]
            else:
                they_get, you_get = table[(theirs, mine)]
            out.append((mine, theirs, you_get, they_get))
    return out


def _payoff_rows(payoffs: PayoffMatrix, seat: str, labels: ActionLabels, order: OptionOrder) -> list[dict[str, str]]:
    return [
        {
            "you": labels.label(mine),
            "they": labels.label(theirs),
            "you_get": number_text(you),
            "they_get": number_text(they),
        }
        for mine, theirs, you, they in payoff_outcomes(payoffs, seat, order)
    ]

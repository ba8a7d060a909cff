"""A match a person plays by hand against a classic strategy or a mock model, round by round (the 🎮 Play
view's state and rules).

Pure code, no Streamlit. The rules are the game package's, not copied: each round goes through
:meth:`harness.game.match.Match.record` (noise, A's draw first, then B's; payoffs from the
:class:`~harness.game.rules.PayoffMatrix`), the opponent is the library's own player
(:mod:`harness.ui.play_opponent`: the registry's strategy object, so aliases such as ``Copycat`` and
settings such as ``GTFT(p=0.3)`` work, or the model player on the mock provider), and every draw comes
from the match's seed as in :func:`~harness.players.strategies.play.play_seeded`: the horizon stream fixes
the length (hidden from the person when the horizon is geometric), the noise stream the flips, stream ``b``
the opponent's dice. So a person who presses what strategy X would have played gets exactly the game
``play_seeded(X, opponent, ...)`` gives for the same seed (``tests/ui/test_play_match.py``).

The person is seat A, the opponent seat B. The opponent decides from the rounds before this one only, so
asking it after the person pressed a button does not let it peek.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from enum import StrEnum
from itertools import pairwise

from harness.errors import ConfigError
from harness.game.horizon import FixedHorizon, GeometricHorizon, Horizon
from harness.game.match import Match
from harness.game.rules import Action, PayoffMatrix
from harness.game.seeds import stream
from harness.players.strategies.play import NO_DRAWS
from harness.ui.play_opponent import Opponent, make_opponent

DEFAULT_ROUNDS = 10
MAX_ROUNDS = 100  # a match is played by hand, one click a round
MAX_NOISE = 0.5  # beyond it, flipping a move is likelier than not: the person's choice would mean nothing
MIN_STOP_PROB = 0.01  # a geometric game lasts 1 / p rounds on average: at most 100 clicks expected


class PlayState(StrEnum):
    """Where a match stands: waiting for the person's next move, or over."""

    YOUR_MOVE = "your move"
    OVER = "over"


class Outcome(StrEnum):
    """How the person's total compares with the opponent's."""

    WON = "won"
    LOST = "lost"
    TIED = "tied"


@dataclass(frozen=True, slots=True)
class PlaySettings:
    """What a match is played under: the opponent as typed (a name, an alias or ``NAME(key=value)``), the
    game, its horizon and the noise. Two matches with equal settings differ only in their seed."""

    opponent: str = "TFT"
    game: PayoffMatrix = field(default_factory=PayoffMatrix)
    horizon: Horizon = field(default_factory=lambda: FixedHorizon(DEFAULT_ROUNDS))
    noise: float = 0.0

    def check(self, seed: int = 0) -> Opponent:
        """The opponent, drawing from ``seed``'s stream ``b``; a one-paragraph :class:`ConfigError` naming every
        problem otherwise."""
        problems: list[str] = []
        opponent: Opponent | None = None
        try:
            opponent = make_opponent(self.opponent, self.game, seed)
        except ConfigError as exc:
            problems.append(str(exc))
        match self.horizon:
            case FixedHorizon(n_rounds=n) if not 1 <= n <= MAX_ROUNDS:
                problems.append(f"a match played by hand lasts 1 to {MAX_ROUNDS} rounds, not {n}")
            case GeometricHorizon(stop_prob=p) if not MIN_STOP_PROB <= p <= 1.0:
                problems.append(
                    f"the chance the game stops after a round must be between {MIN_STOP_PROB:g} and 1, not {p:g}"
                )
        if not 0.0 <= self.noise <= MAX_NOISE:
            problems.append(
                f"noise (the chance each move is flipped) must be between 0 and {MAX_NOISE:g}, not {self.noise:g}"
            )
        if problems or opponent is None:
            raise ConfigError("Cannot start the match: " + "; ".join(problems))
        return opponent


@dataclass(frozen=True, slots=True)
class PlayedRound:
    """One round as both sides saw it: each move as chosen (``intended``) and as played, and each payoff."""

    number: int  # 1-based
    yours: Action
    theirs: Action
    your_intended: Action
    their_intended: Action
    your_payoff: float
    their_payoff: float


@dataclass(slots=True)
class PlayMatch:
    """One match in progress: the person (seat A) against ``opponent`` (seat B), ``length`` rounds long."""

    settings: PlaySettings
    opponent: Opponent
    seed: int
    length: int  # drawn from the horizon stream; shown to the person only for a fixed horizon
    match: Match

    @classmethod
    def start(cls, settings: PlaySettings, seed: int) -> PlayMatch:
        """A new match; :meth:`PlaySettings.check`'s error if the settings cannot be played."""
        opponent = settings.check(seed)
        noise = settings.noise
        match = Match(settings.game, noise, stream(seed, "noise") if noise > 0 else NO_DRAWS)
        return cls(settings, opponent, seed, settings.horizon.game_length(seed), match)

    @property
    def name(self) -> str:
        """The opponent as one writes it: ``TFT``, ``GTFT(generous_prob=0.3)``, ``mock/tft``."""
        return self.opponent.label

    @property
    def rounds_played(self) -> int:
        return self.match.rounds_played

    @property
    def state(self) -> PlayState:
        return PlayState.OVER if self.rounds_played >= self.length else PlayState.YOUR_MOVE

    @property
    def known_length(self) -> int | None:
        """The number of rounds the person is told: the fixed horizon's, or None while a geometric game goes on."""
        if isinstance(self.settings.horizon, FixedHorizon) or self.state is PlayState.OVER:
            return self.length
        return None

    @property
    def your_score(self) -> float:
        return self.match.score_a

    @property
    def their_score(self) -> float:
        return self.match.score_b

    def play(self, move: Action) -> PlayedRound:
        """The person plays ``move``: the strategy answers from the rounds before this one, noise may flip
        either move, and the round is scored. Refused once the match is over."""
        if self.state is PlayState.OVER:
            raise ValueError(f"the match is over after {self.length} rounds: start a new one")
        if move not in ("C", "D"):
            raise ValueError(f"a move is C or D, not {move!r}")
        m = self.match
        theirs = self.opponent.decide(m, self.settings.horizon.known_to_players())
        m.record(move, theirs.action, flagged_b=theirs.flagged)
        return self.round(m.rounds_played)

    def round(self, number: int) -> PlayedRound:
        """Round ``number`` (1-based) as played."""
        m, i = self.match, number - 1
        return PlayedRound(
            number,
            m.moves_a[i],
            m.moves_b[i],
            m.intended_a[i],
            m.intended_b[i],
            m.payoffs_a[i],
            m.payoffs_b[i],
        )

    def rounds(self) -> list[PlayedRound]:
        return [self.round(n) for n in range(1, self.rounds_played + 1)]

    @property
    def last(self) -> PlayedRound | None:
        return self.round(self.rounds_played) if self.rounds_played else None

    def summary(self) -> Summary:
        """What happened, in a few sentences read from the rounds (see :func:`summarise`)."""
        return summarise(self)


@dataclass(frozen=True, slots=True)
class Summary:
    """The end of a match: both totals, who won, and what the strategy did, as sentences."""

    your_total: float
    their_total: float
    outcome: Outcome
    lines: list[str]


def summarise(play: PlayMatch) -> Summary:
    """Both totals and what the strategy did, each sentence counted from the rounds played: how it opened,
    whether it always played one move, how often its choice copied your last move as played, how often it
    answered your cheating with cheating, what noise flipped, and the rule it follows."""
    rounds = play.rounds()
    name = play.opponent.short
    you, them = play.your_score, play.their_score
    outcome = Outcome.WON if you > them else Outcome.LOST if you < them else Outcome.TIED
    margin = abs(you - them)
    lines = [
        f"You scored {you:g}, {name} {them:g}: "
        + ("a tie." if outcome is Outcome.TIED else f"{'you' if outcome is Outcome.WON else name} won by {margin:g}.")
    ]
    if rounds:
        chosen = [r.their_intended for r in rounds]
        lines.append(f"{name} {'cooperated' if chosen[0] == 'C' else 'cheated'} in round 1.")
        if len(set(chosen)) == 1 and len(rounds) > 1:
            lines.append(f"It chose to {_word(chosen[0])} in every round, whatever you did.")
        elif len(rounds) > 1:
            copied = sum(r.their_intended == prev.yours for prev, r in pairwise(rounds))
            after = len(rounds) - 1
            lines.append(
                f"{name} copied your last move in every round after the first ({copied} of {after})."
                if copied == after
                else f"It copied your last move in {copied} of {after} rounds after the first."
            )
            answered = [r.their_intended for prev, r in pairwise(rounds) if prev.yours == "D"]
            if answered:
                back = answered.count("D")
                lines.append(
                    f"When you cheated, it cheated back the next round {back} of {len(answered)} "
                    f"time{'s' if len(answered) != 1 else ''}."
                )
        flips_you = sum(r.yours != r.your_intended for r in rounds)
        flips_them = sum(r.theirs != r.their_intended for r in rounds)
        if play.settings.noise > 0:
            lines.append(f"Noise flipped {flips_you} of your moves and {flips_them} of {name}'s.")
        if play.match.flagged_b:
            lines.append(
                f"{len(play.match.flagged_b)} of its moves were its fallback move: its answer could not be read."
            )
    lines.append(play.opponent.rule)
    return Summary(you, them, outcome, lines)


def _word(move: Action) -> str:
    return "cooperate" if move == "C" else "cheat"


def new_seed() -> int:
    """A fresh seed for a new match (63 bits, like :func:`harness.game.seeds.derive_seed`'s)."""
    return random.SystemRandom().getrandbits(63)

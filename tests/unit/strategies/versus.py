"""Axelrod-style ``versus_test``: a strategy plays a real match against a scripted opponent.

The match is played by :mod:`harness.game.match`, the code runs use, through both of its drivers
(the synchronous one for strategy pairs and the awaited one for games with a model), which
must agree. Tests write the expected rounds out by hand, derived from the strategy's rule
and, with noise or a random strategy, from the random draws the test lists; never by running
the strategy.
"""

from __future__ import annotations

import random
from typing import Any, ClassVar

import anyio
from pydantic import BaseModel, ConfigDict, Field

from harness.game.horizon import FixedHorizonInfo
from harness.game.match import Match, play_game
from harness.game.rules import Action, PayoffMatrix
from harness.players.strategies import Strategy, make_spec
from harness.players.strategies.play import play_strategies


class ScriptParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    moves: str = Field(pattern=r"^[CD]+$")


class Scripted(Strategy):
    """Axelrod's Cycler: plays its script, over and over. It reads nothing but the round number."""

    name = "SCRIPTED"
    display_name = "Scripted"
    description = "Plays a given sequence of moves in a loop."
    emoji = "📜"
    memory_depth = 0
    counts_rounds = True
    Params: ClassVar[type[BaseModel]] = ScriptParams
    params: ScriptParams

    def move(self, own: list[Action], opp: list[Action]) -> Action:
        script = self.params.moves
        return "C" if script[len(own) % len(script)] == "C" else "D"


class NoDraws(random.Random):
    """The stream given to a strategy that declares itself deterministic: drawing from it fails."""

    def random(self) -> float:
        raise AssertionError("a strategy declared deterministic (stochastic = False) drew a random number")


def scripted(moves: str) -> Scripted:
    return Scripted(ScriptParams(moves=moves), PayoffMatrix(), NoDraws(0))


def build(name: str, params: dict[str, Any] | None = None, seed: int = 0, game: PayoffMatrix | None = None) -> Strategy:
    """A strategy as the runner builds it: a seeded stream if it declares itself stochastic, else none."""
    spec = make_spec(name, params)
    return spec.build(game or PayoffMatrix(), random.Random(seed) if spec.cls.stochastic else NoDraws(0))


def noise_flips(noise_seed: int, noise: float, rounds: int) -> tuple[str, str]:
    """Which rounds' moves noise flips, as masks ("x" flipped, "." not) for seats a and b.

    Read straight from Python's Mersenne Twister in the order :meth:`Match.record` draws
    (seat a, then seat b, each round), so a test can show the flips it derived its rounds from.
    """
    rng = random.Random(noise_seed)
    a = b = ""
    for _ in range(rounds):
        a += "x" if rng.random() < noise else "."
        b += "x" if rng.random() < noise else "."
    return a, b


def versus(
    player: Strategy | str,
    opponent: Strategy | str,
    expected: str,
    *,
    params: dict[str, Any] | None = None,
    seed: int = 0,
    noise: float = 0.0,
    noise_seed: int = 0,
    intended: str | None = None,
    seat: str = "a",
    game: PayoffMatrix | None = None,
) -> Match:
    """Play ``player`` against ``opponent`` and assert the rounds played.

    ``player`` is a built strategy or a name (built with ``params`` and stream ``seed``);
    ``opponent`` is a built strategy or a script of moves for :class:`Scripted`.
    ``expected`` lists the rounds as played, one pair per round, the player's move first:
    ``"CC CD DD"``. ``intended`` (optional) is the player's moves before noise. ``seat``
    puts the player in seat a (drawing noise first each round) or b. Returns the match.
    """
    game = game or PayoffMatrix()
    rounds = expected.split()
    assert all(len(r) == 2 and set(r) <= {"C", "D"} for r in rounds), f"bad expectation {expected!r}"
    matches = []
    for driver in ("strategies", "game"):
        me = build(player, params, seed, game) if isinstance(player, str) else player.clone()
        them = scripted(opponent) if isinstance(opponent, str) else opponent.clone()
        a, b = (me, them) if seat == "a" else (them, me)
        match = Match(game, noise, random.Random(noise_seed) if noise > 0 else NoDraws(0))
        if driver == "strategies":
            play_strategies(match, a, b, len(rounds))
        else:
            horizon = FixedHorizonInfo(len(rounds))
            anyio.run(play_game, match, a, b, len(rounds), horizon)
        matches.append(match)
    fast, awaited = matches
    assert (fast.moves_a, fast.moves_b, fast.intended_a, fast.intended_b) == (
        awaited.moves_a,
        awaited.moves_b,
        awaited.intended_a,
        awaited.intended_b,
    ), "the two match drivers disagree"
    mine, theirs, my_intent = (
        (fast.moves_a, fast.moves_b, fast.intended_a) if seat == "a" else (fast.moves_b, fast.moves_a, fast.intended_b)
    )
    got = " ".join(x + y for x, y in zip(mine, theirs, strict=True))
    assert got == " ".join(rounds), f"{player} vs {opponent}: played {got}, expected {' '.join(rounds)}"
    if intended is not None:
        assert "".join(my_intent) == intended, f"{player} intended {''.join(my_intent)}, expected {intended}"
    return fast

"""The match loop: scoring, noise (intended vs played), and the awaited path for agents."""

from __future__ import annotations

import random

import anyio

from harness.game.horizon import FixedHorizonInfo
from harness.game.match import Match, play_game
from harness.game.rules import PayoffMatrix
from harness.game.view import Decision, RoundView
from harness.players.strategies import make_spec
from harness.players.strategies.play import play_strategies

GAME = PayoffMatrix()
FIXED = FixedHorizonInfo(10)


def strat(name: str, seed: int = 0):  # type: ignore[no-untyped-def]
    return make_spec(name).build(GAME, random.Random(seed))


def test_scores_and_histories() -> None:
    m = play_strategies(Match(GAME, 0.0, random.Random(0)), strat("TFT"), strat("ALLD"), 4)
    assert "".join(m.moves_a) == "CDDD" and "".join(m.moves_b) == "DDDD"
    assert m.payoffs_a == [0, 1, 1, 1] and m.payoffs_b == [5, 1, 1, 1]
    assert (m.score_a, m.score_b) == (3, 8)
    assert m.intended_a == m.moves_a


def test_noise_records_intended_and_played_and_players_see_played() -> None:
    m = play_strategies(Match(GAME, 0.3, random.Random(9)), strat("ALLC"), strat("TFT"), 400)
    assert set(m.intended_a) == {"C"}
    flipped = [i for i, (x, y) in enumerate(zip(m.intended_a, m.moves_a, strict=True)) if x != y]
    assert 80 < len(flipped) < 160  # ~120 expected
    # TFT reacts to A's move as played, not as intended: its intention copies the played move.
    for i in range(1, 400):
        assert m.intended_b[i] == m.moves_a[i - 1]
    # Payoffs follow the played moves.
    for i in range(400):
        assert (m.payoffs_a[i], m.payoffs_b[i]) == GAME.table()[(m.moves_a[i], m.moves_b[i])]


class ScriptedAgent:
    """An awaited player that records what it was shown (stands in for a model)."""

    def __init__(self, name: str, moves: str) -> None:
        self.name = name
        self.moves = moves
        self.views: list[RoundView] = []
        self.running = 0
        self.max_running = 0

    async def act(self, view: RoundView) -> Decision:
        self.views.append(view)
        self.running += 1
        self.max_running = max(self.max_running, self.running)
        await anyio.sleep(0.001)
        self.running -= 1
        return Decision(self.moves[view.round - 1])  # type: ignore[arg-type]


async def test_awaited_agent_against_a_strategy_matches_the_fast_path() -> None:
    agent = ScriptedAgent("script", "CCDCD")
    m = await play_game(Match(GAME, 0.0, random.Random(0)), agent, strat("TFT"), 5, FIXED)
    fast = Match(GAME, 0.0, random.Random(0))
    for x, y in zip("CCDCD", "CCCDC", strict=True):
        fast.record(x, y)  # type: ignore[arg-type]
    assert (m.moves_a, m.moves_b, m.score_a, m.score_b) == (fast.moves_a, fast.moves_b, fast.score_a, fast.score_b)
    last = agent.views[-1]
    assert last.round == 5 and last.seat == "a"
    assert list(last.own_moves) == list("CCDC") and list(last.opponent_moves) == list("CCCD")
    assert last.own_score == m.score_a - m.payoffs_a[-1]
    assert last.horizon.n_rounds == 10


async def test_two_agents_are_asked_at_the_same_time() -> None:
    shared = {"running": 0, "max": 0}

    class Concurrent(ScriptedAgent):
        async def act(self, view: RoundView) -> Decision:
            shared["running"] += 1
            shared["max"] = max(shared["max"], shared["running"])
            await anyio.sleep(0.01)
            shared["running"] -= 1
            return Decision("C")

    a, b = Concurrent("a", ""), Concurrent("b", "")
    m = await play_game(Match(GAME, 0.0, random.Random(0)), a, b, 3, FIXED)
    assert m.rounds_played == 3 and shared["max"] == 2


async def test_flagged_decisions_are_kept() -> None:
    class Fallback(ScriptedAgent):
        async def act(self, view: RoundView) -> Decision:
            return Decision("D", flagged=True)

    m = await play_game(Match(GAME, 0.0, random.Random(0)), Fallback("x", ""), strat("ALLC"), 2, FIXED)
    assert m.flagged_a == [1, 2] and m.flagged_b == []


def test_noiseless_fast_path_equals_round_by_round_recording() -> None:
    for name_a, name_b in [("GTFT", "ALLD"), ("WSLS", "RAND"), ("GRADUAL", "ALT")]:
        fast = play_strategies(Match(GAME, 0.0, random.Random(0)), strat(name_a, 1), strat(name_b, 2), 150)
        slow = Match(GAME, 0.0, random.Random(0))
        a, b = strat(name_a, 1), strat(name_b, 2)
        for _ in range(150):
            slow.record(a.move(slow.moves_a, slow.moves_b), b.move(slow.moves_b, slow.moves_a))
        assert (fast.moves_a, fast.moves_b, fast.intended_a, fast.intended_b) == (
            slow.moves_a,
            slow.moves_b,
            slow.intended_a,
            slow.intended_b,
        )
        assert (fast.payoffs_a, fast.payoffs_b, fast.score_a, fast.score_b) == (
            slow.payoffs_a,
            slow.payoffs_b,
            slow.score_a,
            slow.score_b,
        )


def test_a_seeded_game_is_the_same_game_whoever_plays_it() -> None:
    from harness.game.horizon import FixedHorizon, GeometricHorizon
    from harness.game.rules import PayoffMatrix
    from harness.players.strategies import make_spec
    from harness.players.strategies.play import play_seeded

    gtft, alld = make_spec("GTFT", {"generous_prob": 0.5}), make_spec("ALLD")
    horizon = GeometricHorizon(0.1)
    first = play_seeded(gtft, alld, PayoffMatrix(), horizon, 0.1, seed=42)
    again = play_seeded(gtft, alld, PayoffMatrix(), horizon, 0.1, seed=42)
    assert (first.moves_a, first.moves_b, first.score_a) == (again.moves_a, again.moves_b, again.score_a)
    other = play_seeded(gtft, alld, PayoffMatrix(), horizon, 0.1, seed=43)
    assert (first.moves_a, first.moves_b) != (other.moves_a, other.moves_b)
    fixed = play_seeded(make_spec("TFT"), alld, PayoffMatrix(), FixedHorizon(5), 0.0, seed=0)
    assert "".join(fixed.moves_a) == "CDDDD" and (fixed.score_a, fixed.score_b) == (4.0, 9.0)

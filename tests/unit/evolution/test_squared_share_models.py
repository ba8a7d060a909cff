"""Language models in the squared_share dynamics (Payne & Alloui-Cros's phases): every pair of individual agents
plays one match a phase; the matches with a model in a seat are one engine run a phase (``<run id>_phase<k>``),
the others are played in process, and the update reads both.

Worked through on a small population (2 strategies × 2 agents + one model × 2 agents, stop probability 0.5, at
most 4 rounds) with the mock provider: each phase run holds exactly the model matches of that phase's population,
each as long as its own seed draws; the tallies the update used are recomputed from the stored games (SQL over
the phase runs) plus the strategy matches replayed here with the game function; the same seed gives the same run,
(tests/integration/test_evolve_squared_share_models.py: answered from the response cache); a phase run that
stopped is resumed by the same run id.
"""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import numpy as np
import pytest

from harness.config.engine_options import EngineOptions
from harness.engine.evolution.phases import PhaseGames, phase_run_id, unfinished
from harness.engine.evolution.run import EvolutionOutcome, run_evolution
from harness.engine.interrupts import StopFlag
from harness.errors import ConfigError
from harness.evolution import EvolutionSettings, evolve
from harness.evolution.squared_share import next_counts
from harness.game.horizon import GeometricHorizon
from harness.game.seeds import derive_seed
from harness.players.strategies import parse_spec
from harness.players.strategies.play import play_seeded
from harness.states import RunStatus
from harness.store.catalog import Catalog
from harness.store.evolution_writer import read_evolution

PLAYERS = ["TFT", "ALLD", "mock/random"]
STOP, CAP, SEED = 0.5, 4, 11


def settings(**changes: object) -> EvolutionSettings:
    base: dict[str, object] = {
        "dynamics": "squared_share",
        "players": PLAYERS,
        "counts": [2, 2, 2],
        "generations": 1,
        "horizon": {"type": "geometric", "stop_prob": STOP, "max_rounds": CAP},
        "seed": SEED,
    }
    return EvolutionSettings.model_validate({**base, **changes})


def play(results: Path, run_id: str, *, stop: StopFlag | None = None, again: bool = False) -> EvolutionOutcome:
    s = settings()
    engine = EngineOptions(cache_path=results / ".cache" / "responses.sqlite")
    phases = PhaseGames(s, results, run_id, engine=engine, stop=stop)
    return run_evolution(s, results_dir=results, run_id=run_id, stop=stop, model_matches=phases, overwrite=again)


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One run ``ev`` of the population (its evolution file and its phase runs), shared by the tests that read it."""
    results = tmp_path_factory.mktemp("results")
    assert play(results, "ev").status == RunStatus.COMPLETE
    return results


def query(
    results: Path, sql: str, params: list[object] | None = None, runs: list[str] | None = None
) -> list[tuple[object, ...]]:
    """The rows of ``sql`` over the runs of ``results`` (only ``runs`` if given; else the run ids in ``params``)."""
    with Catalog(results, runs or list(dict.fromkeys(str(p) for p in params or [])) or None) as cat:
        return list(cat.query(sql, params or [])[1])


def agents_of(counts: np.ndarray) -> list[int]:
    """The phase's agents in population order: each a player index."""
    return np.repeat(np.arange(len(counts)), counts).tolist()


def test_each_phase_run_holds_exactly_its_model_matches_each_as_long_as_its_seed_draws(played: Path) -> None:
    results = played
    _, trajectory = read_evolution(results, "ev")
    horizon = GeometricHorizon(STOP, CAP)
    phases_with_models = 0
    for generation, counts in enumerate(trajectory.population):
        agents = agents_of(counts)
        wanted = {
            (i, j)
            for i, j in combinations(range(len(agents)), 2)
            if "/" in PLAYERS[agents[i]] or "/" in PLAYERS[agents[j]]
        }
        rid = phase_run_id("ev", generation)
        games = query(
            results,
            "SELECT condition, player_a, player_b, horizon, stop_prob, planned_rounds, rounds_played, seed, status "
            "FROM games WHERE run_id = ? ORDER BY game_id",
            [rid],
        )
        if not wanted:  # the model is extinct: no phase run at all
            assert not (results / f"{rid}.duckdb").exists()
            continue
        phases_with_models += 1
        assert len(games) == len(wanted)  # one game a model match, none of two strategies
        for condition, a, b, kind, stop_prob, planned, played, seed, status in games:
            i, j = (int(part.removeprefix("agent")) for part in str(condition).split("_") if part.startswith("agent"))
            assert (i, j) in wanted and (a, b) == (PLAYERS[agents[i]], PLAYERS[agents[j]])
            wanted.discard((i, j))
            # the model is told the stop probability (a geometric horizon), never the length
            assert (kind, stop_prob, status) == ("geometric", STOP, "complete")
            # each game's own length: drawn from its seed, which is the run seed and its condition (phase, agents)
            assert seed == derive_seed(SEED, str(condition), 0)
            assert played == planned == horizon.game_length(int(str(seed)))
        assert not wanted
    assert phases_with_models >= 1
    lengths = {row[0] for row in query(results, "SELECT DISTINCT rounds_played FROM games")}
    assert len(lengths) > 1  # matches differ in length


def test_the_update_read_the_tallies_of_the_stored_games_and_the_strategy_matches(played: Path) -> None:
    results = played
    s = settings()
    _, trajectory = read_evolution(results, "ev")
    specs = {p: parse_spec(p) for p in PLAYERS if "/" not in p}
    stored = {
        (int(str(g)), str(p)): (float(str(pts)), int(str(r)), int(str(m)))
        for g, p, pts, r, m in query(
            results, "SELECT generation, player, points, rounds, matches FROM phase_scores WHERE run_id = ?", ["ev"]
        )
    }
    for generation, counts in enumerate(trajectory.population):
        tally = {p: [0.0, 0, 0] for p in PLAYERS}

        def add(player: str, points: float, rounds: int, tally: dict[str, list[float]] = tally) -> None:
            tally[player][0] += points
            tally[player][1] += rounds
            tally[player][2] += 1

        # the model matches, from the phase run's stored games (both seats)
        for player, points, rounds, matches in query(
            results,
            "SELECT player, sum(points), sum(rounds), count(*) FROM ("
            " SELECT player_a AS player, score_a AS points, rounds_played AS rounds FROM games WHERE run_id = ?"
            " UNION ALL"
            " SELECT player_b, score_b, rounds_played FROM games WHERE run_id = ?) GROUP BY player",
            [phase_run_id("ev", generation)] * 2,
        ):
            tally[str(player)][0] += float(str(points))
            tally[str(player)][1] += int(str(rounds))
            tally[str(player)][2] += int(str(matches))
        # the strategy matches, played again here from their seeds
        agents = agents_of(counts)
        for i, j in combinations(range(len(agents)), 2):
            a, b = PLAYERS[agents[i]], PLAYERS[agents[j]]
            if a in specs and b in specs:
                seed = derive_seed(SEED, "evolution", "phase", generation, i, j)
                match = play_seeded(specs[a], specs[b], s.payoff_matrix, s.game_horizon, 0.0, seed)
                add(a, match.score_a, match.rounds_played)
                add(b, match.score_b, match.rounds_played)
        alive = [p for p, c in zip(PLAYERS, counts, strict=True) if c > 0]
        for player in alive:
            points, rounds, matches = stored[(generation, player)]
            assert (points, rounds, matches) == (tally[player][0], tally[player][1], tally[player][2])
            assert matches == counts[PLAYERS.index(player)] * (sum(counts) - 1)  # each agent meets every other
        if generation + 1 < len(trajectory.population):
            present = {p: int(c) for p, c in zip(PLAYERS, counts, strict=True) if c > 0}
            fitness = {p: tally[p][0] / tally[p][1] for p in present}
            after = next_counts(present, fitness)
            assert [after.get(p, 0) for p in PLAYERS] == trajectory.population[generation + 1].tolist()


SCORES = "SELECT generation, player, points, rounds, matches FROM phase_scores WHERE run_id = ? ORDER BY 1, 2"
GAMES = "SELECT condition, rounds_played, score_a, score_b FROM games WHERE run_id = ? ORDER BY condition"


def same_run(results: Path, run_id: str, played: Path) -> None:
    """Run ``run_id`` of ``results`` is run ``ev`` of ``played`` again: its populations, the tallies its updates
    read, and every phase run's games."""
    _, this = read_evolution(results, run_id)
    _, ev = read_evolution(played, "ev")
    assert np.array_equal(this.population, ev.population)
    assert query(results, SCORES, [run_id]) == query(played, SCORES, ["ev"])
    for generation in range(len(ev.population)):
        games = query(played, GAMES, [phase_run_id("ev", generation)])
        assert query(results, GAMES, [phase_run_id(run_id, generation)]) == games


@pytest.mark.slow
def test_the_same_seed_replays_the_same_run(results: Path, played: Path) -> None:
    """The mock computes its answers again (it is never cached): the same seed gives the same games, phase by phase
    (tests/integration/test_evolve_squared_share_models.py shows the second run answered from the cache)."""
    play(results, "two")
    same_run(results, "two", played)


class StopAfter(StopFlag):
    """A stop flag that sets itself the ``n``-th time it is asked: a Ctrl-C in the middle of a phase run."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.left = n

    def is_set(self) -> bool:
        self.left -= 1
        if self.left < 0 and not super().is_set():
            self.set("stopped by the test")
        return super().is_set()

    __bool__ = is_set


@pytest.mark.slow
def test_a_phase_run_that_stopped_is_resumed_by_the_same_run_id(results: Path, played: Path) -> None:
    stopped = play(results, "ev", stop=StopAfter(3))
    assert stopped.status == RunStatus.INTERRUPTED and "phase 0" in (stopped.reason or "")
    [(status, done)] = query(
        results, "SELECT r.status, (SELECT count(*) FROM games g WHERE g.run_id = r.run_id AND g.status = 'complete') "
        "FROM runs r WHERE run_id = 'ev_phase0'", runs=["ev_phase0"],
    )  # fmt: skip
    assert status == "interrupted"
    assert unfinished(results, "ev", settings())
    resumed = play(results, "ev", again=True)  # the evolution file played again; its phase runs resumed, not redone
    assert resumed.status == RunStatus.COMPLETE and not unfinished(results, "ev", settings())
    same_run(results, "ev", played)  # as if it had never stopped
    assert int(str(done)) < len(query(results, GAMES, ["ev_phase0"]))  # it had stopped before its end


def test_without_a_way_to_play_them_a_model_population_is_refused() -> None:
    with pytest.raises(ConfigError, match="played through the engine"):
        evolve(settings())
    with pytest.raises(ConfigError, match="model_matches"):
        run_evolution(settings(), results_dir=Path("/nonexistent"), run_id="x")

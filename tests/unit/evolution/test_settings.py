"""Evolution settings: what users type becomes a population, and every bad input is refused with a message
that says what to do, all problems at once, as a ConfigError (never a pydantic traceback)."""

from __future__ import annotations

import numpy as np
import pytest

from harness.errors import ConfigError
from harness.evolution import (
    Dynamics,
    EvolutionSettings,
    Fitness,
    PayoffMode,
    PayoffSource,
    PayoffTable,
    Score,
    evolve,
)
from harness.game.horizon import FixedHorizon, GeometricHorizon
from harness.game.rules import PayoffMatrix


def refused(**settings: object) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        EvolutionSettings(**settings)  # type: ignore[arg-type]
    return caught.value


def test_players_are_read_as_typed_and_kept_under_their_labels() -> None:
    s = EvolutionSettings(players=["tft", " ALLD ", "gtft(p=0.3)", "RAND(p=0.5)", "mock/tft"], counts=[1, 2, 3, 4, 5])
    assert s.players == ["TFT", "ALLD", "GTFT(generous_prob=0.3)", "RAND", "mock/tft"]
    assert s.models == ["mock/tft"]
    specs = s.specs
    assert specs[2] is not None and specs[2].params.generous_prob == 0.3  # type: ignore[attr-defined]
    assert specs[4] is None
    assert s.size == 15
    assert s.initial_counts.tolist() == [1, 2, 3, 4, 5]
    assert s.initial_shares.tolist() == pytest.approx([1 / 15, 2 / 15, 3 / 15, 4 / 15, 5 / 15])


def test_defaults() -> None:
    s = EvolutionSettings(players=["TFT", "ALLD"], counts=[5, 5])
    assert s.dynamics == Dynamics.generational
    assert s.fitness == Fitness.linear and s.selection == 1.0 and s.score == Score.per_round
    assert s.payoff_mode == PayoffMode.exact
    assert s.payoff_matrix == PayoffMatrix.from_rstp(R=3, S=0, T=5, P=1)
    assert s.game_horizon == FixedHorizon(200)
    assert (s.noise, s.mutation, s.k, s.seed) == (0.0, 0.0, 1, 0)


def test_enums_matrix_and_horizon_are_read_from_plain_values() -> None:
    s = EvolutionSettings(
        players=["TFT", "ALLD"],
        counts=[5, 5],
        dynamics="Moran",
        fitness="EXPONENTIAL",
        payoff_mode="estimated",
        payoff_matrix={"C": {"C": [2, 2], "D": [-1, 3]}, "D": {"C": [3, -1], "D": [0, 0]}},
        horizon={"type": "geometric", "stop_prob": 0.1},
    )
    assert (s.dynamics, s.fitness, s.payoff_mode) == (Dynamics.moran, Fitness.exponential, PayoffMode.estimated)
    assert s.payoff_matrix == PayoffMatrix.from_rstp(R=2, S=-1, T=3, P=0)
    assert s.game_horizon == GeometricHorizon(0.1)
    assert EvolutionSettings(players=["TFT", "ALLD"], counts=[1, 1], horizon=FixedHorizon(7)).game_horizon == (
        FixedHorizon(7)
    )


def test_shares_become_counts_by_largest_remainder() -> None:
    # 10 x (0.25, 0.25, 0.5) = 2.5, 2.5, 5: one individual left over, to the first of the tied remainders.
    s = EvolutionSettings(players=["TFT", "ALLD", "ALLC"], shares=[0.25, 0.25, 0.5], population=10)
    assert s.initial_counts.tolist() == [3, 2, 5]
    # 7 x (0.3, 0.3, 0.4) = 2.1, 2.1, 2.8: floors 2, 2, 2, and the one left goes to the largest remainder.
    s = EvolutionSettings(players=["TFT", "ALLD", "ALLC"], shares=[0.3, 0.3, 0.4], population=7)
    assert s.initial_counts.tolist() == [2, 2, 3]
    assert s.initial_counts.dtype == np.int64
    # within 1e-9 of 1 is accepted
    EvolutionSettings(players=["TFT", "ALLD", "ALLC"], shares=[1 / 3, 1 / 3, 1 / 3 + 5e-10], population=9)


def test_the_replicator_reads_shares_without_a_population() -> None:
    s = EvolutionSettings(players=["TFT", "ALLD"], shares=[0.2, 0.8], dynamics="replicator")
    assert s.initial_shares.tolist() == [0.2, 0.8]


def test_every_problem_is_reported_at_once() -> None:
    err = refused(players=["TFT", "FOO", "BAR(p=1)"], counts=[1, 1, 1], noise=-0.1, mutation=1.5, selection=-1)
    text = str(err)
    assert text.startswith("the evolution settings have 4 problems; fix each and run again:")
    assert "unknown strategies 'FOO', 'BAR(p=1)'; known strategies: ALLC, ALLD, TFT" in text  # no near name
    assert "noise: Input should be greater than or equal to 0" in text
    assert "mutation: Input should be less than or equal to 1" in text
    assert "selection: Input should be greater than or equal to 0" in text
    assert len(err.problems) == 4
    assert "Traceback" not in text and "pydantic" not in text


def test_population_problems_are_reported_together() -> None:
    err = refused(players=["TFT", "ALLD", "ALLC"], counts=[1, 0, 1], population=3, k=2)
    assert err.problems == [
        "counts [1, 0, 1]: every player needs at least one individual; drop a player to leave it out",
        "counts sum to 2, not to the population size 3: make them add up, or leave population out",
        "k = 2 replaces more than half of a population of 3: the trust rule removes the k lowest scorers and "
        "copies the k highest, so k must be at most 1",
    ]


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"shares": [0.3, 0.6], "population": 10}, "shares sum to 0.9, not 1 (within 1e-09): make them add up to 1"),
        ({"shares": [0.5, 0.5 + 2e-9], "population": 10}, "shares sum to 1.000000002, not 1"),
        ({"shares": [0.5, 0.5]}, "shares need a population size (population N)"),
        ({"shares": [0.0, 1.0], "population": 10}, "each must be above 0 and at most 1"),
        ({"shares": [0.01, 0.99], "population": 10}, "the shares give no individual to TFT: raise the population"),
        ({"shares": [1.0], "population": 10}, "shares has 1 numbers for 2 players: give one per player"),
        ({"counts": [1, 2, 3]}, "counts has 3 numbers for 2 players"),
        ({"counts": [1, 1], "shares": [0.5, 0.5]}, "either as counts (individuals per player"),
        ({}, "neither was given"),
        ({"shares": [0.5, 0.5], "population": 1}, "population: Input should be greater than or equal to 2"),
        ({"counts": [1, 1], "k": 2}, "k must be at most 1"),
        ({"counts": [1, 1], "k": 0}, "k: Input should be greater than or equal to 1"),
        ({"counts": [1, 1], "generations": 0}, "generations: Input should be greater than or equal to 1"),
        ({"counts": [1, 1], "selection": float("nan")}, "selection"),
        ({"counts": [1, 1], "selection": float("inf")}, "selection"),
        ({"counts": [1, 1], "mutation": -0.01}, "mutation: Input should be greater than or equal to 0"),
        ({"counts": [1, 1], "noise": 1.5}, "noise: Input should be less than or equal to 1"),
        ({"counts": [1, 1], "seed": -1}, "seed: Input should be greater than or equal to 0"),
        ({"counts": [1, 1], "replicates": 0}, "replicates: Input should be greater than or equal to 1"),
        ({"counts": [1, 1], "dynamics": "wright-fisher"}, "dynamics: 'wright-fisher' is not one of moran,"),
        ({"counts": [1, 1], "fitness": "quadratic"}, "fitness: 'quadratic' is not one of exponential, linear"),
        ({"counts": [1, 1], "payoff_mode": "guess"}, "payoff_mode: 'guess' is not one of exact, estimated"),
        ({"counts": [1, 1], "score": "total"}, "score: 'total' is not one of per_round, match_total"),
        ({"counts": [1, 1], "horizon": {"type": "geometric"}}, "a geometric horizon needs stop_prob"),
        ({"counts": [1, 1], "payoff_matrix": {"C": {}}}, "payoff_matrix must have exactly the rows C and D"),
        ({"counts": [1, 1], "rounds": 10}, "rounds: is not a setting (settings: dynamics, players"),
        ({"counts": [1, 1], "noise": True}, "noise: Input should be a valid number"),
        ({"counts": [1, 1], "dynamics": "replicator", "mutation": 0.1}, "the replicator dynamics here has no mutation"),
    ],
)
def test_bad_settings_are_refused_with_what_to_do(settings: dict[str, object], message: str) -> None:
    assert message in str(refused(players=["TFT", "ALLD"], **settings))


def test_population_smaller_than_the_players() -> None:
    err = refused(players=["TFT", "ALLD", "ALLC"], shares=[0.2, 0.3, 0.5], population=2)
    assert "a population of 2 is smaller than the 3 players: every player needs at least one individual, so raise " in (
        str(err)
    )


@pytest.mark.parametrize(
    ("players", "message"),
    [
        (["TFT"], "players: List should have at least 2 items"),
        (["TFT", "tft"], "TFT is named twice: name each player once"),
        (["GTFT(p=0.3)", "GTFT(generous_prob=0.3)"], "GTFT(generous_prob=0.3) is named twice"),
        (["TFT", "GTFT(q=1)"], "GTFT has no parameter 'q' (parameters: generous_prob (or p))"),
        (["TFT", "GTFT(p=2)"], "GTFT.p: Input should be less than or equal to 1"),
        (["TFT", "GTFT(p"], "is not a strategy as written on one line"),
        (["TFT", ""], "a player is empty"),
        (["TFT", "openai/"], "names no model"),
    ],
)
def test_bad_players_are_refused(players: list[str], message: str) -> None:
    assert message in str(refused(players=players, counts=[1] * len(players)))


def test_model_validate_raises_a_config_error_too() -> None:
    with pytest.raises(ConfigError, match="unknown strategy 'NOPE'"):
        EvolutionSettings.model_validate({"players": ["TFT", "NOPE"], "counts": [1, 1]})
    s = EvolutionSettings.model_validate({"players": ["TFT", "ALLD"], "counts": [1, 1]})
    assert s.players == ["TFT", "ALLD"]


def test_a_model_in_the_population_needs_a_payoff_table() -> None:
    s = EvolutionSettings(players=["TFT", "mock/tft"], counts=[5, 5])
    with pytest.raises(ConfigError, match=r"mock/tft is a language model, whose payoffs come from games played"):
        evolve(s)
    trajectory = evolve(s, payoffs=np.array([[600.0, 600.0], [600.0, 600.0]]))
    assert trajectory.payoffs.source == "supplied"


@pytest.mark.parametrize(
    "table",
    [np.zeros((3, 3)), np.array([[1.0, np.nan], [1.0, 1.0]]), [[1, 2], [3]], "table"],
    ids=["wrong shape", "nan", "ragged", "text"],
)
def test_a_supplied_table_that_does_not_fit_is_refused(table: object) -> None:
    s = EvolutionSettings(players=["TFT", "ALLD"], counts=[5, 5])
    with pytest.raises(ConfigError, match=r"must be a 2×2 table of finite numbers"):
        evolve(s, payoffs=table)  # type: ignore[arg-type]


def test_a_supplied_payoff_table_keeps_its_match_counts_and_must_name_the_players() -> None:
    s = EvolutionSettings(players=["TFT", "mock/tft"], counts=[5, 5], generations=3)
    given = PayoffTable(
        ("TFT", "mock/tft"), np.full((2, 2), 600.0), np.array([[1, 20], [20, 20]]), PayoffSource.supplied
    )
    table = evolve(s, payoffs=given).payoffs
    assert table.values.tolist() == [[600, 600], [600, 600]] and table.matches.tolist() == [[1, 20], [20, 20]]
    other = PayoffTable(("mock/tft", "TFT"), np.zeros((2, 2)), np.ones((2, 2)), PayoffSource.supplied)
    with pytest.raises(ConfigError, match="is for the players mock/tft, TFT, not for this population's TFT, mock/tft"):
        evolve(s, payoffs=other)


def test_settings_round_trip_through_json() -> None:
    s = EvolutionSettings(
        players=["gtft(p=0.3)", "ALLD", "RAND(p=0.7)"], shares=[0.5, 0.25, 0.25], population=20, dynamics="trust",
        k=3, horizon=GeometricHorizon(0.1, 40), noise=0.02, fitness="exponential", selection=0.01,
        payoff_matrix=PayoffMatrix.from_rstp(R=2, S=-1, T=3, P=0), payoff_mode="estimated", replicates=9, seed=4,
    )  # fmt: skip
    dumped = s.model_dump(mode="json")
    assert dumped["payoff_matrix"] == {"C": {"C": [2, 2], "D": [-1, 3]}, "D": {"C": [3, -1], "D": [0, 0]}}
    assert dumped["players"] == ["GTFT(generous_prob=0.3)", "ALLD", "RAND(p=0.7)"]
    assert EvolutionSettings.model_validate(dumped) == s
    assert EvolutionSettings.model_validate_json(s.model_dump_json()) == s
    with pytest.raises(ConfigError, match="players: List should have at least 2 items"):
        EvolutionSettings.model_validate_json('{"players": ["TFT"], "counts": [1]}')


def test_a_replicator_given_shares_only_has_no_individuals_to_count() -> None:
    s = EvolutionSettings(players=["TFT", "ALLD"], shares=[0.2, 0.8], dynamics="replicator")
    with pytest.raises(ConfigError, match="shares without a population size"):
        _ = s.size


def test_stored_settings_without_a_score_are_match_totals() -> None:
    new = EvolutionSettings(players=["TFT", "ALLD"], counts=[5, 5], score="MATCH_TOTAL")
    assert new.score == Score.match_total
    stored = EvolutionSettings(players=["TFT", "ALLD"], counts=[5, 5]).model_dump(mode="json")
    assert EvolutionSettings.from_stored(stored).score == Score.per_round  # stored with the setting: as stored
    del stored["score"]
    assert EvolutionSettings.from_stored(stored).score == Score.match_total  # before it existed: match totals

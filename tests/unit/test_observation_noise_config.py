"""The ``noise`` section with observation noise beside execution noise, and ``--observation-noise``: every form
that was valid keeps its meaning (execution noise), bad input is one clear problem before anything runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.config.loading import parse_experiment
from harness.config.plan import condition_plans
from harness.errors import ConfigError
from tests.support.cli import pdbench, sql_json


def _config(noise: Any, condition_noise: Any = None) -> Any:
    cond: dict[str, Any] = {"agent_a": {"policy": "TFT"}, "agent_b": {"policy": "TFT"}}
    if condition_noise is not None:
        cond["noise"] = condition_noise
    return parse_experiment({"noise": noise, "experiment": {"conditions": [cond]}}, source="x", fix_hint="")


@pytest.mark.parametrize(
    ("noise", "execution", "observation"),
    [
        (0.05, 0.05, 0.0),  # the shorthand stays execution noise
        ({"prob": 0.05}, 0.05, 0.0),  # the stored form of every recorded run
        ({"execution": 0.05}, 0.05, 0.0),
        ({"execution": 0.05, "observation": 0.1}, 0.05, 0.1),
        ({"observation": 0.2}, 0.0, 0.2),
        ({"observation": 1}, 0.0, 1.0),
    ],
)
def test_noise_forms(noise: Any, execution: float, observation: float) -> None:
    config = _config(noise)
    plan = condition_plans(config)[0]
    assert (plan.noise, plan.observation_noise) == (execution, observation)
    # Stored as the resolved config: ``prob`` stays the name of the execution noise, so queries on it hold.
    assert config.noise.model_dump(mode="json") == {"prob": execution, "observation": observation}
    assert _config(config.noise.model_dump(mode="json")).noise == config.noise  # read back alike


def test_a_condition_with_its_own_observation_noise_is_named_by_it() -> None:
    config = _config(0.0, {"execution": 0.05, "observation": 0.1})
    plan = condition_plans(config)[0]
    assert plan.name == "TFT_vs_TFT[noise=0.05,observation=0.1]"
    assert (plan.noise, plan.observation_noise) == (0.05, 0.1)


@pytest.mark.parametrize(
    ("noise", "problem"),
    [
        ({"observation": 1.5}, "noise.observation: Input should be less than or equal to 1"),
        ({"observation": -0.1}, "noise.observation: Input should be greater than or equal to 0"),
        ({"execution": 2}, "noise.execution: Input should be less than or equal to 1"),
        ({"observation": "0.1"}, "noise.observation: '0.1' is a quoted string, not a number"),
        ({"execution": 0.1, "prob": 0.1}, "noise gives both execution and prob, two names of the execution noise"),
        ({"observe": 0.1}, "noise.observe"),
    ],
)
def test_bad_noise_is_one_problem_named_by_its_key(noise: Any, problem: str) -> None:
    with pytest.raises(ConfigError) as caught:
        _config(noise)
    assert "1 problem" in str(caught.value) and problem in str(caught.value)


def test_validate_reports_bad_observation_noise(tmp_path: Path) -> None:
    config = tmp_path / "bad.yaml"
    config.write_text(
        "noise: {execution: 0.05, observation: 2}\nexperiment:\n  conditions:\n"
        "    - {agent_a: {policy: TFT}, agent_b: {policy: TFT}}\n"
    )
    code, _out, err = pdbench("validate", config)
    assert code != 0
    assert "noise.observation: Input should be less than or equal to 1" in err and "Traceback" not in err


@pytest.mark.slow  # a whole tournament through the CLI, ~3 s
def test_the_tournament_option_records_observation_noise(tmp_path: Path) -> None:
    results = tmp_path / "results"
    code, _out, err = pdbench(
        "tournament", "--players", "TFT,WSLS", "--rounds", "30", "--noise", "0.05",
        "--observation-noise", "0.1", "--results", results, "--run-id", "t",
    )  # fmt: skip
    assert code == 0, err
    rows = sql_json(results, "SELECT DISTINCT noise, observation_noise FROM games")
    assert rows == [{"noise": 0.05, "observation_noise": 0.1}]
    seen = sql_json(results, "SELECT count(*) AS n FROM rounds WHERE observed_a != action_b OR observed_b != action_a")
    assert seen[0]["n"] > 0


def test_a_suite_refuses_observation_noise(tmp_path: Path) -> None:
    code, _out, err = pdbench("eval", "--suite", "fontana2025", "--model", "mock/tft", "--observation-noise", "0.1")
    assert code != 0 and "--observation-noise (the noise) cannot be given with it" in err


def test_evolution_settings_store_observation_noise_only_when_given() -> None:
    from harness.evolution import EvolutionSettings

    plain = EvolutionSettings.model_validate({"players": ["TFT", "ALLD"], "counts": [5, 5], "noise": 0.05})
    assert "observation_noise" not in plain.model_dump(mode="json")  # runs stored before it keep their config_json
    seen = EvolutionSettings.model_validate({"players": ["TFT", "ALLD"], "counts": [5, 5], "observation_noise": 0.1})
    assert seen.model_dump(mode="json")["observation_noise"] == 0.1
    with pytest.raises(ConfigError, match="observation_noise: Input should be less than or equal to 1"):
        EvolutionSettings.model_validate({"players": ["TFT", "ALLD"], "counts": [5, 5], "observation_noise": 1.5})


@pytest.mark.slow  # an evolution run through the CLI
def test_evolve_plays_its_payoff_games_under_observation_noise(tmp_path: Path) -> None:
    results = tmp_path / "results"
    code, _out, err = pdbench(
        "evolve", "--players", "TFT,GTFT", "--counts", "5,5", "--generations", "2", "--rounds", "30",
        "--observation-noise", "0.1", "--results", results, "--run-id", "evo",
    )  # fmt: skip
    assert code == 0, err
    stored = sql_json(results, "SELECT config_json->>'$.observation_noise' AS q FROM runs")
    assert stored == [{"q": "0.1"}]
    # TFT against TFT is no longer one deterministic match: misperceptions make its payoff vary by seed.
    table = sql_json(results, "SELECT source FROM payoff_table WHERE player = 'TFT' AND opponent = 'TFT'")
    assert table == [{"source": "per_generation"}]

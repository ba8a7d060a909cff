"""`pdbench validate` in one pass: field checks and whole-config checks together (a whole-config check skipped
only where a part it needs is broken), "did you mean" for a misspelt key, and a word for a quoted number."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.config import ExperimentConfig, load_experiment
from harness.config.hints import keys_at, quoted_number, unknown_key
from harness.errors import ConfigError
from tests.support.cli import pdbench

MODEL_ASKING_IN_ROUND_80 = "{model: mock/tft, comprehension: {rounds: [1, 80]}}"


def problems(tmp_path: Path, text: str) -> list[str]:
    path = tmp_path / "exp.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_experiment(path)
    return info.value.problems


def test_field_and_whole_config_problems_come_in_one_pass(tmp_path: Path) -> None:
    # The file: three passes of validate before; every problem at once now.
    found = problems(
        tmp_path,
        f"""
horizon: {{type: fixed, n_rounds: 20}}
noise: "0.02"
experiment:
  replicates: 2
  conditions:
    - {{name: a, agent_a: {{policy: TFT}}, agent_b: {{policy: ALLD}}, horizon: {{type: geometric, max_round: 5}}}}
    - {{name: a, agent_a: {MODEL_ASKING_IN_ROUND_80}, agent_b: {{policy: ALLD}}}}
""",
    )
    assert found == [
        "noise: '0.02' is a quoted string, not a number; write it without quotes (0.02)",
        "experiment.conditions[0].horizon.max_round: unknown key 'max_round'; did you mean max_rounds?",
        "experiment: conditions[1] and conditions[0] are both called 'a'; condition names key the games' seeds and "
        "the reports, so each needs its own: give them distinct names (name: ...), or, to play the same condition "
        "more often, raise experiment.replicates",
        "experiment.conditions[1].agent_a.comprehension.rounds: round 80 is never reached, the game has 20 rounds; "
        "ask in rounds 1 to 20",
    ]


def test_a_players_other_broken_setting_does_not_hide_its_comprehension_rounds(tmp_path: Path) -> None:
    found = problems(
        tmp_path,
        """
horizon: {type: geometric, stop_prob: 0.5, max_rounds: 8}
experiment:
  conditions:
    - agent_a: {model: mock/tft, temprature: 0.5, comprehension: {rounds: [9]}}
      agent_b: {policy: ALLD}
""",
    )
    assert found == [
        "experiment.conditions[0].agent_a.temprature: unknown key 'temprature'; did you mean temperature?",
        "experiment.conditions[0].agent_a.comprehension.rounds: round 9 is never reached, the game has at most "
        "8 rounds (max_rounds); ask in rounds 1 to 8",
    ]


def test_a_check_whose_part_is_broken_is_skipped_alone(tmp_path: Path) -> None:
    # The run's horizon is broken: the comprehension rounds cannot be held to it, but the names still are.
    found = problems(
        tmp_path,
        f"""
horizon: {{type: geometric, stop_prob: 0.1, max_round: 20}}
experiment:
  conditions:
    - {{name: a, agent_a: {MODEL_ASKING_IN_ROUND_80}, agent_b: {{policy: TFTT}}}}
    - {{name: a, agent_a: {{policy: TFT}}, agent_b: {{policy: ALLD}}}}
""",
    )
    assert len(found) == 3, found
    assert found[0] == "horizon.max_round: unknown key 'max_round'; did you mean max_rounds?"
    assert found[1].startswith("experiment.conditions[0].agent_b.policy: unknown strategy 'TFTT'")
    assert found[2].startswith("experiment: conditions[1] and conditions[0] are both called 'a'")


def test_names_derived_from_a_spec_clash_even_when_another_condition_is_broken(tmp_path: Path) -> None:
    found = problems(
        tmp_path,
        """
experiment:
  conditions:
    - {agent_a: {policy: TFT}, agent_b: {policy: ALLD}}
    - {agent_a: {policy: TFT}, agent_b: {policy: ALLD}}
    - {agent_a: {policy: TFT}, agent_b: {policy: ALLD, p: 2}}
""",
    )
    assert found[-1].startswith(
        "experiment: conditions[1] and conditions[0] are both called 'TFT_vs_ALLD' (named from its spec)"
    )
    assert len(found) == 2, found


def test_a_plan_too_large_is_reported_beside_a_broken_run_section(tmp_path: Path) -> None:
    found = problems(
        tmp_path,
        """
run: {seed: -1}
experiment:
  replicates: 10000000
  conditions:
    - {agent_a: {policy: TFT}, agent_b: {policy: ALLD}}
    - {agent_a: {policy: TFT}, agent_b: {policy: TFT}}
""",
    )
    assert found[0].startswith("run.seed: ")
    # 2 conditions x 10,000,000 replicates of the default 50 rounds = 1e9 rounds, 2e7 games > 1e7.
    assert found[1].startswith("experiment.replicates: the plan is 2 conditions x 10,000,000 replicates = 20,000,000")
    assert len(found) == 2, found


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("horizn: {n_rounds: 5}", "horizn: unknown key 'horizn'; did you mean horizon?"),
        ("game: {payoff_matrix: {C: {C: [3, 3], D: [0, 5]}, D: {C: [5, 0], D: [1, 1]}}, payof: 1}", "game.payof: "),
        (
            "metrics: {collapse: {treshold: 0.1}}",
            "metrics.collapse.treshold: unknown key 'treshold'; the keys here are",
        ),
        ("run: {sed: 3}", "run.sed: unknown key 'sed'; did you mean seed?"),
        (
            "noise: {prob: '0.02'}",
            "noise.prob: '0.02' is a quoted string, not a number; write it without quotes (0.02)",
        ),
    ],
)
def test_top_level_hints(tmp_path: Path, text: str, expected: str) -> None:
    found = problems(
        tmp_path, text + "\nexperiment: {conditions: [{agent_a: {policy: TFT}, agent_b: {policy: ALLD}}]}\n"
    )
    assert len(found) == 1 and found[0].startswith(expected), found


def test_a_misspelt_key_deep_in_a_model_player_is_matched_against_that_place(tmp_path: Path) -> None:
    found = problems(
        tmp_path,
        """
experiment:
  replicates: '3'
  conditions:
    - agent_a: {model: mock/tft, parse: {max_retry: 1}, max_tokens: "200"}
      agent_b: {policy: ALLD}
""",
    )
    assert found == [
        "experiment.replicates: '3' is a quoted string, not a number; write it without quotes (3)",
        "experiment.conditions[0].agent_a.max_tokens: '200' is a quoted string, not a number; write it without "
        "quotes (200)",
        "experiment.conditions[0].agent_a.parse.max_retry: unknown key 'max_retry'; did you mean max_retries?",
    ]


def test_keys_at_follows_lists_and_the_agent_union() -> None:
    assert keys_at(ExperimentConfig, ("horizon",)) == ["type", "n_rounds", "stop_prob", "max_rounds"]
    model_keys = keys_at(ExperimentConfig, ("experiment", "conditions", 0, "agent_a", "model"))
    assert model_keys is not None and "temperature" in model_keys and "comprehension" in model_keys
    assert keys_at(ExperimentConfig, ("experiment", "conditions", 0, "agent_a")) is None  # which member? unknown
    assert keys_at(ExperimentConfig, ("nowhere",)) is None
    assert unknown_key(ExperimentConfig, ("nowhere", "x")) == (
        "unknown key; check its spelling and section (see configs/experiment.yaml)"
    )


@pytest.mark.parametrize(
    ("value", "quoted"),
    [("0.02", True), (" 5 ", True), ("1e-3", True), ("nan", False), ("inf", False), ("fixed", False), (0.02, False)],
)
def test_quoted_number(value: object, quoted: bool) -> None:
    assert (quoted_number(value) is not None) is quoted


def test_run_refuses_a_file_with_the_messages_validate_prints(tmp_path: Path) -> None:
    path = tmp_path / "exp.yaml"
    path.write_text(
        "noise: '0.02'\nhorizon: {n_rounds: 3, max_round: 4}\n"
        "experiment: {conditions: [{agent_a: {policy: TFT}, agent_b: {policy: ALLD}}]}\n",
        encoding="utf-8",
    )
    results = tmp_path / "results"
    outputs = [pdbench(command, path, *extra) for command, *extra in (("validate",), ("run", "--results", results))]
    for code, _out, err in outputs:
        assert code == 2
        text = " ".join(err.split())
        assert "noise: '0.02' is a quoted string, not a number; write it without quotes (0.02)" in text
        assert "horizon.max_round: unknown key 'max_round'; did you mean max_rounds?" in text
    assert outputs[0][2] == outputs[1][2]
    assert not results.exists() or not list(results.glob("*.duckdb"))  # refused before anything ran

"""Experiment files: the shipped ones validate; a bad one reports every problem at once."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.config import load_experiment, parse_experiment
from harness.config.plan import iter_games, summarize
from harness.errors import ConfigError
from harness.game.seeds import derive_seed

ROOT = Path(__file__).resolve().parents[2]


def test_shipped_experiment_validates_and_resolves_refs() -> None:
    config = load_experiment(ROOT / "configs" / "experiment.yaml")
    conds = config.experiment.conditions
    assert [c.name for c in conds][:2] == ["TFT_vs_ALLD", "GTFT_vs_ALLD"]
    assert conds[0].agent_a.spec.name == "TFT" and conds[0].agent_b.spec.name == "ALLD"
    assert conds[1].agent_a.spec.params.generous_prob == 0.1  # type: ignore[attr-defined]
    assert config.warnings() == []
    s = summarize(config)
    assert s.games == len(conds) * config.experiment.replicates


def write(tmp_path: Path, text: str, name: str = "exp.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def problems(path: Path) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load_experiment(path)
    return info.value.problems


def test_every_problem_is_reported_with_its_key_path(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
game:
  payoff_matrix: {C: {C: [3, 3], D: [0, 5]}, D: {C: [5, 0]}}
horizon: {type: geometric}
noise: 1.5
experiment:
  replicates: 0
  conditions:
    - agent_a: {policy: TFTT}
      agent_b: {ref: agents/missing.yaml, overrides: {policy: ALLD}}
    - agent_a: {policy: GTFT, generous_prob: 2}
      agent_b: {policy: ALLD, colour: red}
metrics: {collapse: {k: 0}}
extra_section: 1
""",
    )
    found = problems(path)
    text = "\n".join(found)
    assert "game.payoff_matrix: payoff_matrix.D must have exactly the columns C and D" in text
    assert "horizon: a geometric horizon needs stop_prob" in text
    assert "noise.prob" in text
    assert "experiment.replicates" in text
    assert (
        "experiment.conditions[0].agent_a.policy: unknown strategy 'TFTT' (did you mean TFT or TTFT or TF2T?); known "
        "strategies: ALLC, ALLD" in text
    )
    assert f"experiment.conditions[0].agent_b.ref: file not found: {tmp_path / 'agents' / 'missing.yaml'}" in text
    assert "experiment.conditions[1].agent_a: GTFT.generous_prob" in text
    assert "experiment.conditions[1].agent_b: ALLD has no parameter 'colour'" in text
    assert "metrics.collapse.k" in text
    assert "extra_section: unknown key" in text
    assert len(found) == 10, found


def test_ref_with_overrides_merges_over_the_preset(tmp_path: Path) -> None:
    (tmp_path / "agents").mkdir()
    write(tmp_path, "policy: GTFT\ngenerous_prob: 0.2\n", "agents/gen.yaml")
    path = write(
        tmp_path,
        """
experiment:
  conditions:
    - agent_a: {ref: agents/gen.yaml}
      agent_b: {ref: agents/gen.yaml, overrides: {generous_prob: 0.5, name: GTFT50}}
""",
    )
    config = load_experiment(path)
    cond = config.experiment.conditions[0]
    assert cond.agent_a.spec.params.generous_prob == 0.2  # type: ignore[attr-defined]
    assert cond.agent_b.spec.params.generous_prob == 0.5  # type: ignore[attr-defined]
    # Named from the full specs (parameters included), not from the display names.
    assert cond.name == "GTFT(generous_prob=0.2)_vs_GTFT(generous_prob=0.5)"


def test_malformed_yaml_says_where(tmp_path: Path) -> None:
    path = write(tmp_path, "experiment:\n  conditions: [\n    {agent_a: {policy: TFT}\n")
    with pytest.raises(ConfigError, match=r"is not valid YAML: .*line \d+, column \d+"):
        load_experiment(path)


def test_missing_file_and_wrong_top_level(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="config file not found"):
        load_experiment(tmp_path / "nope.yaml")
    with pytest.raises(ConfigError, match="must be a YAML mapping"):
        load_experiment(write(tmp_path, "- just\n- a list\n"))


def test_non_pd_payoffs_warn_but_validate() -> None:
    config = parse_experiment(
        {
            "game": {"payoff_matrix": {"C": {"C": [5, 5], "D": [0, 3]}, "D": {"C": [3, 0], "D": [1, 1]}}},
            "experiment": {"conditions": [{"agent_a": {"policy": "TFT"}, "agent_b": {"policy": "ALLD"}}]},
        }
    )
    assert any("T > R > P > S" in w for w in config.warnings())


def test_duplicate_condition_names_are_refused() -> None:
    with pytest.raises(
        ConfigError, match=r"conditions\[1\] and conditions\[0\] are both called 'x'; .*give them distinct"
    ):
        parse_experiment(
            {
                "experiment": {
                    "conditions": [
                        {"name": "x", "agent_a": {"policy": "TFT"}, "agent_b": {"policy": "ALLD"}},
                        {"name": "x", "agent_a": {"policy": "TFT"}, "agent_b": {"policy": "ALLC"}},
                    ]
                }
            }
        )


def test_game_seeds_depend_on_seed_condition_and_replicate_only() -> None:
    base = {
        "run": {"seed": 7},
        "experiment": {
            "replicates": 2,
            "conditions": [
                {"name": "x", "agent_a": {"policy": "TFT"}, "agent_b": {"policy": "RAND"}},
                {"name": "y", "agent_a": {"policy": "TFT"}, "agent_b": {"policy": "RAND"}},
            ],
        },
    }
    games = list(iter_games(parse_experiment(base)))
    assert [g.game_id for g in games] == [0, 1, 2, 3]
    assert len({g.seed for g in games}) == 4
    assert games[3].seed == derive_seed(7, "y", 1)
    # Reordering conditions does not change a game's seed.
    base["experiment"]["conditions"].reverse()  # type: ignore[index]
    again = {(g.condition.name, g.replicate): g.seed for g in iter_games(parse_experiment(base))}
    assert again[("y", 1)] == games[3].seed


def test_unnamed_conditions_are_named_from_their_full_specs() -> None:
    conditions = [
        {"agent_a": {"policy": "TFT"}, "agent_b": {"policy": "RAND"}},
        {"agent_a": {"policy": "TFT"}, "agent_b": {"policy": "RAND", "p": 0.9}},
        {"agent_a": {"policy": "GTFT", "generous_prob": 0.1, "name": "generous"}, "agent_b": {"policy": "ALLD"}},
        {
            "agent_a": {"model": "mock/tft", "temperature": 0.7, "prompts": {"history_window": 10}},
            "agent_b": {"policy": "TFT"},
        },
        {"agent_a": {"policy": "TFT"}, "agent_b": {"policy": "WSLS"}, "noise": 0.05},
        {
            "agent_a": {"policy": "TFT"},
            "agent_b": {"policy": "WSLS"},
            "game": {"payoff_matrix": {"C": {"C": [8, 8], "D": [0, 10]}, "D": {"C": [10, 0], "D": [5, 5]}}},
            "horizon": {"type": "geometric", "stop_prob": 0.1},
        },
    ]
    config = parse_experiment({"experiment": {"conditions": conditions}})
    assert [c.name for c in config.experiment.conditions] == [
        "TFT_vs_RAND",
        "TFT_vs_RAND(p=0.9)",
        "GTFT(generous_prob=0.1)_vs_ALLD",
        "mock/tft(temperature=0.7,prompts.history_window=10)_vs_TFT",
        "TFT_vs_WSLS[noise=0.05]",
        "TFT_vs_WSLS[payoffs=R8/S0/T10/P5,horizon.type=geometric,horizon.stop_prob=0.1]",
    ]


def test_a_conditions_games_do_not_change_when_another_condition_is_removed() -> None:
    """Names (and so seeds) come from each condition's own spec, never from its neighbours."""
    conditions = [
        {"agent_a": {"policy": "TFT"}, "agent_b": {"policy": "RAND"}},
        {"agent_a": {"policy": "GRIM"}, "agent_b": {"policy": "RAND"}},
        {"agent_a": {"policy": "TFT"}, "agent_b": {"policy": "RAND", "p": 0.2}},
    ]
    every = {(g.condition.name, g.replicate): g.seed for g in iter_games(parse_experiment(
        {"experiment": {"replicates": 2, "conditions": conditions}}))}  # fmt: skip
    fewer = {(g.condition.name, g.replicate): g.seed for g in iter_games(parse_experiment(
        {"experiment": {"replicates": 2, "conditions": conditions[1:]}}))}  # fmt: skip
    assert len(every) == 6
    assert fewer == {k: v for k, v in every.items() if k[0] != "TFT_vs_RAND"}


@pytest.mark.parametrize(
    "conditions",
    [
        # the same spec twice
        [{"agent_a": {"policy": "TFT"}, "agent_b": {"policy": "RAND"}}] * 2,
        # the same spec, spelt differently (case, a default written out)
        [
            {"agent_a": {"policy": "tft"}, "agent_b": {"policy": "RAND"}},
            {"agent_a": {"policy": "TFT"}, "agent_b": {"policy": "RAND", "p": 0.5}},
        ],
        # a spec that spells another condition's name
        [
            {"name": "TFT_vs_RAND", "agent_a": {"policy": "GRIM"}, "agent_b": {"policy": "ALLD"}},
            {"agent_a": {"policy": "TFT"}, "agent_b": {"policy": "RAND"}},
        ],
    ],
)
def test_two_conditions_with_one_name_are_refused_with_a_request_for_names(conditions: list[dict]) -> None:
    with pytest.raises(ConfigError, match=r"both called 'TFT_vs_RAND'.*give them distinct names"):
        parse_experiment({"experiment": {"conditions": conditions}})


@pytest.mark.parametrize(
    "section, fragment",
    [
        ({"horizon": {"type": "fixed", "n_rounds": 5, "stop_prob": 0.5}}, "only apply to type: geometric"),
        ({"horizon": {"type": "geometric", "stop_prob": 0.5, "n_rounds": 5}}, "n_rounds only applies to type: fixed"),
        ({"horizon": {"type": "geometric", "stop_prob": 1e-6}}, "set max_rounds"),
        ({"horizon": {"type": "fixed", "n_rounds": 10**9}}, "horizon.n_rounds"),
        ({"run": {"seed": 2**64}}, "run.seed"),
        ({"run": {"seed": -1}}, "run.seed"),
    ],
)
def test_out_of_range_settings(section: dict, fragment: str) -> None:
    data = {**section, "experiment": {"conditions": [{"agent_a": {"policy": "TFT"}, "agent_b": {"policy": "ALLD"}}]}}
    with pytest.raises(ConfigError, match=re.escape(fragment)):
        parse_experiment(data)


def test_a_binary_ref_file_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "blob.yaml").write_bytes(bytes(range(256)))
    path = write(tmp_path, "experiment:\n  conditions:\n    - {agent_a: {ref: blob.yaml}, agent_b: {policy: ALLD}}\n")
    assert any("cannot read" in p for p in problems(path))

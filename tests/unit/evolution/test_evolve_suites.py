"""``pdbench evolve --suite payne2025`` as settings: what the suite fixes, each value traced to Payne &
Alloui-Cros's code ([R], docs/protocols/payne2025.md), and settings that name the suite but depart from it refused."""

from __future__ import annotations

import json
import re
from itertools import combinations

import pytest

from harness.config.presets.evolve_suites import PAYNE_2025, check_evolve_options, get_evolve_suite
from harness.engine.evolution.models import payoff_tournament
from harness.errors import ConfigError
from harness.evolution import Dynamics, EvolutionSettings
from harness.game.horizon import GeometricHorizon
from harness.players.model.settings import ReplyReader

MODELS = ["openai/gpt-4o-mini-2024-07-18", "openai/gpt-3.5-turbo"]  # the two models of each [D] run


def suite_settings(models: list[str] = MODELS, stop_prob: float = 0.25, **changes: object) -> EvolutionSettings:
    return EvolutionSettings.model_validate(
        {**PAYNE_2025.settings_data(models, stop_prob, 0), "suite": "payne2025", **changes}
    )


@pytest.mark.parametrize("stop_prob", [0.1, 0.25, 0.75])
def test_payne2025_fixes_their_population_rule_and_horizon(stop_prob: float) -> None:
    s = suite_settings(stop_prob=stop_prob)
    # [R] main(): their ten classes in its order (the order decides the update's ties), then the models.
    assert s.players == [
        "TFT", "GRIM", "WSLS(win=CC_or_DD)", "RAND", "GTFT(generous_prob=0.1)", "STFT",
        "GRADUAL(peace_moves=1,counts_all_defections=false)", "PROBER(opening=CDC)", "ALT", "PAYNE_BAYES", *MODELS,
    ]  # fmt: skip
    # 2 agents each: 24 with two models ([D] "Phase 1" row 2,...,2), so 276 matches a phase, 86 with a model.
    assert s.initial_counts.tolist() == [2] * 12 and s.size == 24
    agents = [p for p, c in zip(s.players, s.counts or [], strict=True) for _ in range(c)]
    pairs = list(combinations(agents, 2))
    assert len(pairs) == 276 and sum("/" in a or "/" in b for a, b in pairs) == 86
    # run_evolutionary_tournament(num_phases=5): 4 updates; run_match_with_termination(max_rounds=30); T,R,P,S 5,3,1,0
    assert (s.dynamics, s.generations, s.game_horizon) == (Dynamics.squared_share, 4, GeometricHorizon(stop_prob, 30))
    assert (s.payoff_matrix.T, s.payoff_matrix.R, s.payoff_matrix.P, s.payoff_matrix.S) == (5, 3, 1, 0)
    assert s.noise == 0.0


def test_payne2025_gives_every_model_agent_their_prompt_sampling_and_reader() -> None:
    config = payoff_tournament(suite_settings())
    agents = [a for c in config.experiment.conditions for a in (c.agent_a, c.agent_b) if a.is_model]
    assert {a.model for a in agents} == set(MODELS)
    for agent in agents:
        # OpenAIAgent.make_move: temperature=0.7, max_tokens=1000; own_history[-20:]; the move on the last line,
        # an unreadable reply C with no re-ask
        assert (agent.temperature, agent.max_tokens) == (0.7, 1000)
        assert agent.prompts.system_template == "suites/payne2025/system.j2"
        assert agent.prompts.round_template == "suites/payne2025/round.j2" and agent.prompts.history_window == 20
        assert agent.parse.reader is ReplyReader.LAST_LINE
        assert (agent.parse.max_retries, agent.parse.on_failure) == (0, "cooperate")


def test_a_stored_suite_run_reads_back_and_a_departure_from_it_is_refused() -> None:
    s = suite_settings()
    dumped = json.loads(json.dumps(s.model_dump(mode="json")))
    assert dumped["suite"] == "payne2025" and EvolutionSettings.from_stored(dumped) == s
    assert "suite" not in EvolutionSettings(players=["TFT", "ALLD"], counts=[1, 1]).model_dump(mode="json")
    with pytest.raises(ConfigError) as caught:
        suite_settings(generations=5, noise=0.01)
    assert [p.split(":")[0] for p in caught.value.problems] == ["generations", "noise"]
    assert "suite payne2025 fixes 4, the settings have 5" in caught.value.problems[0]
    with pytest.raises(ConfigError, match=re.escape("ran 0.1, 0.25, 0.75 only")):
        suite_settings(stop_prob=0.5)
    with pytest.raises(ConfigError, match="not a suite of pdbench evolve"):
        EvolutionSettings(players=["TFT", "ALLD"], counts=[1, 1], suite="nope")


def test_the_options_it_fixes_are_refused_in_one_paragraph() -> None:
    check_evolve_options(PAYNE_2025, ["--players", "--stop-prob", "--seed", "--run-id", "--max-cost"])
    with pytest.raises(ConfigError) as caught:
        check_evolve_options(PAYNE_2025, ["--players", "--counts", "--dynamics", "--model-settings"])
    said = str(caught.value)
    assert "--counts (the initial population), --dynamics (the selection rule), --model-settings" in said
    assert "\n" not in said
    with pytest.raises(ConfigError, match="unknown evolve suite 'akata2023'"):
        get_evolve_suite("akata2023")
    with pytest.raises(ConfigError, match="names only the language models"):
        PAYNE_2025.settings_data(["TFT", "openai/x"], 0.25, 0)

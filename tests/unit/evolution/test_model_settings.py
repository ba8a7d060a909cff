"""A model player's settings in an evolution (``model_settings``; ``pdbench evolve --model-settings FILE``):
validated as a model agent of an experiment file is, stored with the run's settings (and left out when there are
none, so stored runs keep their config), and given to the payoff tournament's model agents."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from harness.config.loading import load_model_settings
from harness.engine.evolution.models import payoff_tournament
from harness.errors import ConfigError
from harness.evolution import EvolutionSettings
from harness.players.model.settings import ReplyReader

PAYNE = {
    "temperature": 0.7,
    "max_tokens": 1000,
    "prompts": {"template_dir": "prompts/suites/payne2025"},
    "parse": {"reader": "last_line", "max_retries": 0, "on_failure": "cooperate"},
}


def population(model_settings: dict[str, Any] | None = None) -> EvolutionSettings:
    extra = {} if model_settings is None else {"model_settings": model_settings}
    return EvolutionSettings(players=["TFT", "ALLD", "mock/tft"], counts=[2, 2, 2], **extra)


def test_the_settings_reach_the_model_agents_of_the_payoff_tournament() -> None:
    config = payoff_tournament(population({"mock/tft": PAYNE}))
    agents = [a for c in config.experiment.conditions for a in (c.agent_a, c.agent_b) if a.is_model]
    assert len(agents) == 4  # against TFT, against ALLD, and both seats of self-play
    for agent in agents:
        assert (agent.temperature, agent.max_tokens) == (0.7, 1000)
        assert agent.parse.reader is ReplyReader.LAST_LINE and agent.parse.on_failure == "cooperate"
        assert agent.parse.max_retries == 0 and agent.prompts.template_dir == "prompts/suites/payne2025"
    stored = config.resolved_dict()["experiment"]["conditions"][2]["agent_b"]  # TFT v model: the model in seat b
    assert (stored["model"], stored["temperature"], stored["parse"]["reader"]) == ("mock/tft", 0.7, "last_line")


def test_they_are_stored_with_the_run_settings_and_read_back_unchanged() -> None:
    given = population({"mock/tft": PAYNE})
    dumped = json.loads(json.dumps(given.model_dump(mode="json")))
    assert dumped["model_settings"] == {"mock/tft": PAYNE}
    assert EvolutionSettings.from_stored(dumped) == given


def test_a_stored_run_reads_back_from_any_folder_and_whatever_the_suites_say_today(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its template folder is relative to where the run was started, and a later PDBench may correct a suite's
    value: neither may make a stored run unreadable (reading is not running)."""
    from harness.config.presets import evolve_suites

    given = population({"mock/tft": PAYNE})
    suite = evolve_suites.PAYNE_2025
    played = EvolutionSettings.model_validate(
        {**suite.settings_data(["mock/tft"], 0.25, 3), "suite": suite.name}
    ).model_dump(mode="json")
    dumped = json.loads(json.dumps(given.model_dump(mode="json")))
    monkeypatch.chdir(tmp_path)  # prompts/suites/payne2025 is not here
    with pytest.raises(ConfigError, match="template_dir"):
        EvolutionSettings.model_validate(dumped)  # a new run from here is refused...
    assert EvolutionSettings.from_stored(dumped) == given  # ...but the stored one reads back
    monkeypatch.chdir(Path(__file__).resolve().parents[3])
    monkeypatch.setattr(evolve_suites, "PAYNE_2025", replace(suite, max_rounds=31))  # a corrected suite
    assert EvolutionSettings.from_stored(played).horizon.max_rounds == 30


def test_without_them_the_stored_settings_are_what_they_were() -> None:
    dumped = population().model_dump(mode="json")
    assert "model_settings" not in dumped  # runs stored before the setting keep their config_json
    assert payoff_tournament(population()).resolved_dict() == payoff_tournament(population({})).resolved_dict()
    model = next(c for c in payoff_tournament(population()).experiment.conditions if c.agent_a.is_model).agent_a
    assert (model.temperature, model.max_tokens, model.parse.reader) == (None, 256, ReplyReader.FREE_TEXT)


@pytest.mark.parametrize(
    ("model_settings", "said"),
    [
        ({"mock/tft": {"temperature": 5}}, "model_settings.mock/tft.temperature: Input should be less than or equal"),
        ({"mock/tft": {"max_tokens": 0}}, "model_settings.mock/tft.max_tokens: Input should be greater than"),
        ({"mock/tft": {"parse": {"reader": "last"}}}, "parse.reader: Input should be 'free_text' or 'last_line'"),
        ({"mock/tft": {"tempertaure": 0.7}}, "mock/tft.tempertaure: is not a setting of a model player"),
        ({"mock/tft": {"persona": "nobody-at-all"}}, "model_settings.mock/tft: unknown persona"),
        ({"mock/tft": {"name": "x"}}, "named by its model"),
        ({"mock/cooperator": {}}, "'mock/cooperator' is not a model player of the population"),
        ({"TFT": {"temperature": 0.7}}, "'TFT' is not a model player"),
    ],
)
def test_a_bad_value_is_one_problem_with_its_key_path(model_settings: dict[str, Any], said: str) -> None:
    with pytest.raises(ConfigError) as caught:
        population(model_settings)
    assert len(caught.value.problems) == 1 and said in caught.value.problems[0], caught.value.problems


def test_the_file_must_map_models_to_settings(tmp_path: Path) -> None:
    good = tmp_path / "models.yaml"
    good.write_text("mock/tft: {temperature: 0.7, parse: {reader: last_line}}\n")
    assert load_model_settings(good) == {"mock/tft": {"temperature": 0.7, "parse": {"reader": "last_line"}}}
    for text, said in (("- mock/tft\n", "must map each model player"), ("a: [\n", "is not valid YAML")):
        bad = tmp_path / "bad.yaml"
        bad.write_text(text)
        with pytest.raises(ConfigError, match=said):
            load_model_settings(bad)
    with pytest.raises(ConfigError, match="model settings file not found"):
        load_model_settings(tmp_path / "missing.yaml")

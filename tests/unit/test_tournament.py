"""Round-robin configs: strategies and models as players, and the errors a user sees."""

from __future__ import annotations

import pytest

from harness.config import ModelAgentConfig, PolicyAgentConfig
from harness.config.presets.players import is_model, parse_players, player_agent
from harness.config.presets.tournament import tournament_config
from harness.errors import ConfigError


def _pairs(players: list[str], **kwargs: object) -> list[tuple[str, str]]:
    config = tournament_config(players, rounds=5, **kwargs)  # type: ignore[arg-type]
    return [(c.agent_a.label, c.agent_b.label) for c in config.experiment.conditions]


def test_every_unordered_pair_plays_once_with_self_play_by_default() -> None:
    assert _pairs(["TFT", "ALLD", "GRIM"]) == [
        ("TFT", "TFT"), ("TFT", "ALLD"), ("TFT", "GRIM"), ("ALLD", "ALLD"), ("ALLD", "GRIM"), ("GRIM", "GRIM"),
    ]  # fmt: skip
    assert _pairs(["TFT", "ALLD", "GRIM"], self_play=False) == [("TFT", "ALLD"), ("TFT", "GRIM"), ("ALLD", "GRIM")]


def test_strategy_names_are_case_insensitive_and_stored_canonically() -> None:
    config = tournament_config(["tft", " alld "], rounds=3)
    assert config.kind == "tournament"
    assert [c.name for c in config.experiment.conditions] == ["TFT_vs_TFT", "TFT_vs_ALLD", "ALLD_vs_ALLD"]


def test_a_model_player_becomes_a_model_agent_in_each_of_its_conditions() -> None:
    config = tournament_config(["TFT", "mock/tft", "ALLD"], rounds=4, replicates=2)
    conds = {c.name: c for c in config.experiment.conditions}
    assert list(conds) == [
        "TFT_vs_TFT", "TFT_vs_mock/tft", "TFT_vs_ALLD", "mock/tft_vs_mock/tft", "mock/tft_vs_ALLD", "ALLD_vs_ALLD",
    ]  # fmt: skip
    model_seats = [
        (name, seat)
        for name, c in conds.items()
        for seat, agent in (("a", c.agent_a), ("b", c.agent_b))
        if isinstance(agent, ModelAgentConfig)
    ]
    assert model_seats == [("TFT_vs_mock/tft", "b"), ("mock/tft_vs_mock/tft", "a"), ("mock/tft_vs_mock/tft", "b"),
                           ("mock/tft_vs_ALLD", "a")]  # fmt: skip
    assert all(c.agent_a.model == "mock/tft" for c in conds.values() if isinstance(c.agent_a, ModelAgentConfig))
    assert isinstance(conds["TFT_vs_ALLD"].agent_a, PolicyAgentConfig)
    assert config.experiment.replicates == 2 and config.horizon.n_rounds == 4


def test_player_agent_and_is_model() -> None:
    assert is_model("openai/gpt-4o-mini") and is_model("mock/tft") and not is_model("TFT")
    assert player_agent(" mock/grim ") == {"model": "mock/grim"}
    assert player_agent("wsls") == {"policy": "wsls"}


def test_an_unknown_strategy_is_a_clear_error_that_mentions_models() -> None:
    with pytest.raises(ConfigError) as info:
        tournament_config(["TFT", "XYZ"])
    text = str(info.value)
    assert text.startswith("--players: unknown strategy 'XYZ'; known strategies: ALLC, ALLD, TFT")
    assert "provider/model" in text
    with pytest.raises(ConfigError, match="unknown strategies 'XYZ', 'tf'"):
        tournament_config(["XYZ", "tf"])


def test_a_bad_model_name_is_reported_once_per_model_not_per_condition() -> None:
    with pytest.raises(ConfigError) as info:
        tournament_config(["TFT", "foo/bar", "mock/nope", "ALLD"])
    err = info.value
    assert str(err).startswith("--players: some model names are not usable:")
    assert len(err.problems) == 2
    assert "unknown provider 'foo' in model name 'foo/bar'" in err.problems[0]
    assert "unknown mock behaviour 'nope'" in err.problems[1] and "mock/tft" in err.problems[1]


@pytest.mark.parametrize(
    ("players", "message"),
    [
        (["TFT", "tft"], "--players lists a strategy twice: TFT, tft"),
        (["mock/tft", "ALLD", "mock/tft"], "--players lists a model twice: mock/tft, ALLD, mock/tft"),
        ([], "a tournament needs players"),
    ],
)
def test_duplicate_and_missing_players_are_refused(players: list[str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        tournament_config(players)


def test_one_player_needs_self_play() -> None:
    assert _pairs(["mock/tft"]) == [("mock/tft", "mock/tft")]
    with pytest.raises(ConfigError, match="without self-play needs at least two players"):
        tournament_config(["TFT"], self_play=False)


def test_horizon_options_are_checked() -> None:
    geo = tournament_config(["TFT", "ALLD"], stop_prob=0.1, max_rounds=30)
    assert geo.horizon.type == "geometric" and geo.horizon.max_rounds == 30
    with pytest.raises(ConfigError, match="not both"):
        tournament_config(["TFT", "ALLD"], rounds=5, stop_prob=0.1)


def test_parse_players_splits_and_trims() -> None:
    assert parse_players(" TFT, mock/tft ,,ALLD ") == ["TFT", "mock/tft", "ALLD"]
    # A comma between a strategy's parameters does not split it.
    assert parse_players("GTFT(p=0.3, x=1),RAND(p=0.7) , TFT") == ["GTFT(p=0.3, x=1)", "RAND(p=0.7)", "TFT"]
    with pytest.raises(ConfigError, match="--players needs at least one"):
        parse_players(" , ")

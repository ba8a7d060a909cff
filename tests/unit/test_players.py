"""One player check for `pdbench eval`'s opponents and `pdbench tournament`'s players."""

from __future__ import annotations

import pytest

from harness.config.presets.evaluation import eval_config
from harness.config.presets.players import check_players
from harness.errors import ConfigError


@pytest.mark.parametrize(
    ("players", "message"),
    [
        (["TFT", "NOPE"], "--opponents: unknown strategy 'NOPE'; known strategies: ALLC, ALLD"),
        (["TFT", "tft"], "--opponents lists a strategy twice: TFT, tft"),
        # An eval's opponents are strategies: a model name is an unknown strategy there, with no hint about models.
        (["mock/tft"], "--opponents: unknown strategy 'mock/tft'"),
    ],
)
def test_eval_refuses_a_bad_opponent_list(players: list[str], message: str) -> None:
    with pytest.raises(ConfigError) as refused:
        eval_config("mock/tft", opponents=players)
    assert str(refused.value).startswith(message)
    assert "(a model is named provider/model" not in str(refused.value)


def test_the_same_check_allows_models_only_when_asked() -> None:
    check_players(["TFT", "mock/tft", "mock/grim"], option="--players", models=True)
    with pytest.raises(ConfigError, match="unknown strategy 'mock/tft'"):
        check_players(["TFT", "mock/tft"], option="--opponents", models=False)
    with pytest.raises(ConfigError, match=r"^--players: some model names are not usable:"):
        check_players(["TFT", "mock/nonsense-strategy"], option="--players", models=True)


def test_an_eval_with_good_opponents_has_one_condition_each() -> None:
    config = eval_config("mock/tft", opponents=["tft", "ALLD"], rounds=2)
    assert [c.name for c in config.experiment.conditions] == ["vs_TFT", "vs_ALLD"]

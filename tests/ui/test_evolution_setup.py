"""The Evolution view's form as plain data: what it sends to the run, scenarios loaded into it, custom payoffs."""

from __future__ import annotations

import pytest

from harness.config.presets.payoffs import PAYOFF_PRESETS
from harness.errors import ConfigError
from harness.evolution import Dynamics, EvolutionSettings
from harness.evolution.scenarios import SCENARIOS, SCENARIOS_BY_KEY, same_settings
from harness.ui.evolution_setup import MAX_INDIVIDUALS, Form

# --- the form --------------------------------------------------------------------------------------------


def test_form_leaves_out_players_at_zero() -> None:
    settings = Form(players=("ALLC", "ALLD", "TFT"), counts=(0, 4, 6)).settings()
    assert settings.players == ["ALLD", "TFT"] and list(settings.initial_counts) == [4, 6]
    assert settings.payoff_matrix.cc == (2.0, 2.0) and settings.payoff_matrix.cd == (-1.0, 3.0)
    assert settings.dynamics == Dynamics.trust and settings.k == 5 and settings.horizon.n_rounds == 10


def test_form_errors_are_one_paragraph_with_what_to_do() -> None:
    with pytest.raises(ConfigError, match="at least two players"):
        Form(players=("ALLC", "ALLD"), counts=(5, 0)).settings()
    with pytest.raises(ConfigError, match=f"at most {MAX_INDIVIDUALS}"):
        Form(players=("ALLC", "ALLD", "TFT", "GRIM", "GTFT"), counts=(50, 50, 50, 50, 1)).settings()
    with pytest.raises(ConfigError, match="k must be at most 2"):
        Form(players=("ALLC", "ALLD"), counts=(2, 3)).settings()  # k = 5 of 5 individuals
    with pytest.raises(ConfigError, match="unknown strategy"):
        Form(players=("ALLC", "NOPE"), counts=(2, 3)).settings()


def test_k_only_binds_the_trust_rule() -> None:
    settings = Form(players=("ALLC", "ALLD"), counts=(2, 3), dynamics="moran").settings()
    assert settings.k == 1


def test_a_run_says_what_its_selection_read() -> None:
    from harness.ui.evolution_setup import selection_note

    moran = SCENARIOS_BY_KEY["strong_selection"].settings()
    assert "mean payoff per round over the others met" in selection_note(moran)
    old = EvolutionSettings.from_stored({k: v for k, v in moran.model_dump(mode="json").items() if k != "score"})
    assert "whole-match totals" in selection_note(old) and "w = 0.1 selects almost as w = 1" in selection_note(old)
    assert "ranks points" in selection_note(SCENARIOS_BY_KEY["exploited"].settings())
    squared = EvolutionSettings(dynamics="squared_share", players=["TFT", "ALLD"], counts=[2, 2])
    assert "pooled points per round" in selection_note(squared) and "w =" not in selection_note(squared)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.key)
def test_a_scenario_loaded_into_the_form_makes_its_own_settings(scenario: object) -> None:
    settings = scenario.settings()  # type: ignore[attr-defined]
    assert same_settings(Form.of(settings).settings(), settings)


def test_custom_payoffs_reach_the_settings_as_given() -> None:
    form = Form(players=("TFT", "ALLD"), counts=(5, 5), payoffs="custom", custom=(4.0, 3.0, 1.0, 0.5))
    matrix = form.settings().payoff_matrix
    assert (matrix.T, matrix.R, matrix.P, matrix.S) == (4.0, 3.0, 1.0, 0.5)
    assert matrix.cd == (0.5, 4.0) and matrix.dc == (4.0, 0.5)  # symmetric: the other side's view
    assert matrix.warnings() == []
    axelrod = Form(players=("TFT", "ALLD"), counts=(5, 5), payoffs="axelrod", custom=(9.0, 9.0, 9.0, 9.0))
    assert axelrod.settings().payoff_matrix == PAYOFF_PRESETS["axelrod"]  # a preset ignores the custom values
    back = Form.of(form.settings())
    assert back.payoffs == "custom" and back.custom == (4.0, 3.0, 1.0, 0.5)


def test_a_game_that_is_not_a_prisoners_dilemma_gets_the_configs_warnings() -> None:
    """T=3, R=4: cooperating pays more than tempting, a harmony game; 2R > T + S fails for T=6, R=3, S=1."""
    harmony = Form(players=("TFT", "ALLD"), counts=(5, 5), payoffs="custom", custom=(3.0, 4.0, 1.0, 0.0))
    assert any("T > R > P > S does not hold (T=3, R=4, P=1, S=0)" in w for w in harmony.matrix().warnings())
    taking_turns = Form(players=("TFT", "ALLD"), counts=(5, 5), payoffs="custom", custom=(6.0, 3.0, 1.0, 1.0))
    assert [w.split(" (")[0] for w in taking_turns.matrix().warnings()] == [
        "T > R > P > S does not hold",
        "2R > T + S does not hold",
    ]
    assert harmony.settings().payoff_matrix.R == 4.0  # and it runs as given

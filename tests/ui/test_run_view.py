"""🧪 Run Experiment, driven headless with Streamlit's AppTest."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from harness.store.catalog import Catalog
from harness.ui.choices import OTHER_MODEL
from harness.ui.views import RESULTS, VIEW

App = Callable[..., AppTest]


def errors(at: AppTest) -> str:
    return "\n".join(e.value for e in at.error)


def test_the_form_offers_every_strategy_and_the_mock_models(app: App, tmp_path: Path) -> None:
    at = app(tmp_path)
    options = at.selectbox(key="run_player_a").options
    assert "🪞 TFT · Tit for Tat" in options and "😈 ALLD · Always Defect" in options
    assert "🤖 mock/tft" in options and "🤖 mock/random" in options
    assert options[-1] == OTHER_MODEL
    cards = "\n".join(m.value for m in at.markdown if "pdb-agent-card" in m.value)
    assert "Tit for Tat" in cards and "Always Defect" in cards
    matrix = at.table[0].value
    assert list(matrix.index) == ["you cooperate (C)", "you defect (D)"]
    assert matrix.iloc[0, 1] == "0, 5" and matrix.iloc[1, 0] == "5, 0"


def test_openai_models_are_offered_when_a_key_is_set(app: App, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert "🤖 openai/gpt-4o-mini" not in app(tmp_path).selectbox(key="run_player_a").options
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert "🤖 openai/gpt-4o-mini" in app(tmp_path).selectbox(key="run_player_a").options


def test_running_lands_on_the_results_of_an_ordinary_run(app: App, tmp_path: Path) -> None:
    at = app(tmp_path)
    at.selectbox(key="run_player_a").select("GRIM")
    at.selectbox(key="run_player_b").select("ALT")
    at.slider(key="run_rounds").set_value(12)
    at.slider(key="run_replicates").set_value(2)
    at.text_input(key="run_id").input("duel")
    at.button(key="run_start").click().run()
    assert not at.exception and not at.error
    assert at.session_state[VIEW] == RESULTS
    assert "Run `duel` is complete" in at.success[0].value
    assert at.selectbox(key="results_run").value == "duel"
    timeline = next(m.value for m in at.markdown if "pdb-timeline" in m.value).split("pdb-timeline")[1:]
    assert "🟢🔴🔴" in timeline[0] and "🟢🔴🟢🔴" in timeline[1]  # GRIM is crossed at once; ALT alternates
    with Catalog(tmp_path) as cat:
        run = cat.records("select kind, status, games_planned from runs")[0]
        assert run == {"kind": "experiment", "status": "complete", "games_planned": 2}
        assert cat.query("select count(*) from rounds")[1][0][0] == 24


def test_a_model_player_with_a_persona_and_a_geometric_horizon(app: App, tmp_path: Path) -> None:
    at = app(tmp_path)
    at.selectbox(key="run_player_b").select("mock/tft").run()
    assert at.selectbox(key="run_persona") is not None
    at.selectbox(key="run_persona").select("cooperative")
    at.radio(key="run_horizon").set_value("Geometric").run()
    at.number_input(key="run_stop_prob").set_value(0.2)
    at.number_input(key="run_max_rounds").set_value(30)
    at.text_input(key="run_id").input("geo")
    at.button(key="run_start").click().run()
    assert not at.exception and not at.error, errors(at)
    with Catalog(tmp_path) as cat:
        games = cat.records("select horizon, stop_prob, status from games")
        assert games and all(g["horizon"] == "geometric" and g["stop_prob"] == 0.2 for g in games)
        assert cat.query("select count(*) from calls where not cached or cached")[1][0][0] > 0
        system = cat.query("select request_json->'$.messages[0].content' from calls limit 1")[1][0][0]
    assert "cooperat" in system.lower()  # the persona reached the model's system prompt


def test_bad_settings_are_clear_errors_and_nothing_runs(
    app: App, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    at = app(tmp_path)
    at.selectbox(key="run_player_a").select(OTHER_MODEL).run()
    at.button(key="run_start").click().run()
    assert "type a model name" in errors(at)
    at.text_input(key="run_model_a").input("openai/gpt-4o-mini")
    at.button(key="run_start").click().run()
    assert "OPENAI_API_KEY" in errors(at) and not at.exception
    at.selectbox(key="run_player_a").select("TFT")
    at.text_input(key="run_id").input("bad id!")
    at.button(key="run_start").click().run()
    assert "run id" in errors(at).lower()
    assert not list(tmp_path.glob("*.duckdb"))
    at.text_input(key="run_id").input("twice")
    at.button(key="run_start").click().run()
    assert at.session_state[VIEW] == RESULTS
    at.session_state["view_pending"] = "🧪 Run Experiment"
    at.run()
    at.text_input(key="run_id").input("twice")
    at.button(key="run_start").click().run()
    assert "already exists" in errors(at)


def test_payoffs_that_are_not_a_prisoners_dilemma_are_flagged(app: App, tmp_path: Path) -> None:
    at = app(tmp_path)
    at.number_input(key="run_T").set_value(2.0).run()
    assert any("T > R > P > S does not hold" in w.value for w in at.warning)
    assert at.table[0].value.iloc[1, 0] == "2, 0"


def test_a_run_whose_games_failed_says_so(app: App, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PDBENCH_MAX_ATTEMPTS", "1")
    at = app(tmp_path)
    at.selectbox(key="run_player_b").select(OTHER_MODEL).run()
    at.text_input(key="run_model_b").input("mock/tft?error_rate=1")
    at.slider(key="run_rounds").set_value(3)
    at.text_input(key="run_id").input("broken")
    at.button(key="run_start").click().run()
    assert not at.exception and at.session_state[VIEW] == RESULTS
    assert not at.success
    warning = "\n".join(w.value for w in at.warning)
    # Failed on a server error: not complete, and resume plays the games again once the server works.
    assert "ended **interrupted**" in warning and "3 failed on a transient error" in warning
    assert "pdbench resume broken" in warning
    assert "This game is **failed**" in warning  # and the game shown says why


def test_paid_models_get_a_budget_and_temperature_defaults_to_the_providers(
    app: App, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    at = app(tmp_path)
    at.selectbox(key="run_player_b").select("openai/gpt-4o-mini").run()
    assert at.number_input(key="run_max_cost").value == 1.0
    at.selectbox(key="run_player_b").select("mock/tft").run()
    assert not [n for n in at.number_input if n.key == "run_max_cost"]  # the mock costs nothing
    at.slider(key="run_rounds").set_value(3)
    at.text_input(key="run_id").input("notemp")
    at.button(key="run_start").click().run()
    with Catalog(tmp_path) as cat:
        config = cat.query("select config_json from runs")[1][0][0]
    assert '"temperature"' not in config  # unset: the provider's default, as from the CLI

"""🧪 Run Experiment, driven headless with Streamlit's AppTest."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from harness.game.horizon import HorizonKind
from harness.store.catalog import Catalog
from harness.ui import run_view
from harness.ui.choices import OTHER_MODEL
from harness.ui.views import RESULTS, VIEW
from tests.support.llm_server import FakeLLMServer

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


@pytest.mark.slow
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


@pytest.mark.slow
def test_a_model_player_with_a_persona_and_a_geometric_horizon(app: App, tmp_path: Path) -> None:
    at = app(tmp_path)
    at.selectbox(key="run_player_b").select("mock/tft").run()
    assert at.selectbox(key="run_persona") is not None
    at.selectbox(key="run_persona").select("cooperative")
    at.radio(key="run_horizon").set_value(HorizonKind.GEOMETRIC).run()
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


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
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


# ---- keys and budgets ---------------------------------------------------------------------------

KEY = "sk-user-Wd5Hn1Xs8Cj3Tf6B"


@pytest.fixture(scope="module")
def llm_server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as server:
        yield server


@pytest.fixture
def llm(llm_server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch) -> FakeLLMServer:
    """The loopback fake provider, answering with or without a key (as a local server does); the user's
    OpenAI key set, no base URL configured."""
    llm_server.reset()
    llm_server.configure(require_key=False)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    return llm_server


def play(at: AppTest, run_id: str, rounds: int = 2) -> AppTest:
    """Start the run and wait for its end (AppTest has no timer to poll the progress panel)."""
    at.slider(key="run_rounds").set_value(rounds)
    at.slider(key="run_replicates").set_value(1)
    at.text_input(key="run_id").input(run_id)
    at.button(key="run_start").click().run()
    deadline = time.monotonic() + 60
    while run_view.ACTIVE in at.session_state:
        assert time.monotonic() < deadline, "the run did not finish"
        time.sleep(0.2)
        at.run()
    assert not at.exception, at.exception
    return at


def type_model(at: AppTest, model: str, base_url: str) -> str:
    """Player B: a model typed in, at a typed base URL; returns the captions shown."""
    at.selectbox(key="run_player_b").select(OTHER_MODEL).run()
    at.text_input(key="run_model_b").input(model)
    at.text_input(key="run_base_url_b").input(base_url).run()
    return "\n".join(c.value for c in at.caption)


@pytest.mark.slow
def test_a_base_url_typed_in_the_page_gets_no_key_unless_the_user_configured_it(
    app: App, tmp_path: Path, llm: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = app(tmp_path / "typed")
    captions = type_model(at, "openai/served", llm.openai_base_url)
    assert f"No key is sent to `{llm.openai_base_url}`" in captions and "OPENAI_BASE_URL" in captions
    play(at, "unpriced")  # openai/served has no price, so a budget cannot apply: the page says what to do
    assert "has none in the price table" in errors(at) and "untick “Limit the cost”" in errors(at)
    at.checkbox(key="run_max_cost_limited").uncheck().run()
    play(at, "typed")
    assert at.session_state[VIEW] == RESULTS, [e.value for e in at.error]
    assert llm.count(status=200) == 2 and not [r for r in llm.requests if r.has_auth]
    with Catalog(tmp_path / "typed") as cat:
        config = json.loads(cat.query("select config_json from runs")[1][0][0])
        assert cat.records("select status from games") == [{"status": "complete"}]
    agent = config["experiment"]["conditions"][0]["agent_b"]
    assert agent["base_url"] == llm.openai_base_url and agent["key_only_to_configured"] is True  # resume keeps it

    # The user configures that server in the environment `pdbench ui` starts in: now the key goes there.
    monkeypatch.setenv("OPENAI_BASE_URL", llm.openai_base_url)
    llm.reset()
    at = app(tmp_path / "configured")  # its own cache, so the requests are sent again
    captions = type_model(at, "openai/served", llm.openai_base_url)
    assert "requests to it carry your OPENAI_API_KEY" in captions
    at.checkbox(key="run_max_cost_limited").uncheck().run()
    play(at, "configured")
    assert llm.count(status=200) == 2 and all(r.has_auth for r in llm.requests)


@pytest.mark.slow
def test_a_budget_of_0_pays_for_nothing_and_no_limit_is_a_choice_of_its_own(
    app: App, tmp_path: Path, llm: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", llm.openai_base_url)  # openai/gpt-4o-mini (priced) on the fake server
    at = app(tmp_path)
    at.selectbox(key="run_player_b").select("openai/gpt-4o-mini").run()
    at.number_input(key="run_max_cost").set_value(0.0)
    play(at, "zero")
    assert llm.count() == 0  # before this fix, 0 meant "no limit" and both calls were paid
    with Catalog(tmp_path) as cat:
        assert cat.records("select status, error from runs") == [
            {"status": "interrupted", "error": "the cost limit of $0 was reached"}
        ]

    at = app(tmp_path)
    at.selectbox(key="run_player_b").select("openai/gpt-4o-mini").run()
    at.checkbox(key="run_max_cost_limited").uncheck().run()
    assert not [n for n in at.number_input if n.key == "run_max_cost"]
    assert any("No cost limit" in c.value for c in at.caption)
    play(at, "unlimited")
    assert llm.count(status=200) == 2 and all(r.has_auth for r in llm.requests)
    with Catalog(tmp_path) as cat:
        assert cat.records("select status from runs where run_id = 'unlimited'") == [{"status": "complete"}]


def _column_of(at: AppTest, text: str) -> tuple[object, int]:
    """The column holding the first markdown with ``text``, and the element's place in it."""
    for column in at.columns:
        for i, child in enumerate(column.children.values()):
            if getattr(child, "type", None) == "markdown" and text in child.value:
                return column, i
    raise AssertionError(f"no column holds {text!r}")


def test_the_cards_stay_level_when_one_player_is_another_model(app: App, tmp_path: Path) -> None:
    """The issue: "other model…" put its name and base URL above one card only, pushing it below the other.
    The cards have a row of their own, each the first thing in its column, whatever the inputs above ask."""
    at = app(tmp_path)
    at.selectbox(key="run_player_a").select(OTHER_MODEL).run()
    at.text_input(key="run_model_a").input("mock/tft").run()
    at.text_input(key="run_base_url_a").input("http://127.0.0.1:9/v1").run()
    col_a, place_a = _column_of(at, "player A")
    col_b, place_b = _column_of(at, "player B")
    assert place_a == place_b == 0
    row = _parent(at.main, col_a)
    assert col_a is not col_b and row is _parent(at.main, col_b)  # side by side in one row
    assert not _keys(row) & {"run_model_a", "run_base_url_a", "run_player_a"}  # no input in the cards' row
    assert {"run_model_a", "run_base_url_a", "run_player_a", "run_player_b"} <= _keys(
        _parent(at.main, _column_of_key(at, "run_model_a"))
    )


def _parent(node: Any, target: object) -> Any:
    for child in getattr(node, "children", {}).values():
        if child is target:
            return node
        found = _parent(child, target)
        if found is not None:
            return found
    return None


def _keys(node: Any) -> set[str]:
    key = getattr(node, "key", None)
    own = {key} if isinstance(key, str) else set()
    return own.union(*(_keys(c) for c in getattr(node, "children", {}).values()))


def _column_of_key(at: AppTest, key: str) -> object:
    return next(c for c in at.columns if key in _keys(c))


def test_a_model_card_shows_its_model_persona_and_temperature(app: App, tmp_path: Path) -> None:
    at = app(tmp_path)
    at.selectbox(key="run_player_b").select("mock/tft").run()
    card = _card(at, "player B")
    assert "<code>mock/tft</code>" in card and "no persona" in card and "provider's default temperature" in card
    at.selectbox(key="run_persona").select("cautious").run()
    at.checkbox(key="run_set_temperature").check().run()
    at.slider(key="run_temperature").set_value(0.7).run()
    card = _card(at, "player B")
    assert "persona <b>cautious</b>" in card and "temperature 0.7" in card
    assert "persona" not in _card(at, "player A")  # TFT is a strategy: no model settings


def _card(at: AppTest, seat: str) -> str:
    return next(m.value for m in at.markdown if "pdb-agent-card" in m.value and seat in m.value)

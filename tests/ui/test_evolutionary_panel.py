"""The "Evolutionary analysis" expander (:mod:`harness.ui.evolutionary_panel`), driven headless with AppTest: the
shares and the invasion table it shows are ``pdbench analyze``'s for the same settings and seed, read from the
chart's data and the table; a run without a payoff table shows analyze's reason, not an exception.

The analysis itself is validated against closed forms and EGTtools (tests/unit/evolutionary_analysis); here the
question is whether the view shows the figures of the settings its inputs name, and the command that repeats them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

from harness.analysis.evolutionary import Population, Process, analyze, measured_table
from harness.config.presets.tournament import tournament_config
from harness.engine.evolution.run import run_evolution
from harness.engine.runner import run_experiment
from harness.ui.evolution_setup import Form
from harness.ui.evolutionary_panel import DEFAULT_DRAWS, TITLE
from harness.ui.views import EVOLUTION, TOURNAMENT

App = Callable[..., AppTest]
EVO = "evo_analysis_"  # the Evolution view's keys for the expander
TOUR = "tour_analysis_"


@pytest.fixture(scope="module")
def noisy_tournament(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A round robin with self-play and noise, so that the bootstrap's draws differ: TFT, ALLD, WSLS."""
    folder = tmp_path_factory.mktemp("noisy")
    config = tournament_config(["TFT", "ALLD", "WSLS"], rounds=10, replicates=4, noise=0.1, seed=5)
    run_experiment(config, results_dir=folder, run_id="noisy")
    return folder


def opened(at: AppTest, key: str) -> AppTest:
    at.session_state[key + "open"] = True
    at.run()
    assert not at.exception, at.exception
    return at


def shown_shares(at: AppTest) -> pd.DataFrame:
    """The long-run shares chart's data: player, estimate, low, high."""
    chart = next(c for c in at.get("vega_lite_chart") if "long-run share" in c.proto.spec)
    frames = [pa.ipc.open_stream(d.data.data).read_all().to_pandas() for d in chart.proto.datasets]
    return next(f for f in frames if "estimate" in f.columns).set_index("player")


def expected(folder: Path, run_id: str, population: Population, draws: int, seed: int = 0) -> dict[str, np.ndarray]:
    a = analyze(measured_table(folder, run_id), population, draws=draws, seed=seed, replicator=False)
    low, high = a.interval("stationary")
    players = list(a.players)
    return {"players": np.array(players), "estimate": a.point.stationary, "low": low, "high": high, "rho": a.point.rho}


@pytest.mark.slow  # 2-3 s: a first render of the view, then the open expander
def test_the_tournament_view_shows_analyzes_shares_and_invasions(app: App, noisy_tournament: Path) -> None:
    at = opened(app(noisy_tournament, view=TOURNAMENT), TOUR)
    want = expected(noisy_tournament, "noisy", Population(Process.moran, 0.1, 100), DEFAULT_DRAWS)
    shares = shown_shares(at)
    for column in ("estimate", "low", "high"):
        assert shares.loc[list(want["players"]), column].to_numpy() == pytest.approx(want[column], rel=1e-12)
    assert (want["high"] > want["low"]).any()  # the noise makes the draws differ: the intervals are not points
    table = at.dataframe[-1].value
    assert len(table) == 6
    players = list(want["players"])
    for row in table.to_dict("records"):
        rho = want["rho"][players.index(row["invader"]), players.index(row["resident"])]
        assert row["ρ"] == pytest.approx(rho, rel=1e-12)
        assert row["invades"] == ("yes" if rho > 1 / 100 else "no")
        assert 0 <= row["invades in % of draws"] <= 100
    caption = next(c.value for c in at.caption if "pdbench analyze" in c.value)
    assert (
        f"`pdbench analyze noisy --results {noisy_tournament} --population 100 --dynamics moran --selection 0.1 "
        f"--bootstrap {DEFAULT_DRAWS} --seed 0`" in caption
    )


def test_other_settings_show_their_own_figures_and_command(app: App, noisy_tournament: Path) -> None:
    at = opened(app(noisy_tournament, view=TOURNAMENT), TOUR)
    at.radio(key=TOUR + "dynamics").set_value("fermi").run()  # the β input replaces the w input
    at.number_input(key=TOUR + "fermi").set_value(2.5)
    at.number_input(key=TOUR + "population").set_value(20)
    at.number_input(key=TOUR + "bootstrap").set_value(40)
    at.number_input(key=TOUR + "seed").set_value(7).run()
    assert not at.exception, at.exception
    want = expected(noisy_tournament, "noisy", Population(Process.fermi, 2.5, 20), 40, seed=7)
    shares = shown_shares(at)
    for column in ("estimate", "low", "high"):
        assert shares.loc[list(want["players"]), column].to_numpy() == pytest.approx(want[column], rel=1e-12)
    caption = next(c.value for c in at.caption if "pdbench analyze" in c.value)
    assert "--population 20 --dynamics fermi --beta 2.5 --bootstrap 40 --seed 7`" in caption
    assert "over 40 bootstrap draws" in caption and "seed 7" in caption


def test_a_population_smaller_than_the_players_is_refused_in_one_paragraph(app: App, noisy_tournament: Path) -> None:
    at = opened(app(noisy_tournament, view=TOURNAMENT), TOUR)
    at.number_input(key=TOUR + "population").set_value(2).run()
    assert not at.exception, at.exception
    assert any("smaller than the 3 players" in e.value for e in at.error)
    assert not [c for c in at.get("vega_lite_chart") if "long-run share" in c.proto.spec]


@pytest.mark.slow  # 2-3 s: a first render of the view, then the open expander
def test_the_evolution_view_analyses_an_exact_table_and_computes_only_when_open(app: App, tmp_path: Path) -> None:
    settings = Form(players=("TFT", "ALLD", "WSLS"), counts=(4, 4, 4), generations=3, k=1, rounds=10).settings()
    run_evolution(settings, results_dir=tmp_path, run_id="evolution_exact")
    at = app(tmp_path, view=EVOLUTION)
    assert [e.label for e in at.expander if TITLE in e.label]
    assert not [c for c in at.get("vega_lite_chart") if "long-run share" in c.proto.spec]  # closed: nothing computed
    at = opened(at, EVO)
    want = expected(tmp_path, "evolution_exact", Population(Process.moran, 0.1, 100), DEFAULT_DRAWS)
    shares = shown_shares(at)
    assert shares.loc[list(want["players"]), "estimate"].to_numpy() == pytest.approx(want["estimate"], rel=1e-12)
    assert (shares["low"] == shares["estimate"]).all() and (shares["high"] == shares["estimate"]).all()
    assert any("exact table of deterministic pairs" in c.value for c in at.caption)
    assert any("`pdbench analyze evolution_exact --results" in c.value for c in at.caption)


def test_an_evolution_without_games_shows_analyzes_reason(app: App, tmp_path: Path) -> None:
    settings = Form(players=("TFT", "ALLD"), counts=(3, 3), generations=3, k=1, rounds=10, noise=0.1).settings()
    run_evolution(settings, results_dir=tmp_path, run_id="evolution_noisy")
    at = opened(app(tmp_path, view=EVOLUTION), EVO)
    reasons = [i.value for i in at.info if "No evolutionary analysis" in i.value]
    assert len(reasons) == 1
    assert "keeps only the mean of each cell" in reasons[0] and "pdbench tournament --players TFT,ALLD" in reasons[0]
    assert not [w for w in at.number_input if w.key.startswith(EVO)]  # no settings for a run that cannot be analysed

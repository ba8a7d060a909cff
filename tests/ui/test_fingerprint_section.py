"""📊 View Results on a fingerprint run: its heatmap is the analysis's matrix, with what a cell is, and a probe
point's game can still be picked and replayed.

The cells are hand-worked games of Tit for Tat (mock/tft plays it) against the four corner probes, 3 rounds each:
(0, 0) is TFT and (1, 0) ALLC, R = 3 every round; (0, 1) is ALLD, S then P twice, (0 + 1 + 1) / 3; (1, 1) is the
opposite of TFT (D first), (C, D) (D, D) (D, C), (0 + 1 + 5) / 3 = 2."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

from harness.analysis.fingerprint import Cell, Fingerprint, ProbeKind, fingerprint
from harness.config.presets.fingerprint import FingerprintKind, Grid, fingerprint_config
from harness.config.run_settings import engine_options
from harness.engine.runner import run_experiment
from harness.store.catalog import open_run
from harness.ui import charts
from harness.ui.views import RESULTS
from tests.ui.conftest import picker

App = Callable[..., AppTest]


def chart_data(chart: object) -> pd.DataFrame:
    """The rows behind a Vega-Lite chart element, decoded from the Arrow bytes Streamlit sends."""
    dataset = chart.proto.datasets[0]  # type: ignore[attr-defined]
    return pa.ipc.open_stream(dataset.data.data).read_all().to_pandas()


@pytest.mark.slow  # a mock model's run and two runs of the page: about 3 s
def test_a_fingerprint_run_shows_its_matrix_as_a_heatmap_and_its_games_stay_pickable(app: App, tmp_path: Path) -> None:
    config = fingerprint_config({"model": "mock/tft"}, Grid(FingerprintKind.ASHLOCK, 2), rounds=3, repetitions=1)
    run_experiment(config, results_dir=tmp_path, run_id="fp", engine=engine_options(tmp_path))
    at = app(tmp_path, RESULTS)
    assert "#### 🔬 Ashlock fingerprint of mock/tft" in [m.value for m in at.markdown]
    first = at.get("vega_lite_chart")[0]
    spec = json.loads(first.proto.spec)
    assert [layer["mark"]["type"] for layer in spec["layer"]] == ["rect", "text"]
    axes = spec["layer"][0]["encoding"]
    assert (axes["x"]["field"], axes["y"]["field"]) == ("x", "y")
    shown = chart_data(first).set_index(["x", "y"])
    with open_run(tmp_path, "fp") as cat:
        fp = fingerprint(cat, "fp")
    assert {key: shown.loc[key, "value"] for key in shown.index} == {c.key: c.mean for c in fp.cells}
    assert shown["value"].to_dict() == pytest.approx({(0, 0): 3, (1, 0): 3, (0, 1): 2 / 3, (1, 1): 2})
    assert set(shown["games"]) == {1}
    captions = "\n".join(c.value for c in at.caption)
    cell = "Each cell: mean payoff per round of the player against the probe at (x, y), over its games; 1 game per "
    cell += "point"
    assert cell in captions
    assert "pdbench plot fp --kind fingerprint" in at.code[0].value and "from games" in at.code[1].value
    # The probe point (1, 1) is a condition: its game replays below the heatmap, TFT against the opposite of TFT.
    conditions = picker(at, "results_condition_")
    assert conditions.options[-1] == "ashlock(x=1,y=1) (1 game)"
    conditions.select("ashlock(x=1,y=1)").run()
    text = "\n".join(m.value for m in at.markdown)
    assert "🟢🔴🔴" in text and "🔴🔴🟢" in text
    assert {m.label: m.value for m in at.metric}["A payoff"] == "6"


def test_a_transitive_heatmap_has_a_row_per_p_and_a_column_per_round(tmp_path: Path) -> None:
    config = fingerprint_config({"policy": "TFT"}, Grid(FingerprintKind.TRANSITIVE, 2), rounds=3, repetitions=1)
    run_experiment(config, results_dir=tmp_path, run_id="fp")
    with open_run(tmp_path, "fp") as cat:
        fp = fingerprint(cat, "fp")
    assert fp.kind is ProbeKind.TRANSITIVE
    spec = charts.fingerprint_heatmap(fp).to_dict()
    axes = spec["layer"][0]["encoding"]
    assert (axes["x"]["field"], axes["y"]["field"]) == ("round", "p")
    assert axes["y"]["sort"] == "descending"  # p = 0 at the bottom, as the figure and Axelrod draw it
    # TFT cooperates in round 1, then copies RAND(p): RAND(0) always defects, RAND(1) always cooperates.
    frame = charts.fingerprint_frame(fp).set_index(["p", "round"])["value"]
    assert frame.to_dict() == {(0, 1): 1, (0, 2): 0, (0, 3): 0, (1, 1): 1, (1, 2): 1, (1, 3): 1}
    assert [layer["mark"]["type"] for layer in spec["layer"]] == ["rect", "text"]


def test_cells_too_narrow_for_their_number_leave_it_to_the_tooltip() -> None:
    def layers(rounds: int) -> list[str]:
        cells = tuple(Cell((p, float(t)), 1, 0.5, None) for p in (0.0, 1.0) for t in range(1, rounds + 1))
        spec = charts.fingerprint_heatmap(Fingerprint("r", ProbeKind.TRANSITIVE, "TFT", cells)).to_dict()
        return [layer["mark"]["type"] for layer in spec["layer"]]

    assert layers(20) == ["rect", "text"]  # the default 20 rounds: every cell is written
    assert layers(200) == ["rect"]

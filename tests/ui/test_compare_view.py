"""The ⚖️ Compare view, driven headless with AppTest: two runs' models side by side, with the command's figures,
and a comparison that cannot be made shown as the command's one paragraph."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from harness.config.presets.evaluation import eval_config
from harness.engine.runner import run_experiment
from harness.ui.views import COMPARE

App = Callable[..., AppTest]


@pytest.fixture(scope="module")
def two_models(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("results")
    for model, run_id in (("mock/tft", "eval_a"), ("mock/defector", "eval_b")):
        config = eval_config(model, opponents=["ALLC", "ALLD"], rounds=4, replicates=2)
        run_experiment(config, results_dir=folder, run_id=run_id)
    return folder


def test_two_runs_are_compared_with_the_commands_figures(app: App, two_models: Path) -> None:
    at = app(two_models, view=COMPARE)
    assert not at.error, [e.value for e in at.error]
    table = at.dataframe[0].value
    payoff = table[table["metric"] == "payoff / round"].iloc[0]
    # Newest run first: A = the defector (5 against ALLC, 1 against ALLD: 3.00), B = TFT (3 and 0.75: 1.88).
    assert payoff["A"].startswith("3.00") and payoff["B"].startswith("1.88")
    assert payoff["B − A"].startswith("-1.12")
    assert any("paired by opponent and replicate" in c.value for c in at.caption)
    assert len(at.get("vega_lite_chart")) == 1


def test_runs_with_nothing_in_common_are_one_paragraph(app: App, two_models: Path) -> None:
    config = eval_config("mock/grim", opponents=["TFT"], rounds=3, replicates=1)
    run_experiment(config, results_dir=two_models, run_id="eval_c")
    at = app(two_models, view=COMPARE)
    at.multiselect(key="cmp_runs").set_value(["eval_c", "eval_a"]).run()
    assert [e.value for e in at.error] and "no opponent in common" in at.error[0].value
    assert not at.exception

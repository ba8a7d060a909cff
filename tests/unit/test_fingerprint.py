"""``pdbench fingerprint``: the Ashlock probe's rule, the grid, the stored run and its matrix, and the command.

The probe's moves are derived by hand from Axelrod 4.14's definitions (``axelrod.fingerprint._create_jossann``:
``JossAnnTransformer((x, y))(TitForTat)`` below the diagonal, ``DualTransformer()(JossAnnTransformer((1 - x, 1 - y))
(TitForTat))`` on and beyond it), fed the random numbers the test lists. The matrix values are hand-worked games
(Tit for Tat against the four corner probes). The comparison with axelrod's own fingerprints is
tests/unit/test_fingerprint_axelrod.py.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from harness.analysis.fingerprint import ProbeKind, fingerprint
from harness.cli import app
from harness.config.presets.fingerprint import FingerprintKind, Grid, fingerprint_config, grid, point_name
from harness.engine.runner import run_experiment
from harness.errors import ConfigError
from harness.game.rules import PayoffMatrix
from harness.players.strategies import Strategy, make_spec
from harness.store.catalog import open_run
from tests.support.llm_server import FakeLLMServer
from tests.unit.strategies.versus import NoDraws, versus


class Listed(random.Random):
    """A stream that hands out the numbers the test lists, in order."""

    def __init__(self, *values: float) -> None:
        super().__init__(0)
        self.values = list(values)

    def random(self) -> float:
        return self.values.pop(0)

    def __copy__(self) -> Listed:  # each clone (one per match driver) gets the whole list
        return Listed(*self.values)


def probe(x: float, y: float, rng: random.Random) -> Strategy:
    return make_spec("ASHLOCK", {"x": x, "y": y}).build(PayoffMatrix(), rng)


def test_the_corner_probes_are_tft_its_dual_allc_and_alld_and_draw_nothing() -> None:
    # (0, 0): Joss-Ann with no noise is Tit for Tat; (1, 1): the dual of Joss-Ann(0, 0) of TFT, i.e. D first, then
    # the opposite of the opponent's last move; (1, 0) and (0, 1) on the diagonal: C always, D always.
    versus(probe(0, 0, NoDraws(0)), "CDDC", "CC CD DD DC CC")
    versus(probe(1, 1, NoDraws(0)), "CDDC", "DC DD CD CC DC")
    versus(probe(1, 0, NoDraws(0)), "CDDC", "CC CD CD CC CC")
    versus(probe(0, 1, NoDraws(0)), "CDDC", "DC DD DD DC DC")


def test_below_the_diagonal_c_with_probability_x_d_with_y_else_tft() -> None:
    # (0.3, 0.5): r < 0.3 -> C; 0.3 <= r < 0.8 -> D; else TFT (C first, then the opponent's last move).
    draws = Listed(0.9, 0.1, 0.5, 0.95, 0.85)
    versus(probe(0.3, 0.5, draws), "DDCDC", "CD CD DC CD DC")


def test_beyond_the_diagonal_d_with_1_minus_x_c_with_1_minus_y_else_the_opposite_of_tft() -> None:
    # (0.75, 0.5), dual of Joss-Ann(0.25, 0.5): C with 1 - y = 0.5, D with 1 - x = 0.25, else anti-TFT (D first).
    draws = Listed(0.9, 0.1, 0.6, 0.8, 0.99)
    versus(probe(0.75, 0.5, draws), "CDDCC", "DC CD DD CC DC")


def test_the_grid_follows_axelrods_step_and_names_points_alone() -> None:
    assert grid(FingerprintKind.ASHLOCK, step=0.25, points=None).values == [0, 0.25, 0.5, 0.75, 1]
    assert grid(FingerprintKind.ASHLOCK, step=0.1, points=None).axis == 11  # int((1 / 0.1) // 1) + 1
    assert grid(FingerprintKind.ASHLOCK, step=0.3, points=None).values == [0, 0.333333, 0.666667, 1]
    assert grid(FingerprintKind.ASHLOCK, step=None, points=None).axis == 3
    assert grid(FingerprintKind.TRANSITIVE, step=None, points=None).axis == 5
    assert len(Grid(FingerprintKind.ASHLOCK, 3).points) == 9
    assert point_name(FingerprintKind.ASHLOCK, {"x": 0.25, "y": 1.0}) == "ashlock(x=0.25,y=1)"
    coarse = {
        c.name for c in fingerprint_config({"policy": "TFT"}, Grid(FingerprintKind.ASHLOCK, 3)).experiment.conditions
    }
    fine = {
        c.name for c in fingerprint_config({"policy": "TFT"}, Grid(FingerprintKind.ASHLOCK, 5)).experiment.conditions
    }
    assert coarse < fine


@pytest.mark.parametrize(
    ("step", "points", "says"),
    [(0.5, 3, "not both"), (0.0, None, "(0, 1]"), (None, 1, "2 to 101"), (0.001, None, "2 to 101")],
)
def test_a_grid_that_cannot_be_played_is_refused(step: float | None, points: int | None, says: str) -> None:
    with pytest.raises(ConfigError, match=says.replace("(", r"\(").replace("]", r"\]")):
        grid(FingerprintKind.ASHLOCK, step=step, points=points)


def test_tft_ashlock_matrix_from_hand_worked_games(tmp_path: Path) -> None:
    config = fingerprint_config({"policy": "TFT"}, Grid(FingerprintKind.ASHLOCK, 2), rounds=20, repetitions=2)
    assert run_experiment(config, results_dir=tmp_path, run_id="fp").status == "complete"
    with open_run(tmp_path, "fp") as cat:
        fp = fingerprint(cat, "fp")
    assert fp.kind is ProbeKind.ASHLOCK and fp.player == "TFT"
    # TFT vs TFT: R every round; vs ALLC: R; vs ALLD: S then P (0 + 19) / 20; vs anti-TFT, the cycle
    # (C,D) (D,D) (D,C) (C,C): 0 + 1 + 5 + 3 every 4 rounds.
    assert fp.value(0, 0) == 3 and fp.value(1, 0) == 3
    assert fp.value(0, 1) == pytest.approx(19 / 20)
    assert fp.value(1, 1) == pytest.approx(9 / 4)
    assert {c.games for c in fp.cells} == {2} and {c.sd for c in fp.cells} == {0.0}


def test_tft_transitive_matrix_is_its_cooperation_per_round(tmp_path: Path) -> None:
    config = fingerprint_config({"policy": "TFT"}, Grid(FingerprintKind.TRANSITIVE, 2), rounds=4, repetitions=3)
    run_experiment(config, results_dir=tmp_path, run_id="fp")
    with open_run(tmp_path, "fp") as cat:
        fp = fingerprint(cat, "fp")
    assert fp.kind is ProbeKind.TRANSITIVE
    assert fp.axes == ((0.0, 1.0), (1.0, 2.0, 3.0, 4.0))
    # TFT cooperates in round 1, then copies RAND(p): p = 0 defects always, p = 1 cooperates always.
    assert [fp.value(0.0, t) for t in (1, 2, 3, 4)] == [1, 0, 0, 0]
    assert [fp.value(1.0, t) for t in (1, 2, 3, 4)] == [1, 1, 1, 1]


def test_a_finer_grid_replays_a_coarser_ones_games(tmp_path: Path) -> None:
    """The same point is the same condition and seed: GTFT (stochastic) against the stochastic probes plays the
    very same games at the coarse grid's points in the fine grid's run."""

    def games(run_id: str, axis: int) -> dict[tuple[str, int], tuple[int, float]]:
        config = fingerprint_config({"policy": "GTFT"}, Grid(FingerprintKind.ASHLOCK, axis), rounds=10, repetitions=2)
        run_experiment(config, results_dir=tmp_path, run_id=run_id)
        with open_run(tmp_path, run_id) as cat:
            rows = cat.records("SELECT condition, replicate, seed, score_a FROM games WHERE run_id = ?", [run_id])
        return {(r["condition"], r["replicate"]): (r["seed"], r["score_a"]) for r in rows}

    coarse, fine = games("coarse", 3), games("fine", 5)
    assert len(coarse) == 18 and len(fine) == 50
    assert all(fine[key] == value for key, value in coarse.items())


@pytest.mark.slow  # two runs through the command line and the loopback server: about 3 s
def test_a_model_fingerprint_at_a_finer_grid_pays_only_for_the_new_points(
    tmp_path: Path, llm_server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model on the loopback server (the mock provider is computed again, never cached): the 3 x 3 grid's four
    corners are the 2 x 2 grid's points, so their 4 x 2 answers come from the response cache."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    runner = CliRunner()
    base = ["fingerprint", "--model", "openai/gpt-test", "--base-url", llm_server.openai_base_url]
    base += ["--rounds", "2", "--repetitions", "1", "--results", str(tmp_path)]
    first = runner.invoke(app, [*base, "--grid", "2", "--run-id", "coarse"])
    assert first.exit_code == 0, first.output
    sent = len(llm_server.requests)
    second = runner.invoke(app, [*base, "--grid", "3", "--run-id", "fine"])
    assert second.exit_code == 0, second.output
    with open_run(tmp_path, "fine") as cat:
        calls = cat.records(
            "SELECT count(*) AS calls, count(*) FILTER (WHERE cached) AS cached FROM calls WHERE run_id = 'fine'"
        )[0]
    assert calls == {"calls": 9 * 2, "cached": 4 * 2}
    assert len(llm_server.requests) - sent == 5 * 2  # only the five new points were asked


def test_the_command_refuses_a_grid_over_budget_in_one_paragraph_before_playing(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app,
        [
            "fingerprint",
            "--model",
            "openai/gpt-4o-mini",
            "--step",
            "0.01",
            "--max-cost",
            "0.1",
            "--results",
            str(tmp_path),
        ],
    )
    assert result.exit_code != 0
    text = " ".join(result.output.split())
    # 10,201 points x 3 games x 20 rounds; the cost of a point is the same at every point, so the finest grid that
    # fits is the largest n with n * n points within the budget
    assert "101 x 101 probe points (step 0.01)" in text and "612,060 model calls" in text
    assert "above --max-cost $0.1" in text and "Traceback" not in result.output
    estimated = float(text.split("estimated at $")[1].split(",")[0])
    fits = int(text.split("--grid ")[1].split(" ")[0])
    assert fits * fits * estimated / 10201 <= 0.1 < (fits + 1) ** 2 * estimated / 10201
    assert not list(tmp_path.glob("*.duckdb"))


def test_the_refusals_estimate_is_the_whole_grids(tmp_path: Path) -> None:
    """The refusal estimates one point and multiplies; the engine's estimate of the whole 3 x 3 grid agrees."""
    from harness.calls.pricing import DEFAULT_PRICES, PriceTable
    from harness.engine.estimate import estimate

    result = CliRunner().invoke(
        app, ["fingerprint", "--model", "openai/gpt-4o-mini", "--max-cost", "0.001", "--results", str(tmp_path)]
    )
    text = " ".join(result.output.split())
    said = float(text.split("estimated at $")[1].split(",")[0])
    config = fingerprint_config({"model": "openai/gpt-4o-mini"}, Grid(FingerprintKind.ASHLOCK, 3))
    (whole,) = estimate(config)
    cost = whole.cost(PriceTable.load(DEFAULT_PRICES), whole.tier, cached=True)
    assert cost is not None and said == pytest.approx(cost, abs=5e-5)  # printed to 4 decimals
    assert "540 model calls" in text


@pytest.mark.parametrize(
    ("args", "says"),
    [
        ([], "--model provider/model"),
        (["--model", "mock/tft", "--strategy", "TFT"], "one of them"),
        (["--strategy", "TFT", "--kind", "radial"], "ashlock or transitive"),
    ],
)
def test_bad_options_are_one_paragraph(tmp_path: Path, args: list[str], says: str) -> None:
    result = CliRunner().invoke(app, ["fingerprint", *args, "--results", str(tmp_path)])
    assert result.exit_code != 0 and says in " ".join(result.output.split())
    assert "Traceback" not in result.output


def test_dry_run_prints_the_calls_and_plays_nothing(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["fingerprint", "--model", "mock/tft", "--dry-run", "--results", str(tmp_path)])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "3 x 3 probe points (step 0.5)" in text and "model calls: 540" in text  # 9 points x 3 games x 20 rounds
    assert not list(tmp_path.glob("*.duckdb"))


def test_model_settings_reach_the_fingerprinted_model_and_bad_ones_are_one_paragraph(tmp_path: Path) -> None:
    settings = tmp_path / "settings.yaml"
    settings.write_text("mock/tft: {temperature: 0.3, prompts: {answer_format: json}}\n")
    args = ["fingerprint", "--model", "mock/tft", "--grid", "2", "--rounds", "2", "--repetitions", "1"]
    result = CliRunner().invoke(
        app, [*args, "--model-settings", str(settings), "--results", str(tmp_path), "--run-id", "fp"]
    )
    assert result.exit_code == 0, result.output
    with duckdb.connect(str(tmp_path / "fp.duckdb"), read_only=True) as con:
        (config_json,) = con.execute("SELECT config_json FROM runs").fetchone()
        formats = {r[0] for r in con.execute("SELECT DISTINCT answer_format FROM calls").fetchall()}
    agents = [c["agent_a"] for c in json.loads(config_json)["experiment"]["conditions"]]
    assert len(agents) == 4 and all(a["temperature"] == 0.3 for a in agents)
    assert formats == {"json"}  # every move was asked in the settings' reply format
    other = tmp_path / "other.yaml"
    other.write_text("mock/cooperator: {temperature: 0.3}\n")
    for bad, says in [(other, "must map the fingerprinted model, and only it"), (tmp_path / "none.yaml", "none.yaml")]:
        result = CliRunner().invoke(app, [*args, "--model-settings", str(bad), "--results", str(tmp_path)])
        assert result.exit_code != 0 and says in " ".join(result.output.split()), result.output
        assert "Traceback" not in result.output
    result = CliRunner().invoke(
        app, ["fingerprint", "--strategy", "TFT", "--model-settings", str(settings), "--results", str(tmp_path)]
    )
    assert result.exit_code != 0 and "a strategy plays on this machine" in " ".join(result.output.split())

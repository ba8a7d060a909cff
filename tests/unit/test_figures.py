"""``pdbench plot``: every kind of figure in every format from small mock runs (the files checked: a PNG's signature
and size, an SVG's series, a PDF's header), the numbers under the figures derived again by hand, one figure against
a golden image, and the bad inputs refused in one paragraph."""

from __future__ import annotations

import math
import re
import struct
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from harness.analysis.evolution import population_shares
from harness.analysis.figures import cooperation_by_round, focal_seats
from harness.config import parse_experiment
from harness.evolution import EvolutionSettings, PayoffSource, PayoffTable, Trajectory
from harness.figures import style
from harness.states import RunStatus
from harness.store.catalog import Catalog
from harness.store.evolution_writer import EvolutionWriter
from harness.store.writer import RunWriter
from tests.conftest import write_games
from tests.support.cli import pdbench

GOLDEN = Path(__file__).parent / "golden" / "figure_cooperation.png"
# Hand-made games: seat A's moves in four games of one condition (seat B plays all D).
MOVES_A = ("CCD", "CDD", "DDD", "CCC")
EVOLUTION_COUNTS = np.array([[4, 3, 3], [3, 5, 2], [1, 8, 1], [1, 9, 0]], dtype=np.int64)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two eval runs of mock models against two opponents, a tournament and an evolution run."""
    folder = tmp_path_factory.mktemp("runs")
    common = ("--opponents", "TFT,ALLD", "--rounds", "4", "--replicates", "2", "--results", folder)
    for run_id, model in (("ev_random", "mock/random"), ("ev_tft", "mock/tft")):
        code, _, err = pdbench("eval", "--model", model, *common, "--run-id", run_id)
        assert code == 0, err
    code, _, err = pdbench("tournament", "--players", "TFT,ALLD,ALLC", "--rounds", "5", "--results", folder,
                           "--run-id", "tour")  # fmt: skip
    assert code == 0, err
    code, _, err = pdbench("fingerprint", "--strategy", "TFT", "--grid", "2", "--rounds", "20", "--repetitions", "1",
                           "--results", folder, "--run-id", "fp")  # fmt: skip
    assert code == 0, err
    _write_evolution(folder, "evo")
    return folder


def _write_evolution(folder: Path, run_id: str) -> None:
    players = ("TFT", "ALLD", "ALLC")
    settings = EvolutionSettings(players=list(players), counts=[4, 3, 3], generations=3)
    table = PayoffTable(players, np.ones((3, 3)), np.ones((3, 3), dtype=np.int64), PayoffSource.played_once)
    with EvolutionWriter.create(folder, run_id, settings) as writer:
        for generation, row in enumerate(EVOLUTION_COUNTS):
            writer.on_generation(generation, row)
        writer.finish(RunStatus.COMPLETE, trajectory=Trajectory(players, EVOLUTION_COUNTS, 10, None, table))


# kind -> (runs, how many series its SVG holds)
CASES = {
    "cooperation": (("ev_random", "ev_tft"), 4),  # two players x two opponents
    "profile": (("ev_random", "ev_tft"), 2),  # a marker series per player
    "compare": (("ev_random", "ev_tft"), 2),  # a bar series per player
    "heatmap": (("tour",), 9),  # a cell per (player, opponent) of three players
    "evolution": (("evo",), 3),  # a band per player
    "fingerprint": (("fp",), 4),  # a cell per probe point of the 2 x 2 grid
    "invasion": (("tour",), 3),  # a node per player
    "stationary": (("evo",), 3),  # a bar per player (an evolution run's exact table)
}


# Every kind as SVG (whose series the test counts), and each other format once: the format is matplotlib's to write,
# the same for every kind; the golden-image test draws a PNG too.
DRAWN = [(kind, ".svg") for kind in CASES] + [("heatmap", ".png"), ("profile", ".pdf")]


@pytest.mark.parametrize(("kind", "suffix"), DRAWN)
def test_every_kind_is_drawn_in_every_format(runs: Path, tmp_path: Path, kind: str, suffix: str) -> None:
    run_ids, series = CASES[kind]
    out = tmp_path / f"{kind}{suffix}"
    code, stdout, err = pdbench("plot", *run_ids, "--kind", kind, "--out", out, "--results", runs)
    assert code == 0, err
    assert f"wrote {out}" in stdout
    data = out.read_bytes()
    if suffix == ".png":
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        width, height = struct.unpack(">II", data[16:24])  # the IHDR chunk
        assert width == round(style.WIDTH_IN * style.DPI)
        assert 0.4 * width < height < 3 * width
    elif suffix == ".svg":
        ids = [e.get("id", "") for e in ET.fromstring(data).iter()]
        pattern = r"cell-(\d+-\d+)" if kind in ("heatmap", "fingerprint") else r"series-(\d+)"
        found = {m.group(1) for i in ids if (m := re.fullmatch(pattern + r"(-.*)?", i))}
        assert len(found) == series, sorted(found)
    else:
        assert data.startswith(b"%PDF-") and data.rstrip().endswith(b"%%EOF")


def test_cooperation_by_round_is_the_mean_over_games_with_a_t_interval(tmp_path: Path) -> None:
    """Round by round, the share of the four games whose seat A chose C, with Student's t interval (scipy) cut to
    [0, 1]: round 1 has C, C, D, C; round 2 C, D, D, C; round 3 D, D, D, C."""
    write_games(tmp_path, "hand", [(a, "DDD") for a in MOVES_A]).close()
    with Catalog(tmp_path) as cat:
        (series,) = cooperation_by_round(cat, ["hand"])
    assert (series.player, series.opponent, series.rounds) == ("TFT", "ALLD", (1, 2, 3))
    for r, estimate in zip(series.rounds, series.estimates, strict=True):
        xs = [float(moves[r - 1] == "C") for moves in MOVES_A]
        mean, sem = float(np.mean(xs)), float(stats.sem(xs))
        low, high = stats.t.interval(0.95, len(xs) - 1, loc=mean, scale=sem)
        assert estimate.n == 4
        assert estimate.mean == pytest.approx(mean)
        assert estimate.low == pytest.approx(max(low, 0.0))
        assert estimate.high == pytest.approx(min(high, 1.0))


def test_a_condition_of_one_game_repeated_has_no_band(tmp_path: Path) -> None:
    """As the report gives no interval for games that are all alike, the figure draws no band for them."""
    write_games(tmp_path, "same", [("CDC", "DDD")] * 3).close()
    with Catalog(tmp_path) as cat:
        (series,) = cooperation_by_round(cat, ["same"])
    assert [e.mean for e in series.estimates] == [1.0, 0.0, 1.0]
    assert all(e.low is None and e.high is None for e in series.estimates)


def test_a_line_stops_at_the_last_round_two_games_reached() -> None:
    """Under a geometric horizon the last rounds are one game's: 0% or 100%, no interval; the line ends before."""
    from harness.analysis.figures import CooperationSeries
    from harness.analysis.stats import Estimate
    from harness.figures import cooperation

    def series(counts: list[int]) -> CooperationSeries:
        return CooperationSeries(
            "m", "TFT", tuple(range(1, len(counts) + 1)), tuple(Estimate(1.0, None, None, n) for n in counts)
        )

    with style.applied():
        long_run, one_replicate = cooperation.draw([series([4, 3, 2, 1, 1]), series([1, 1, 1])]).axes[0].get_lines()
    assert list(long_run.get_xdata()) == [1, 2, 3]
    assert list(one_replicate.get_xdata()) == [1, 2, 3]  # no round has two games: every round is shown


def test_players_alike_in_two_runs_are_told_apart_by_run_id(tmp_path: Path) -> None:
    write_games(tmp_path, "one", [("CC", "DD")]).close()
    write_games(tmp_path, "two", [("DD", "DD")]).close()
    with Catalog(tmp_path) as cat:
        labels = [f.label for f in focal_seats(cat, ["one", "two"])]
    assert labels == ["TFT (one)", "TFT (two)"]


def test_population_shares_are_the_counts_over_the_population(runs: Path) -> None:
    with Catalog(runs, ["evo"]) as cat:
        shares = population_shares(cat, "evo")
    assert shares.generations == (0, 1, 2, 3)
    assert shares.players == ("ALLD", "TFT", "ALLC")  # by final share: 9, 1, 0 of 10
    order = [("TFT", "ALLD", "ALLC").index(p) for p in shares.players]
    assert np.allclose(np.array(shares.shares), EVOLUTION_COUNTS[:, order] / 10)


def test_runs_are_named_by_prefix_or_latest_as_everywhere(runs: Path, tmp_path: Path) -> None:
    out = tmp_path / "f.svg"
    code, stdout, err = pdbench("plot", "ev_r", "--kind", "cooperation", "--out", out, "--results", runs)
    assert code == 0 and f"wrote {out}" in stdout, err
    code, _stdout, err = pdbench("plot", "latest", "--kind", "cooperation", "--out", out, "--results", runs)
    assert code != 0 or out.exists(), err  # latest is the folder's newest run: drawn, or refused as not fitting
    assert "no run 'latest'" not in err


def test_the_cooperation_figure_matches_its_golden_image(tmp_path: Path) -> None:
    """Two hand-made runs, drawn at the style's pinned size, DPI and font. To renew the golden image after a
    deliberate change of style: copy the drawn file over tests/unit/golden/figure_cooperation.png and look at it."""
    from matplotlib.testing.compare import compare_images

    write_games(tmp_path, "hand", [(a, "DDD") for a in MOVES_A]).close()
    write_games(tmp_path, "grim", [("CCC", "CCD"), ("CCD", "CDD")], players=("GRIM", "ALLC")).close()
    out = tmp_path / "cooperation.png"
    code, _, err = pdbench("plot", "hand", "grim", "--kind", "cooperation", "--out", out, "--results", tmp_path)
    assert code == 0, err
    assert GOLDEN.stat().st_size < 100_000
    assert compare_images(str(GOLDEN), str(out), tol=3) is None


@pytest.mark.parametrize(
    ("run_ids", "kind", "out", "says"),
    [
        (("ev_random",), "heatmap", "f.png", "run 'ev_random' is an eval run, and a heatmap figure draws a tournament"),
        (("ev_random",), "heatmap", "f.png", "For this run try --kind cooperation, profile, compare."),  # no invasion
        (("tour",), "evolution", "f.png", "run 'tour' is a tournament run, and an evolution figure draws an evolution"),
        (("evo",), "cooperation", "f.png", "run 'evo' is an evolution run"),
        (("tour", "evo"), "heatmap", "f.png", "a heatmap figure draws one run, and 2 were given"),
        (
            ("tour",),
            "fingerprint",
            "f.png",
            "run 'tour' is a tournament run, and a fingerprint figure draws a fingerprint",
        ),
        (("fp",), "heatmap", "f.png", "run 'fp' is a fingerprint run, and a heatmap figure draws a tournament run"),
        (("ev_random",), "cooperation", "f.jpg", "end the --out file in .png, .svg or .pdf"),
        (("ev_random", "missing"), "compare", "f.png", "no run 'missing'"),
    ],
)
def test_a_figure_that_does_not_fit_is_one_paragraph(
    runs: Path, tmp_path: Path, run_ids: tuple[str, ...], kind: str, out: str, says: str
) -> None:
    code, _, err = pdbench("plot", *run_ids, "--kind", kind, "--out", tmp_path / out, "--results", runs)
    assert code != 0
    assert says in " ".join(err.split())
    assert "Traceback" not in err and not list(tmp_path.iterdir())


def test_a_run_without_a_complete_game_has_nothing_to_draw(tmp_path: Path) -> None:
    config = parse_experiment(
        {"experiment": {"replicates": 1, "conditions": [{"name": "c", "agent_a": {"policy": "TFT"},
                                                         "agent_b": {"policy": "ALLD"}}]}}
    )  # fmt: skip
    writer = RunWriter.create(tmp_path, "stopped")
    writer.start_run(kind="experiment", config=config.resolved_dict(), seed=0, games_planned=1, collapse_k=10,
                     collapse_threshold=0.2)  # fmt: skip
    writer.finish(RunStatus.INTERRUPTED)
    writer.close()
    code, _, err = pdbench(
        "plot", "stopped", "--kind", "cooperation", "--out", tmp_path / "f.png", "--results", tmp_path
    )
    assert code != 0 and "nothing to draw: stopped has no complete game" in " ".join(err.split())
    assert not (tmp_path / "f.png").exists()


@pytest.mark.parametrize("suffix", [".svg", ".pdf", ".png"])
def test_the_same_data_give_the_same_file(runs: Path, tmp_path: Path, suffix: str) -> None:
    """No date, no random id in the file: a figure drawn again is byte for byte the one before (a paper's
    sources in version control change only when the data do)."""
    drawn = []
    for name in ("first", "second"):
        out = tmp_path / f"{name}{suffix}"
        assert pdbench("plot", "evo", "--kind", "evolution", "--out", out, "--results", runs)[0] == 0
        drawn.append(out.read_bytes())
    assert drawn[0] == drawn[1]


def test_an_unknown_kind_is_refused_with_the_kinds(runs: Path, tmp_path: Path) -> None:
    code, _, err = pdbench("plot", "ev_random", "--kind", "radar", "--out", tmp_path / "f.png", "--results", runs)
    assert code == 2 and "Traceback" not in err
    assert all(k in err for k in CASES)


def test_the_intervals_drawn_are_the_reports(runs: Path) -> None:
    """The compare figure's numbers are the report's own (the JSON of `pdbench report`), not a second computation."""
    import json

    from harness.analysis.figures import metrics_by_player

    code, stdout, err = pdbench("report", "ev_random", "--format", "json", "--results", runs)
    assert code == 0, err
    report = {r["condition"]: r for r in json.loads(stdout)}
    with Catalog(runs, ["ev_random"]) as cat:
        values = metrics_by_player(cat, ["ev_random"])
    coop = {v.opponent: v.estimate for v in values if v.metric == "cooperation"}
    assert coop.keys() == {"TFT", "ALLD"}
    for opponent, e in coop.items():
        row = report[f"vs_{opponent}"]
        assert (e.mean, e.low, e.high) == (
            row["a_cooperation_rate"], row["a_cooperation_rate_ci_low"], row["a_cooperation_rate_ci_high"]
        )  # fmt: skip
        assert not math.isnan(e.mean or math.nan)


def test_the_fingerprint_figure_writes_the_matrix_where_axelrod_draws_it(runs: Path) -> None:
    """TFT against the corner probes, hand-worked: (0, 0) TFT and (1, 0) ALLC pay R = 3; (0, 1) ALLD pays S then P,
    19 / 20; (1, 1) the dual of TFT cycles through S, P, T, R: 9 / 4. Origin at the lower left: row 0 is y = 0."""
    from harness.analysis.fingerprint import fingerprint
    from harness.figures.fingerprint import draw

    with Catalog(runs, ["fp"]) as cat:
        fig = draw(fingerprint(cat, "fp"))
    texts = {t.get_gid(): t.get_text() for t in fig.axes[0].texts}
    assert texts == {"cell-0-0": "3.00", "cell-0-1": "3.00", "cell-1-0": "0.95", "cell-1-1": "2.25"}

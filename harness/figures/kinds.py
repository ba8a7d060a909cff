"""The kinds of figure, which runs each fits, and drawing one to a file.

Every check (the output's format, how many runs, each run's kind) is made before anything is drawn, and a
mismatch is one :class:`~harness.errors.ConfigError` paragraph that says what would fit. Matplotlib is imported
only in :func:`render` (``pdbench --help`` never loads it)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from harness.errors import ConfigError

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from harness.analysis.evolutionary import Population
    from harness.store.catalog import Catalog

    AnalysisSettings = tuple[Population, int, int]  # the population, the bootstrap draws, their seed

FORMATS = (".png", ".svg", ".pdf")
EVOLUTION = "evolution"
TOURNAMENT = "tournament"
FINGERPRINT = "fingerprint"
T = TypeVar("T")


class FigureKind(StrEnum):
    cooperation = "cooperation"
    profile = "profile"
    heatmap = "heatmap"
    evolution = "evolution"
    compare = "compare"
    fingerprint = "fingerprint"
    invasion = "invasion"
    stationary = "stationary"


WHAT = {
    FigureKind.cooperation: "cooperation by round per opponent, with 95% bands",
    FigureKind.profile: "the behaviour profile per player, with 95% intervals",
    FigureKind.heatmap: "a tournament's mean payoff per round, player against opponent",
    FigureKind.evolution: "an evolution run's population shares over generations",
    FigureKind.compare: "bars with 95% intervals, one panel per metric, one bar per player",
    FigureKind.fingerprint: "a fingerprint run's matrix (Ashlock: payoff per round over (x, y); transitive: "
    "cooperation per round against each RAND(p))",
    FigureKind.invasion: "the invasion graph of a payoff table (who invades whom, as `pdbench analyze`)",
    FigureKind.stationary: "the long-run shares of a payoff table's players, with 95% intervals (`pdbench analyze`)",
}
ANALYSED = {FigureKind.invasion, FigureKind.stationary}
"""Figures of :mod:`harness.analysis.evolutionary`: of a tournament or an evolution run (its payoff table)."""
SEVERAL_RUNS = {FigureKind.cooperation, FigureKind.profile, FigureKind.compare}
# The run kinds a figure fits: evolution only its own; the games' figures any run that plays games.
ONLY_KIND = {FigureKind.heatmap: TOURNAMENT, FigureKind.evolution: EVOLUTION, FigureKind.fingerprint: FINGERPRINT}


def check_output(out: Path) -> None:
    """The figure's file: a PNG, SVG or PDF in a folder that exists."""
    if out.suffix.lower() not in FORMATS:
        raise ConfigError(
            f"cannot tell the figure's format from {out.name!r}: end the --out file in .png, .svg or .pdf "
            "(PNG for slides and the web, SVG or PDF for a paper)."
        )
    if not out.parent.is_dir():
        raise ConfigError(f"the folder of --out {out} does not exist; create it or write the figure elsewhere.")


def check_runs(kind: FigureKind, runs: dict[str, str]) -> None:
    """``runs`` (run id -> its kind, as ``runs.kind`` stores it) fit ``kind``: one run unless the kind compares
    several, and of the run kind it draws."""
    if len(runs) > 1 and kind not in SEVERAL_RUNS:
        allowed = ", ".join(sorted(SEVERAL_RUNS))
        raise ConfigError(
            f"{_a(str(kind))} figure draws one run, and {len(runs)} were given ({', '.join(runs)}); draw each on its "
            f"own, or use a kind that draws several ({allowed})."
        )
    for run_id, run_kind in runs.items():
        wanted = ONLY_KIND.get(kind)
        if wanted is not None and run_kind != wanted:
            raise ConfigError(
                f"run {run_id!r} is {_a(run_kind)} run, and {_a(str(kind))} figure draws {_a(wanted)} run "
                f"({WHAT[kind]}). For this run try --kind {_fitting(run_kind)}."
            )
        if wanted is None and run_kind == EVOLUTION and kind not in ANALYSED:
            raise ConfigError(
                f"run {run_id!r} is an evolution run: it has population shares, not games of its own, so "
                f"{_a(str(kind))} figure has nothing to draw. Try --kind evolution."
            )


def _a(word: str) -> str:
    return f"{'an' if word[:1] in 'aeiou' else 'a'} {word}"


def _fitting(run_kind: str) -> str:
    """The kinds that may fit a run of ``run_kind``: the analysed ones only for a tournament or an evolution (an
    eval's opponents never meet each other, so it has no payoff table; a fingerprint's are probes)."""
    if run_kind == EVOLUTION:
        return "evolution, invasion, stationary"
    kinds = [
        str(k)
        for k in FigureKind
        if ONLY_KIND.get(k, run_kind) == run_kind and (k not in ANALYSED or run_kind == TOURNAMENT)
    ]
    return ", ".join(kinds)


def render(
    cat: Catalog, run_ids: list[str], kind: FigureKind, out: Path, analysis: AnalysisSettings | None = None
) -> None:
    """Draw ``kind`` from ``run_ids`` (checked with :func:`check_runs`) and write it to ``out``; the analysed kinds
    (:data:`ANALYSED`) with ``analysis`` (the population and the bootstrap, as ``pdbench analyze`` takes them)."""
    from harness.analysis import figures as data
    from harness.analysis.evolution import population_shares
    from harness.analysis.fingerprint import fingerprint as fingerprint_of
    from harness.figures import compare, cooperation, evolution, fingerprint, heatmap, profile, style
    from harness.store.browse import matchups

    with style.applied():
        if kind is FigureKind.cooperation:
            fig = cooperation.draw(_some(data.cooperation_by_round(cat, run_ids), run_ids))
        elif kind is FigureKind.profile:
            fig = profile.draw(_some(data.behaviour_profile(cat, run_ids), run_ids))
        elif kind is FigureKind.compare:
            fig = compare.draw(_some(data.metrics_by_player(cat, run_ids), run_ids))
        elif kind in ANALYSED:
            fig = _analysed(cat, run_ids[0], kind, analysis)
        elif kind is FigureKind.heatmap:
            fig = heatmap.draw(_some(matchups(cat, run_ids[0]), run_ids))
        elif kind is FigureKind.fingerprint:
            fp = fingerprint_of(cat, run_ids[0])
            _some(list(fp.cells), run_ids)
            fig = fingerprint.draw(fp)
        else:
            shares = population_shares(cat, run_ids[0])
            _some(list(shares.generations), run_ids)
            fig = evolution.draw(shares)
        style.save(fig, out)


def _analysed(cat: Catalog, run_id: str, kind: FigureKind, settings: AnalysisSettings | None) -> Figure:
    from harness.analysis.evolutionary import analyze, measured_table
    from harness.figures import evolutionary

    assert settings is not None, "the analysed figures need the analysis settings"
    population, draws, seed = settings
    result = analyze(measured_table(cat.results_dir, run_id), population, draws=draws, seed=seed, replicator=False)
    return evolutionary.draw_invasion(result) if kind is FigureKind.invasion else evolutionary.draw_stationary(result)


def _some(rows: list[T], run_ids: list[str]) -> list[T]:
    if not rows:
        raise ConfigError(
            f"nothing to draw: {' and '.join(run_ids)} {'has' if len(run_ids) == 1 else 'have'} no complete game "
            "(or generation) yet. Wait for a game to finish, or `pdbench resume` an interrupted run."
        )
    return rows

"""``pdbench plot``: a figure ready for a paper from one or more runs (:mod:`harness.figures`).

The figure kinds are an enum the command line knows without matplotlib; the drawing modules (and matplotlib) are
imported when the command runs, so ``pdbench --help`` stays light (see ``tests/unit/test_startup.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from harness.cli.analyze import (
    BetaOpt,
    BootstrapOpt,
    DynamicsChoice,
    DynamicsOpt,
    PopulationOpt,
    SeedOpt,
    SelectionOpt,
    population_of,
)
from harness.cli.base import ResultsOpt, app, err, out
from harness.figures.kinds import FigureKind


@app.command()
def plot(
    runs: Annotated[list[str], typer.Argument(help="The run(s) to draw (several for cooperation, profile, compare).")],
    kind: Annotated[
        FigureKind,
        typer.Option(
            "--kind",
            help="cooperation: cooperation by round per opponent, 95% bands; profile: the behaviour profile per "
            "player; heatmap: a tournament's payoff per round, player against opponent; evolution: population "
            "shares over generations; compare: bars with 95% intervals per metric and player; fingerprint: a "
            "fingerprint run's matrix (pdbench fingerprint); invasion: who invades whom (a payoff table, as "
            "`pdbench analyze`); stationary: the long-run shares with 95% intervals (idem).",
        ),
    ],
    output: Annotated[Path, typer.Option("--out", help="The figure's file: .png, .svg or .pdf.")],
    results: ResultsOpt = None,
    population: PopulationOpt = 100,
    dynamics: DynamicsOpt = DynamicsChoice.moran,
    beta: BetaOpt = None,
    selection: SelectionOpt = None,
    bootstrap: BootstrapOpt = 1000,
    seed: SeedOpt = 0,
) -> None:
    """Draw a figure for a paper (matplotlib; one column wide, colour-blind-safe) from the same numbers as
    `report` and the dashboard.

    Example: `pdbench plot eval_20261122_120000 --kind cooperation --out cooperation.pdf` (the invasion graph and
    the stationary distribution take `pdbench analyze`'s population and bootstrap options)
    """
    from harness.analysis.evolutionary.analysis import check_bootstrap
    from harness.config.run_settings import results_dir
    from harness.errors import StoreError
    from harness.figures.kinds import ANALYSED, check_output, check_runs, render
    from harness.store.catalog import Catalog, open_run
    from harness.store.run_ref import resolve_run_id

    check_output(output)
    analysed = None
    if kind in ANALYSED:
        check_bootstrap(bootstrap)
        analysed = (population_of(population, dynamics, beta, selection), bootstrap, seed)
    folder = results_dir(results)
    run_ids = list(dict.fromkeys(resolve_run_id(folder, r) for r in runs))  # ids, unique prefixes or latest
    # One run: open_run's errors for a missing folder or an unreadable file; several: require_run's, run by run.
    with open_run(folder, run_ids[0]) if len(run_ids) == 1 else Catalog(folder, run_ids) as cat:
        check_runs(kind, {r: str(cat.require_run(r)["kind"]) for r in run_ids})
        render(cat, run_ids, kind, output, analysed)
        for _path, reason in cat.skipped:
            raise StoreError(f"cannot read the runs: {reason}.")
    for path, _taken in cat.live.items():
        err.print(f"[cyan]note:[/cyan] {path.name.removesuffix('.duckdb')} is still running; drawn from a live copy")
    out.print(f"wrote {output}", highlight=False)

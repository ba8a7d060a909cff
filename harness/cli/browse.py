"""The commands that read results without playing: ``sql``, ``report`` and ``strategies``.

Each imports what it reads with when it runs (DuckDB and the catalog, the statistics of a report), so that
``pdbench --help`` loads none of it (see ``tests/unit/test_startup.py``).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Annotated

import typer

from harness.cli.base import Format, ResultsOpt, WidthOpt, app, err, laid_out, out

DEFAULT_TIMEOUT_S = 300.0  # `pdbench sql`'s time limit: a runaway query (a cross join) ends on its own
MAX_TIMEOUT_S = 7 * 24 * 3600.0

if TYPE_CHECKING:
    from harness.store.catalog import Catalog


@app.command()
def sql(
    query: Annotated[str, typer.Argument(help="DuckDB SQL over runs, games, rounds, calls and the metric views.")],
    results: ResultsOpt = None,
    format: Annotated[
        Format, typer.Option("--format", help="table for people; csv or json for scripts.")
    ] = Format.table,
    timeout: Annotated[
        float,
        typer.Option(min=0.0, max=MAX_TIMEOUT_S, help="Stop the query after this many seconds (0: no limit)."),
    ] = DEFAULT_TIMEOUT_S,
) -> None:
    """Run read-only SQL over every run in the results folder at once. Ctrl-C stops a query.

    Example: `pdbench sql "select player, median_score_per_turn from tournament order by rank" --format json`
    """
    from harness.cli.render import print_rows
    from harness.config.run_settings import results_dir
    from harness.store.catalog import Catalog

    with Catalog(results_dir(results)) as cat:
        _note_live(cat)
        if not cat.attached and not cat.skipped:
            err.print(
                f"[yellow]note:[/yellow] no runs in {cat.results_dir} yet; create one with "
                f"`pdbench tournament` or `pdbench run configs/experiment.yaml`."
            )
        try:
            columns, rows = cat.query(query, timeout_s=timeout or None)
        finally:  # after the query: it may have found a damaged file, and left it out
            for path, reason in cat.skipped:
                err.print(f"[yellow]warning:[/yellow] skipped {path}: {reason}")
    print_rows(out, format.value, columns, rows, round_floats=False)


@app.command()
def report(
    run_id: Annotated[
        str, typer.Argument(help="The run (or sweep) to summarise: its id, a unique prefix of it, or `latest`.")
    ],
    results: ResultsOpt = None,
    format: Annotated[Format, typer.Option("--format", help="table, csv or json.")] = Format.table,
    sfem: Annotated[
        bool,
        typer.Option(
            "--sfem",
            help="Instead: each player's strategy shares and tremble by maximum likelihood over its games "
            "(Dal Bó & Fréchette 2011), per condition and seat and pooled, with bootstrap standard errors.",
        ),
    ] = False,
    width: WidthOpt = None,
) -> None:
    """Per-condition metrics of a run, with 95% confidence intervals over replicates; of a sweep
    (`pdbench evolve --sweep`), each player's final share per cell with a 95% confidence interval over seeds.
    The run: its id, a prefix of it no other run shares, or `latest`.

    Example: `pdbench report latest` (`--sfem`: the strategy frequency estimation; `--width 80`: laid out for 80
    columns)
    """
    with laid_out(width):
        _report(run_id, results, format, sfem)


def _report(run_id: str, results: str | None, format: Format, sfem: bool) -> None:
    from harness.cli.sweep_report import report_sweep
    from harness.config.run_settings import results_dir as folder_of
    from harness.errors import StoreError

    if not sfem and report_sweep(run_id, folder_of(results), format.value):
        return
    from harness.analysis.report import condition_summaries
    from harness.cli.render import print_rows, rows_json
    from harness.cli.show import print_report
    from harness.store.catalog import open_run
    from harness.store.run_ref import resolve_run_id

    folder = folder_of(results)
    run_id = resolve_run_id(folder, run_id)
    with open_run(folder, run_id) as cat:
        _note_live(cat)
        if sfem:
            _report_sfem(cat, run_id, format)
        elif format is Format.table:
            print_report(cat, run_id)
        else:
            cat.require_run(run_id)
            summaries = condition_summaries(cat, run_id)
        for _path, reason in cat.skipped:  # the run's file, found damaged by a query: what was shown is not the run
            raise StoreError(f"cannot read run {run_id!r}: {reason}.")
    if format is Format.table or sfem:
        return
    dicts = [{"run_id": run_id, **s.as_dict()} for s in summaries]
    columns = list(dicts[0]) if dicts else ["run_id", "condition"]
    rows = [[d.get(c) for c in columns] for d in dicts]
    if format is Format.json:
        out.file.write(rows_json(columns, rows) + "\n")
    else:
        print_rows(out, "csv", columns, rows)


def _report_sfem(cat: Catalog, run_id: str, format: Format) -> None:
    """``report --sfem``: the tables, or one row per fit (per condition and seat, then pooled: condition and seat
    empty) for scripts."""
    from harness.analysis.sfem import sfem_by_condition
    from harness.cli.render import print_rows
    from harness.cli.show import print_sfem

    if format is Format.table:
        print_sfem(cat, run_id)
        return
    cat.require_run(run_id)
    fits = sfem_by_condition(cat, run_id) + sfem_by_condition(cat, run_id, pooled=True)
    dicts = [{"run_id": run_id, **f.as_dict()} for f in fits]
    columns = list(dicts[0]) if dicts else ["run_id", "player_name"]
    print_rows(out, format.value, columns, [[d.get(c) for c in columns] for d in dicts])


def _note_live(cat: Catalog) -> None:
    """Say which runs were read from a live copy, and how old it is (on stderr: ``--format json`` stays JSON)."""
    now = datetime.now().astimezone()
    for path, taken_at in cat.live.items():
        age = max(0.0, (now - taken_at).total_seconds())
        err.print(
            f"[cyan]note:[/cyan] run {path.name.removesuffix('.duckdb')} is being written; read from its live copy "
            f"of {taken_at:%H:%M:%S} ({age:.0f} s ago)",
            highlight=False,
        )


@app.command()
def strategies(width: WidthOpt = None) -> None:
    """List the classic strategies, their names (and the other names they are known by) and parameters.

    Example: `pdbench strategies --width 80`
    """
    from harness.cli.strategy_list import StrategyList

    with laid_out(width):
        out.print(StrategyList())

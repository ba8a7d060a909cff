"""``pdbench runs``: the runs of a results folder, newest first."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer

from harness.cli.base import Format, ResultsOpt, WidthOpt, app, err, laid_out, out
from harness.states import RunStatus
from harness.util.plural import plural


class Kind(StrEnum):
    experiment = "experiment"
    tournament = "tournament"
    eval = "eval"
    fingerprint = "fingerprint"
    probe = "probe"
    evolution = "evolution"


@app.command()
def runs(
    results: ResultsOpt = None,
    kind: Annotated[Kind | None, typer.Option("--kind", help="Only runs of this kind.")] = None,
    limit: Annotated[int, typer.Option(min=1, max=1_000_000, help="Show at most this many runs.")] = 20,
    format: Annotated[Format, typer.Option("--format", help="table for people; csv or json for scripts.")] = (
        Format.table
    ),
    width: WidthOpt = None,
) -> None:
    """List the runs in the results folder, newest first: id, kind, model and opponents, status, complete games of
    those planned (and a running run's rounds so far), cost and date. A run another process is writing is listed
    as running.

    Example: `pdbench runs --kind eval --limit 5` (`--width 80`: laid out for 80 columns)
    """
    from harness.cli.render import print_rows, rows_json
    from harness.cli.run_list import RunList, as_rows, csv_rows
    from harness.config.run_settings import results_dir
    from harness.store.browse import run_entries

    folder = results_dir(results)
    listing = run_entries(folder, kind.value if kind else None, limit)
    for name, reason in listing.unreadable:
        err.print(f"[yellow]warning:[/yellow] skipped {name}: {reason}", highlight=False)
    if format is not Format.table:
        columns, rows = as_rows(listing.runs)
        if format is Format.json:
            out.file.write(rows_json(columns, rows) + "\n")
        else:
            print_rows(out, "csv", columns, csv_rows(rows))
        return
    if not listing.runs:
        what = f"{kind.value} runs" if kind else "runs"
        out.print(
            f"No {what} in {folder} yet; create one with `pdbench eval --model mock/tft` or `pdbench tournament`.",
            highlight=False,
        )
    else:
        with laid_out(width):
            out.print(RunList(listing.runs))
    for entry in listing.runs:
        if entry.status == RunStatus.CRASHED:
            out.print(f"Run {entry.run_id} crashed: {entry.note}.", highlight=False)
    if listing.total > len(listing.runs):
        out.print(
            f"[dim]The {len(listing.runs)} newest of {plural(listing.total, 'run')}; `--limit "
            f"{listing.total}` lists them all.[/dim]"
        )
    if listing.unknown_kind:
        out.print(
            f"[dim]{plural(listing.unknown_kind, 'run')} being written by another process left out: "
            "its kind cannot be read until it ends.[/dim]"
        )

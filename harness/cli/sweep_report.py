"""``pdbench report <sweep_id>``: per cell of a sweep, each player's share at the end with a 95% confidence
interval over seeds. The report command sends a sweep id here (:func:`report_sweep`) before it looks for a run."""

from __future__ import annotations

from pathlib import Path

from harness.cli.base import err, out


def report_sweep(name: str, folder: Path, fmt: str) -> bool:
    """Print the report of sweep ``name`` and return True; False if ``name`` is a run (its file exists) or no
    evolution run belongs to a sweep of that id, so the report of a run goes on. A name that cannot be a run id
    (nor so a sweep's, which starts its runs' ids) is refused as the report of a run refuses it."""
    from harness.config.run_settings import existing_run_id

    existing_run_id(name)
    if (folder / f"{name}.duckdb").exists() or not folder.is_dir():
        return False
    from rich.markup import escape
    from rich.table import Table

    from harness.analysis.evolution import sweep_runs, sweep_summary
    from harness.cli.render import print_rows
    from harness.store.catalog import Catalog

    with Catalog(folder) as cat:
        if not sweep_runs(cat, name):
            return False
        for path, reason in cat.skipped:
            err.print(f"[yellow]warning:[/yellow] skipped {path}: {reason}")
        cells = sweep_summary(cat, name)
    if fmt != "table":
        columns = ["cell", "player", "runs", "mean_share", "ci_low", "ci_high", "fixed_in", "unfinished"]
        rows = [
            [c.label, p, c.runs, e.mean, e.low, e.high, c.fixed[p], c.unfinished]
            for c in cells
            for p, e in c.shares.items()
        ]
        print_rows(out, fmt, columns, rows)
        return True
    players = list(dict.fromkeys(p for c in cells for p in c.shares))
    table = Table(
        title=f"Sweep {escape(name)}: final share per player, mean over seeds with a 95% CI (t)",
        title_justify="left",
        header_style="bold",
    )
    table.add_column("cell")
    table.add_column("runs", justify="right")
    for p in players:
        table.add_column(escape(p), justify="right")
    for c in cells:
        shown = [
            c.shares[p].fmt(1, pct=True) + (f"\n[dim]fixed in {c.fixed[p]}[/dim]" if c.fixed.get(p) else "")
            if p in c.shares
            else "—"
            for p in players
        ]
        runs = f"{c.runs}" + (f"\n[yellow]+{c.unfinished} unfinished[/yellow]" if c.unfinished else "")
        table.add_row(escape(c.label), runs, *shown)
    out.print(table)
    from harness.store.evolution_writer import list_evolution_runs

    for score in sorted({r.settings.score for r in list_evolution_runs(folder, sweep_id=name)}):
        out.print(f"Selection read {score.describe()} (score {score.value}).")
    if any(c.unfinished for c in cells):
        err.print("Unfinished runs (interrupted or failed) are left out of the means.")
    return True

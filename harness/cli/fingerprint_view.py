"""What ``pdbench fingerprint`` prints once its run ended: the fingerprint as a table, as the heatmap lays it out."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.table import Table

from harness.analysis.fingerprint import Fingerprint, ProbeKind, fingerprint
from harness.cli.base import out
from harness.store.run_summary import call_totals

if TYPE_CHECKING:
    from harness.engine.runner import RunResult
    from harness.store.catalog import Catalog

MAX_COLUMNS = 12
"""A transitive fingerprint's rounds shown as columns: more are summed up by every k-th round."""


def show_fingerprint(cat: Catalog, result: RunResult) -> int:
    """The fingerprint's table and the run's model calls; exit code 1 when no game completed."""
    fp = fingerprint(cat, result.run_id)
    if not fp.cells:
        out.print(f"Fingerprint {result.run_id}: no complete game, so no fingerprint.")
        return 1
    out.print(fingerprint_table(fp))
    calls = call_totals(cat, result.run_id)
    if calls and calls.get("calls"):
        out.print(f"Model calls: {calls['calls']:,} ({calls.get('cached') or 0:,} from the cache).", highlight=False)
    return 0


def fingerprint_table(fp: Fingerprint) -> Table:
    """Ashlock: y rows from 1 down to 0, x columns from 0 to 1 (the heatmap's orientation); transitive: one row
    per p, a column per shown round."""
    first, second = fp.axes
    title = f"{fp.kind.value.capitalize()} fingerprint of {fp.player} ({fp.run_id})"
    table = Table(title=title, caption=fp.caption)
    if fp.kind is ProbeKind.ASHLOCK:
        table.add_column("y \\ x", justify="right")
        for x in first:
            table.add_column(f"{x:g}", justify="right")
        for y in reversed(second):
            table.add_row(f"{y:g}", *(_number(fp.value(x, y)) for x in first))
        return table
    every = max(1, -(-len(second) // MAX_COLUMNS))
    shown = second[::every]
    table.add_column("p \\ round", justify="right")
    for t in shown:
        table.add_column(f"{t:g}", justify="right")
    for p in first:
        table.add_row(f"{p:g}", *(_number(fp.value(p, t)) for t in shown))
    return table


def _number(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"

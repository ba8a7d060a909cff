"""``pdbench report <sweep_id>``: per cell of a sweep, each player's share at the end with a 95% confidence
interval over seeds. The report command sends a sweep id here (:func:`report_sweep`) before it looks for a run."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console, ConsoleOptions, Group, RenderableType
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from harness.cli.base import err, out
from harness.cli.render import first_fitting

if TYPE_CHECKING:
    from harness.analysis.evolution import CellSummary


def report_sweep(name: str, folder: Path, fmt: str) -> bool:
    """Print the report of sweep ``name`` and return True; False if ``name`` is a run (its file exists) or no
    evolution run belongs to a sweep of that id, so the report of a run goes on. A name that cannot be a run id
    (nor so a sweep's, which starts its runs' ids) is refused as the report of a run refuses it."""
    from harness.config.run_settings import existing_run_id

    existing_run_id(name)
    if (folder / f"{name}.duckdb").exists() or not folder.is_dir():
        return False
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
    out.print(SweepTable(name, cells))
    from harness.store.evolution_writer import list_evolution_runs

    for score in sorted({r.settings.score for r in list_evolution_runs(folder, sweep_id=name)}):
        out.print(f"Selection read {score.describe()} (score {score.value}).")
    if any(c.unfinished for c in cells):
        err.print("Unfinished runs (interrupted or failed) are left out of the means.")
    return True


class SweepTable:
    """Per cell of a sweep, each player's final share: a column per player when they fit the width, else one
    small table per cell (a row per player), so no name or number is cut."""

    def __init__(self, name: str, cells: Sequence[CellSummary]) -> None:
        self.name = name
        self.cells = cells
        self.players = list(dict.fromkeys(p for c in cells for p in c.shares))

    @property
    def title(self) -> str:
        return f"Sweep {escape(self.name)}: final share per player, mean over seeds with a 95% CI (t)"

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[RenderableType]:
        yield first_fitting(console, options, [self.wide], self.per_cell)

    @staticmethod
    def _share(c: CellSummary, p: str) -> str:
        if p not in c.shares:
            return "—"
        return c.shares[p].fmt(1, pct=True) + (f"\n[dim]fixed in {c.fixed[p]}[/dim]" if c.fixed.get(p) else "")

    @staticmethod
    def _runs(c: CellSummary) -> str:
        return f"{c.runs}" + (f"\n[yellow]+{c.unfinished} unfinished[/yellow]" if c.unfinished else "")

    def wide(self) -> Table:
        table = Table(title=self.title, title_justify="left", header_style="bold")
        table.add_column("cell", no_wrap=True)
        table.add_column("runs", justify="right", no_wrap=True)
        for p in self.players:
            table.add_column(escape(p), justify="right", no_wrap=True)
        for c in self.cells:
            table.add_row(escape(c.label), self._runs(c), *(self._share(c, p) for p in self.players))
        return table

    def per_cell(self) -> Group:
        parts: list[RenderableType] = [Text.from_markup(f"[bold]{self.title}[/bold]")]
        for c in self.cells:
            runs = f"{c.runs} run{'s' if c.runs != 1 else ''}" + (
                f", [yellow]+{c.unfinished} unfinished[/yellow]" if c.unfinished else ""
            )
            table = Table(title=f"{escape(c.label)} ({runs})", title_justify="left", header_style="bold")
            table.add_column("player", no_wrap=True)
            table.add_column("final share", justify="right", no_wrap=True)
            for p in self.players:
                table.add_row(escape(p), self._share(c, p).replace("\n", "  "))
            parts.append(table)
        return Group(*parts)

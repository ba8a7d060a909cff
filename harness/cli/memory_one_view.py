"""The memory-one profile table ``pdbench report`` and the eval scorecard print: per player, P(C) in round 1 and
after CC, CD, DC, DD with 95% intervals over games, and the zero-determinant test's verdict.

Five estimates with their intervals need about 110 columns on one line each. A narrower terminal gets the
profile turned on its side: a row per outcome under each player's name (estimate, interval, transitions, games),
which fits 80 columns however long a model's label is. The ZD verdicts are lines under the table.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from rich import box
from rich.console import Console, ConsoleOptions, RenderableType
from rich.table import Table

from harness.analysis.memory_one import NOTE, MemoryOneProfile, Outcome
from harness.cli.render import fits, label


class MemoryOneTable:
    """The profiles of ``profiles`` under ``title``, laid out for the width there is."""

    def __init__(self, profiles: Sequence[MemoryOneProfile], title: str) -> None:
        self.profiles = profiles
        self.title = title

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[RenderableType]:
        wide = self.wide()
        yield wide if fits(console, options, wide) else self.narrow()
        for p in self.profiles:
            yield f"  ZD test, {p.label}: {p.zd().summary()}"

    def wide(self) -> Table:
        table = Table(title=self.title, caption=NOTE, header_style="bold", box=box.SIMPLE_HEAD)
        table.add_column("player", justify="left")
        table.add_column("games", justify="right")
        for o in Outcome:
            header = "round 1" if o is Outcome.FIRST else f"after {o.value.upper()}"
            table.add_column(header, justify="right", no_wrap=True)
        for p in self.profiles:
            cells = [" ".join(filter(None, p.rates[o].parts(1, pct=True))) for o in Outcome]
            table.add_row(label(p.label), str(p.games), *cells)
        return table

    def narrow(self) -> Table:
        table = Table(title=self.title, caption=NOTE, header_style="bold", box=box.SIMPLE_HEAD)
        table.add_column("player: P(C)", justify="left")
        table.add_column("estimate", justify="right", no_wrap=True)
        table.add_column("95% interval", justify="right", no_wrap=True)
        table.add_column("moves", justify="right")
        table.add_column("games", justify="right")
        for p in self.profiles:
            table.add_row(f"[bold]{label(p.label)}[/bold]")
            for o in Outcome:
                mean, interval = p.rates[o].parts(1, pct=True)
                table.add_row(f"  {o.label}", mean, interval, f"{p.transitions[o]:,}", str(p.rates[o].n))
        return table

"""``pdbench strategies`` laid out for the width it is given: a table with a column per field when the description
still has room beside the names and parameters, else one entry per strategy, its description and parameters under
its name. Either way every name and parameter stays whole; only descriptions (prose) wrap."""

from __future__ import annotations

from collections.abc import Iterator

from rich import box
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderableType
from rich.table import Table

from harness.cli.render import fits

DESCRIPTION_ROOM = 30  # the narrowest description column the wide table is used with


def _params(cls: type) -> list[str]:
    from harness.players.strategies.base import shown_default

    fields = cls.Params.model_fields  # type: ignore[attr-defined]
    return [f"{k}={shown_default(f)}" for k, f in fields.items()]


def _described(name: str, description: str) -> str:
    """The description, and the other names the strategy is accepted by (The Evolution of Trust's, Axelrod's)."""
    from harness.players.strategies.registry import aliases_of

    aliases = aliases_of(name)
    return description + (f"\nAlso: {', '.join(aliases)}." if aliases else "")


class StrategyList:
    """Every classic strategy: its name (as configs spell it), emoji, full name, what it does, its parameters."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[RenderableType]:
        without = self.wide(with_description=False)
        if fits(console, options.update_width(max(options.max_width - DESCRIPTION_ROOM, 1)), without):
            yield self.wide()
        else:
            yield self.narrow()

    def wide(self, with_description: bool = True) -> Table:
        from harness.players.strategies import STRATEGIES

        rows = [(name, cls.emoji, cls.display_name, "\n".join(_params(cls)) or "—") for name, cls in STRATEGIES.items()]
        headers = ("name", "", "strategy", "parameters (default)")
        # The names and parameters keep their own width (so the description alone takes what is left, and wraps).
        widths = [
            max(cell_len(line) for cell in (h, *col) for line in cell.split("\n"))
            for h, col in zip(headers, zip(*rows, strict=True), strict=True)
        ]
        table = Table(header_style="bold", box=box.SIMPLE_HEAD, title="Classic strategies")
        for header, width in zip(headers[:3], widths, strict=False):
            table.add_column(header, no_wrap=True, width=width)
        if with_description:
            table.add_column("description", ratio=1)
        table.add_column(headers[3], no_wrap=True, width=widths[3])
        for (name, emoji, display, params), cls in zip(rows, STRATEGIES.values(), strict=True):
            description = [_described(name, cls.description)] if with_description else []
            table.add_row(name, emoji, display, *description, params)
        return table

    def narrow(self) -> Table:
        from harness.players.strategies import STRATEGIES

        table = Table(header_style="bold", box=box.SIMPLE_HEAD, title="Classic strategies", show_lines=False)
        table.add_column("name", no_wrap=True)
        table.add_column("strategy, what it does, parameters (default)", ratio=1)
        for name, cls in STRATEGIES.items():
            params = ", ".join(_params(cls))
            body = f"[bold]{cls.display_name}[/bold]\n{_described(name, cls.description)}"
            table.add_row(f"{cls.emoji} {name}", body + (f"\n[dim]parameters: {params}[/dim]" if params else ""))
            table.add_row("", "")
        return table

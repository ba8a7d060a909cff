"""The runs of a results folder as ``pdbench runs`` prints them: a table laid out for the terminal's width.

At 120 columns and more each run is one line: its id, kind, model, opponents, status, complete games of
those planned (a running run's rounds so far beside them), cost and when it was made. Narrower, the opponents
are shortened (``ALLC, ALLD, TFT +6``), and at 80 columns each row takes two lines (the date under the run id,
the status under the kind, the opponents under the model, the cost under the games); when a model's name would
not fit so, three (the kind and status under the run id, which leaves the model the room it needs). The
opponents are shortened rather than wrapped; the run id, which ``resume`` and ``report`` take, is never cut.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from rich import box
from rich.console import Console, ConsoleOptions, RenderableType
from rich.table import Table

from harness.cli.render import fits
from harness.states import RunStatus
from harness.store.browse import RunEntry
from harness.util.plural import plural

SHORT = 3  # opponents named before "+N" in a shortened list


def names(players: Sequence[str], most: int | None = None) -> str:
    """``ALLC, ALLD, TFT +6``: the first ``most`` players and how many more (all of them without ``most``)."""
    if not players:
        return "—"
    if most is None or len(players) <= most + 1:
        return ", ".join(players)
    return ", ".join(players[:most]) + f" +{len(players) - most}"


def cost(entry: RunEntry) -> str:
    return "—" if entry.cost_usd is None else f"${entry.cost_usd:,.4f}"


def games(entry: RunEntry) -> str:
    """``3/6``: complete games of those planned; a run still running (or crashed) adds the rounds it has played so
    far (``3/6, 127 rounds``), its games in flight included, which move long before a game ends."""
    if entry.games_planned is None:
        return "—"
    done = f"{entry.games_done or 0:,}/{entry.games_planned:,}"
    unfinished = entry.status in (RunStatus.RUNNING, RunStatus.CRASHED)
    return f"{done}, {plural(entry.rounds, 'round')}" if unfinished and entry.rounds is not None else done


def created(entry: RunEntry) -> str:
    return "—" if entry.created_at is None else entry.created_at.strftime("%Y-%m-%d %H:%M")


class RunList:
    """The table of ``runs``, as a Rich renderable that picks its layout from the width it is given."""

    def __init__(self, runs: list[RunEntry]) -> None:
        self.runs = runs

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[RenderableType]:
        layouts = [self.wide(None), self.wide(SHORT * 2), self.wide(SHORT)]
        chosen = next((t for t in layouts if fits(console, options, t)), None)
        if chosen is None:
            two = self.narrow(options.max_width)
            chosen = two if self._models_whole(two) else self.narrow(options.max_width, three_lines=True)
        yield chosen

    def _models_whole(self, table: Table) -> bool:
        """Whether the players' column of a narrow layout holds every model's name whole."""
        room = table.columns[-2].max_width or 0
        return all(len(m) <= room for e in self.runs if e.kind is not None for m in e.models)

    def _table(self) -> Table:
        return Table(header_style="bold", box=box.SIMPLE_HEAD, title="Runs, newest first (times in UTC)")

    def wide(self, most: int | None) -> Table:
        table = self._table()
        for col in ("run id", "kind", "model", "opponents", "status", "games", "cost", "created"):
            table.add_column(col, justify="right" if col in ("games", "cost") else "left", no_wrap=True)
        for e in self.runs:
            model = names(e.models) if e.kind is not None else f"({e.note})"  # a run being written: why
            table.add_row(
                e.run_id,
                e.kind or "—",
                model,
                names(e.opponents, most) if e.kind else "",
                e.status,
                games(e),
                cost(e),
                created(e),
            )
        return table

    def narrow(self, width: int, three_lines: bool = False) -> Table:
        """Two lines a row: the id over the date, the kind over the status, the model over its opponents, the games
        over the cost; or (``three_lines``, when a model's name would not fit beside the kind) three, the kind and
        status between the id and the date. The players get the width the others leave: as many opponents as fit
        are named, and the rest counted (``+5``); a model's name too long even for that is cut with an ellipsis.
        The run id is never cut."""
        if three_lines:
            ids = [f"{e.run_id}\n{e.kind or '—'}, {e.status}\n[dim]{created(e)}[/dim]" for e in self.runs]
        else:
            ids = [f"{e.run_id}\n[dim]{created(e)}[/dim]" for e in self.runs]
        kinds = [f"{e.kind or '—'}\n{e.status}" for e in self.runs]
        counts = [f"{games(e)}\n{cost(e)}" for e in self.runs]
        columns = (
            {"run id\nkind, status\ncreated": ids, "games\ncost": counts}
            if three_lines
            else {"run id\ncreated": ids, "kind\nstatus": kinds, "games\ncost": counts}
        )
        widest = [
            max(len(_plain(line)) for cell in [header, *cells] for line in cell.split("\n"))
            for header, cells in columns.items()
        ]
        # Around the columns: an edge on each side, a space of padding each side of each, a separator between two.
        n = len(columns) + 1
        room = max(12, width - (2 + 2 * n + n - 1) - sum(widest))
        table = self._table()
        for header in list(columns)[:-1]:
            table.add_column(header, no_wrap=True)
        table.add_column("model\nopponents", no_wrap=True, overflow="ellipsis", max_width=room)
        table.add_column("games\ncost", justify="right", no_wrap=True)
        for e, run, kind, count in zip(self.runs, ids, kinds, counts, strict=True):
            first = [run] if three_lines else [run, kind]
            table.add_row(*first, _players(e, room), count)
        return table


def _plain(line: str) -> str:
    return line.replace("[dim]", "").replace("[/dim]", "")


def _players(e: RunEntry, room: int) -> str:
    """The model over its opponents (``vs ALLC, ALLD +7``, as many named as ``room`` holds; several models one a line
    when they do not fit on one); a run without a model,
    its players on one line; a run being written, why nothing more is known."""
    if e.kind is None:
        return f"({e.note})"
    lead = "vs " if e.models else ""
    most = len(e.opponents)
    while most > 1 and len(lead + names(e.opponents, most)) > room:
        most -= 1
    opponents = lead + names(e.opponents, most)
    models = names(e.models) if len(names(e.models)) <= room else "\n".join(e.models)  # one a line if need be
    return f"{models}\n{opponents}" if e.models else opponents


def as_rows(runs: list[RunEntry]) -> tuple[list[str], list[list[Any]]]:
    """The runs as columns and rows for ``--format json`` (players as lists) or ``csv`` (see :func:`csv_rows`)."""
    columns = [
        "run_id",
        "kind",
        "status",
        "created_at",
        "games_done",
        "games_planned",
        "rounds",
        "cost_usd",
        "models",
        "opponents",
        "note",
    ]
    rows = [
        [
            e.run_id,
            e.kind,
            e.status,
            e.created_at,
            e.games_done,
            e.games_planned,
            e.rounds,
            e.cost_usd,
            list(e.models),
            list(e.opponents),
            e.note,
        ]
        for e in runs
    ]
    return columns, rows


def csv_rows(rows: list[list[Any]]) -> list[list[Any]]:
    """Players joined by ``;`` for CSV, where a cell holds no list."""
    return [[";".join(v) if isinstance(v, list) else v for v in row] for row in rows]

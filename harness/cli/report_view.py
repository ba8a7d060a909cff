"""``pdbench report`` laid out for the width it is given: the per-condition table, the model answers and the
comprehension checks each pick the widest layout that fits, and at 80 columns every name and number stays whole.

The per-condition report has three layouts: one line per seat with each interval beside its mean (wide), the
interval under its mean with each condition's seats under it (medium), and one small table per condition with
the measures as rows and the seats as columns, the players named above it (narrow: about 62 columns whatever
the names). The answers become one sentence per model when their table does not fit; the comprehension checks,
one table per player.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from rich import box
from rich.console import Console, ConsoleOptions, Group, RenderableType
from rich.table import Table
from rich.text import Text

from harness.cli.render import behaviour_caption, first_fitting, games_cell, label, percent, reader_shares

if TYPE_CHECKING:
    from harness.analysis.report import ConditionSummary, SeatSummary
    from harness.analysis.stats import Estimate

# The report's measures: the estimate's name, its heading, its digits and whether it is a rate.
MEASURES: tuple[tuple[str, str, int, bool], ...] = (
    ("payoff_per_round", "payoff/round", 3, False),
    ("cooperation_rate", "cooperation", 1, True),
    ("retaliation_rate", "retaliation", 1, True),
    ("forgiveness_rate", "forgiveness", 1, True),
    ("exploitability_gap", "exploit. gap", 1, False),
)
COLLAPSE = "collapse (round)"
ANSWERS_NOTE = (
    "Unreadable: answers no move could be read from (re-asks included). Fallback: rounds whose move the harness "
    "chose after the last unreadable answer. Read by: what decided each round's move (parser, structured reply, "
    "judge, re-ask, fallback), as shares of the rounds."
)


def _collapse(seat: SeatSummary, games: int, *, two_lines: bool) -> str:
    """When cooperation collapsed (mean round, its interval) and in how many of the games."""
    mean, interval = seat.estimates["time_to_collapse"].parts(1)
    count = f"({seat.collapsed}/{games})"
    if two_lines:
        return f"{mean} {count}" + (f"\n{interval}" if interval else "")
    return " ".join(p for p in (mean, interval, count) if p)


def _two_lines(estimate: Estimate, digits: int, pct: bool) -> str:
    mean, interval = estimate.parts(digits, pct)
    return f"{mean}\n{interval}" if interval else mean


class RunReport:
    """The per-condition table of a run (mean ± 95% CI over replicates), for any width."""

    def __init__(self, run: dict[str, Any], summaries: Sequence[ConditionSummary]) -> None:
        self.run = run
        self.summaries = summaries

    @property
    def title(self) -> str:
        return f"Run {self.run['run_id']} ({self.run['status']}): mean ± 95% CI over replicates"

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[RenderableType]:
        yield first_fitting(console, options, [self.wide, self.medium], self.narrow)

    def _table(self, caption: bool = True) -> Table:
        return Table(
            title=self.title,
            caption=behaviour_caption(self.summaries) if caption else None,
            caption_justify="left",
            header_style="bold",
            box=box.SIMPLE_HEAD,
        )

    def wide(self) -> Table:
        """One line per seat: condition, games, player, each mean with its interval beside it."""
        table = self._table()
        for col in ("condition", "games", "player", *(m[1] for m in MEASURES), COLLAPSE):
            table.add_column(col, justify="left" if col in ("condition", "player") else "right", no_wrap=True)
        for s in self.summaries:
            for i, seat in enumerate(s.seats):
                table.add_row(
                    s.condition if i == 0 else "",
                    games_cell(s) if i == 0 else "",
                    f"{seat.player}: {label(seat.name)}",
                    *(seat.estimates[key].fmt(digits, pct=pct) for key, _, digits, pct in MEASURES),
                    _collapse(seat, s.games, two_lines=False),
                )
        return table

    def medium(self) -> Table:
        """A row per condition (its games beside it) with its seats under it; each interval under its mean."""
        table = self._table()
        table.pad_edge = False
        table.add_column("condition\n  player", no_wrap=True)
        for _, heading, _, _ in MEASURES:
            shown = "payoff\nper round" if heading == "payoff/round" else heading.replace(" ", "\n", 1)
            table.add_column(shown, justify="right", no_wrap=True)
        table.add_column(COLLAPSE.replace(" ", "\n"), justify="right", no_wrap=True)
        for s in self.summaries:
            games = f"{s.games} game{'s' if s.games != 1 else ''}" + (", all alike" if s.repeated else "")
            table.add_row(f"[bold]{s.condition}[/bold]\n{games}", *([""] * (len(MEASURES) + 1)))
            for seat in s.seats:
                table.add_row(
                    f"  {seat.player}: {label(seat.name)}",
                    *(_two_lines(seat.estimates[key], digits, pct) for key, _, digits, pct in MEASURES),
                    _collapse(seat, s.games, two_lines=True),
                )
        return table

    def narrow(self) -> Group:
        """A small table per condition: the measures as rows, the seats (named above it) as columns."""
        parts: list[RenderableType] = [Text(self.title, style="bold")]
        cells = [
            [
                *(seat.estimates[key].fmt(digits, pct=pct) for key, _, digits, pct in MEASURES),
                _collapse(seat, s.games, two_lines=False),
            ]
            for s in self.summaries
            for seat in s.seats
        ]
        widest = max((len(c) for row in cells for c in row), default=1)  # one width for every block's columns
        for s in self.summaries:
            games = f"{s.games} game{'s' if s.games != 1 else ''}" + (", all alike" if s.repeated else "")
            head = [f"[bold]{s.condition}[/bold] ({games})"]
            head += [f"  {seat.player}: {label(seat.name)}" for seat in s.seats]
            table = Table(box=box.SIMPLE_HEAD, header_style="bold", padding=(0, 1))
            table.add_column("", no_wrap=True)
            for seat in s.seats:
                table.add_column(seat.player, justify="right", no_wrap=True, min_width=widest)
            for key, heading, digits, pct in MEASURES:
                table.add_row(heading, *(seat.estimates[key].fmt(digits, pct=pct) for seat in s.seats))
            table.add_row(COLLAPSE, *(_collapse(seat, s.games, two_lines=False) for seat in s.seats))
            parts += [Text(""), Text.from_markup("\n".join(head)), table]
        parts.append(Text(behaviour_caption(self.summaries), style="dim"))
        return Group(*parts)


class ModelAnswers:
    """Each model's answers to move requests (rows of ``model_parsing``): a table, or a sentence per model."""

    def __init__(self, rows: Sequence[dict[str, Any]]) -> None:
        self.rows = rows

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[RenderableType]:
        yield first_fitting(console, options, [self.table], self.sentences)

    def table(self) -> Table:
        table = Table(
            title="Model answers: how many could be read",
            header_style="bold",
            box=box.SIMPLE_HEAD,
            caption=ANSWERS_NOTE,
            caption_justify="left",
        )
        columns = ("model", "games", "answers", "unreadable", "parse\nfailures", "fallback\nrounds", "fallback\nrate")
        for col in (*columns, "read by"):
            table.add_column(col, justify="left" if col in ("model", "read by") else "right", no_wrap=True)
        for r in self.rows:
            table.add_row(
                label(r["player_name"]),
                str(r["games"]),
                f"{r['answers']:,}",
                f"{r['unreadable']:,}",
                percent(r["parse_failure_rate"]),
                f"{r['fallback_rounds']:,} of {r['rounds']:,}",
                percent(r["fallback_rate"]),
                reader_shares(r, sep="\n"),
            )
        return table

    def sentences(self) -> Group:
        lines: list[RenderableType] = [Text("Model answers: how many could be read", style="bold")]
        for r in self.rows:
            lines.append(
                Text.assemble(
                    ("• ", "dim"),
                    (label(r["player_name"]), "bold"),
                    f": {r['games']} game{'s' if r['games'] != 1 else ''}, {r['answers']:,} answers, "
                    f"{r['unreadable']:,} unreadable (parse failures {percent(r['parse_failure_rate'])}); "
                    f"fallback {r['fallback_rounds']:,} of {r['rounds']:,} rounds "
                    f"({percent(r['fallback_rate'])}); read by {reader_shares(r)}.",
                )
            )
        lines.append(Text(ANSWERS_NOTE, style="dim"))
        return Group(*lines)


COMPREHENSION_TITLE = "Comprehension check: right answers per model and question"
COMPREHENSION_COLUMNS = ("question", "asked", "readable", "right", "accuracy")


def _comprehension_cells(r: dict[str, Any]) -> tuple[str, ...]:
    return (r["kind"], f"{r['questions']:,}", f"{r['answered']:,}", f"{r['correct']:,}", f"{r['accuracy']:.1%}")


class Comprehension:
    """Comprehension-check accuracy per player and question kind (rows of ``comprehension_accuracy``): one table,
    or one per player (its name as the title) when the names leave no room."""

    def __init__(self, rows: Sequence[dict[str, Any]]) -> None:
        self.rows = rows

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[RenderableType]:
        yield first_fitting(console, options, [self.table], self.per_player)

    @staticmethod
    def _columns(table: Table) -> None:
        for col in COMPREHENSION_COLUMNS:
            table.add_column(col, justify="left" if col == "question" else "right", no_wrap=True)

    def table(self) -> Table:
        table = Table(title=COMPREHENSION_TITLE, header_style="bold", box=box.SIMPLE_HEAD)
        table.add_column("player", no_wrap=True)
        self._columns(table)
        last = None
        for r in self.rows:
            table.add_row(label(r["player_name"]) if r["player_name"] != last else "", *_comprehension_cells(r))
            last = r["player_name"]
        return table

    def per_player(self) -> Group:
        parts: list[RenderableType] = [Text(COMPREHENSION_TITLE, style="bold")]
        players = list(dict.fromkeys(r["player_name"] for r in self.rows))
        for player in players:
            table = Table(title=label(player), title_justify="left", header_style="bold", box=box.SIMPLE_HEAD)
            self._columns(table)
            for r in self.rows:
                if r["player_name"] == player:
                    table.add_row(*_comprehension_cells(r))
            parts.append(table)
        return Group(*parts)

"""The scorecard ``pdbench eval`` prints: the model against each opponent (in seat A unless a suite seats it
in B), laid out for the terminal.

Nine columns of means with their 95% intervals need about 140 columns on one line each. A narrower terminal
gets the interval under its mean (two lines a row), and one narrower still (80 columns) gets two tables of
five columns each, so that no cell is ever squeezed into three lines or more, and a wide terminal uses its
room. The layout is chosen when the scorecard is printed, from the width Rich gives it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from rich import box
from rich.console import Console, ConsoleOptions, RenderableType
from rich.table import Table

from harness.cli.render import behaviour_caption, fits, games_cell, label, percent, reader_shares
from harness.util.plural import plural

if TYPE_CHECKING:
    from harness.analysis.report import ConditionSummary, SeatSummary

PARSE_NOTE = " Parse failures: unreadable answers / answers, every game."
# What a column shows of the model's seat: its mean, its interval ("" if none) and a note after both.
Cell = Callable[["SeatSummary", "ConditionSummary"], tuple[str, str, str]]


def _estimate(metric: str, digits: int, pct: bool = False) -> Cell:
    return lambda me, s: (*me.estimates[metric].parts(digits, pct), "")


def _collapse(me: SeatSummary, s: ConditionSummary) -> tuple[str, str, str]:
    return (*me.estimates["time_to_collapse"].parts(1), f"({me.collapsed}/{s.games})")


def _parsing(field: str) -> Cell:
    return lambda me, s: (percent(getattr(me.parsing, field)) if me.parsing else "—", "", "")


COLUMNS: dict[str, Cell] = {
    "payoff/round": _estimate("payoff_per_round", 3),
    "cooperation": _estimate("cooperation_rate", 1, pct=True),
    "retaliation": _estimate("retaliation_rate", 1, pct=True),
    "forgiveness": _estimate("forgiveness_rate", 1, pct=True),
    "collapse (round)": _collapse,
    "parse failures": _parsing("parse_failure_rate"),
    "fallback rate": _parsing("fallback_rate"),
}
# The two tables of the narrowest layout: what the model earns and how it plays; how it reacts and reads.
FIRST = ("payoff/round", "cooperation", "collapse (round)")
SECOND = ("retaliation", "forgiveness", "parse failures", "fallback rate")


class Scorecard:
    """The scorecard of ``run`` (its ``runs`` row) from its per-condition summaries, as a Rich renderable."""

    def __init__(self, run: dict[str, Any], summaries: list[ConditionSummary]) -> None:
        self.run = run
        self.summaries = summaries

    def layouts(self) -> Iterator[list[Table]]:
        """From the widest layout to the narrowest: one table of one-line rows, one table of two-line rows (the
        interval under its mean), and two tables of two-line rows."""
        yield [self.table(tuple(COLUMNS), two_lines=False)]
        yield [self.table(tuple(COLUMNS), two_lines=True)]
        yield [self.table(FIRST, two_lines=True), self.table(SECOND, two_lines=True, part=2)]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[RenderableType]:
        layouts = list(self.layouts())
        for tables in layouts:
            if tables is layouts[-1] or all(fits(console, options, t) for t in tables):
                yield from tables
                return

    def table(self, columns: tuple[str, ...], *, two_lines: bool, part: int = 1) -> Table:
        run = self.run
        title = (
            f"Scorecard {run['run_id']} ({run['status']}): mean ± 95% CI over games"
            if part == 1
            else f"Scorecard {run['run_id']}, continued"
        )
        last = part == 2 or len(columns) == len(COLUMNS)
        table = Table(
            title=title,
            caption=behaviour_caption(self.summaries, PARSE_NOTE) if last else None,
            header_style="bold",
            box=box.SIMPLE_HEAD,
        )
        table.add_column("opponent", justify="left")
        table.add_column("games", justify="right")
        for name in columns:
            # Rows of two lines take headers of two lines ("collapse\n(round)"), whose width is their longer word.
            header = name.replace("/", "/\n") if "/" in name else name.replace(" ", "\n", 1)
            table.add_column(header if two_lines else name, justify="right", no_wrap=True)
        for s in self.summaries:
            me, them, seat = _model_seat(s)
            cells = [COLUMNS[name](me, s) for name in columns]
            table.add_row(
                label(them.name) + seat, games_cell(s), *(_cell(*cell, two_lines=two_lines) for cell in cells)
            )
        return table


def _model_seat(s: ConditionSummary) -> tuple[SeatSummary, SeatSummary, str]:
    """The model's seat, the opponent's and a note on the seating: the model sits in seat A unless only seat B
    is a model (a suite plays it in both seats, as akata2023 does); in self-play the row is seat A's."""
    a, b = s.seats
    if a.parsing is None and b.parsing is not None:
        return b, a, " (model in seat B)"
    return a, b, " (self-play)" if b.parsing is not None else ""


def _cell(mean: str, interval: str, note: str, *, two_lines: bool) -> str:
    """``1.0 ± 0.2 (3/3)`` on one line; ``1.0 (3/3)`` over ``± 0.2`` on two (one when there is no interval)."""
    if two_lines:
        return " ".join(filter(None, (mean, note))) + (f"\n{interval}" if interval else "")
    return " ".join(filter(None, (mean, interval, note)))


def scorecard_summary(overall: dict[str, Any], totals: dict[str, Any], answers: list[dict[str, Any]]) -> str:
    """One paragraph under the scorecard: the model's means over all games, the run's calls and costs,
    and each model's parse-failure and fallback rates and what decided its moves, as shares of its rounds
    (``answers``: ``model_parsing`` rows)."""
    payoff = overall["payoff"]
    coop = overall["coop"]
    parsing = "".join(
        f"; {r['player_name']}: parse failures {percent(r['parse_failure_rate'])} of {plural(r['answers'], 'answer')}, "
        f"fallback moves in {percent(r['fallback_rate'])} of {plural(r['rounds'], 'round')}; moves read by "
        f"{reader_shares(r)}"
        for r in answers
    )
    return (
        f"[bold]Summary[/bold]: {plural(overall['games'], 'complete game')}; mean payoff per round {payoff:.3f}"
        if payoff is not None
        else "[bold]Summary[/bold]: no complete games"
    ) + (
        (f"; cooperation (chosen moves) {coop:.1%}" if coop is not None else "")
        + f"; {plural(totals['calls'] or 0, 'call')} ({totals['cached'] or 0:,} from cache, "
        f"{plural(totals['unparseable'] or 0, 'unreadable answer')}), tokens in {totals['input_tokens'] or 0:,} / "
        f"out {totals['output_tokens'] or 0:,}, cost ${totals['cost'] or 0:.4f}" + parsing
    )

"""Turning results into terminal output: Rich tables for people, CSV and JSON for scripts."""

from __future__ import annotations

import csv
import datetime as dt
import decimal
import io
import json
import math
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from rich import box
from rich.console import Console, ConsoleOptions, RenderableType
from rich.measure import Measurement
from rich.table import Table

from harness.analysis.notes import FORGIVENESS_NOTE, REPEATED_NOTE
from harness.store.views.answers import READERS, reader_column
from harness.store.views.leaderboard import RANKING_NOTE

if TYPE_CHECKING:
    from harness.analysis.report import ConditionSummary
    from harness.analysis.sfem import PlayerSfem


def _cell(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        return f"{value:.4f}".rstrip("0").rstrip(".") if not value.is_integer() else f"{value:.0f}"
    return str(value)


def _json_default(value: Any) -> Any:
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    return str(value)


def _clean(value: Any) -> Any:
    """NaN and infinities become null, at any depth (lists, structs, maps)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def rows_json(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """One JSON array of row objects that any JSON parser accepts (no NaN, no Infinity)."""
    return json.dumps(
        [{c: _clean(v) for c, v in zip(columns, row, strict=True)} for row in rows],
        default=_json_default,
        ensure_ascii=False,
        allow_nan=False,
    )


RATE_DECIMALS = 4  # rates, payoffs, shares and the other measures in a CSV: 0.1234 (the table shows fewer)
DOLLAR_DECIMALS = 6  # costs in US dollars: a millionth of a dollar, below any single call's price


def decimals_for(column: str) -> int:
    """How many decimals a CSV column's numbers keep: dollars to a millionth, every other measure to 4 places."""
    return DOLLAR_DECIMALS if "cost" in column or "usd" in column else RATE_DECIMALS


def rounded(value: float, decimals: int) -> str:
    """``value`` to ``decimals`` places without trailing zeros (``0.1``, not ``0.10000000000000002``; ``3``, not
    ``3.0``); no ``-0``. NaN and the infinities are left empty, as JSON makes them null."""
    if not math.isfinite(value):
        return ""
    text = f"{value:.{decimals}f}".rstrip("0").rstrip(".") if decimals else f"{value:.0f}"
    return "0" if text in ("-0", "") else text


def rows_csv(columns: Sequence[str], rows: Sequence[Sequence[Any]], *, round_floats: bool = True) -> str:
    """The rows as CSV, a header first. Floats are rounded (:func:`decimals_for`) unless ``round_floats`` is
    False (``pdbench sql``, whose numbers are the user's own query's); JSON keeps full precision."""
    places = [decimals_for(c) for c in columns]
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow(
            [
                ""
                if v is None
                else rounded(v, n)
                if round_floats and isinstance(v, float)
                else v
                if isinstance(v, (int, float, str))
                else _json_default(v)
                for v, n in zip(row, places, strict=True)
            ]
        )
    return buf.getvalue()


def rows_table(columns: Sequence[str], rows: Sequence[Sequence[Any]], title: str | None = None) -> Table:
    table = Table(title=title, show_lines=False, header_style="bold")
    for col in columns:
        table.add_column(col, overflow="fold")
    for row in rows:
        table.add_row(*(_cell(v) for v in row))
    return table


MEDALS = {1: "🥇", 2: "🥈", 3: "🥉"}


def label(name: str) -> str:
    """``🪞 TFT`` for a known strategy, the bare name otherwise (a model, later)."""
    from harness.players.strategies import STRATEGIES  # here: `pdbench sql` prints rows without the strategies

    cls = STRATEGIES.get(name.upper())
    return f"{cls.emoji} {name}" if cls else name


def profile_table(columns: Sequence[str], rows: Sequence[Sequence[Any]], title: str) -> Table:
    """Per-condition means of a profile's columns (whatever they are), the condition first; — where a dimension
    had no chance to apply in any game of the condition (None)."""
    table = Table(title=title, header_style="bold", box=box.SIMPLE_HEAD)
    for col in columns:
        table.add_column(col.replace("_", " "), justify="left" if col == "condition" else "right")
    for row in rows:
        table.add_row(*("—" if v is None else _cell(v) if not isinstance(v, float) else f"{v:.3f}" for v in row))
    return table


def leaderboard_table(rows: list[dict[str, Any]], title: str = "Leaderboard") -> Table:
    """The ``tournament`` view as a table, best first. Medals go by rank, so players tied on a rank
    share its medal (two 🥇 and no 🥈 when two players share first place)."""
    table = Table(title=title, header_style="bold", caption=RANKING_NOTE)
    for col, justify in (
        ("rank", "right"),
        ("player", "left"),
        ("median/turn", "right"),
        ("mean/turn", "right"),
        ("wins", "right"),
        ("draws", "right"),
        ("losses", "right"),
        ("cooperation", "right"),
    ):
        table.add_column(col, justify=justify)  # type: ignore[arg-type]
    for r in rows:
        table.add_row(
            f"{MEDALS.get(r['rank'], '')} {r['rank']}".strip(),
            label(r["player"]),
            f"{r['median_score_per_turn']:.3f}",
            f"{r['mean_score_per_turn']:.3f}",
            str(r["wins"]),
            str(r["draws"]),
            str(r["losses"]),
            f"{r['cooperation_rate']:.1%}",
        )
    return table


def matchup_table(players: list[str], cells: dict[tuple[str, str], float]) -> Table:
    self_play = any((p, p) in cells for p in players)
    table = Table(
        title="Matchups: row's payoff per round vs column",
        header_style="bold",
        caption="The diagonal is self-play: shown here, left out of the leaderboard." if self_play else None,
    )
    table.add_column("")
    for p in players:
        table.add_column(p, justify="right")
    for row in players:
        table.add_row(label(row), *(f"{cells[(row, col)]:.2f}" if (row, col) in cells else "—" for col in players))
    return table


BEHAVIOUR_NOTE = (
    "Cooperation, retaliation and forgiveness are on the moves each player chose (before noise, fallback "
    f"moves left out); payoffs on the moves as played. {FORGIVENESS_NOTE} "
    "As-played rates: `pdbench report RUN_ID --format csv`, or the *_played columns of player_metrics."
)


def games_cell(summary: ConditionSummary) -> str:
    """The number of games of a condition, and "all alike" when they are one game repeated."""
    return summary.games_label


def behaviour_caption(summaries: Sequence[ConditionSummary], extra: str = "") -> str:
    """The note under a table of conditions: how behaviour is measured, and what "all alike" means if shown."""
    repeated = f" {REPEATED_NOTE}" if any(s.repeated for s in summaries) else ""
    return BEHAVIOUR_NOTE + extra + repeated


def percent(value: float | None) -> str:
    """A rate as a percentage with one decimal, or a dash when there is none."""
    return "—" if value is None else f"{value:.1%}"


def reader_shares(row: dict[str, Any], sep: str = ", ") -> str:
    """What decided a model's moves, as shares of its rounds (a ``model_parsing`` row): "parser 95%, re-ask 5%"
    (``sep`` between readers: a table puts each on a line of its own); readers that decided no round are left
    out, and a dash stands for no rounds."""
    rounds = row.get("rounds") or 0
    if not rounds:
        return "—"
    parts = []
    for reader in READERS:
        count = row.get(reader_column(reader)) or 0
        if count:
            share = f"{count / rounds:.1%}".replace(".0%", "%")
            parts.append(f"{reader} {share}")
    return sep.join(parts)


def print_rows(
    console: Console, fmt: str, columns: Sequence[str], rows: Sequence[Sequence[Any]], *, round_floats: bool = True
) -> None:
    """Rows as JSON (full precision), CSV (floats rounded, unless ``round_floats`` is False) or a table."""
    if fmt == "json":
        console.file.write(rows_json(columns, rows) + "\n")
    elif fmt == "csv":
        console.file.write(rows_csv(columns, rows, round_floats=round_floats))
    else:
        console.print(rows_table(columns, rows))
        console.print(f"[dim]{len(rows)} row{'s' if len(rows) != 1 else ''}[/dim]")


def fits(console: Console, options: ConsoleOptions, table: RenderableType) -> bool:
    """Whether ``table`` fits the width without wrapping a cell: its natural width (every cell on the lines it was
    given), measured as if the terminal had no edge, is at most the width there is."""
    unbounded = options.update_width(1_000_000)
    return Measurement.get(console, unbounded, table).maximum <= options.max_width


def first_fitting(
    console: Console,
    options: ConsoleOptions,
    layouts: Sequence[Callable[[], RenderableType]],
    last: Callable[[], RenderableType],
) -> RenderableType:
    """The first of ``layouts`` (widest first, each made only when the one before does not fit) that fits the width
    without wrapping a cell (:func:`fits`), else ``last``: the narrowest, which must fit any width it is used at."""
    for layout in layouts:
        shown = layout()
        if fits(console, options, shown):
            return shown
    return last()


SFEM_NOTE = (
    "Strategy shares and β (each choice follows the strategy with probability β) by maximum likelihood over "
    "all the player's complete games (Dal Bó & Fréchette 2011), on chosen moves; ± one bootstrap standard error "
    "over games. Strategies that prescribe the same moves in every history seen share their mass; a fit no "
    "better than chance (likelihood-ratio test, 5%) is all RAND, β ½."
)


class SfemTable:
    """One row per fit: the player (and its condition and seat, when per condition), games, each strategy's share
    and β, each with its bootstrap standard error under it. Too wide for the width, the strategies are split over
    as few tables as fit it, each with the players again: no name or number is cut."""

    def __init__(self, fits: Sequence[PlayerSfem], title: str) -> None:
        self.fits = fits
        self.title = title

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[RenderableType]:
        from harness.analysis.sfem import STRATEGIES

        columns = [*range(len(STRATEGIES)), -1]  # the strategies by index, then β
        whole = self._table(columns, 0, 1, stacked=False)
        if fits(console, options, whole):
            yield whole
            return
        for size in range(len(columns), 0, -1):
            chunks = [columns[i : i + size] for i in range(0, len(columns), size)]
            tables = [self._table(chunk, n, len(chunks), stacked=True) for n, chunk in enumerate(chunks)]
            if size == 1 or all(fits(console, options, t) for t in tables):
                yield from tables
                return

    def _table(self, columns: Sequence[int], part: int, parts: int, *, stacked: bool) -> Table:
        """The fits with the strategies of ``columns`` (-1: β); ``stacked``, each condition on a row of its own
        with its seats under it, rather than a column beside them."""
        from harness.analysis.sfem import STRATEGIES

        title = self.title if part == 0 else f"{self.title}, continued"
        table = Table(
            title=title,
            caption=SFEM_NOTE if part == parts - 1 else None,
            caption_justify="left",
            header_style="bold",
            box=box.SIMPLE_HEAD,
        )
        per_condition = any(f.condition is not None for f in self.fits)
        beside = per_condition and not stacked
        if beside:
            table.add_column("condition", no_wrap=True)
        table.add_column("condition\n  player" if per_condition and stacked else "player", no_wrap=True)
        table.add_column("games", justify="right", no_wrap=True)
        for i in columns:
            table.add_column("β" if i < 0 else STRATEGIES[i], justify="right", no_wrap=True)
        last = None
        for f in self.fits:
            fit = f.fit
            se = fit.share_se or (None,) * len(fit.shares)
            cells = [_with_se(fit.beta, fit.beta_se) if i < 0 else _with_se(fit.shares[i], se[i]) for i in columns]
            who = f"{f.seat}: {label(f.player_name)}" if f.seat else label(f.player_name)
            if per_condition and stacked:
                if f.condition != last:
                    table.add_row(f"[bold]{f.condition or ''}[/bold]", *([""] * (len(columns) + 1)))
                who = f"  {who}"
            last = f.condition
            table.add_row(*([f.condition or ""] if beside else []), who, str(fit.games), *cells)
        return table


def _with_se(value: float, se: float | None) -> str:
    return f"{value:.2f}" + (f"\n± {se:.2f}" if se is not None else "")

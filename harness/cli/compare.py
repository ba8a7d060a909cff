"""``pdbench compare``: model players side by side, from one run or several (see :mod:`harness.analysis.compare`).

Tables name the players by letter (A, B, ...) under a legend, so that a comparison of long labels fits an 80-column
terminal; CSV and JSON carry every figure with its run id and the player's full label.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated

import typer

from harness.cli.base import Format, ResultsOpt, WidthOpt, app, laid_out, out


def _name(metric: str) -> str:
    """The metric as the tables name it (cost in cents: a game of a small model costs about one)."""
    from harness.analysis.compare import METRIC_NAMES

    return "cost / game ¢" if metric == "cost_usd" else METRIC_NAMES[metric]


if TYPE_CHECKING:
    from pathlib import Path

    from rich.table import Table

    from harness.analysis.compare import Cell, Comparison
    from harness.analysis.stats import Difference, Estimate


@app.command()
def compare(
    targets: Annotated[
        list[str],
        typer.Argument(
            help="Runs (an id, a unique prefix, or latest) and/or models (openai/gpt-4o-mini, or a label such as "
            "'openai/gpt-4o-mini (cooperative)') found in the results folder.",
            show_default=False,
        ),
    ],
    results: ResultsOpt = None,
    metric: Annotated[
        str, typer.Option(help="The metric shown per opponent (payoff_per_round, cooperation_rate, ...).")
    ] = "payoff_per_round",
    format: Annotated[Format, typer.Option("--format", help="table for people; csv or json for scripts.")] = (
        Format.table
    ),
    width: WidthOpt = None,
) -> None:
    """Compare model players (models, or one model's personas, prompts or temperatures) per opponent and overall:
    payoff, cooperation, retaliation, forgiveness, the behaviour profile, parse failures, fallbacks and cost, each
    with its 95% interval, and each player's difference from the first with its interval and test.

    Example: `pdbench compare latest` (the models of the newest run), `pdbench compare eval_2026 eval_2027`,
    `pdbench compare openai/gpt-4o-mini anthropic/claude-haiku-4-5`
    """
    from harness.analysis.compare import METRICS, compare, resolve_players
    from harness.cli.render import print_rows, rows_json
    from harness.config.run_settings import results_dir
    from harness.errors import ConfigError
    from harness.store.catalog import Catalog

    if metric not in METRICS:
        raise ConfigError(f"--metric {metric!r} is not one compare shows; give one of {', '.join(METRICS)}")
    folder = results_dir(results)
    runs = _run_ids(folder, targets)
    with Catalog(folder) as cat:
        players = resolve_players(cat, targets, runs)
        comparison = compare(cat, players)
    if format is Format.table:
        with laid_out(width):
            _print(comparison, metric)
        return
    rows = comparison.rows()
    columns = list(rows[0])
    values = [[r[c] for c in columns] for r in rows]
    if format is Format.json:
        out.file.write(rows_json(columns, values) + "\n")
    else:
        print_rows(out, "csv", columns, values)


def _run_ids(folder: Path, targets: list[str]) -> dict[str, list[str]]:
    """The targets that name a run (its id, ``latest``, or a unique prefix: :func:`resolve_run_id`), each with the
    run it names; the others are models (names hold a '/'), whose runs :func:`resolve_players` finds."""
    from harness.errors import RunNotFoundError
    from harness.store.run_ref import resolve_run_id

    found: dict[str, list[str]] = {}
    for target in targets:
        if "/" in target or not folder.is_dir():
            continue
        try:
            found[target] = [resolve_run_id(folder, target)]
        except RunNotFoundError:
            continue  # a model's label, perhaps: resolve_players says what the folder holds if not
    return found


def _print(c: Comparison, metric: str) -> None:
    from rich.text import Text

    letters = [chr(ord("A") + i) if i < 26 else f"P{i}" for i in range(len(c.players))]
    legend = Text()
    for letter, player, games in zip(letters, c.players, c.games, strict=True):
        legend.append(f"{letter}", style="bold")
        legend.append(f" = {player.shown} (run {player.run_id}, {games} games)\n")
    out.print(legend, end="")
    out.print(f"Opponents in common: {', '.join(c.opponents)}", highlight=False)
    out.print(_overall(c, letters))
    if len(c.players) > 2:
        out.print(_differences(c, letters))
    out.print(_per_opponent(c, letters, metric))
    out.print(c.note, highlight=False)


def _fitted(build: Callable[[str], Table]) -> Table:
    """The table on one line a row if it fits the terminal, else with each player's interval under its mean
    (a figure is never cut, and an interval never split)."""
    table = build(" ")
    wide = out.options.update_width(100_000)
    return table if out.measure(table, options=wide).maximum <= out.width else build("\n")


def _overall(c: Comparison, letters: list[str]) -> Table:
    return _fitted(lambda sep: _overall_table(c, letters, sep))


def _overall_table(c: Comparison, letters: list[str], sep: str) -> Table:
    from rich import box
    from rich.table import Table

    two = len(c.players) == 2
    table = Table(
        title="Overall: mean ± 95% interval (rates in %, differences in points)",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )
    rows = []
    for metric, cells in c.overall.items():
        row = [_name(metric), *(_estimate(metric, cell.estimate, sep) for cell in cells)]
        if two:
            row += [_difference(metric, cells[1].difference), _p(cells[1])]
        rows.append(row)
    table.add_column("metric", no_wrap=True)
    for letter in letters:
        table.add_column(letter, justify="right", no_wrap=True)
    if two:
        table.add_column("B − A", justify="right", no_wrap=True)
        table.add_column("p Holm" if c.tests > 1 else "p", justify="right", no_wrap=True)
    for row in rows:
        table.add_row(*row)
    return table


def _differences(c: Comparison, letters: list[str]) -> Table:
    from rich import box
    from rich.table import Table

    table = Table(
        title="Differences from A (95% interval; p Holm-adjusted)",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )
    table.add_column("metric", no_wrap=True)
    for letter in letters[1:]:
        table.add_column(f"{letter} − A", justify="right", no_wrap=True)
    for metric, cells in c.overall.items():
        table.add_row(_name(metric), *(f"{_difference(metric, cell.difference)} {_p(cell)}" for cell in cells[1:]))
    return table


def _per_opponent(c: Comparison, letters: list[str], metric: str) -> Table:
    return _fitted(lambda sep: _per_opponent_table(c, letters, metric, sep))


def _per_opponent_table(c: Comparison, letters: list[str], metric: str, sep: str) -> Table:
    from rich import box
    from rich.table import Table

    two = len(c.players) == 2
    table = Table(title=f"{_name(metric)} per opponent", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    rows = []
    for opponent in c.opponents:
        cells = c.by_opponent[opponent][metric]
        row = [opponent, *(_estimate(metric, cell.estimate, sep) for cell in cells)]
        if two:
            row.append(_difference(metric, cells[1].difference))
        rows.append(row)
    table.add_column("opponent", no_wrap=True)
    for letter in letters:
        table.add_column(letter, justify="right", no_wrap=True)
    if two:
        table.add_column("B − A", justify="right", no_wrap=True)
    for row in rows:
        table.add_row(*row)
    return table


def _scale(metric: str) -> tuple[float, str, int]:
    from harness.analysis.compare import RATE_METRICS, RATIOS

    if metric in RATIOS:  # whole points: seven more rows of asymmetric intervals must fit 80 columns
        return 100.0, "%", 0
    if metric in RATE_METRICS:
        return 100.0, "%", 1
    if metric == "cost_usd":
        return 100.0, "", 2  # cents: a game of a small model costs about a cent
    return 1.0, "", 2


def _estimate(metric: str, e: Estimate, sep: str = " ") -> str:
    if e.mean is None:
        return "—"
    scale, unit, digits = _scale(metric)
    mean = f"{e.mean * scale:.{digits}f}{unit}"
    if e.low is None or e.high is None or e.high - e.low <= 1e-12 * max(1.0, abs(e.mean)):  # no spread: one
        # game, or every game alike (a t interval of equal values, up to rounding)
        return mean
    if abs((e.mean - e.low) - (e.high - e.mean)) <= 1e-9 * max(1.0, abs(e.mean)):
        return f"{mean}{sep}±{(e.high - e.mean) * scale:.{digits}f}"
    return f"{mean}{sep}[{_end(e.low * scale, digits)}, {_end(e.high * scale, digits)}]"  # cut at a bound


def _difference(metric: str, d: Difference | None) -> str:
    """The difference and its interval; of rates, in percentage points (the column's title says pp)."""
    if d is None or d.mean is None:
        return "—"
    scale, _unit, digits = _scale(metric)
    mean = f"{d.mean * scale:+.{digits}f}"
    if d.low is None or d.high is None:
        return mean
    return f"{mean} [{_end(d.low * scale, digits, '+')}, {_end(d.high * scale, digits, '+')}]"


def _end(value: float, digits: int, sign: str = "") -> str:
    """An interval's end, without trailing zeros (``100``, ``-0.5``): an interval cut at a bound stays narrow."""
    text = f"{value:{sign}.{digits}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _p(cell: Cell) -> str:
    p = cell.p_holm if cell.p_holm is not None else (cell.difference.p if cell.difference is not None else None)
    if p is None:
        return "—"
    return "<0.001" if p < 0.001 else f"{p:.3f}"

"""``pdbench analyze RUN``: the evolutionary analysis of a run's measured payoff table (see
:mod:`harness.analysis.evolutionary`), as tables for people or CSV / JSON for scripts.

Each table is one figure a row (invader and resident, the estimate, its interval, the share of draws), so that it
fits 80 columns however many players there are.
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import typer

from harness.cli.base import Format, ResultsOpt, WidthOpt, app, laid_out, out

if TYPE_CHECKING:
    from rich.table import Table

    from harness.analysis.evolutionary import Analysis, Population


DEFAULT_INTENSITY = {"moran": 0.1, "fermi": 1.0}  # by Process value: weak selection; EGTtools' usual beta


class DynamicsChoice(StrEnum):
    moran = "moran"
    fermi = "fermi"


ANALYZE_HELP = """Evolutionary analysis of a run's payoff table, models included: for a population of N under the
Moran process (fitness 1 - w + w * payoff per round) or pairwise comparison (Fermi rule, intensity beta), the
fixation probability of each player as one mutant among the others (against the neutral 1/N: the invasion graph),
the gradient of selection of each pair, the long-run share of each player when mutations are rare (the
small-mutation-limit stationary distribution), and the replicator's rest points with their stability and the ESS
check; every figure with a 95% interval from a bootstrap over the games.

RUN is a tournament (or any run whose games meet every pair of its players, self-play included) or an evolution
run (the games of its payoff run). Example: `pdbench tournament --players TFT,ALLD,GTFT,WSLS,mock/tft --replicates
20 --noise 0.05` then `pdbench analyze latest --population 50 --dynamics fermi --beta 1`."""


PopulationOpt = Annotated[int, typer.Option("--population", help="Population size N (at least the players).")]
DynamicsOpt = Annotated[
    DynamicsChoice, typer.Option("--dynamics", help="moran (birth-death) or fermi (pairwise comparison).")
]
BetaOpt = Annotated[
    float | None, typer.Option("--beta", help="Fermi rule's selection intensity (default 1; fermi only).")
]
SelectionOpt = Annotated[
    float | None,
    typer.Option("--selection", help="Moran selection intensity w in 1 - w + w * payoff (default 0.1; moran only)."),
]
BootstrapOpt = Annotated[int, typer.Option("--bootstrap", help="Bootstrap draws over the games (K >= 1).")]
SeedOpt = Annotated[int, typer.Option("--seed", help="Seed of the bootstrap draws.")]


def population_of(size: int, dynamics: DynamicsChoice, beta: float | None, selection: float | None) -> Population:
    """The population the options describe; an intensity given for the other process is refused."""
    from harness.analysis.evolutionary import Population, Process
    from harness.errors import ConfigError

    process = Process(dynamics.value)
    wrong = "--beta" if process is Process.moran and beta is not None else None
    wrong = "--selection" if process is Process.fermi and selection is not None else wrong
    if wrong:
        right = "--selection w" if process is Process.moran else "--beta B"
        raise ConfigError(
            f"{wrong} does not apply to --dynamics {process.value}: the Moran process's intensity is --selection w "
            f"(fitness 1 - w + w * payoff), the Fermi rule's is --beta; give {right}"
        )
    given = selection if process is Process.moran else beta
    return Population(process, given if given is not None else DEFAULT_INTENSITY[process], size)


@app.command(help=ANALYZE_HELP)
def analyze(
    run: Annotated[str, typer.Argument(help="The run: its id, a unique prefix, or latest.", show_default=False)],
    results: ResultsOpt = None,
    population: PopulationOpt = 100,
    dynamics: DynamicsOpt = DynamicsChoice.moran,
    beta: BetaOpt = None,
    selection: SelectionOpt = None,
    bootstrap: BootstrapOpt = 1000,
    seed: SeedOpt = 0,
    replicator: Annotated[
        bool, typer.Option("--replicator/--no-replicator", help="Include the replicator's rest points.")
    ] = True,
    format: Annotated[Format, typer.Option("--format", help="table for people; csv or json for scripts.")] = (
        Format.table
    ),
    width: WidthOpt = None,
) -> None:
    from harness.analysis.evolutionary import analyze, measured_table
    from harness.analysis.evolutionary.analysis import check_bootstrap
    from harness.config.run_settings import results_dir
    from harness.store.run_ref import resolve_run_id

    pop = population_of(population, dynamics, beta, selection)
    check_bootstrap(bootstrap)
    folder = results_dir(results)
    table = measured_table(folder, resolve_run_id(folder, run))
    result = analyze(table, pop, draws=bootstrap, seed=seed, replicator=replicator)
    if format is Format.json:
        out.file.write(json.dumps(result.as_dict(), indent=1) + "\n")
        return
    if format is Format.csv:
        rows = result.rows()
        from harness.cli.render import print_rows

        print_rows(out, "csv", list(rows[0]), [list(r.values()) for r in rows], round_floats=False)
        return
    with laid_out(width):
        _print(result)


def _interval(low: float | None, high: float | None, digits: int = 3) -> str:
    return "" if low is None or high is None else f"[{low:.{digits}g}, {high:.{digits}g}]"


def _print(a: Analysis) -> None:
    d = a.as_dict()
    n = a.population.size
    out.print(
        f"[bold]Evolutionary analysis[/bold] of {d['origin']}\n"
        f"population N = {n}, {a.population.process.value} dynamics, {a.population.intensity_label}; "
        f"CPU {a.cpu_seconds:.2f} s",
        highlight=False,
    )
    out.print(_stationary(d))
    out.print(_fixation(d, n))
    out.print(_gradients(d))
    if d["rest_points"]:
        out.print(_rest(d))
    out.print(a.note, highlight=False)


def _table(title: str, *columns: str) -> Table:
    from rich import box
    from rich.table import Table

    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, header_style="bold", pad_edge=False)
    for c in columns:
        left = c in ("player", "invader", "resident", "pair", "face: player")
        table.add_column(c, justify="left" if left else "right", no_wrap=not left, overflow="fold")
    return table


def _stationary(d: dict) -> Table:  # type: ignore[type-arg]
    from harness.cli.render import label

    table = _table("Long-run share (rare mutations: small-mutation-limit stationary distribution)", "player",
                   "share", "95% interval")  # fmt: skip
    for s in sorted(d["stationary"], key=lambda s: -(s["estimate"] or 0)):
        table.add_row(label(s["player"]), f"{s['estimate']:.1%}", _pct(s["low"], s["high"]))
    return table


def _pct(low: float | None, high: float | None) -> str:
    return "" if low is None or high is None else f"[{low:.1%}, {high:.1%}]"


def _fixation(d: dict, n: int) -> Table:  # type: ignore[type-arg]
    from harness.cli.render import label

    table = _table(f"Fixation of one invader among {n - 1} residents (invades: rho > 1/N = {1 / n:.3g})", "invader",
                   "resident", "rho", "95% interval", "invades (draws)")  # fmt: skip
    for c in d["fixation"]:
        table.add_row(
            label(c["player"]),
            label(c["opponent"]),
            f"{c['estimate']:.3g}",
            _interval(c["low"], c["high"]),
            f"{'yes' if c['invades'] else 'no'} ({c['invades_share']:.0%})",
        )
    return table


def _gradients(d: dict) -> Table:  # type: ignore[type-arg]
    from harness.cli.render import label

    table = _table("Gradient of selection of each pair (T+ - T- for k of the first among N - k of the second)",
                   "pair", "contest", "at k/N", "in draws")  # fmt: skip
    for g in d["gradients"]:
        contest = (
            g["contest"]
            .replace("i favoured", f"{g['player']} favoured")
            .replace("j favoured", f"{g['opponent']} favoured")
        )
        at = "" if g["root"] is None else f"{g['root']:.2f}"
        table.add_row(f"{label(g['player'])} / {label(g['opponent'])}", contest, at, f"{g['contest_share']:.0%}")
    return table


def _rest(d: dict) -> Table:  # type: ignore[type-arg]
    from harness.cli.render import label

    table = _table("Replicator rest points (in draws: the share of draws with one on the face / stable / an ESS; "
                   "intervals of the shares over those with one)", "face: player", "share", "95% interval", "stability",
                   "ESS", "in draws")  # fmt: skip
    for r in d["rest_points"]:
        draws = f"{r['present_share']:.0%} / {r['stable_share']:.0%} / {r['ess_share']:.0%}"
        table.add_row(" + ".join(r["support"]), "", "", r["stability"], r["ess"], draws)
        if len(r["shares"]) > 1:
            for s in r["shares"]:
                table.add_row(f"  {label(s['player'])}", f"{s['estimate']:.2f}", _interval(s["low"], s["high"], 2))
    return table

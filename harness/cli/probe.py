"""``pdbench probe``: counterfactual probes of a recorded run (see :mod:`harness.engine.probe`), and their table."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from harness.cli.base import MaxCostOpt, NoCacheOpt, PricesOpt, ResultsOpt, app, out
from harness.states import RunStatus


@app.command(name="probe")
def probe(
    run: Annotated[str, typer.Argument(help="The run to probe: its id, a unique prefix of it, or `latest`.")],
    rounds: Annotated[
        str, typer.Option("--rounds", metavar="t1,t2|all", help="The rounds t >= 2 to probe (default: all).")
    ] = "all",
    max_probes: Annotated[
        int | None, typer.Option("--max-probes", min=1, help="Probe at most this many (earliest rounds first).")
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Say how many probes and paid requests, and stop.")
    ] = False,
    max_cost: MaxCostOpt = None,
    no_cache: NoCacheOpt = False,
    prices: PricesOpt = None,
    results: ResultsOpt = None,
    run_id: Annotated[str | None, typer.Option("--run-id", help="The probe run's id (default: probe_<time>).")] = None,
) -> None:
    """Flip the opponent's move at t-1 in a recorded game, ask the model for round t again, and report how often
    its move changes, by kind of flip. The factual requests come from the response cache; only the
    counterfactual ones are paid. The probes are stored as a run (kind `probe`, view `counterfactual_probes`).

    Example: `pdbench probe latest --rounds 2,5,10 --max-probes 200 --max-cost 1`
    """
    from harness.analysis.probes import PROBE_NOTE
    from harness.cli.play import EngineFlags
    from harness.config.experiment import check_run_id
    from harness.config.run_settings import results_dir
    from harness.engine.probe import parse_rounds, plan_probes, run_probes
    from harness.engine.runner import default_run_id
    from harness.store.catalog import Catalog
    from harness.store.run_ref import resolve_run_id

    folder = results_dir(results)
    source = resolve_run_id(folder, run)
    plan = plan_probes(folder, source, parse_rounds(rounds), max_probes)
    estimate = plan.estimated_cost
    cost = "free (mock models)" if estimate == 0 else "unknown" if estimate is None else f"at most ${estimate:.4f}"
    # A mock model's answers are never cached (they cost nothing), so its factual answers are asked again.
    factual = "asked again, free: a mock's answers are not cached" if estimate == 0 else "from the cache, free"
    out.print(
        f"{len(plan.sites)} probes of run {source}: {len(plan.sites)} factual requests ({factual}), "
        f"{len(plan.sites)} counterfactual requests ({cost}).",
        highlight=False,
    )
    if dry_run:
        return
    engine = EngineFlags(max_cost, no_cache, prices).options(folder)
    new_id = check_run_id(run_id) if run_id is not None else default_run_id("probe", folder)
    result = run_probes(plan, results_dir=folder, run_id=new_id, engine=engine)
    out.print(
        f"run {result.run_id}: {result.status.value}, {result.probes} probes in {result.seconds:.1f} s, "
        f"{result.paid_calls} counterfactual calls sent (${result.cost_usd:.4f}), {result.factual_paid} factual sent, "
        f"{result.unmatched} unmatched" + (f" ({result.reason})" if result.reason else ""),
        highlight=False,
    )
    with Catalog(folder, [result.run_id, source]) as cat:
        out.print(probe_table(cat, result.run_id))
    out.print(PROBE_NOTE, highlight=False)
    if result.unmatched:
        out.print(
            f"{result.unmatched} probes were dropped: their factual request was not in the cache nor the source run, "
            "or read as another move than the one recorded (the prompt files changed since?).",
            highlight=False,
        )
    if result.status is not RunStatus.COMPLETE:  # stopped or out of budget: the probes made so far are kept
        raise typer.Exit(130)


def probe_table(cat: object, run_id: str) -> Table:
    """The shares of the probe run ``run_id``, one row per model and kind of flip, within 80 columns."""
    from harness.analysis.probes import probe_shares
    from harness.store.catalog import Catalog

    assert isinstance(cat, Catalog)
    table = Table(box=None, pad_edge=False)
    for name, justify in (("model", "left"), ("flip", "left"), ("probes", "right"), ("changed", "right")):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    table.add_column("share [95% CI]", justify="right")
    table.add_column("games", justify="right")
    for row in probe_shares(cat, run_id):
        table.add_row(
            row.player_name[:28],
            f"{row.flip.value} {row.flip.effect}",
            str(row.probes),
            str(row.changed),
            row.share.fmt(1, pct=True),
            str(row.share.n),
        )
    return table

"""The games of a run with model players: the call path, the rate limits, the scheduler that plays many
games at once, the live recorder, and the live display around them.

:mod:`harness.engine.runner` plans and finishes every run and loads this module only for a run with a model
player: a tournament of classic strategies never loads the model call path.
"""

from __future__ import annotations

import contextlib
import errno
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass

import anyio

from harness.calls.batch import BatchCounters
from harness.calls.cache.cache import ResponseCache
from harness.calls.limits import LimiterRegistry
from harness.calls.path import CallPath, CallStats, record_from_ledger
from harness.calls.pricing import PriceTable
from harness.calls.record import Answer
from harness.config import ExperimentConfig, ModelAgentConfig
from harness.config.engine_options import EngineOptions
from harness.config.plan import GamePlan, ModelPlan, condition_plans
from harness.engine.interrupts import StopFlag
from harness.engine.preflight import batch_models
from harness.engine.progress import Progress
from harness.engine.scheduler import ModelPlayers, Scheduler, games_in_flight
from harness.providers.registry import is_offline
from harness.store import resume
from harness.store.live import LiveRecorder
from harness.store.writer import RunWriter


@dataclass
class Monitor:
    """What a live display watches while a run plays."""

    run_id: str
    progress: Progress
    stats: CallStats
    limiters: LimiterRegistry
    stop: StopFlag | None = None  # set once the run was asked to stop: the display says what it waits for
    batches: BatchCounters | None = None  # a run with a model in batch mode: its batches out and done


MonitorFactory = Callable[[Monitor], AbstractContextManager[object]]


@contextlib.contextmanager
def _display(view: AbstractContextManager[object]) -> Iterator[None]:
    """The live display around a run. A display that can no longer write (its terminal was closed: EIO,
    EPIPE) stops showing and never fails the run it shows; any other error of the display is a bug."""
    view.__enter__()
    try:
        yield
    except BaseException as exc:
        _close_display(view, exc)
        raise
    _close_display(view, None)


def _close_display(view: AbstractContextManager[object], exc: BaseException | None) -> None:
    try:
        view.__exit__(type(exc) if exc else None, exc, exc.__traceback__ if exc else None)
    except OSError as error:
        if error.errno not in (errno.EIO, errno.EPIPE):
            raise


def _key_variables(config: ExperimentConfig) -> list[str]:
    """The variables the run's model players name with ``api_key_env``: what they hold is a key."""
    agents = (agent for cond in config.experiment.conditions for agent in (cond.agent_a, cond.agent_b))
    return [name for agent in agents if (name := getattr(agent, "api_key_env", None))]


def _models(config: ExperimentConfig) -> set[str]:
    """The model names of the run's players (``provider/model``)."""
    return {
        agent.model.strip()
        for cond in config.experiment.conditions
        for agent in (cond.agent_a, cond.agent_b)
        if isinstance(agent, ModelAgentConfig)
    }


def progress(config: ExperimentConfig, total: int, before: resume.Recorded | None) -> Progress:
    """The run's progress before its first round: every game of the plan counted, and a resumed run's
    recorded games and rounds done (see :mod:`harness.engine.progress`)."""
    prog = Progress(games_total=total)
    before = before or resume.Recorded()
    plans = {cond.name: cond for cond in condition_plans(config)}
    for cond in plans.values():
        prog.per_condition_total[cond.name] = config.experiment.replicates
        kept = before.kept.get(cond.name, Counter())
        prog.plan(cond, config.experiment.replicates - sum(kept.values()))
        for rounds, games in sorted(kept.items()):
            prog.recorded(cond, rounds, games)
    for game_id, (condition, rounds, answers) in before.replayed.items():
        if condition in plans:
            prog.replaying(plans[condition], game_id, rounds, answers)
    return prog


def play_models(
    config: ExperimentConfig,
    writer: RunWriter,
    plans: Iterator[GamePlan],
    total: int,
    stop: StopFlag,
    engine: EngineOptions | None,
    monitor: MonitorFactory | None,
    before: resume.Recorded | None,
) -> tuple[int, int]:
    """Play the games of a run with model players under the scheduler, with the live display if ``monitor``
    is given; returns the games done (those kept from before included) and the rounds played. A resumed run
    (``before``: what it had recorded) first records what a crashed session paid for but never recorded,
    and serves the recorded answers of the games it plays again from the results file."""
    engine = engine or EngineOptions()
    prices = PriceTable.load(*engine.prices)
    # Only answers that are paid for are cached: a run of mock models alone does not open the shared cache.
    served = any(not is_offline(model) for model in _models(config))
    cache = ResponseCache.open_or_renew(engine.cache_path) if engine.cache_path is not None and served else None
    recorder = LiveRecorder(writer)
    ledger_run = f"{writer.path.resolve()}#{writer.run_id}#{writer.created_at()}"
    recorded: dict[tuple[str, str, str], Answer] = {}
    try:
        if before is not None:
            replayed = sorted(before.replayed)
            if cache is not None:  # what a crashed session paid for but never recorded
                paid = [record_from_ledger(text) for _, text in cache.ledger(ledger_run)]
                recorder.restore_calls(paid)
                cache.forget_ledger(ledger_run)
                replayed = sorted({*replayed, *(r.game_id for r in paid)})
            recorded = resume.recorded_answers(writer, replayed)
    except BaseException:
        if cache is not None:
            cache.close()
        raise
    calls = CallPath(
        cache=cache,
        prices=prices,
        retry=engine.retry,
        max_cost=engine.max_cost,
        should_stop=stop.is_set,
        ledger_run=ledger_run if cache is not None else None,
        recorded=recorded,
        on_disk_full=stop.set,
        key_variables=_key_variables(config),
        batch=engine.batch,
    )
    calls.stats.cost_usd = resume.spent(writer)  # a resumed run's budget counts what was spent before
    limiters = LimiterRegistry()
    players = ModelPlayers(limiters, http_client=engine.http_client)
    prog = progress(config, total, before)
    conditions = condition_plans(config)
    for cond in conditions:
        for seat in (cond.player_a, cond.player_b):
            if isinstance(seat, ModelPlan):
                players.get(seat)  # every endpoint's limiter exists before the games start
    batched = bool(batch_models(config))
    workers = games_in_flight(limiters, engine.workers, batched=batched)
    scheduler = Scheduler(
        recorder=recorder,
        calls=calls,
        players=players,
        run_seed=config.run.seed,
        stop=stop,
        progress=prog,
        workers=workers,
    )

    async def main() -> None:
        try:
            await scheduler.run(plans)
        finally:
            await players.aclose()

    counters = calls.batches.counters if batched and calls.batches is not None else None
    view = (
        monitor(Monitor(writer.run_id, prog, calls.stats, limiters, stop, counters))
        if monitor
        else contextlib.nullcontext()
    )
    try:
        with _display(view):
            anyio.run(main)
        if calls.cache is not None:  # every call is in the results file now: the ledger has done its job
            calls.cache.forget_ledger(ledger_run)
    finally:
        if calls.cache is not None:
            calls.cache.close()
    return prog.games_done, prog.rounds

"""Run an experiment: plan the games, play them, record them, and mark how the run ended.

Classic-strategy games run on the synchronous fast path (:func:`harness.players.strategies.play.play_strategies`):
no event loop, no task per game. Every finished game is recorded; on Ctrl-C the run
stops between games, flushes, and is marked ``interrupted`` with everything kept.
"""

from __future__ import annotations

import contextlib
import errno
import json
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from harness.calls.cache.cache import ResponseCache
from harness.calls.limits import LimiterRegistry
from harness.calls.path import CallPath, CallStats, record_from_ledger
from harness.calls.pricing import PriceTable
from harness.calls.record import Answer
from harness.config import ExperimentConfig, ModelAgentConfig, parse_experiment
from harness.config.engine_options import EngineOptions
from harness.config.plan import GamePlan, ModelPlan, condition_plans, iter_games, skip_games, summarize
from harness.engine.interrupts import StopFlag, graceful_interrupt
from harness.engine.preflight import check_models
from harness.engine.scheduler import ModelPlayers, Progress, Scheduler, games_in_flight
from harness.errors import DiskFull, RunNotFoundError, StoreError
from harness.players.strategies.games import StrategyGames
from harness.providers.base import FailureKind
from harness.providers.registry import is_offline
from harness.states import RunStatus
from harness.store import resume
from harness.store.live import LiveRecorder
from harness.store.run_file import run_path
from harness.store.writer import RunWriter
from harness.util.plural import plural

if TYPE_CHECKING:
    pass


@dataclass(frozen=True, slots=True)
class RunResult:
    run_id: str
    path: Path
    status: RunStatus
    games_planned: int
    games_done: int
    rounds: int
    seconds: float
    reason: str | None = None


ProgressFn = Callable[[int, int], None]


def default_run_id(prefix: str, results_dir: Path) -> str:
    """``<prefix>_<UTC timestamp>``, with a counter if that file exists already."""
    stamp = datetime.now(UTC).strftime("%Y%m%d_%H%M%S")
    run_id = f"{prefix}_{stamp}"
    n = 2
    while run_path(results_dir, run_id).exists():
        run_id = f"{prefix}_{stamp}_{n}"
        n += 1
    return run_id


@dataclass
class Monitor:
    """What a live display watches while a run plays."""

    run_id: str
    progress: Progress
    stats: CallStats
    limiters: LimiterRegistry
    stop: StopFlag | None = None  # set once the run was asked to stop: the display says what it waits for


MonitorFactory = Callable[[Monitor], AbstractContextManager[object]]


def run_experiment(
    config: ExperimentConfig,
    *,
    results_dir: Path,
    run_id: str,
    replicates: int | None = None,
    overwrite: bool = False,
    progress: ProgressFn | None = None,
    stop: StopFlag | None = None,
    engine: EngineOptions | None = None,
    monitor: MonitorFactory | None = None,
) -> RunResult:
    """Play every condition x replicate of ``config`` into ``results_dir/<run_id>.duckdb``."""
    summary = summarize(config, replicates)
    resolved = config.resolved_dict()
    resolved["run"]["run_id"] = run_id
    if replicates:
        resolved["experiment"]["replicates"] = replicates
    collapse = config.metrics.collapse
    writer = RunWriter.create(results_dir, run_id, overwrite=overwrite)
    try:
        writer.start_run(
            kind=config.kind,
            config=resolved,
            seed=config.run.seed,
            games_planned=summary.games,
            collapse_k=collapse.k,
            collapse_threshold=collapse.cooperation_threshold,
        )
    except BaseException:
        writer.close()
        raise
    return _play(
        config,
        writer,
        iter_games(config, replicates),
        summary.games,
        summary.has_models,
        progress=progress,
        stop=stop,
        engine=engine,
        monitor=monitor,
    )


def resume_run(
    results_dir: Path,
    run_id: str,
    *,
    stop: StopFlag | None = None,
    engine: EngineOptions | None = None,
    monitor: MonitorFactory | None = None,
    progress: ProgressFn | None = None,
    retry_failed: bool = False,
) -> RunResult:
    """Continue an interrupted or crashed run: finished games are kept; unfinished ones, and games
    that failed on a cause that may have passed (an outage, a refused key), are deleted and played
    again from their first round, their recorded answers served from the response cache, so no
    answer is paid for twice and the result is what an uninterrupted run with the same seed gives.
    ``retry_failed`` replays games that failed for good too (a 400, an unreadable model)."""
    path = run_path(results_dir, run_id)
    if not path.is_file():
        raise RunNotFoundError(f"no run {run_id!r} in {results_dir} (looked for {path}).")
    writer = RunWriter.reopen(path, run_id)
    try:
        status, config_json = resume.run_state(writer)
        finished = resume.finished_game_ids(writer, retry_failed=retry_failed)
        if status is RunStatus.COMPLETE and len(finished) == resume.games_planned(writer):
            failures = resume.failures(writer)
            failed = plural(sum(n for n, _ in failures.values()), "failed game", grouped=False)
            hint = (
                (f" Its {failed} failed for good; `pdbench resume {run_id} --retry-failed` plays them again.")
                if failures
                else ""
            )
            raise StoreError(f"run {run_id} is already complete; nothing to resume.{hint}")
        try:
            stored = json.loads(config_json)
        except (TypeError, ValueError):
            raise StoreError(
                f"the stored config of run {run_id} in {path} is not valid JSON; the run "
                f"cannot be resumed (start it again with a new run id)."
            ) from None
        config = parse_experiment(
            stored,
            source=f"the stored config of run {run_id}",
            fix_hint="restore the files it names (personas, templates), then resume",
        )
        check_models(config)  # keys and names, before anything is discarded
        done_by_condition = resume.finished_per_condition(writer, retry_failed=retry_failed)
        replayed = resume.discard_unfinished(writer, retry_failed=retry_failed)
        writer.mark_running()
    except BaseException:
        writer.close()
        raise
    summary = summarize(config)
    todo = skip_games(iter_games(config), finished)
    return _play(
        config,
        writer,
        todo,
        summary.games,
        summary.has_models,
        progress=progress,
        stop=stop,
        engine=engine,
        monitor=monitor,
        already_done=len(finished),
        done_by_condition=Counter(done_by_condition),
        replayed=replayed,
    )


def _play(
    config: ExperimentConfig,
    writer: RunWriter,
    plans: Iterator[GamePlan],
    games_planned: int,
    has_models: bool,
    *,
    progress: ProgressFn | None,
    stop: StopFlag | None,
    engine: EngineOptions | None,
    monitor: MonitorFactory | None,
    already_done: int = 0,
    done_by_condition: Counter[str] | None = None,
    replayed: list[int] | None = None,
) -> RunResult:
    """Play ``plans`` into ``writer``'s run and mark how the run ended: ``complete`` when every game
    finished and none failed on a cause that may pass (those need a resume), else ``interrupted``."""
    stop = stop if stop is not None else StopFlag()
    started = time.perf_counter()
    run_id = writer.run_id
    finished = False
    # One guard for playing *and* saving: a signal during the last transaction must not interrupt it.
    with graceful_interrupt(stop):
        try:
            try:
                if has_models:
                    done, rounds = _play_models(
                        config,
                        writer,
                        plans,
                        games_planned,
                        stop,
                        engine or EngineOptions(),
                        monitor,
                        already_done,
                        done_by_condition or Counter(),
                        replayed,
                    )
                else:
                    done, rounds = _play_strategies(writer, plans, games_planned, stop, progress, already_done)
            except KeyboardInterrupt:  # raised before the guard was in place, or by a caller's own handler
                stop.set("interrupted by the user (Ctrl-C)")
                done = rounds = -1
            stop.finishing()
            reason = stop.reason if stop else _replayable_failures(writer)
            status = RunStatus.INTERRUPTED if stop or reason is not None else RunStatus.COMPLETE
            status, reason = writer.finish(status, reason)
            finished = True
            if status is RunStatus.FAILED:
                raise StoreError(f"run {run_id} failed: {reason}. Games written before are kept in {writer.path}.")
            if done < 0:
                done, rounds = writer.games_and_rounds()
        except DiskFull:
            # Not the run's fault: it stops as interrupted, if the disk still takes that one line (if not, the
            # file says running, which resume treats the same), and resume finishes it once there is space.
            if not finished:
                with contextlib.suppress(Exception):
                    writer.finish(RunStatus.INTERRUPTED, "the disk is full; free some space, then `pdbench resume`")
            raise
        except BaseException as exc:
            # A bug or a failing disk: keep what was written and say why the run stopped.
            if not finished:
                with contextlib.suppress(Exception):
                    writer.finish(RunStatus.FAILED, f"{type(exc).__name__}: {exc}")
            raise
        finally:
            stop.finishing()
            writer.close()
    return RunResult(
        run_id=run_id,
        path=writer.path,
        status=status,
        games_planned=games_planned,
        games_done=done,
        rounds=rounds,
        seconds=time.perf_counter() - started,
        reason=reason,
    )


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


def _replayable_failures(writer: RunWriter) -> str | None:
    """Why a run whose games all ended is not complete: some failed on a cause that may pass."""
    failures = resume.failures(writer)
    parts = [
        f"{failures[k][0]} failed on {what} (first: {failures[k][1]})"
        for k, what in (
            (FailureKind.RETRYABLE, "a transient error that outlasted the retries"),
            (FailureKind.AUTHENTICATION, "a refused key or access"),
        )
        if k in failures
    ]
    if not parts:
        return None
    return (
        f"games not finished: {'; '.join(parts)}. Once the cause is fixed, `pdbench resume {writer.run_id}` "
        "plays them again"
    )


def _play_strategies(
    writer: RunWriter,
    plans: Iterator[GamePlan],
    total: int,
    stop: StopFlag,
    progress: ProgressFn | None,
    done: int,
) -> tuple[int, int]:
    games = StrategyGames()
    rounds = 0
    for plan in plans:
        if stop:
            break
        cond = plan.condition
        match, length = games.play(*cond.strategies(), cond.game, cond.horizon, cond.noise, plan.seed)
        writer.add_game(plan, match, length)
        done += 1
        rounds += match.rounds_played
        if progress is not None:
            progress(done, total)
    return done, rounds


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


def _play_models(
    config: ExperimentConfig,
    writer: RunWriter,
    plans: Iterator[GamePlan],
    total: int,
    stop: StopFlag,
    engine: EngineOptions,
    monitor: MonitorFactory | None,
    done: int,
    done_by_condition: Counter[str],
    replayed: list[int] | None,
) -> tuple[int, int]:
    prices = PriceTable.load(*engine.prices)
    # Only answers that are paid for are cached: a run of mock models alone does not open the shared cache.
    served = any(not is_offline(model) for model in _models(config))
    cache = ResponseCache.open_or_renew(engine.cache_path) if engine.cache_path is not None and served else None
    recorder = LiveRecorder(writer)
    ledger_run = f"{writer.path.resolve()}#{writer.run_id}#{writer.created_at()}"
    recorded: dict[tuple[str, str, str], Answer] = {}
    try:
        if replayed is not None:
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
    )
    calls.stats.cost_usd = resume.spent(writer)  # a resumed run's budget counts what was spent before
    limiters = LimiterRegistry()
    players = ModelPlayers(limiters, http_client=engine.http_client)
    prog = Progress(games_total=total, games_done=done)
    conditions = condition_plans(config)
    for cond in conditions:
        prog.per_condition_total[cond.name] = config.experiment.replicates
        left = config.experiment.replicates - done_by_condition[cond.name]
        prog.plan(cond.name, left, cond.horizon.expected_length(), cond.model_seats)
    prog.per_condition_done.update(done_by_condition)  # a resumed run starts from what it had finished
    for cond in conditions:
        for seat in (cond.player_a, cond.player_b):
            if isinstance(seat, ModelPlan):
                players.get(seat)  # every endpoint's limiter exists before the games start
    workers = games_in_flight(limiters, engine.workers)
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

    view = monitor(Monitor(writer.run_id, prog, calls.stats, limiters, stop)) if monitor else contextlib.nullcontext()
    try:
        with _display(view):
            anyio.run(main)
        if calls.cache is not None:  # every call is in the results file now: the ledger has done its job
            calls.cache.forget_ledger(ledger_run)
    finally:
        if calls.cache is not None:
            calls.cache.close()
    return prog.games_done, prog.rounds

"""Run an experiment: plan the games, play them, record them, and mark how the run ended.

Classic-strategy games run on the synchronous fast path (:func:`harness.players.strategies.play.play_strategies`):
no event loop, no task per game. Games with a model player run under the scheduler
(:mod:`harness.engine.model_games`), which this module loads only for a run that has one, so that a
tournament of strategies starts without loading the model call path. Every finished game is recorded; on
Ctrl-C the run stops between games, flushes, and is marked ``interrupted`` with everything kept.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from harness.config import ExperimentConfig, parse_experiment
from harness.config.loading import as_played
from harness.config.plan import GamePlan, iter_games, skip_games, summarize
from harness.engine.interrupts import StopFlag, graceful_interrupt
from harness.errors import DiskFull, RunNotFoundError, StoreError
from harness.players.strategies.games import StrategyGames
from harness.providers.base import FailureKind
from harness.states import RunStatus
from harness.store import resume
from harness.store.run_file import run_path
from harness.store.writer import RunWriter
from harness.util.plural import plural

if TYPE_CHECKING:
    from harness.config.engine_options import EngineOptions
    from harness.engine.model_games import MonitorFactory


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
    note: str | None = None  # something the user must do although the run is recorded (a full disk)


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
            as_played(stored),
            source=f"the stored config of run {run_id}",
            fix_hint="restore the files it names (personas, templates), then resume",
        )
        from harness.engine.preflight import check_batch, check_models
        from harness.engine.structured_probe import check_structured_replies

        check_models(config)  # keys and names, before anything is discarded
        check_batch(config, engine)
        check_structured_replies(config, engine)
        before = resume.recorded(writer, retry_failed=retry_failed)  # read before the games to replay are cleared
        resume.discard_unfinished(writer, retry_failed=retry_failed)
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
        before=before,
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
    before: resume.Recorded | None = None,
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
                    from harness.engine.model_games import play_models  # the model path, loaded only when needed

                    done, rounds = play_models(
                        config,
                        writer,
                        plans,
                        games_planned,
                        stop,
                        engine,
                        monitor,
                        before,
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
        note=writer.log_kept,
    )


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
        match, length = games.play(
            *cond.strategies(), cond.game, cond.horizon, cond.noise, plan.seed, cond.observation_noise
        )
        writer.add_game(plan, match, length)
        done += 1
        rounds += match.rounds_played
        if progress is not None:
            progress(done, total)
    return done, rounds

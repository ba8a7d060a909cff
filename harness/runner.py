"""Run an experiment: plan the games, play them, record them, and mark how the run ended.

Classic-strategy games run on the synchronous fast path (:func:`harness.match.play_strategies`):
no event loop, no task per game. Every finished game is recorded; on Ctrl-C the run
stops between games, flushes, and is marked ``interrupted`` with everything kept.
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from harness.config import ExperimentConfig
from harness.errors import StoreError
from harness.interrupts import StopFlag, graceful_interrupt
from harness.match import Match, play_strategies
from harness.plan import GamePlan, iter_games, stream, summarize
from harness.store.writer import RunWriter, run_path


@dataclass(frozen=True, slots=True)
class RunResult:
    run_id: str
    path: Path
    status: str
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


class _NoDraws(random.Random):
    """Handed to what must never draw (deterministic strategies, noiseless games): a strategy that
    draws without declaring ``stochastic = True`` would be silently memoized, so it fails loudly."""

    def random(self) -> float:
        raise RuntimeError("a strategy declared deterministic drew a random number; set stochastic = True")


_UNUSED_RNG = _NoDraws(0)


class StrategyGames:
    """Plays games of classic strategies from their plans, deterministic in each game's seed.

    A game between two deterministic strategies without noise has one possible outcome for a
    given payoff matrix and length, so it is played once and its result reused for every
    replicate (as the Axelrod library does); each replicate is still recorded in full.
    Random streams are only seeded for what draws from them.
    """

    MAX_REMEMBERED = 4096

    def __init__(self) -> None:
        self._outcomes: dict[tuple[object, ...], Match] = {}

    def play(self, plan: GamePlan) -> tuple[Match, int]:
        cond = plan.condition
        horizon = cond.horizon
        length = (
            horizon.draw_length(stream(plan.seed, "horizon"))
            if horizon.kind == "geometric"
            else horizon.draw_length(_UNUSED_RNG)
        )
        spec_a, spec_b = cond.player_a.spec, cond.player_b.spec
        deterministic = cond.noise == 0.0 and not spec_a.cls.stochastic and not spec_b.cls.stochastic
        key = (spec_a, spec_b, cond.game, length)
        if deterministic and key in self._outcomes:
            return self._outcomes[key], length
        match = Match(cond.game, cond.noise, stream(plan.seed, "noise") if cond.noise > 0 else _UNUSED_RNG)
        a = spec_a.build(cond.game, stream(plan.seed, "a") if spec_a.cls.stochastic else _UNUSED_RNG)
        b = spec_b.build(cond.game, stream(plan.seed, "b") if spec_b.cls.stochastic else _UNUSED_RNG)
        play_strategies(match, a, b, length)
        if deterministic:
            if len(self._outcomes) >= self.MAX_REMEMBERED:
                self._outcomes.clear()
            self._outcomes[key] = match
        return match, length


def run_experiment(
    config: ExperimentConfig,
    *,
    results_dir: Path,
    run_id: str,
    replicates: int | None = None,
    overwrite: bool = False,
    progress: ProgressFn | None = None,
    stop: StopFlag | None = None,
) -> RunResult:
    """Play every condition x replicate of ``config`` into ``results_dir/<run_id>.duckdb``."""
    stop = stop if stop is not None else StopFlag()
    summary = summarize(config, replicates)
    resolved = config.resolved_dict()
    resolved["run"]["run_id"] = run_id
    if replicates:
        resolved["experiment"]["replicates"] = replicates
    collapse = config.metrics.collapse
    started = time.perf_counter()
    done = rounds = 0
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
        status = "complete"
        with graceful_interrupt(stop):
            try:
                games = StrategyGames()
                for plan in iter_games(config, replicates):
                    if stop:
                        status = "interrupted"
                        break
                    match, length = games.play(plan)
                    writer.add_game(plan, match, length)
                    done += 1
                    rounds += match.rounds_played
                    if progress is not None:
                        progress(done, summary.games)
            except KeyboardInterrupt:
                status = "interrupted"
                stop.set("interrupted by the user (Ctrl-C, twice)")
        final, error = writer.finish(status, stop.reason if status != "complete" else None)
        if final == "failed":
            raise StoreError(f"run {run_id} failed: {error}. Games written before are kept in {writer.path}.")
    except StoreError:
        raise
    except BaseException as exc:
        # A bug or a failing disk: keep what was flushed and say why the run stopped.
        with contextlib.suppress(Exception):
            writer.finish("failed", f"{type(exc).__name__}: {exc}")
        raise
    finally:
        writer.close()
    return RunResult(
        run_id=run_id,
        path=writer.path,
        status=status,
        games_planned=summary.games,
        games_done=done,
        rounds=rounds,
        seconds=time.perf_counter() - started,
        reason=stop.reason if status != "complete" else None,
    )

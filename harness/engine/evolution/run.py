"""One evolution run, played and recorded: :func:`harness.evolution.evolve` with its generations written to the
run's results file as they come (:class:`~harness.store.evolution_writer.EvolutionWriter`), stoppable by a
:class:`~harness.engine.interrupts.StopFlag` between generations.

The CLI (``pdbench evolve``), sweeps (:mod:`harness.engine.evolution.sweep`) and the dashboard run evolutions through
:func:`run_evolution`, so every run is stored the same way and ends ``complete``, ``interrupted`` (stopped, its
generations kept) or ``failed`` (with the reason in ``runs.error``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from harness.engine.evolution.phases import PhaseInterrupted
from harness.engine.interrupts import StopFlag
from harness.errors import ConfigError, DiskFull, PDBenchError, StoreError
from harness.evolution import (
    Dynamics,
    EvolutionSettings,
    Fixation,
    OnGeneration,
    PayoffTable,
    PlayMatches,
    Trajectory,
    evolve,
)
from harness.states import RunStatus
from harness.store.evolution_writer import EvolutionWriter


@dataclass(frozen=True, slots=True)
class EvolutionOutcome:
    """How an evolution run ended: its status, the last population recorded, the first fixation, and (for a
    complete run) the whole trajectory."""

    run_id: str
    path: Path
    status: RunStatus
    reason: str | None
    players: tuple[str, ...]
    last: np.ndarray  # the population after the last generation recorded (counts, or shares)
    generations: int  # generations recorded after the initial population
    size: int | None  # N; None under replicator dynamics
    fixation: Fixation | None
    seconds: float
    trajectory: Trajectory | None = None
    payoff_run: str | None = None

    def final_shares(self) -> dict[str, float]:
        shares = self.last.astype(np.float64) / (self.size if self.size else 1.0)
        return {p: float(x) for p, x in zip(self.players, shares, strict=True)}

    def winner(self) -> str | None:
        """The player with the largest final share; None on a tie."""
        shares = self.final_shares()
        best = max(shares.values())
        leaders = [p for p, x in shares.items() if abs(x - best) <= 1e-12]
        return leaders[0] if len(leaders) == 1 else None


class _Stopped(Exception):
    """Raised from the generation callback to leave ``evolve`` when the stop flag is set."""


def run_evolution(
    settings: EvolutionSettings,
    *,
    results_dir: Path,
    run_id: str,
    overwrite: bool = False,
    stop: StopFlag | None = None,
    on_generation: OnGeneration | None = None,
    payoffs: PayoffTable | None = None,
    payoff_run: str | None = None,
    sweep_id: str | None = None,
    sweep_cell: dict[str, Any] | None = None,
    model_matches: PlayMatches | None = None,
) -> EvolutionOutcome:
    """Run ``settings`` into ``results_dir/<run_id>.duckdb`` and say how it ended.

    ``payoffs``: a table obtained elsewhere (a population with language models needs one: see
    :mod:`harness.engine.evolution.models`), stored at once with ``payoff_run``, the run whose games gave it.
    Under squared_share, a population with language models needs ``model_matches`` instead, which plays each
    phase's model matches (:class:`~harness.engine.evolution.phases.PhaseGames`); a phase run that stops ends
    this run ``interrupted``.
    ``stop``: checked after every generation; when set, the run ends ``interrupted`` with what it played.
    ``on_generation`` sees every generation after it is handed to the writer (a live view, a chart).
    """
    if settings.models and settings.dynamics == Dynamics.squared_share:
        if model_matches is None:
            raise ConfigError(
                f"the population has language models ({', '.join(settings.models)}): under squared_share their "
                "matches are played through the engine each phase (pdbench evolve does this; in code, pass "
                "model_matches=harness.engine.evolution.phases.PhaseGames(...))"
            )
    elif settings.models and payoffs is None:
        raise ConfigError(
            f"the population has language models ({', '.join(settings.models)}): their payoffs come from games "
            "played through the engine first (pdbench evolve does this; in code, harness.engine.evolution.models)"
        )
    started = time.monotonic()
    writer = EvolutionWriter.create(
        results_dir,
        run_id,
        settings,
        overwrite=overwrite,
        sweep_id=sweep_id,
        sweep_cell=sweep_cell,
        payoff_run=payoff_run,
    )
    last: list[np.ndarray] = [settings.initial_shares if writer.replicator else settings.initial_counts]
    generations = [0]

    def record(generation: int, population: np.ndarray) -> None:
        writer.on_generation(generation, population)
        last[0], generations[0] = population, generation
        if on_generation is not None:
            on_generation(generation, population)
        if stop is not None and stop.is_set():
            raise _Stopped

    trajectory: Trajectory | None = None
    status, reason = RunStatus.COMPLETE, None
    try:
        if payoffs is not None:
            writer.write_payoffs(payoffs, source_run=payoff_run)
        trajectory = evolve(settings, payoffs=payoffs, on_generation=record, model_matches=model_matches)
    except _Stopped:
        status, reason = RunStatus.INTERRUPTED, (stop.reason if stop is not None else None) or "interrupted"
    except PhaseInterrupted as exc:
        status, reason = RunStatus.INTERRUPTED, str(exc)
    except DiskFull as exc:
        status, reason = RunStatus.INTERRUPTED, str(exc)
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            writer.finish(RunStatus.INTERRUPTED, "interrupted (KeyboardInterrupt)")
        else:
            why = str(exc) if isinstance(exc, PDBenchError) else f"{type(exc).__name__}: {exc}"
            writer.finish(RunStatus.FAILED, why)
        writer.close()
        raise
    try:
        status, reason = writer.finish(status, reason, trajectory=trajectory)
    except StoreError:
        writer.close()
        raise
    fixation = trajectory.fixation if trajectory is not None else writer.first_fixation
    writer.close()
    return EvolutionOutcome(
        run_id,
        writer.path,
        status,
        reason,
        tuple(settings.players),
        np.array(last[0], copy=True),
        generations[0],
        None if writer.replicator else settings.size,
        fixation,
        time.monotonic() - started,
        trajectory,
        payoff_run,
    )

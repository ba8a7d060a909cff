"""The matches of language models in the squared_share dynamics' phases, played through the engine.

Under ``--dynamics squared_share`` every pair of individual agents plays one match a phase
(:mod:`harness.evolution.phases`). Matches between two strategies are played in process; every match with a model
in a seat is played here, all of a phase's in **one ordinary run**: run id ``<evolution run id>_phase<k>``
(:func:`phase_run_id`), a tournament whose every condition is one match, named by the phase and the two agents
(``phase0_agent4_TFT_vs_agent5_mock/tft``), played once, with the agents' settings (``model_settings``) as the
population says. Its games are recorded, cached through the shared response cache and resumable like any run:
started again under the same run id, a complete phase run is read as it is and an interrupted one is resumed.

A match lasts as the population's horizon draws it: each game's length is drawn by the engine from its own seed,
made of the run seed and the condition's name (so of the phase and the two agents' places), by the same geometric
law the in-process matches draw theirs from (their seed is made of the run seed, the phase and the two places
too). The condition keeps the population's horizon rather than a fixed horizon of a pre-drawn length, because a
model is told its horizon: under a geometric one, the chance that the match stops after a round (Payne &
Alloui-Cros's prompt states it), never the number of rounds.

Two agents of one model are two agents: they meet each other (the model in both seats), and each draw of the model
has its own sampling seed (the condition, replicate and seat), so two agents that see the same prompt draw apart.

A budget (``--max-cost``) is the whole evolution's, not each phase run's: each phase run may spend what the phase
runs before it left (their calls' cost read from their files, so a run continued by the same command counts what
its earlier phases spent), and a phase run that reaches it stops the evolution as ``interrupted``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from harness.config import ExperimentConfig
from harness.config.engine_options import EngineOptions
from harness.engine.evolution.models import agent_config, play_stored, population_games
from harness.engine.interrupts import StopFlag
from harness.errors import PDBenchError, StoreError
from harness.evolution import AgentMatch, EvolutionSettings, MatchResult
from harness.states import GameStatus, RunStatus
from harness.store.evolution_writer import game_results, run_cost

if TYPE_CHECKING:
    from harness.engine.model_games import MonitorFactory

SUFFIX = "_phase"


class PhaseInterrupted(PDBenchError):
    """A phase run stopped before its games were all played (Ctrl-C, a budget): the evolution stops there too."""


def phase_run_id(run_id: str, generation: int) -> str:
    """The run that holds phase ``generation``'s model matches of evolution run ``run_id`` (a valid run id)."""
    from harness.config import check_run_id

    return check_run_id(f"{run_id}{SUFFIX}{generation}")


def match_name(settings: EvolutionSettings, generation: int, match: AgentMatch) -> str:
    """The condition of one match: the phase, each agent's place in population order and its player."""
    a, b = settings.players[match.a], settings.players[match.b]
    return f"phase{generation}_agent{match.i}_{a}_vs_agent{match.j}_{b}"


def phase_tournament(settings: EvolutionSettings, generation: int, matches: tuple[AgentMatch, ...]) -> ExperimentConfig:
    """The run of phase ``generation``'s model matches: one condition a match, one game each, in the population's
    game (horizon, noise, payoff matrix, seed), each agent with its settings."""
    conditions = [
        {
            "name": match_name(settings, generation, m),
            "agent_a": agent_config(settings.players[m.a], settings),
            "agent_b": agent_config(settings.players[m.b], settings),
        }
        for m in matches
    ]
    return population_games(settings, conditions, 1)


@dataclass
class PhaseGames:
    """Plays each phase's model matches as run ``<run_id>_phase<k>`` (pass it to ``evolve(model_matches=...)``,
    or to :func:`harness.engine.evolution.run.run_evolution`). ``overwrite`` replaces stored phase runs instead of
    reusing or resuming them. ``runs``: the phase runs read, in order."""

    settings: EvolutionSettings
    results_dir: Path
    run_id: str
    engine: EngineOptions | None = None
    stop: StopFlag | None = None
    monitor: MonitorFactory | None = None
    overwrite: bool = False
    runs: list[str] = field(default_factory=list)

    def __call__(self, generation: int, matches: tuple[AgentMatch, ...]) -> list[MatchResult]:
        config = phase_tournament(self.settings, generation, matches)
        rid = phase_run_id(self.run_id, generation)
        result = play_stored(
            config,
            f"phase {generation}'s model matches of this population",
            results_dir=self.results_dir,
            run_id=rid,
            engine=self._engine_left(),
            stop=self.stop,
            monitor=self.monitor,
            overwrite=self.overwrite,
        )
        if result is not None and result.status != RunStatus.COMPLETE:
            reason = result.reason or str(result.status)
            cap = None if self.engine is None else self.engine.max_cost
            if cap is not None and "cost limit" in reason:  # the phase had what the phases before it left
                reason = f"the evolution's budget, --max-cost {cap:g}, is spent"
                again = "run the same command again with a higher --max-cost to continue where they stopped"
            else:
                again = "run the same command again to continue where they stopped"
            raise PhaseInterrupted(
                f"phase {generation}'s model matches (run {rid}) stopped after {result.games_done} of "
                f"{result.games_planned} games ({reason}); {again}"
            )
        self.runs.append(rid)
        games = game_results(self.results_dir, rid)
        names = [match_name(self.settings, generation, m) for m in matches]
        unplayed = [name for name in names if games.get(name, ("",))[0] != GameStatus.COMPLETE.value]
        if unplayed:
            raise StoreError(
                f"phase {generation}'s run {rid} has no complete game of {len(unplayed)} of its {len(names)} "
                f"matches (e.g. {unplayed[0]}); see why with `pdbench report {rid}`, play them with `pdbench resume "
                f"{rid} --retry-failed`, then run the same command again"
            )
        return [MatchResult(games[name][1], games[name][2], games[name][3]) for name in names]

    def _engine_left(self) -> EngineOptions | None:
        """The engine options of the next phase run: the budget less what the phase runs before it spent (a phase
        run resumed counts its own earlier spending itself)."""
        if self.engine is None or self.engine.max_cost is None:
            return self.engine
        spent = sum(run_cost(self.results_dir, rid) for rid in self.runs)
        return replace(self.engine, max_cost=max(0.0, self.engine.max_cost - spent))


def unfinished(results_dir: Path, run_id: str, settings: EvolutionSettings) -> bool:
    """Whether ``run_id`` is an evolution run of these very settings that stopped before its end (interrupted, or
    failed): the same command plays it again, reading its complete phase runs and resuming an unfinished one, so
    it ends exactly as an uninterrupted run would (the update is deterministic given the games)."""
    from harness.store.evolution_writer import stored_settings
    from harness.store.run_file import run_path

    if not run_path(results_dir, run_id).exists():
        return False
    stored = stored_settings(results_dir, run_id)
    return stored is not None and stored[0] != RunStatus.COMPLETE.value and stored[1] == settings

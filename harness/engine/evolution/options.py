"""The evolution settings as ``pdbench evolve`` takes them: options written as text (``--counts 25,25``,
``--stop-prob 0.1``), and sweeps over them (``--sweep noise=0,0.05,0.1``). Every problem is found here, before
anything runs, and reported by :class:`~harness.evolution.EvolutionSettings` in one message."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from harness.config import horizon_options
from harness.config.presets.players import split_players
from harness.errors import ConfigError
from harness.evolution import EvolutionSettings
from harness.evolution.settings import DEFAULT_MATCH_ROUNDS
from harness.game.rules import PayoffMatrix

# What --sweep can vary: the option (as typed, with - or _) and how its values are read.
SWEEPABLE: dict[str, type] = {
    "noise": float,
    "observation_noise": float,
    "selection": float,
    "mutation": float,
    "stop_prob": float,
    "generations": int,
    "population": int,
    "k": int,
    "rounds": int,
    "max_rounds": int,
    "replicates": int,
    "dynamics": str,
    "fitness": str,
    "score": str,
    "payoff_mode": str,
}
MAX_CELLS = 10_000
MAX_SEEDS = 100_000


def _numbers(text: str, option: str, kind: type) -> list[Any]:
    values: list[Any] = []
    for part in text.split(","):
        part = part.strip()
        try:
            value = kind(part)
        except ValueError:
            noun = "whole number" if kind is int else "number"
            raise ConfigError(f"{option} {text!r}: {part!r} is not a {noun}; write e.g. {option} 25,25,50") from None
        if kind is float and not math.isfinite(value):
            raise ConfigError(f"{option} {text!r}: {part!r} is not a finite number")
        values.append(value)
    return values


@dataclass(frozen=True, slots=True)
class EvolutionOptions:
    """The options of ``pdbench evolve`` (None: the settings' default). :meth:`settings` builds and checks them."""

    players: str
    counts: str | None = None
    shares: str | None = None
    population: int | None = None
    generations: int | None = None
    dynamics: str | None = None
    rounds: int | None = None
    stop_prob: float | None = None
    max_rounds: int | None = None
    noise: float | None = None
    payoff_mode: str | None = None
    replicates: int | None = None
    selection: float | None = None
    fitness: str | None = None
    score: str | None = None
    mutation: float | None = None
    k: int | None = None
    seed: int = 0
    model_settings: dict[str, Any] | None = None  # --model-settings FILE, as read (see load_model_settings)
    payoff_matrix: PayoffMatrix | None = None  # --payoff-matrix, as read (see payoff_matrix_option)
    observation_noise: float | None = None

    def settings(self) -> EvolutionSettings:
        """The settings these options say; a :class:`ConfigError` listing every problem otherwise."""
        return EvolutionSettings.model_validate(self._data())

    def over(self, base: EvolutionSettings, what: str) -> EvolutionSettings:
        """These options given over ``base`` (``what``'s settings, e.g. a scenario's): each option given replaces
        its setting; the horizon is replaced as a whole by any of rounds, stop_prob and max_rounds, and the initial
        population by counts, shares or population, which other players than ``base``'s need. Options not given
        (None) keep ``base``'s; the players and the seed are always read from these options, so the caller gives
        ``base``'s where the user gave none."""
        data = base.model_dump(mode="json")
        own = self._data()
        population = ("counts", "shares", "population")
        if any(key in own for key in population) or own["players"] != base.players:
            for key in population:
                data.pop(key, None)
        if own["players"] != base.players and not any(key in own for key in population):
            raise ConfigError(
                f"--players {self.players} are not {what}'s players ({', '.join(base.players)}): give each one its "
                "individuals with --counts (or --shares with --population)"
            )
        return EvolutionSettings.model_validate({**data, **own})

    def _data(self) -> dict[str, Any]:
        """The settings' keys these options give (the players and the seed always; the others when given)."""
        players = split_players(self.players)
        data: dict[str, Any] = {"players": players, "seed": self.seed}
        if self.counts is not None:
            data["counts"] = _numbers(self.counts, "--counts", int)
        if self.shares is not None:
            data["shares"] = _numbers(self.shares, "--shares", float)
        if self.model_settings is not None:
            data["model_settings"] = self.model_settings
        if (self.rounds, self.stop_prob, self.max_rounds) != (None, None, None):  # else the settings' default
            data["horizon"] = horizon_options(self.rounds, self.stop_prob, self.max_rounds, DEFAULT_MATCH_ROUNDS)
        for key, name in (
            ("population", "population"),
            ("generations", "generations"),
            ("dynamics", "dynamics"),
            ("noise", "noise"),
            ("observation_noise", "observation_noise"),
            ("payoff_mode", "payoff_mode"),
            ("payoff_matrix", "payoff_matrix"),
            ("replicates", "replicates"),
            ("selection", "selection"),
            ("fitness", "fitness"),
            ("score", "score"),
            ("mutation", "mutation"),
            ("k", "k"),
        ):
            value = getattr(self, key)
            if value is not None:
                data[name] = value
        return data

    def with_values(self, values: dict[str, Any], seed: int) -> EvolutionOptions:
        """These options with a sweep cell's values and a seed."""
        return replace(self, seed=seed, **values)


@dataclass(frozen=True, slots=True)
class Cell:
    """One point of a sweep's grid: the values it gives the swept options."""

    index: int
    values: dict[str, Any]

    @property
    def label(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.values.items()) or "(base)"


def parse_sweep(specs: list[str]) -> list[Cell]:
    """The grid of ``--sweep KEY=V1,V2`` options (their product, in the order given; one empty cell without)."""
    axes: list[tuple[str, list[Any]]] = []
    for spec in specs:
        key, sep, text = spec.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not text.strip():
            raise ConfigError(f"--sweep {spec!r}: write KEY=V1,V2,... e.g. --sweep noise=0,0.05,0.1")
        if key not in SWEEPABLE:
            raise ConfigError(
                f"--sweep {spec!r}: {key!r} cannot be swept; sweep one of {', '.join(SWEEPABLE)} "
                "(players and initial mix stay as given)"
            )
        if any(key == k for k, _ in axes):
            raise ConfigError(f"--sweep names {key} twice: give all its values in one --sweep {key}=V1,V2")
        kind = SWEEPABLE[key]
        values = [v.strip() for v in text.split(",")] if kind is str else _numbers(text, f"--sweep {key}=", kind)
        axes.append((key, list(dict.fromkeys(values))))
    cells: list[dict[str, Any]] = [{}]
    for key, values in axes:
        cells = [{**cell, key: v} for cell in cells for v in values]
    if len(cells) > MAX_CELLS:
        raise ConfigError(f"the sweep has {len(cells):,} cells; at most {MAX_CELLS:,}: sweep fewer values")
    return [Cell(i, values) for i, values in enumerate(cells)]


def sweep_run_id(sweep_id: str, cell: Cell, seed: int) -> str:
    """The run id of one cell × seed of a sweep: ``<sweep_id>_c<cell>_s<seed>``."""
    return f"{sweep_id}_c{cell.index}_s{seed}"

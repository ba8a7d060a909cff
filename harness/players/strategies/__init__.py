"""Classic Prisoner's Dilemma strategies, one family per module, and the registry of their names.

``STRATEGIES`` maps each upper-case short name users type (``TFT``, ``GRIM``...) to its class.
"""

from __future__ import annotations

from harness.players.strategies import (
    bayesian,
    grudger,
    majority,
    memoryone,
    prober,
    probes,
    simple,
    titfortat,
    zerodeterminant,
)
from harness.players.strategies.base import INFINITE_MEMORY, NoParams, Strategy
from harness.players.strategies.registry import (
    STRATEGIES,
    StrategySpec,
    get_strategy,
    known_names,
    make_spec,
    parse_spec,
    spec_label,
)

__all__ = [
    "INFINITE_MEMORY",
    "STRATEGIES",
    "NoParams",
    "Strategy",
    "StrategySpec",
    "bayesian",
    "get_strategy",
    "grudger",
    "known_names",
    "majority",
    "make_spec",
    "memoryone",
    "parse_spec",
    "prober",
    "probes",
    "simple",
    "spec_label",
    "titfortat",
    "zerodeterminant",
]

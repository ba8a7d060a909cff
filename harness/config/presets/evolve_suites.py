"""Presets that reproduce published evolutionary protocols: ``pdbench evolve --suite NAME --players MODEL[,MODEL]
--stop-prob P``.

Like the ``eval`` suites (:mod:`harness.config.presets.suites`), a suite is data: the paper it follows and
everything its code fixes (the strategies and how many agents each, the selection rule and its updates, the
horizon, the payoffs, and each model player's prompts, sampling and reader). :meth:`EvolveSuite.settings_data`
turns it into the evolution settings (the keys of :class:`harness.evolution.EvolutionSettings`, which this package
cannot import); a run made from it stores ``suite: NAME``, and settings that name a suite are checked to follow it,
so a stored run cannot claim a protocol it did not play. The options it fixes are refused with it
(:data:`PROTOCOL_OPTIONS`); the models, the seed and the engine options (cache, cost cap, results, run id) stay
the user's, and so does the one setting the paper varied (the stop probability, among the values it ran).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from harness.config.presets.suites import refuse_fixed
from harness.errors import ConfigError

# The evolve options a suite fixes (option -> what it sets), refused when given with --suite.
PROTOCOL_OPTIONS = {
    "--counts": "the initial population",
    "--shares": "the initial population",
    "--population": "the initial population",
    "--generations": "the number of updates",
    "--dynamics": "the selection rule",
    "--rounds": "the horizon",
    "--max-rounds": "the horizon",
    "--noise": "the noise",
    "--observation-noise": "the noise",
    "--payoff-matrix": "the payoffs",
    "--payoff-mode": "how matches are played",
    "--payoffs": "how matches are played",  # --payoff-mode's old name
    "--replicates": "how matches are played",
    "--selection": "the selection rule",
    "--fitness": "the selection rule",
    "--score": "the selection rule",
    "--mutation": "the selection rule",
    "--k": "the selection rule",
    "--model-settings": "the models' prompts, sampling and reader",
    "--sweep": "one run a command",
    "--seeds": "one run a command",
    "--workers": "one run a command",
    "--ray": "one run a command",
}


@dataclass(frozen=True, slots=True)
class EvolveSuite:
    """A published evolutionary protocol as PDBench evolution settings. ``strategies``: the classic players in the
    paper's population order (which decides ties in its update), each with ``agents`` individuals, as the models
    named by the user (added after them); ``stop_probs``: the stop probabilities the paper ran, one of which the
    user picks; ``model_settings``: every model player's settings (the keys of a model agent)."""

    name: str
    paper: str
    summary: str
    strategies: tuple[str, ...]
    agents: int
    dynamics: str
    generations: int
    stop_probs: tuple[float, ...]
    max_rounds: int
    model_settings: dict[str, Any]

    def settings_data(self, models: list[str], stop_prob: float | None, seed: int) -> dict[str, Any]:
        """The evolution settings of this protocol for ``models`` (each ``provider/model``) at ``stop_prob`` (one
        of :attr:`stop_probs`), as :class:`~harness.evolution.EvolutionSettings` reads them, ``suite`` left out."""
        problems: list[str] = []
        listed = ", ".join(f"{p:g}" for p in self.stop_probs)
        if stop_prob is None:
            problems.append(f"--suite {self.name} needs --stop-prob, one of {listed} (the runs of {self.paper})")
        elif stop_prob not in self.stop_probs:
            problems.append(f"--stop-prob {stop_prob:g}: --suite {self.name} ran {listed} only; choose one of them")
        strategies = [m for m in models if "/" not in m]
        if strategies or not models:
            problems.append(
                f"--suite {self.name} plays its own {len(self.strategies)} strategies; --players names only the "
                "language models that join them, as provider/model (e.g. --players openai/gpt-4o-mini)"
                + (f", not {', '.join(strategies)}" if strategies else "")
            )
        if problems:
            raise ConfigError(" ".join(problems))
        return {
            "dynamics": self.dynamics,
            "players": [*self.strategies, *models],
            "counts": [self.agents] * (len(self.strategies) + len(models)),
            "generations": self.generations,
            "horizon": {"type": "geometric", "stop_prob": stop_prob, "max_rounds": self.max_rounds},
            "model_settings": {model: copy.deepcopy(self.model_settings) for model in models},
            "seed": seed,
        }


PAYNE_2025 = EvolveSuite(
    name="payne2025",
    paper=(
        'Payne & Alloui-Cros, "Strategic Intelligence in Large Language Models: Evidence from evolutionary Game '
        'Theory", arXiv:2507.02618 (2025)'
    ),
    summary="ten canonical strategies and each model, 2 agents each; every pair of agents one match a phase; "
    "stop probability 0.10, 0.25 or 0.75 after each round (told as a percent), at most 30 rounds (not told); "
    "4 squared-share updates, 5 phases; the last 20 rounds shown, reasoning then the move on the last line; "
    "temperature 0.7, 1000 tokens; an unreadable reply is a flagged C, never re-asked",
    strategies=(
        "TFT",
        "GRIM",
        "WSLS(win=CC_or_DD)",
        "RAND",
        "GTFT(p=0.1)",
        "STFT",
        "GRADUAL(peace_moves=1,counts_all_defections=false)",
        "PROBER(opening=CDC)",
        "ALT",
        "PAYNE_BAYES",
    ),
    agents=2,
    dynamics="squared_share",
    generations=4,
    stop_probs=(0.1, 0.25, 0.75),
    max_rounds=30,
    model_settings={
        "temperature": 0.7,
        "max_tokens": 1000,
        "prompts": {
            "system_template": "suites/payne2025/system.j2",
            "round_template": "suites/payne2025/round.j2",
            "history_window": 20,
        },
        "parse": {"reader": "last_line", "max_retries": 0, "on_failure": "cooperate"},
    },
)

EVOLVE_SUITES: dict[str, EvolveSuite] = {s.name: s for s in (PAYNE_2025,)}


def get_evolve_suite(name: str) -> EvolveSuite:
    """The suite called ``name``, or a clear error listing the suites."""
    suite = EVOLVE_SUITES.get(name.strip().lower())
    if suite is None:
        listing = "; ".join(f"{s.name} ({s.paper})" for s in EVOLVE_SUITES.values())
        raise ConfigError(
            f"unknown evolve suite {name!r}; the suites of pdbench evolve are: {listing}. Run `pdbench evolve "
            "--help` for more."
        )
    return suite


def check_evolve_options(suite: EvolveSuite, given: list[str]) -> None:
    """Refuse the options that would change the protocol of ``suite`` (``given``: the options the user typed),
    all at once."""
    refuse_fixed(
        suite.name,
        suite.paper,
        given,
        PROTOCOL_OPTIONS,
        "the population",
        f"--players (the language models), --stop-prob (one of {', '.join(f'{p:g}' for p in suite.stop_probs)}), "
        "--seed and the engine options (--max-cost, --no-cache, --prices, --results, --run-id, --overwrite) are "
        "yours.",
    )

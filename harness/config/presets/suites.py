"""Presets that reproduce published protocols: ``pdbench eval --suite NAME --model M``.

A suite is data: the paper it follows and everything its protocol fixes (payoffs, horizon, the
opponents, how the prompt is put: labels, option order, history window, reply format, and the
sampling temperature). :meth:`Suite.config` turns it into an ordinary ``eval`` experiment, the
model as player A against each opponent; the run stores ``suite: NAME`` in its config, and a config
that names a suite is checked to follow it (:meth:`Suite.deviations`), so a stored run cannot claim
a protocol it did not play. Options that would change the protocol are refused with a suite
(:data:`PROTOCOL_OPTIONS`); engine options (replicates, seed, concurrency, rate limits, cost limit,
cache, results folder, run id) stay the user's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from harness.errors import ConfigError
from harness.game.horizon import FixedHorizon, GeometricHorizon
from harness.game.rules import PayoffMatrix
from harness.util.plural import plural

if TYPE_CHECKING:
    from harness.config import ExperimentConfig

# The eval options a suite fixes (option -> what it sets), refused when given with --suite.
PROTOCOL_OPTIONS = {
    "--opponents": "the opponents",
    "--rounds": "the horizon",
    "--stop-prob": "the horizon",
    "--max-rounds": "the horizon",
    "--noise": "the noise",
    "--persona": "the prompt",
    "--temperature": "the sampling temperature",
}


@dataclass(frozen=True, slots=True)
class Opponent:
    """A classic strategy with its parameters, shown under ``name`` (``RAND(p=0.3)``)."""

    policy: str
    params: tuple[tuple[str, Any], ...] = ()

    @property
    def name(self) -> str:
        if not self.params:
            return self.policy
        return f"{self.policy}({','.join(f'{k}={v}' for k, v in self.params)})"

    def spec(self) -> str:
        from harness.players.strategies import make_spec

        made = make_spec(self.policy, dict(self.params))
        return _spec(made.name, made.params)

    def agent(self) -> dict[str, Any]:
        return {"policy": self.policy, **dict(self.params), **({"name": self.name} if self.params else {})}


@dataclass(frozen=True, slots=True)
class Suite:
    name: str
    paper: str  # the citation
    summary: str  # what the protocol fixes, in one line (for --help and the README)
    rstp: tuple[float, float, float, float]  # R, S, T, P
    rounds: int
    opponents: tuple[Opponent, ...]
    prompts: dict[str, Any]  # PromptSettings keys: labels, shuffle_options, history_window, answer_format
    temperature: float | None = None  # None: the provider's default
    scorecard: tuple[str, ...] = field(default=())  # extra scorecard sections, e.g. ("behaviour_profile",)

    @property
    def payoffs(self) -> PayoffMatrix:
        r, s, t, p = self.rstp
        return PayoffMatrix.from_rstp(R=r, S=s, T=t, P=p)

    def model_agent(
        self, model: str, base_url: str | None, limits: dict[str, Any] | None, comprehension: list[int] | None
    ) -> dict[str, Any]:
        agent: dict[str, Any] = {"model": model, "prompts": dict(self.prompts)}
        if comprehension:
            agent["comprehension"] = {"rounds": comprehension}
        if self.temperature is not None:
            agent["temperature"] = self.temperature
        if base_url is not None:
            agent["base_url"] = base_url
        if limits:
            agent["limits"] = limits
        return agent

    def config(
        self,
        model: str,
        *,
        replicates: int = 3,
        seed: int = 0,
        base_url: str | None = None,
        limits: dict[str, Any] | None = None,
        comprehension: list[int] | None = None,
    ) -> ExperimentConfig:
        """The eval experiment of this protocol for ``model``: one condition per opponent, ``vs_<opponent>``. A
        comprehension check (``comprehension``: its rounds) may be added: it is asked aside and leaves the
        protocol's prompts as they are."""
        from harness.config import GameOptions, options_config

        agent = self.model_agent(model, base_url, limits, comprehension)
        conditions = [{"name": f"vs_{o.name}", "agent_a": dict(agent), "agent_b": o.agent()} for o in self.opponents]
        r, s, t, p = self.rstp
        matrix = {"C": {"C": [r, r], "D": [s, t]}, "D": {"C": [t, s], "D": [p, p]}}
        options = GameOptions(rounds=self.rounds, replicates=replicates, seed=seed, payoff_matrix=matrix)
        return options_config(
            "eval",
            conditions,
            options,
            default_rounds=self.rounds,
            suite=self.name,
            source=f"the {self.name} suite",
            fix_hint="see `pdbench eval --help`",
        )

    def deviations(self, config: ExperimentConfig) -> list[str]:
        """Where ``config`` departs from this protocol (empty if it follows it), with key paths. A
        comprehension check, parse settings, limits and the number of replicates are not part of it."""
        from harness.config import ModelAgentConfig, PolicyAgentConfig
        from harness.players.model.prompts.builder import PromptSettings

        out: list[str] = []

        def differs(path: str, got: object, want: object, text: Any = repr) -> None:
            if got != want:
                out.append(
                    f"{path}: suite {self.name} fixes {text(want)}, the config has {text(got)}; follow the "
                    f"protocol or remove `suite: {self.name}`"
                )

        differs("kind", config.kind, "eval")
        differs("game.payoff_matrix", config.game.payoff_matrix, self.payoffs, _payoffs)
        match config.horizon.to_horizon():
            case FixedHorizon(n_rounds):
                got = plural(n_rounds, "round", grouped=False)
            case GeometricHorizon(stop_prob):
                got = f"a geometric horizon (stop_prob {stop_prob:g})"
        differs("horizon", got, plural(self.rounds, "round", grouped=False), str)
        differs("noise.prob", config.noise.prob, 0.0)
        conds = config.experiment.conditions
        opponents = [
            _spec(c.agent_b.spec.name, c.agent_b.spec.params) if isinstance(c.agent_b, PolicyAgentConfig) else "a model"
            for c in conds
        ]
        differs("experiment.conditions (opponents)", opponents, [o.spec() for o in self.opponents], ", ".join)
        want = PromptSettings.model_validate(self.prompts)
        for i, cond in enumerate(conds):
            at = f"experiment.conditions[{i}]"
            if cond.game is not None or cond.horizon is not None or cond.noise is not None:
                out.append(
                    f"{at}: suite {self.name} fixes the game, horizon and noise of every condition; remove the override"
                )
            agent = cond.agent_a
            if not isinstance(agent, ModelAgentConfig):
                out.append(f"{at}.agent_a: suite {self.name} plays a model as player A")
                continue
            differs(f"{at}.agent_a.temperature", agent.temperature, self.temperature)
            for key in PromptSettings.model_fields:
                mine, theirs = getattr(agent.prompts, key), getattr(want, key)
                show = (lambda x: f"{x.cooperate}/{x.defect}") if key == "labels" else repr
                differs(f"{at}.agent_a.prompts.{key}", mine, theirs, show)
        return out


def _payoffs(matrix: PayoffMatrix) -> str:
    if matrix == PayoffMatrix.from_rstp(matrix.R, matrix.S, matrix.T, matrix.P):
        return f"R={matrix.R:g}, S={matrix.S:g}, T={matrix.T:g}, P={matrix.P:g}"
    return str(matrix.to_mapping())


def _spec(name: str, params: Any) -> str:
    """A strategy with every parameter, as suites compare opponents: ``RAND(p=0.3)``, ``DONCE(round=1)``."""
    values = params.model_dump(mode="json", by_alias=True)
    return name + (f"({','.join(f'{k}={v}' for k, v in sorted(values.items()))})" if values else "")


AKATA_2023 = Suite(
    name="akata2023",
    paper=(
        'Akata, Schulz, Coda-Forno, Oh, Bethge & Schulz, "Playing repeated games with Large Language Models", '
        "Nature Human Behaviour 2025 (arXiv:2305.16867, 2023)"
    ),
    summary="payoffs 8/0/10/5, labels J/F, 10 rounds, option order shuffled, opponents ALLD, DONCE and TFT, "
    "temperature 0",
    rstp=(8, 0, 10, 5),
    rounds=10,
    opponents=(Opponent("ALLD"), Opponent("DONCE"), Opponent("TFT")),
    prompts={"labels": {"cooperate": "J", "defect": "F"}, "shuffle_options": True},
    temperature=0.0,
)

FONTANA_2025 = Suite(
    name="fontana2025",
    paper=(
        "Fontana, Pierri & Aiello, \"Nicer Than Humans: How do Large Language Models Behave in the Prisoner's "
        'Dilemma?", ICWSM 2025 (arXiv:2406.13605)'
    ),
    summary="100 rounds, history window 10, JSON answers, random opponents cooperating with probability 0 to 1 "
    "in steps of 0.1, the behaviour profile in the scorecard",
    rstp=(3, 0, 5, 1),
    rounds=100,
    opponents=tuple(Opponent("RAND", (("p", round(i / 10, 1)),)) for i in range(11)),
    prompts={"history_window": 10, "answer_format": "json"},
    scorecard=("behaviour_profile",),
)

SUITES: dict[str, Suite] = {s.name: s for s in (AKATA_2023, FONTANA_2025)}


def get_suite(name: str) -> Suite:
    """The suite called ``name``, or a clear error listing the suites."""
    suite = SUITES.get(name.strip().lower())
    if suite is None:
        listing = "; ".join(f"{s.name} ({s.paper})" for s in SUITES.values())
        raise ConfigError(f"unknown suite {name!r}; the suites are: {listing}. Run `pdbench eval --help` for more.")
    return suite


def check_options(suite: Suite, given: list[str]) -> None:
    """Refuse the options that would change the protocol of ``suite`` (``given``: the eval options the user
    typed), all at once."""
    refused = [o for o in given if o in PROTOCOL_OPTIONS]
    if refused:
        fixed = ", ".join(f"{o} ({PROTOCOL_OPTIONS[o]})" for o in refused)
        raise ConfigError(
            f"--suite {suite.name} fixes the protocol of {suite.paper}, so {fixed} cannot be given with it. Drop "
            f"{'it' if len(refused) == 1 else 'them'}, or leave out --suite and set the game yourself. Engine "
            "options (--replicates, --seed, --concurrency, --rpm, --tpm, --max-cost, --no-cache, --results, "
            "--run-id, --base-url) are allowed."
        )

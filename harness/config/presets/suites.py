"""Presets that reproduce published protocols: ``pdbench eval --suite NAME --model M``.

A suite is data: the paper it follows and everything its protocol fixes (payoffs, horizon, who plays whom in
which seat, how the prompt is put: its own templates in ``prompts/suites/<name>/``, labels, option order, history
window, reply format, and the sampling temperature and reply length). :meth:`Suite.config` turns it into an
ordinary ``eval`` experiment, one condition per pairing; the run stores ``suite: NAME`` in its config, and a config
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
    "--observation-noise": "the noise",
    "--payoff-matrix": "the payoffs",
    "--persona": "the prompt",
    "--temperature": "the sampling temperature",
    "--answer-format": "the reply format",
    "--prompt-layout": "the prompt",
}

MIN_ANSWER_TOKENS = 16  # a comprehension answer ("8, 0") needs a few tokens; a suite replying in fewer asks none
_NO_COMPREHENSION = (
    "--suite {name} has the model reply in {tokens} token(s), as its paper did, which cannot hold the answer to a "
    "comprehension question: leave out --comprehension, or leave out --suite and ask the questions in your own game."
)


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
class Pairing:
    """One condition of a suite: who sits in seat A and who in seat B, ``None`` being the model under test (in
    one seat, or in both: self-play)."""

    a: Opponent | None
    b: Opponent | None

    @property
    def name(self) -> str:
        """``vs_ALLD`` (the model in seat A), ``ALLD_vs_model`` (in seat B) or ``self_play``."""
        if self.a is None:
            return "self_play" if self.b is None else f"vs_{self.b.name}"
        if self.b is None:
            return f"{self.a.name}_vs_model"
        raise ValueError("a suite's pairing seats the model at least once")

    def seating(self) -> str:
        """Who plays whom, as :meth:`Suite.deviations` compares conditions: ``model vs DONCE(round=1)``."""
        return " vs ".join("model" if seat is None else seat.spec() for seat in (self.a, self.b))


def vs_model(*opponents: Opponent) -> tuple[Pairing, ...]:
    """The model in seat A against each opponent (the common eval design)."""
    return tuple(Pairing(None, o) for o in opponents)


@dataclass(frozen=True, slots=True)
class Suite:
    """A published protocol: what its paper's code fixes, as PDBench settings. ``prompts`` names the suite's own
    templates (``prompts/suites/<name>/``) and every prompt setting; ``max_tokens`` and ``temperature`` are the
    paper's sampling parameters."""

    name: str
    paper: str  # the citation
    summary: str  # what the protocol fixes, in one line (for --help and the README)
    rstp: tuple[float, float, float, float]  # R, S, T, P
    rounds: int
    pairings: tuple[Pairing, ...]
    prompts: dict[str, Any]  # PromptSettings keys
    temperature: float | None = None  # None: the provider's default
    max_tokens: int = 256  # the model player's default
    scorecard: tuple[str, ...] = field(default=())  # extra scorecard sections, e.g. ("behaviour_profile",)

    @property
    def payoffs(self) -> PayoffMatrix:
        r, s, t, p = self.rstp
        return PayoffMatrix.from_rstp(R=r, S=s, T=t, P=p)

    def model_agent(
        self,
        model: str,
        base_url: str | None,
        limits: dict[str, Any] | None,
        comprehension: list[int] | None,
        service_tier: str | None = None,
    ) -> dict[str, Any]:
        agent: dict[str, Any] = {"model": model, "prompts": dict(self.prompts), "max_tokens": self.max_tokens}
        if comprehension:
            if self.max_tokens < MIN_ANSWER_TOKENS:
                raise ConfigError(_NO_COMPREHENSION.format(name=self.name, tokens=self.max_tokens))
            agent["comprehension"] = {"rounds": comprehension}
        if self.temperature is not None:
            agent["temperature"] = self.temperature
        if base_url is not None:
            agent["base_url"] = base_url
        if limits:
            agent["limits"] = limits
        if service_tier is not None:  # how the calls are bought, not what the model is asked: no protocol's
            agent["service_tier"] = service_tier
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
        service_tier: str | None = None,
    ) -> ExperimentConfig:
        """The eval experiment of this protocol for ``model``: one condition per pairing (``vs_<opponent>``,
        ``<opponent>_vs_model``, ``self_play``). A comprehension check (``comprehension``: its rounds) may be
        added: it is asked aside and leaves the protocol's prompts as they are."""
        from harness.config import GameOptions, options_config

        agent = self.model_agent(model, base_url, limits, comprehension, service_tier)

        def seat(who: Opponent | None) -> dict[str, Any]:
            return dict(agent) if who is None else who.agent()

        conditions = [{"name": p.name, "agent_a": seat(p.a), "agent_b": seat(p.b)} for p in self.pairings]
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

        def seat(agent: object) -> str:
            if isinstance(agent, PolicyAgentConfig):
                return _spec(agent.spec.name, agent.spec.params)
            return "model" if isinstance(agent, ModelAgentConfig) else "another player"

        differs("kind", config.kind, "eval")
        differs("game.payoff_matrix", config.game.payoff_matrix, self.payoffs, _payoffs)
        match config.horizon.to_horizon():
            case FixedHorizon(n_rounds):
                got = plural(n_rounds, "round", grouped=False)
            case GeometricHorizon(stop_prob):
                got = f"a geometric horizon (stop_prob {stop_prob:g})"
        differs("horizon", got, plural(self.rounds, "round", grouped=False), str)
        differs("noise.prob", config.noise.prob, 0.0)
        differs("noise.observation", config.noise.observation, 0.0)
        conds = config.experiment.conditions
        seatings = [f"{seat(c.agent_a)} vs {seat(c.agent_b)}" for c in conds]
        differs("experiment.conditions (seats)", seatings, [p.seating() for p in self.pairings], ", ".join)
        want = PromptSettings.model_validate(self.prompts)
        for i, cond in enumerate(conds):
            at = f"experiment.conditions[{i}]"
            if cond.game is not None or cond.horizon is not None or cond.noise is not None:
                out.append(
                    f"{at}: suite {self.name} fixes the game, horizon and noise of every condition; remove the override"
                )
            for key, agent in (("agent_a", cond.agent_a), ("agent_b", cond.agent_b)):
                if not isinstance(agent, ModelAgentConfig):
                    continue
                differs(f"{at}.{key}.temperature", agent.temperature, self.temperature)
                differs(f"{at}.{key}.max_tokens", agent.max_tokens, self.max_tokens)
                for name in PromptSettings.model_fields:
                    mine, theirs = getattr(agent.prompts, name), getattr(want, name)
                    show = (lambda x: f"{x.cooperate}/{x.defect}") if name == "labels" else repr
                    differs(f"{at}.{key}.prompts.{name}", mine, theirs, show)
        return out


def _payoffs(matrix: PayoffMatrix) -> str:
    if matrix == PayoffMatrix.from_rstp(matrix.R, matrix.S, matrix.T, matrix.P):
        return f"R={matrix.R:g}, S={matrix.S:g}, T={matrix.T:g}, P={matrix.P:g}"
    return str(matrix.to_mapping())


def _spec(name: str, params: Any) -> str:
    """A strategy with every parameter, as suites compare opponents: ``RAND(p=0.3)``, ``DONCE(round=1)``."""
    values = params.model_dump(mode="json", by_alias=True)
    return name + (f"({','.join(f'{k}={v}' for k, v in sorted(values.items()))})" if values else "")


ALLC, ALLD, DONCE = Opponent("ALLC"), Opponent("ALLD"), Opponent("DONCE")

AKATA_2023 = Suite(
    name="akata2023",
    paper=(
        'Akata, Schulz, Coda-Forno, Oh, Bethge & Schulz, "Playing repeated games with Large Language Models", '
        "Nature Human Behaviour 2025 (arXiv:2305.16867, 2023)"
    ),
    summary="payoffs 8/0/10/5, labels J/F, 10 rounds; always-J, always-F and defect-once against the model in "
    "both seats, and the model against itself; one user message with each round's points and no totals; one "
    "option order per round for both players, shown in the question only; a one-token reply (max_tokens 1), "
    "temperature 0",
    rstp=(8, 0, 10, 5),
    rounds=10,
    pairings=(
        *vs_model(ALLC, ALLD, DONCE),
        Pairing(ALLC, None),
        Pairing(ALLD, None),
        Pairing(DONCE, None),
        Pairing(None, None),
    ),
    prompts={
        "system_template": "suites/akata2023/system.j2",
        "round_template": "suites/akata2023/round.j2",
        "labels": {"cooperate": "J", "defect": "F"},
        "shuffle_options": True,
        "shared_order": True,
        "answer_format": "label",
    },
    temperature=0.0,
    max_tokens=1,
)

FONTANA_2025 = Suite(
    name="fontana2025",
    paper=(
        "Fontana, Pierri & Aiello, \"Nicer Than Humans: How do Large Language Models Behave in the Prisoner's "
        'Dilemma?", ICWSM 2025 (arXiv:2406.13605)'
    ),
    summary="payoffs 3/0/5/1, 100 rounds, random opponents cooperating with probability 0 to 1 in steps of 0.1; "
    "told in the third person (the model answers for player A) with the actions as words, the last 10 rounds, "
    "whole-game counts, totals and the current round; JSON answers, temperature 0.7, 128 tokens; the behaviour "
    "profile in the scorecard",
    rstp=(3, 0, 5, 1),
    rounds=100,
    pairings=vs_model(*(Opponent("RAND", (("p", round(i / 10, 1)),)) for i in range(11))),
    prompts={
        "system_template": "suites/fontana2025/system.j2",
        "round_template": "suites/fontana2025/round.j2",
        "labels": {"cooperate": "Cooperate", "defect": "Defect"},
        "history_window": 10,
        "answer_format": "json",
    },
    temperature=0.7,
    max_tokens=128,
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
    if "--comprehension" in given and suite.max_tokens < MIN_ANSWER_TOKENS and not refused:
        raise ConfigError(_NO_COMPREHENSION.format(name=suite.name, tokens=suite.max_tokens))
    refuse_fixed(
        suite.name,
        suite.paper,
        given,
        PROTOCOL_OPTIONS,
        "the game",
        "Engine options (--replicates, --seed, --concurrency, --rpm, --tpm, --max-cost, --no-cache, --results, "
        "--run-id, --base-url) are allowed.",
    )


def refuse_fixed(name: str, paper: str, given: list[str], fixed: dict[str, str], what: str, yours: str) -> None:
    """A suite's refusal of the options it fixes (``fixed``: option -> what it sets) among those ``given``, all at
    once, for ``pdbench eval`` and ``pdbench evolve`` alike: ``what`` the user sets without the suite, and
    ``yours``, the sentence naming the options that stay the user's."""
    refused = [o for o in given if o in fixed]
    if refused:
        listed = ", ".join(f"{o} ({fixed[o]})" for o in refused)
        raise ConfigError(
            f"--suite {name} fixes the protocol of {paper}, so {listed} cannot be given with it. Drop "
            f"{'it' if len(refused) == 1 else 'them'}, or leave out --suite and set {what} yourself. {yours}"
        )

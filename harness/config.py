"""Experiment configuration: the YAML format, its validation, and every problem reported at once.

A config file has the sections ``run``, ``game``, ``horizon``, ``noise``, ``experiment`` and
``metrics`` (see ``configs/experiment.yaml``). Agents are given inline
(``{policy: TFT}``) or as ``{ref: agents/policies.yaml, overrides: {...}}``, the ref being
resolved against the config file's folder. :func:`load_experiment` returns a validated
:class:`ExperimentConfig` or raises one :class:`~harness.errors.ConfigError` listing every
problem with its key path, so a user fixes a file in one pass rather than one error at a time.

Nothing is read into a meaning it does not have: numbers are strict (``true`` is not 1, ``"5"`` is not
5), a key given twice is refused rather than the last one kept, and every number and the plan's size
have an upper bound (see the constants below and the README), so no config can make PDBench hang.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationError,
    field_validator,
    model_validator,
)

from harness.agents.strategies import StrategySpec, get_strategy, make_spec
from harness.comprehension import ComprehensionSettings
from harness.errors import ConfigError
from harness.game import MAX_ROUNDS, Horizon, PayoffMatrix
from harness.limits import LimitSettings
from harness.parsing import ParsePolicy
from harness.prompts import PromptSettings
from harness.userfiles import load_yaml, read_user_file, yaml_message

MAX_SEED = 2**63 - 1  # stored as a BIGINT
MAX_REPLICATES = 10_000_000
# The plan as a whole: strategies play about a million rounds a second and store about 3 bytes a
# round, so the largest plan is some 3 hours and 30 GB; a model plan of that size is unaffordable.
MAX_GAMES = 10_000_000
MAX_PLAN_ROUNDS = 10_000_000_000
MIN_UNCAPPED_STOP_PROB = 1e-4  # below this, a geometric game may exceed MAX_ROUNDS: ask for max_rounds
RUN_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$"


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)  # strict: a boolean or a quoted number is no number


class RunSection(_Section):
    run_id: str | None = Field(
        None, pattern=RUN_ID_PATTERN, description="file-name-safe id; default: <config name>_<timestamp>"
    )
    seed: int = Field(0, ge=0, le=MAX_SEED, description="master seed; every game's randomness derives from it")
    output: str | None = Field(None, min_length=1, description="results folder (default results/ or $PDBENCH_RESULTS)")


class GameSection(_Section):
    payoff_matrix: PayoffMatrix = Field(default_factory=PayoffMatrix)

    @field_validator("payoff_matrix", mode="before")
    @classmethod
    def _matrix(cls, value: Any) -> PayoffMatrix:
        if isinstance(value, PayoffMatrix):
            return value
        return PayoffMatrix.from_mapping(value)


class HorizonSection(_Section):
    type: Literal["fixed", "geometric"] = "fixed"
    n_rounds: int | None = Field(None, ge=1, le=MAX_ROUNDS)
    stop_prob: float | None = Field(None, gt=0.0, le=1.0)
    max_rounds: int | None = Field(None, ge=1, le=MAX_ROUNDS)

    @model_validator(mode="after")
    def _complete(self) -> HorizonSection:
        if self.type == "fixed":
            extra = [k for k in ("stop_prob", "max_rounds") if getattr(self, k) is not None]
            if extra:
                raise ValueError(f"{' and '.join(extra)} only apply to type: geometric (this horizon is fixed)")
            if self.n_rounds is None:
                self.n_rounds = 50
        if self.type == "geometric" and self.n_rounds is not None:
            raise ValueError("n_rounds only applies to type: fixed; a geometric horizon has stop_prob and max_rounds")
        if self.type == "geometric" and self.stop_prob is None:
            raise ValueError("a geometric horizon needs stop_prob (the per-round stop probability)")
        if self.type == "geometric" and self.max_rounds is None and self.stop_prob < MIN_UNCAPPED_STOP_PROB:
            raise ValueError(
                f"stop_prob {self.stop_prob:g} makes games of about {1 / self.stop_prob:,.0f} rounds; "
                f"set max_rounds (at most {MAX_ROUNDS:,}) to cap them"
            )
        return self

    def to_horizon(self) -> Horizon:
        if self.type == "fixed":
            return Horizon(kind="fixed", n_rounds=self.n_rounds)
        return Horizon(kind="geometric", n_rounds=None, stop_prob=self.stop_prob, max_rounds=self.max_rounds)


class NoiseSection(_Section):
    prob: float = Field(0.0, ge=0.0, le=1.0, description="probability that an intended move is flipped")


def _noise(value: Any) -> Any:
    """``noise: 0.05`` is shorthand for ``noise: {prob: 0.05}``."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return {"prob": value}
    return value


class PolicyAgentConfig(BaseModel):
    """A classic strategy. ``policy`` names it; every other key is one of its parameters."""

    model_config = ConfigDict(extra="allow", strict=True)

    policy: str
    name: str | None = Field(None, min_length=1, description="label stored as the player's name; default: the policy")
    type: Literal["policy"] | None = None

    @field_validator("policy")
    @classmethod
    def _known(cls, value: str) -> str:
        try:
            return get_strategy(value).name
        except ConfigError as exc:
            raise ValueError(str(exc)) from None

    @model_validator(mode="after")
    def _strategy(self) -> PolicyAgentConfig:
        _no_model_settings(self.policy, self.model_extra or {})
        try:
            spec = make_spec(self.policy, self.model_extra or {})
        except ConfigError as exc:  # becomes a pydantic error at this agent's key path
            raise ValueError(str(exc)) from None
        object.__setattr__(self, "_spec", spec)
        return self

    @property
    def spec(self) -> StrategySpec:
        return self._spec  # type: ignore[attr-defined,no-any-return]

    @property
    def label(self) -> str:
        return self.name or self.spec.name

    def resolved(self) -> dict[str, Any]:
        out: dict[str, Any] = {"policy": self.spec.name, **self.spec.params_dict()}
        if self.name:
            out["name"] = self.name
        return out

    @property
    def is_model(self) -> bool:
        return False


def _no_model_settings(policy: str, extra: dict[str, Any]) -> None:
    """Settings that only a model player has, given to a classic strategy: say so, rather than "TFT has no
    parameter 'comprehension'"."""
    if "comprehension" in extra:
        raise ValueError(
            f"a comprehension check asks a language model the rules of the game, and {policy} is a classic "
            "strategy that reads no prompt: remove comprehension from this agent, or make it a model player "
            "(model: provider/name)"
        )
    given = [key for key in extra if key in ModelAgentConfig.model_fields and key != "name"]
    if given:
        raise ValueError(
            f"{', '.join(given)} {'is a setting' if len(given) == 1 else 'are settings'} of model players, and "
            f"{policy} is a classic strategy: remove {'it' if len(given) == 1 else 'them'} from this agent, or make "
            "it a model player (model: provider/name)"
        )


class ModelAgentConfig(BaseModel):
    """A language model, named ``provider/model`` (``openai/gpt-4o-mini``, ``mock/tft``), and how
    to talk to it. Keys come from the environment (or .env), never from this file."""

    model_config = ConfigDict(extra="forbid", strict=True)

    model: str
    name: str | None = Field(None, min_length=1, description="label stored as the player's name; default: the model")
    base_url: str | None = Field(None, description="an OpenAI-compatible server (vLLM, llama.cpp, Ollama)")
    api_key_env: str | None = Field(None, description="environment variable holding the key")
    key_only_to_configured: bool | None = Field(
        None,
        description="true: the key goes to base_url only if it is the provider's own endpoint or the base URL set "
        "in the environment or .env; elsewhere requests go without a key (the dashboard sets it on a base URL typed "
        "into the page)",
    )
    temperature: float | None = Field(None, ge=0.0, le=2.0)
    top_p: float | None = Field(None, gt=0.0, le=1.0)
    max_tokens: int = Field(256, ge=1, le=100_000)
    persona: str | None = None
    prompts: PromptSettings = Field(default_factory=PromptSettings)
    parse: ParsePolicy = Field(default_factory=ParsePolicy)
    limits: LimitSettings = Field(default_factory=LimitSettings)
    comprehension: ComprehensionSettings | None = Field(
        None, description="questions about the rules, asked before the move in set rounds (off by default)"
    )

    @field_validator("base_url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError(f"base_url must be a URL starting with http:// or https:// (e.g. "
                             f"http://127.0.0.1:8000/v1), got {value!r}")  # fmt: skip
        return value

    @field_validator("model")
    @classmethod
    def _name(cls, value: str) -> str:
        from harness.providers.registry import parse_model_name

        try:
            provider, model = parse_model_name(value)
            if provider == "mock":
                from harness.providers.mock import MockOptions

                MockOptions.parse(model)
        except ConfigError as exc:
            raise ValueError(str(exc)) from None
        return value

    @model_validator(mode="after")
    def _persona(self) -> ModelAgentConfig:
        if self.base_url is not None and self.model.strip().startswith("mock/"):
            raise ValueError(
                f"base_url is given, but {self.model} is the offline mock model, which talks to no server and "
                "would ignore it: remove base_url (--base-url), or name a served model (openai/<model>)"
            )
        if self.persona is not None:
            if self.prompts.persona is not None and self.prompts.persona != self.persona:
                raise ValueError("give the persona once: either persona or prompts.persona")
            self.prompts = self.prompts.model_copy(update={"persona": self.persona})
        # Render every template now, against synthetic rounds: a typo fails here, not mid-run.
        from harness.prompts import PromptBuilder

        try:
            PromptBuilder(self.prompts).check(questions=self.comprehension is not None)
        except ConfigError as exc:
            raise ValueError(str(exc)) from None
        return self

    @property
    def label(self) -> str:
        return self.name or self.model

    @property
    def is_model(self) -> bool:
        return True

    def resolved(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)


def _agent_kind(value: Any) -> str:
    return "model" if isinstance(value, dict) and "model" in value else "policy"


AgentConfig = Annotated[
    Annotated[PolicyAgentConfig, Tag("policy")] | Annotated[ModelAgentConfig, Tag("model")],
    Discriminator(_agent_kind),
]


class ConditionConfig(_Section):
    name: str | None = Field(None, min_length=1)
    agent_a: AgentConfig
    agent_b: AgentConfig
    game: GameSection | None = Field(None, description="override the run's payoffs for this condition")
    horizon: HorizonSection | None = None
    noise: NoiseSection | None = None

    _noise = field_validator("noise", mode="before")(classmethod(lambda cls, v: _noise(v)))


class ExperimentSection(_Section):
    replicates: int = Field(1, ge=1, le=MAX_REPLICATES)
    conditions: list[ConditionConfig] = Field(min_length=1)

    @model_validator(mode="after")
    def _condition_names(self) -> ExperimentSection:
        """Names key the games' seeds and the reports, so they must be unique and must not depend on
        the other conditions: an unnamed condition is named from its own full spec (both agents with
        their parameters, and its own game, horizon or noise), so removing or reordering conditions
        never changes another condition's games. Two conditions that would share a name (the same
        spec twice, or a spec that spells another condition's name) are refused: name them."""
        used: dict[str, int] = {}
        for i, cond in enumerate(self.conditions):
            if cond.name is None:
                cond.name = condition_name(cond)
                derived = " (named from its spec)"
            else:
                derived = ""
            if cond.name in used:
                first = used[cond.name]
                raise ValueError(
                    f"conditions[{i}] and conditions[{first}] are both called {cond.name!r}{derived}; condition "
                    "names key the games' seeds and the reports, so each needs its own: give them distinct "
                    "names (name: ...), or, to play the same condition more often, raise experiment.replicates"
                )
            used[cond.name] = i
        return self


def condition_name(cond: ConditionConfig) -> str:
    """``A_vs_B`` from the two agents' full specs, e.g. ``GTFT(generous_prob=0.1)_vs_TFT`` or
    ``openai/gpt-4o-mini(temperature=0.7)_vs_ALLD``; a condition's own game, horizon or noise follow in
    brackets, e.g. ``TFT_vs_WSLS[noise=0.05]``. Only settings that differ from their defaults appear."""
    name = f"{_agent_spec(cond.agent_a)}_vs_{_agent_spec(cond.agent_b)}"
    overrides: dict[str, Any] = {}
    if cond.game is not None:
        overrides["payoffs"] = _payoffs_spec(cond.game.payoff_matrix)
    if cond.horizon is not None:
        overrides.update({f"horizon.{k}": v for k, v in cond.horizon.model_dump(exclude_none=True).items()})
    if cond.noise is not None:
        overrides["noise"] = cond.noise.prob
    return name + (f"[{_settings(overrides)}]" if overrides else "")


def _agent_spec(agent: PolicyAgentConfig | ModelAgentConfig) -> str:
    if isinstance(agent, PolicyAgentConfig):
        settings = agent.spec.params.model_dump(mode="json", by_alias=True, exclude_defaults=True)
        return agent.spec.name + (f"({_settings(settings)})" if settings else "")
    dumped = agent.model_dump(mode="json", exclude_defaults=True, exclude={"model", "name", "persona", "limits"})
    settings = _flatten(dumped)
    return agent.model + (f"({_settings(settings)})" if settings else "")


def _flatten(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict):
            out.update(_flatten(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def _settings(settings: dict[str, Any]) -> str:
    return ",".join(f"{k}={_value(v)}" for k, v in settings.items())


def _value(value: Any) -> str:
    """A setting as written in a name: exact (two different values never print alike), 3 rather than 3.0."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    return str(value)


def _payoffs_spec(matrix: PayoffMatrix) -> str:
    if matrix == PayoffMatrix.from_rstp(matrix.R, matrix.S, matrix.T, matrix.P):
        return "/".join(
            f"{k}{_value(v)}" for k, v in (("R", matrix.R), ("S", matrix.S), ("T", matrix.T), ("P", matrix.P))
        )
    cells = (("CC", matrix.cc), ("CD", matrix.cd), ("DC", matrix.dc), ("DD", matrix.dd))
    return "/".join(f"{k}{_value(a)},{_value(b)}" for k, (a, b) in cells)


class CollapseSection(_Section):
    k: int = Field(10, ge=1, le=MAX_ROUNDS, description="window length in rounds (at most a game's longest)")
    cooperation_threshold: float = Field(0.2, ge=0.0, le=1.0)


class MetricsSection(_Section):
    collapse: CollapseSection = Field(default_factory=CollapseSection)


class ExperimentConfig(_Section):
    """A whole experiment. Build with :func:`load_experiment` or :func:`parse_experiment`."""

    kind: Literal["experiment", "tournament", "eval"] = "experiment"
    suite: str | None = Field(
        None, description="the published protocol this experiment follows (pdbench eval --suite); checked"
    )
    run: RunSection = Field(default_factory=RunSection)
    game: GameSection = Field(default_factory=GameSection)
    horizon: HorizonSection = Field(default_factory=HorizonSection)
    noise: NoiseSection = Field(default_factory=NoiseSection)
    experiment: ExperimentSection
    metrics: MetricsSection = Field(default_factory=MetricsSection)

    _noise = field_validator("noise", mode="before")(classmethod(lambda cls, v: _noise(v)))

    @field_validator("suite")
    @classmethod
    def _suite(cls, value: str | None) -> str | None:
        from harness.suites import SUITES

        if value is not None and value not in SUITES:
            raise ValueError(f"unknown suite {value!r}; suites: {', '.join(SUITES)}")
        return value

    def problems(self) -> list[str]:
        """What a valid config still gets wrong across its sections, with key paths: a comprehension round
        the game never reaches, a config that names a suite but does not follow its protocol."""
        out: list[str] = []
        for i, cond in enumerate(self.experiment.conditions):
            horizon = cond.horizon or self.horizon
            last = horizon.n_rounds if horizon.type == "fixed" else horizon.max_rounds
            for seat in ("agent_a", "agent_b"):
                agent = getattr(cond, seat)
                if not isinstance(agent, ModelAgentConfig) or agent.comprehension is None or last is None:
                    continue
                beyond = [r for r in agent.comprehension.rounds if r > last]
                if beyond:
                    length = f"{last} rounds" if horizon.type == "fixed" else f"at most {last} rounds (max_rounds)"
                    out.append(
                        f"experiment.conditions[{i}].{seat}.comprehension.rounds: round {beyond[0]} is never "
                        f"reached, the game has {length}; ask in rounds 1 to {last}"
                    )
        if self.suite is not None:
            from harness.suites import SUITES

            out += SUITES[self.suite].deviations(self)
        problem = plan_size_problem(self)
        if problem:
            out.append(f"experiment.replicates: {problem}")
        return out

    def warnings(self) -> list[str]:
        """Things that are allowed but probably unintended (a game that is not a PD)."""
        out = [f"game.payoff_matrix: {w}" for w in self.game.payoff_matrix.warnings()]
        for i, cond in enumerate(self.experiment.conditions):
            if cond.game is not None:
                out += [
                    f"experiment.conditions[{i}].game.payoff_matrix: {w}" for w in cond.game.payoff_matrix.warnings()
                ]
        return out

    def resolved_dict(self) -> dict[str, Any]:
        """The config with refs expanded and defaults filled: what a run stores and replays."""
        data = self.model_dump(mode="json", exclude={"experiment"})
        if self.suite is None:
            del data["suite"]  # configs that follow no suite are stored as before
        data["game"]["payoff_matrix"] = self.game.payoff_matrix.to_mapping()
        conds = []
        for cond in self.experiment.conditions:
            c: dict[str, Any] = {
                "name": cond.name,
                "agent_a": cond.agent_a.resolved(),
                "agent_b": cond.agent_b.resolved(),
            }
            if cond.game is not None:
                c["game"] = {"payoff_matrix": cond.game.payoff_matrix.to_mapping()}
            if cond.horizon is not None:
                c["horizon"] = cond.horizon.model_dump(mode="json")
            if cond.noise is not None:
                c["noise"] = cond.noise.model_dump(mode="json")
            conds.append(c)
        data["experiment"] = {"replicates": self.experiment.replicates, "conditions": conds}
        return data


def plan_size(config: ExperimentConfig, replicates: int | None = None) -> tuple[int, float]:
    """Games and expected rounds of the plan (with ``replicates`` in place of the config's, if given)."""
    reps = replicates or config.experiment.replicates
    conditions = config.experiment.conditions
    per_replicate = sum((c.horizon or config.horizon).to_horizon().expected_length() for c in conditions)
    return len(conditions) * reps, per_replicate * reps


def plan_size_problem(config: ExperimentConfig, replicates: int | None = None) -> str | None:
    """Why the plan is too large to play (more than MAX_GAMES games or MAX_PLAN_ROUNDS rounds), or None."""
    games, rounds = plan_size(config, replicates)
    if games <= MAX_GAMES and rounds <= MAX_PLAN_ROUNDS:
        return None
    n = len(config.experiment.conditions)
    reps = replicates or config.experiment.replicates
    return (
        f"the plan is {n:,} condition{'s' if n != 1 else ''} x {reps:,} replicates = {games:,} games of about "
        f"{rounds:,.0f} rounds in all, more than PDBench plays in one run (at most {MAX_GAMES:,} games and "
        f"{MAX_PLAN_ROUNDS:,} rounds): use fewer replicates, conditions or rounds, or split it into several runs"
    )


def horizon_options(
    rounds: int | None, stop_prob: float | None, max_rounds: int | None, default_rounds: int
) -> dict[str, Any]:
    """The ``horizon`` section from the command-line options ``--rounds``, ``--stop-prob``, ``--max-rounds``."""
    if rounds is not None and stop_prob is not None:
        raise ConfigError("give either --rounds (a fixed horizon) or --stop-prob (a geometric one), not both")
    if max_rounds is not None and stop_prob is None:
        raise ConfigError("--max-rounds caps a geometric game; give it with --stop-prob, or use --rounds N")
    if stop_prob is not None:
        return {"type": "geometric", "stop_prob": stop_prob, "max_rounds": max_rounds}
    return {"type": "fixed", "n_rounds": rounds or default_rounds}


@dataclass(frozen=True, slots=True)
class GameOptions:
    """The options every built-in experiment shares (eval, tournament, a dashboard duel)."""

    rounds: int | None = None
    stop_prob: float | None = None
    max_rounds: int | None = None
    replicates: int = 1
    noise: float = 0.0
    seed: int = 0
    payoff_matrix: dict[str, Any] | None = None


def options_config(
    kind: str, conditions: list[dict[str, Any]], options: GameOptions, *, default_rounds: int, source: str,
    fix_hint: str, suite: str | None = None,
) -> ExperimentConfig:  # fmt: skip
    """An experiment config from command-line-style options, validated exactly like a YAML file."""
    data: dict[str, Any] = {
        "kind": kind,
        **({"suite": suite} if suite is not None else {}),
        "run": {"seed": options.seed},
        "horizon": horizon_options(options.rounds, options.stop_prob, options.max_rounds, default_rounds),
        "noise": {"prob": options.noise},
        "experiment": {"replicates": options.replicates, "conditions": conditions},
    }
    if options.payoff_matrix is not None:
        data["game"] = {"payoff_matrix": options.payoff_matrix}
    return parse_experiment(data, source=source, fix_hint=fix_hint)


def check_run_id(run_id: str) -> str:
    """A run id names a file: letters, digits, ``_ . -``; refuse anything else clearly."""
    if not re.match(RUN_ID_PATTERN, run_id):
        raise ConfigError(
            f"run id {run_id!r} is not usable as a file name: use letters, digits, "
            f"'_', '.' and '-' (starting with a letter or digit), at most 128 characters."
        )
    return run_id


def _loc(parts: tuple[Any, ...]) -> str:
    out = ""
    for p in parts:
        if isinstance(p, int):
            out += f"[{p}]"
        else:
            out += ("." if out else "") + str(p)
    return out or "(top level)"


def _merge_repeats(problems: list[str]) -> list[str]:
    """One line for a problem that recurs in many conditions (an eval's shared model settings)."""
    by_message: dict[str, list[str]] = {}
    order: list[str] = []
    for p in problems:
        where, sep, message = p.partition(": ")
        key = re.sub(r"conditions\[\d+\]", "conditions[*]", where) + sep + message if sep else p
        if key not in by_message:
            by_message[key] = []
            order.append(key)
        by_message[key].append(p)
    out = []
    for key in order:
        first = by_message[key][0]
        more = len(by_message[key]) - 1
        if more:
            where, _, message = first.partition(": ")
            first = f"{where} (and the same in {more} more condition{'s' if more > 1 else ''}): {message}"
        out.append(first)
    return out


def _without_union_tags(loc: tuple[Any, ...]) -> tuple[Any, ...]:
    """Drop the ``policy``/``model`` tag pydantic inserts after ``agent_a``/``agent_b``."""
    out: list[Any] = []
    for i, part in enumerate(loc):
        if part in ("policy", "model") and i > 0 and loc[i - 1] in ("agent_a", "agent_b"):
            continue
        out.append(part)
    return tuple(out)


def _clean(msg: str) -> str:
    return re.sub(r"^(Value|Assertion) error, ", "", msg)


def _resolve_refs(data: dict[str, Any], base_dir: Path, problems: list[str]) -> set[tuple[Any, ...]]:
    """Replace each ``{ref: FILE, overrides: {...}}`` agent by the file's mapping merged with overrides.

    Returns the key paths of agents whose ref could not be read, so that the follow-on
    "field required" errors for them are not reported on top of the real problem.
    """
    broken: set[tuple[Any, ...]] = set()
    experiment = data.get("experiment")
    conditions = experiment.get("conditions") if isinstance(experiment, dict) else None
    if not isinstance(conditions, list):
        return broken
    for i, cond in enumerate(conditions):
        if not isinstance(cond, dict):
            continue
        for seat in ("agent_a", "agent_b"):
            agent = cond.get(seat)
            if not isinstance(agent, dict) or "ref" not in agent:
                continue
            where = f"experiment.conditions[{i}].{seat}"
            unknown = set(agent) - {"ref", "overrides"}
            if unknown:
                problems.append(f"{where}: with ref, only 'overrides' may be given, not {', '.join(sorted(unknown))}")
            if not isinstance(agent["ref"], str) or not agent["ref"]:
                problems.append(f"{where}.ref: must be the path of a YAML file, got {agent['ref']!r}")
                broken.add(("experiment", "conditions", i, seat))
                continue
            ref_path = base_dir / agent["ref"]
            try:
                base = load_yaml(read_user_file(ref_path, "agent file"))
            except FileNotFoundError:
                problems.append(f"{where}.ref: file not found: {ref_path.resolve()}")
                broken.add(("experiment", "conditions", i, seat))
                continue
            except ConfigError as exc:
                problems.append(f"{where}.ref: {exc}")
                broken.add(("experiment", "conditions", i, seat))
                continue
            except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
                problems.append(f"{where}.ref: cannot read {ref_path}: {_yaml_msg(exc)}")
                broken.add(("experiment", "conditions", i, seat))
                continue
            if not isinstance(base, dict):
                problems.append(f"{where}.ref: {ref_path} must hold a mapping of agent settings")
                broken.add(("experiment", "conditions", i, seat))
                continue
            overrides = agent.get("overrides") or {}
            if not isinstance(overrides, dict):
                problems.append(f"{where}.overrides: must be a mapping, got {overrides!r}")
                overrides = {}
            cond[seat] = {**base, **overrides}
    return broken


def _yaml_msg(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return yaml_message(exc)


def parse_experiment(
    data: Any, source: str = "the config", base_dir: Path | None = None, fix_hint: str = "fix and try again"
) -> ExperimentConfig:
    """Validate an already-loaded config mapping. Raises ConfigError listing every problem."""
    if not isinstance(data, dict):
        raise ConfigError(
            f"{source} must be a YAML mapping with the sections run, game, horizon, "
            f"noise, experiment and metrics; got {type(data).__name__}"
        )
    problems: list[str] = []
    broken = _resolve_refs(data, base_dir or Path.cwd(), problems)
    config: ExperimentConfig | None = None
    try:
        config = ExperimentConfig.model_validate(data)
    except ValidationError as exc:
        for err in exc.errors():
            loc = _without_union_tags(tuple(err["loc"]))
            if any(loc[: len(b)] == b for b in broken):
                continue
            msg = _clean(err["msg"])
            if err["type"] == "extra_forbidden":
                msg = "unknown key; check its spelling and section (see configs/experiment.yaml)"
            problems.append(f"{_loc(loc)}: {msg}")
    if config is not None:
        problems += config.problems()
    problems = _merge_repeats(problems)
    if problems or config is None:
        n = len(problems)
        raise ConfigError(f"{source} has {n} problem{'s' if n != 1 else ''} ({fix_hint}):", problems)
    return config


def load_experiment(path: str | Path) -> ExperimentConfig:
    """Read and validate an experiment YAML file."""
    path = Path(path)
    try:
        text = read_user_file(path, "config file")
    except FileNotFoundError:
        raise ConfigError(
            f"config file not found: {path.resolve()}. Check the path, or start from configs/experiment.yaml."
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read config file {path}: {_yaml_msg(exc)}") from None
    try:
        data = load_yaml(text)
    except (yaml.composer.ComposerError, yaml.constructor.ConstructorError) as exc:  # well-formed, but refused
        raise ConfigError(f"{path} cannot be read: {_yaml_msg(exc)}.") from None
    except yaml.YAMLError as exc:
        raise ConfigError(
            f"{path} is not valid YAML: {_yaml_msg(exc)}. Fix the syntax (indentation, colons, quotes) and try again."
        ) from None
    return parse_experiment(
        data, source=str(path), base_dir=path.parent, fix_hint=f"fix them and check with `pdbench validate {path}`"
    )

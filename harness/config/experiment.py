"""A whole experiment: its conditions, the checks that span sections, and the size of its plan."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from harness.config.agents import ModelAgentConfig, PolicyAgentConfig
from harness.config.condition import ConditionConfig, condition_name
from harness.config.cross_checks import (
    comprehension_problems,
    duplicate_name_problem,
    plan_problem,
    plan_rounds,
    questions_asked,
)
from harness.config.sections import (
    MAX_REPLICATES,
    RUN_ID_PATTERN,
    GameSection,
    HorizonSection,
    MetricsSection,
    NoiseSection,
    RunSection,
    Section,
    noise_shorthand,
)
from harness.errors import ConfigError
from harness.players.model.prompts.context import PromptSettings
from harness.players.strategies.registry import renamed_parameters
from harness.providers.registry import is_offline


class ExperimentSection(Section):
    replicates: int = Field(1, ge=1, le=MAX_REPLICATES)
    conditions: list[ConditionConfig] = Field(min_length=1)

    @model_validator(mode="after")
    def _condition_names(self) -> ExperimentSection:
        """Names key the games' seeds and the reports, so they must be unique and must not depend on
        the other conditions: an unnamed condition is named from its own full spec (both agents with
        their parameters, and its own game, horizon or noise), so removing or reordering conditions
        never changes another condition's games. Two conditions that would share a name (the same
        spec twice, or a spec that spells another condition's name) are refused: name them."""
        names = []
        for i, cond in enumerate(self.conditions):
            derived = cond.name is None
            if cond.name is None:
                cond.name = condition_name(cond)
            names.append((i, cond.name, derived))
        if (problem := duplicate_name_problem(names)) is not None:
            raise ValueError(problem)
        return self


class ExperimentConfig(Section):
    """A whole experiment. Build with :func:`load_experiment` or :func:`parse_experiment`."""

    kind: Literal["experiment", "tournament", "eval", "fingerprint"] = "experiment"
    suite: str | None = Field(
        None, description="the published protocol this experiment follows (pdbench eval --suite); checked"
    )
    run: RunSection = Field(default_factory=RunSection)
    game: GameSection = Field(default_factory=GameSection)
    horizon: HorizonSection = Field(default_factory=HorizonSection)
    noise: NoiseSection = Field(default_factory=NoiseSection)
    experiment: ExperimentSection
    metrics: MetricsSection = Field(default_factory=MetricsSection)

    @field_validator("noise", mode="before")
    @classmethod
    def _noise_shorthand(cls, value: Any) -> Any:
        return noise_shorthand(value)

    @field_validator("suite")
    @classmethod
    def _suite(cls, value: str | None) -> str | None:
        from harness.config.presets.suites import SUITES

        if value is not None and value not in SUITES:
            raise ValueError(f"unknown suite {value!r}; suites: {', '.join(SUITES)}")
        return value

    def problems(self) -> list[str]:
        """What a valid config still gets wrong across its sections, with key paths: a comprehension round
        the game never reaches, a config that names a suite but does not follow its protocol."""
        out = comprehension_problems(questions_asked(self.experiment.conditions, self.horizon))
        if self.suite is not None:
            from harness.config.presets.suites import SUITES

            out += SUITES[self.suite].deviations(self)
        problem = plan_size_problem(self)
        if problem:
            out.append(f"experiment.replicates: {problem}")
        return out + self._strategy_payoff_problems()

    def _strategy_payoff_problems(self) -> list[str]:
        """Strategies whose settings cannot be played at their condition's payoffs (a ZD strategy's scale that takes
        a probability out of [0, 1]): each is built once here, so the error comes before the run starts."""
        import random

        out = []
        for i, cond in enumerate(self.experiment.conditions):
            game = (cond.game or self.game).payoff_matrix
            for seat in ("agent_a", "agent_b"):
                agent = getattr(cond, seat)
                if isinstance(agent, PolicyAgentConfig):
                    try:
                        agent.spec.build(game, random.Random(0))
                    except ConfigError as exc:
                        out.append(f"experiment.conditions[{i}].{seat}: {exc}")
        return out

    def warnings(self) -> list[str]:
        """Things that are allowed but probably unintended (a game that is not a PD; agents on one endpoint
        with different limits, of which the run applies the strictest)."""
        from harness.calls.limits.registry import limit_disagreements

        prefixes: dict[str, str | None] = {}
        flex_priced: dict[str, bool] = {}

        out = [f"game.payoff_matrix: {w}" for w in self.game.payoff_matrix.warnings()]
        models = []
        for i, cond in enumerate(self.experiment.conditions):
            if cond.game is not None:
                out += [
                    f"experiment.conditions[{i}].game.payoff_matrix: {w}" for w in cond.game.payoff_matrix.warnings()
                ]
            for seat in ("agent_a", "agent_b"):
                agent = getattr(cond, seat)
                if isinstance(agent, PolicyAgentConfig):
                    where = f"experiment.conditions[{i}].{seat}"
                    out += [f"{where}: {w}" for w in renamed_parameters(agent.policy, agent.model_extra or {})]
                if isinstance(agent, ModelAgentConfig) and not is_offline(agent.model):
                    provider = agent.model.split("/", 1)[0]
                    where = f"experiment.conditions[{i}].{seat}"
                    if (unpriced := _flex_unpriced(agent, flex_priced)) is not None:
                        out.append(f"{where}.service_tier: {unpriced}")
                    models.append((where, provider, agent.base_url, agent.api_key_env, agent.limits))
                    if self.suite is None and (problem := _prefix_problem(agent.prompts, prefixes)) is not None:
                        out.append(f"{where}: {problem}")
        return out + limit_disagreements(models)

    def resolved_dict(self) -> dict[str, Any]:
        """The config with refs expanded and defaults filled: what a run stores and replays."""
        data = self.model_dump(mode="json", exclude={"experiment"})
        if self.suite is None:
            del data["suite"]  # only a config that follows a suite stores the key
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


def _flex_unpriced(agent: ModelAgentConfig, known: dict[str, bool]) -> str | None:
    """A warning for a flex or batch player whose model the shipped price table prices at no price for its tier
    (once per model and tier): allowed, for it may be a compatible server or a model the table lacks, but its
    cost is unknown. And for an Anthropic batch player that keeps the 5-minute prompt cache: a batch's rounds
    come minutes to hours apart, so only an hour's cache (``cache_ttl: 1h``) can be read again."""
    from harness.calls.pricing import DEFAULT_PRICES, PriceTable
    from harness.providers.tiers import CacheTtl, ServiceTier

    tier = agent.service_tier
    if tier is ServiceTier.STANDARD or f"{agent.model}|{tier}" in known:
        return None
    price = PriceTable.load(DEFAULT_PRICES).price(agent.model.strip())
    priced = price is not None and price.at(tier) is not None
    known[f"{agent.model}|{tier}"] = priced
    short_cache = (
        tier is ServiceTier.BATCH
        and agent.model.strip().startswith("anthropic/")
        and agent.cache_ttl is CacheTtl.FIVE_MINUTES
    )
    problems = []
    if not priced:
        problems.append(
            f"{tier.value} for {agent.model}, but {DEFAULT_PRICES.name} has no {tier.value} price for it: its calls "
            f"will be recorded with an unknown cost (NULL), and --max-cost cannot count them; add a {tier.value}: "
            "price to a --prices file if you know it"
        )
    if short_cache:
        problems.append(
            f"batch for {agent.model} with the 5-minute prompt cache: a batch's rounds come minutes to hours apart, "
            "so its cached prefixes would be written and rarely read; set cache_ttl: 1h on the model"
        )
    return "; ".join(problems) or None


def _prefix_problem(prompts: PromptSettings, known: dict[str, str | None]) -> str | None:
    """Why a model player's prompts defeat provider prompt caching (see PromptBuilder.prefix_problem), once
    per distinct prompt settings (a panel's conditions share them)."""
    from harness.players.model.prompts.builder import PromptBuilder

    key = prompts.model_dump_json()
    if key not in known:
        try:
            known[key] = PromptBuilder(prompts).prefix_problem()
        except ConfigError:  # a template that fails on a longer game than check() plays: the run will say so
            known[key] = None
    return known[key]


def plan_size(config: ExperimentConfig, replicates: int | None = None) -> tuple[int, float]:
    """Games and expected rounds of the plan (with ``replicates`` in place of the config's, if given)."""
    return plan_rounds(config.experiment.conditions, config.horizon, replicates or config.experiment.replicates)


def plan_size_problem(config: ExperimentConfig, replicates: int | None = None) -> str | None:
    """Why the plan is too large to play (more than MAX_GAMES games or MAX_PLAN_ROUNDS rounds), or None."""
    return plan_problem(config.experiment.conditions, config.horizon, replicates or config.experiment.replicates)


def check_run_id(run_id: str) -> str:
    """A run id names a file: letters, digits, ``_ . -``; refuse anything else clearly."""
    if not re.match(RUN_ID_PATTERN, run_id):
        raise ConfigError(
            f"run id {run_id!r} is not usable as a file name: use letters, digits, "
            f"'_', '.' and '-' (starting with a letter or digit), at most 128 characters."
        )
    return run_id

"""The two kinds of player a config names: a classic strategy (``{policy: TFT}``) or a language model
(``{model: provider/name, ...}``), told apart by the ``model`` key."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    PrivateAttr,
    Tag,
    ValidationError,
    field_validator,
    model_validator,
)

from harness.calls.limits import LimitSettings
from harness.config.sections import Label
from harness.errors import ConfigError
from harness.players.model.prompts.context import PromptSettings
from harness.players.model.settings import ComprehensionSettings, ParsePolicy, ReplyReader
from harness.players.strategies import StrategySpec, get_strategy, make_spec
from harness.providers.registry import PROVIDERS, is_offline, parse_model_name, tier_problem
from harness.providers.structured import ReplySchema
from harness.providers.tiers import CacheTtl, ServiceTier

STRUCTURED = "structured"
"""``prompts.answer_format`` of a move asked for through the provider's constrained output."""
_MOVED = {"structured": "prompts.answer_format: structured", "reasoning": "prompts.reasoning", "judge": "parse.judge"}
"""Settings written inside ``prompts`` and ``parse`` that this class keeps as fields of its own (see
:meth:`ModelAgentConfig._lift`), with where they are written."""


class PolicyAgentConfig(BaseModel):
    """A classic strategy. ``policy`` names it; every other key is one of its parameters."""

    model_config = ConfigDict(extra="allow", strict=True)

    policy: str
    name: Label | None = Field(None, min_length=1, description="label stored as the player's name; default: the policy")
    type: Literal["policy"] | None = None
    _spec: StrategySpec = PrivateAttr()  # the strategy with its parameters, built once by validation

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
        self._spec = spec
        return self

    @property
    def spec(self) -> StrategySpec:
        return self._spec

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

    model: Label
    name: Label | None = Field(None, min_length=1, description="label stored as the player's name; default: the model")
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
    service_tier: ServiceTier = Field(
        ServiceTier.STANDARD,
        strict=False,
        exclude_if=lambda tier: tier is ServiceTier.STANDARD,  # configs without it keep their stored form
        description="standard; flex (OpenAI's half-price, slower tier: service_tier=flex); or batch (OpenAI's Batch "
        "API or Anthropic's Message Batches: half price, the games in lock step, answers within 24 h)",
    )
    cache_ttl: CacheTtl = Field(
        CacheTtl.FIVE_MINUTES,
        strict=False,
        exclude_if=lambda ttl: ttl is CacheTtl.FIVE_MINUTES,  # configs without it keep their stored form
        description="how long Anthropic keeps the prompt cache's prefixes: 5m (the default) or 1h, for games "
        "whose rounds come more than five minutes apart (writes cost 2x the input price instead of 1.25x)",
    )
    # Written as prompts.answer_format: structured, prompts.reasoning and parse.judge (see _lift); kept here.
    structured: bool = Field(False, exclude=True)
    reasoning: bool = Field(False, exclude=True)
    judge: str | None = Field(None, exclude=True)

    @model_validator(mode="before")
    @classmethod
    def _lift(cls, data: Any) -> Any:
        """Take ``answer_format: structured`` and ``reasoning`` out of ``prompts``, and ``judge`` out of ``parse``.

        The templates word a structured request as a JSON one (``{"action": label}``, which is also the
        reply's schema), so the prompt settings see ``json``; the structured reply itself is the provider's
        (a schema in the request), and the judge a second model: settings of the player, not of its prompt
        or parser. :meth:`resolved` writes them back where they were written."""
        if not isinstance(data, dict):
            return data
        given = [key for key in _MOVED if key in data]
        if given:
            raise ValueError(", ".join(f"write {key} as {_MOVED[key]}" for key in given))
        data = dict(data)
        prompts, parse = data.get("prompts"), data.get("parse")
        if isinstance(prompts, dict) and (prompts.get("answer_format") == STRUCTURED or "reasoning" in prompts):
            prompts = dict(prompts)
            reasoning = prompts.pop("reasoning", False)
            if prompts.get("answer_format") != STRUCTURED:
                raise ValueError(
                    "prompts.reasoning asks for a reasoning field before the structured reply's action: it applies "
                    "only with answer_format: structured"
                )
            prompts["answer_format"] = "json"
            data.update(prompts=prompts, structured=True, reasoning=reasoning)
        if isinstance(parse, dict) and "judge" in parse:
            parse = dict(parse)
            data.update(parse=parse, judge=parse.pop("judge"))
        return data

    @field_validator("judge")
    @classmethod
    def _judge(cls, value: str | None) -> str | None:
        if value is None:
            return value
        try:
            provider, model = parse_model_name(value)
            PROVIDERS[provider].check_model(model)
        except ConfigError as exc:
            raise ValueError(f"parse.judge: {exc}") from None
        return value.strip()

    def reply_schema(self) -> ReplySchema | None:
        """The structured reply asked of the provider (``answer_format: structured``), or None for free text."""
        if not self.structured:
            return None
        labels = self.prompts.labels
        return ReplySchema(labels=(labels.cooperate, labels.defect), reasoning=self.reasoning)

    @field_validator("base_url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        from harness.providers.base import URL_EXAMPLE, url_problem

        if value is not None and (problem := url_problem(value)) is not None:
            raise ValueError(f"base_url {value!r} is not a server's URL: {problem} (e.g. {URL_EXAMPLE})")
        return value

    @field_validator("model")
    @classmethod
    def _name(cls, value: str) -> str:
        try:
            provider, model = parse_model_name(value)
            PROVIDERS[provider].check_model(model)
        except ConfigError as exc:
            raise ValueError(str(exc)) from None
        return value

    @model_validator(mode="after")
    def _reader(self) -> ModelAgentConfig:
        if self.structured and self.parse.reader is not ReplyReader.FREE_TEXT:
            raise ValueError(
                f"parse.reader: {self.parse.reader.value} reads a reply in free text, and answer_format: structured "
                "asks for a JSON reply read from its action field: drop one of the two"
            )
        if self.parse.reader is ReplyReader.LAST_LINE and self.prompts.answer_format != "free":
            raise ValueError(
                f"parse.reader: last_line needs reasoning, then the label alone on the last line, and answer_format: "
                f"{self.prompts.answer_format} asks for "
                + ("the label alone" if self.prompts.answer_format == "label" else "a JSON object")
                + ", which it would always refuse: use answer_format: free (the default) with it"
            )
        return self

    @model_validator(mode="after")
    def _tier(self) -> ModelAgentConfig:
        """Flex or batch on a provider without it: refused before anything runs."""
        problem = tier_problem(self.model.partition("/")[0], self.service_tier)
        if problem is not None:
            raise ValueError(f"{self.model}: {problem}")
        if self.cache_ttl is not CacheTtl.FIVE_MINUTES and self.model.partition("/")[0] != "anthropic":
            raise ValueError(
                f"{self.model}: cache_ttl is Anthropic's (how long its prompt cache keeps a prefix); other providers "
                "keep their cache as they see fit: leave cache_ttl out"
            )
        return self

    @model_validator(mode="after")
    def _persona(self) -> ModelAgentConfig:
        self.prompts = _checked_prompts(
            self.model, self.base_url, self.persona, self.prompts, questions=self.comprehension is not None
        )
        return self

    @property
    def label(self) -> str:
        return self.name or self.model

    @property
    def is_model(self) -> bool:
        return True

    def resolved(self) -> dict[str, Any]:
        out = self.model_dump(mode="json", exclude_none=True)
        if self.structured:
            out["prompts"]["answer_format"] = STRUCTURED
            if self.reasoning:
                out["prompts"]["reasoning"] = True
        if self.judge is not None:
            out["parse"]["judge"] = self.judge
        return out


def _checked_prompts(
    model: str, base_url: str | None, persona: str | None, prompts: PromptSettings, *, questions: bool
) -> PromptSettings:
    """The checks of a model player that span its settings: a base URL is not given to the mock model, the
    persona is given once, and every template renders (against synthetic rounds: a typo fails here, not
    mid-run). Returns the prompt settings with the persona in them; raises ValueError (a pydantic error at
    the agent's key path) that names every problem found."""
    problems = []
    if base_url is not None and is_offline(model):
        problems.append(
            f"base_url is given, but {model} is the offline mock model, which talks to no server and "
            "would ignore it: remove base_url (--base-url), or name a served model (openai/<model>)"
        )
    if persona is not None and prompts.persona is not None and prompts.persona != persona:
        problems.append("give the persona once: either persona or prompts.persona")
    else:
        if persona is not None:
            prompts = prompts.model_copy(update={"persona": persona})
        from harness.players.model.prompts.builder import PromptBuilder

        try:
            PromptBuilder(prompts).check(questions=questions)
        except ConfigError as exc:
            problems.append(str(exc))
    if problems:
        raise ValueError(
            " Also: ".join(p if p.endswith(".") else p + "." for p in problems) if len(problems) > 1 else problems[0]
        )
    return prompts


def unchecked_model_problem(agent: dict[str, Any]) -> str | None:
    """What :func:`_checked_prompts` finds in a model player (a mapping as written) whose validation stopped at
    another of its settings, or None.

    Pydantic runs a model's own checks only once each of its fields is valid, so an unknown persona beside a
    temperature of 5 would be reported only after the temperature is fixed; ``pdbench validate`` reports both
    at once by running these checks here on the settings that are valid. Settings that are themselves wrong
    are left out (their own errors are reported): a prompts section that does not validate is replaced by its
    template folder alone (where personas are also looked for), or by the defaults.
    """
    model, base_url, persona = agent.get("model"), agent.get("base_url"), agent.get("persona")
    raw = agent.get("prompts")
    prompts = PromptSettings()
    for candidate in (raw, {"template_dir": raw.get("template_dir")} if isinstance(raw, dict) else None):
        if isinstance(candidate, dict):
            try:
                prompts = PromptSettings.model_validate(candidate, strict=True)
                break
            except ValidationError:
                continue
    try:
        _checked_prompts(
            model if isinstance(model, str) else "",
            base_url if isinstance(base_url, str) else None,
            persona if isinstance(persona, str) else None,
            prompts,
            questions=agent.get("comprehension") is not None,
        )
    except ValueError as exc:
        return str(exc)
    return None


def _agent_kind(value: Any) -> str:
    return "model" if isinstance(value, dict) and "model" in value else "policy"


AgentConfig = Annotated[
    Annotated[PolicyAgentConfig, Tag("policy")] | Annotated[ModelAgentConfig, Tag("model")],
    Discriminator(_agent_kind),
]

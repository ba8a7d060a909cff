"""Who a person plays in the 🎮 Play view: a classic strategy of the registry, or a mock model (offline).

Both are the library's own players, asked for a move the way the match loop asks them
(:mod:`harness.game.match`): a strategy's ``move`` from the two histories as played, a model through
:class:`~harness.players.model.player.LLMAgent` (its prompt, the call path, the provider, the parser) with the
:class:`~harness.game.view.RoundView` of seat B. Only the ``mock`` provider is offered: the view must not spend
money or reach the network on a click, and a person waiting on a remote model each round is no lesson.

Pure code, no Streamlit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import anyio

from harness.calls.limits import EndpointLimiter, LimitSettings
from harness.calls.path import CallPath
from harness.calls.pricing import DEFAULT_PRICES, PriceTable
from harness.errors import ConfigError
from harness.game.horizon import HorizonInfo
from harness.game.match import Match
from harness.game.rules import PayoffMatrix
from harness.game.seeds import stream
from harness.game.view import Decision
from harness.players.model.player import LLMAgent, ModelPlayer
from harness.players.model.prompts.builder import PromptBuilder, PromptSettings
from harness.players.model.settings import ParsePolicy
from harness.players.strategies.base import Strategy
from harness.players.strategies.play import NO_DRAWS
from harness.players.strategies.registry import StrategySpec, parse_spec, spec_label
from harness.providers.base import Sample, SamplingParams
from harness.providers.mock import BEHAVIOURS, MockProvider
from harness.providers.registry import parse_model_name
from harness.ui.data import MODEL_EMOJI

MOCK = "mock"
MOCK_MODELS = tuple(f"{MOCK}/{b}" for b in BEHAVIOURS)  # the ones the view lists; options (?p=0.3) may be typed


class Opponent(Protocol):
    """A player in seat B, asked for one move a round."""

    @property
    def label(self) -> str:
        """As one writes it: ``TFT``, ``GTFT(generous_prob=0.3)``, ``mock/tft``."""
        ...

    @property
    def short(self) -> str:
        """Its name without settings or options, where space is short: ``GTFT``, ``mock/tft``."""
        ...

    @property
    def emoji(self) -> str: ...

    @property
    def title(self) -> str:
        """``Tit for Tat``, ``mock model, offline``."""
        ...

    @property
    def rule(self) -> str:
        """How it decides, in one sentence, for the summary."""
        ...

    def decide(self, match: Match, horizon: HorizonInfo) -> Decision:
        """Its move in the next round of ``match``, from the rounds before it only."""
        ...


@dataclass(slots=True)
class StrategyOpponent:
    spec: StrategySpec
    strategy: Strategy

    @property
    def label(self) -> str:
        return spec_label(self.spec)

    @property
    def short(self) -> str:
        return self.spec.name

    @property
    def emoji(self) -> str:
        return self.spec.cls.emoji

    @property
    def title(self) -> str:
        return self.spec.cls.display_name

    @property
    def rule(self) -> str:
        return f"Its rule ({self.spec.cls.display_name}): {self.spec.cls.description}"

    def decide(self, match: Match, horizon: HorizonInfo) -> Decision:
        return Decision(self.strategy.move(match.moves_b, match.moves_a))


@dataclass(slots=True)
class ModelOpponent:
    name: str
    agent: LLMAgent

    @property
    def label(self) -> str:
        return self.name

    @property
    def short(self) -> str:
        return self.name.partition("?")[0]

    @property
    def emoji(self) -> str:
        return MODEL_EMOJI

    @property
    def title(self) -> str:
        return "mock model, offline"

    @property
    def rule(self) -> str:
        return (
            f"{self.label} is a mock language model: each round it was sent the game as a prompt, "
            "and its answer was read for its move."
        )

    def decide(self, match: Match, horizon: HorizonInfo) -> Decision:
        decision = anyio.run(self.agent.act, match.view("b", horizon))
        self.agent.take_records()  # nothing keeps them: a played match is not stored
        self.agent.take_answers()
        return decision


def make_opponent(text: str, game: PayoffMatrix, seed: int) -> Opponent:
    """The opponent ``text`` names, drawing from stream ``b`` of ``seed`` (as a game's seat B does); a
    :class:`ConfigError` in one paragraph if it names none, or names a model not of the ``mock`` provider."""
    if "/" not in text:
        spec = parse_spec(text)
        return StrategyOpponent(spec, spec.build(game, stream(seed, "b") if spec.cls.stochastic else NO_DRAWS))
    provider, model = parse_model_name(text)
    if provider != MOCK:
        raise ConfigError(
            f"{text!r}: only mock models can be played here ({', '.join(MOCK_MODELS)}), offline; "
            "a model behind an API is evaluated with `pdbench eval`"
        )
    player = ModelPlayer(
        name=text.strip(),
        provider=MockProvider(model),
        limiter=EndpointLimiter(LimitSettings(concurrency=1)),
        prompts=PromptBuilder(PromptSettings()),
        params=SamplingParams(),
        parse=ParsePolicy(),
    )
    calls = CallPath(cache=None, prices=PriceTable.load(DEFAULT_PRICES))
    agent = LLMAgent(
        player,
        calls,
        seat="b",
        game_id=0,
        game_seed=seed,
        sample=Sample(condition="play", replicate=0, seat="b"),
        rng=stream(seed, "b"),
        sample_seed=seed & 0x7FFFFFFF,
    )
    return ModelOpponent(text.strip(), agent)

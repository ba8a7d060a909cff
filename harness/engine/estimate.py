"""What a run will cost before it is played: per model, the calls, tokens, dollars in each mode and time.

Nothing is sent. The prompts are rendered from the run's own templates, persona, labels, payoffs and horizon for
a synthetic game, and counted as the offline mock counts them (about four characters a token: the mock's
``input_tokens`` is the prompt's characters // 4 + 1), so an estimate and a mock run of the same plan agree on
input tokens; a real tokenizer differs by some percent. A prompt grows by one history line a round, so its size
is a straight line in the round: measured at round 1 and at round :data:`PROBE_ROUND` and summed over each
round's chance of being played (every round of a fixed game; ``(1 - stop_prob) ** (r - 1)`` of a geometric one,
up to ``max_rounds``). Comprehension questions are counted by the rounds and kinds the player asks; re-asks,
which depend on how the model answers, are given as an upper bound (every move re-asked ``parse.max_retries``
times).

The provider's prompt cache is estimated from what consecutive prompts share (measured the same way): OpenAI
reads the shared start in whole 128-token steps once it reaches 1,024 tokens; Anthropic reads it from 1,024
tokens (Claude Sonnet's minimum; Haiku and Opus need more, so their figure is an upper bound) and writes what
each round adds. Output tokens are a guess by reply format (:data:`TYPICAL_OUTPUT`), with ``max_tokens`` per call
as the bound. Time: the calls at the configured limits (requests and tokens per minute, and the concurrency at
:data:`LATENCY_S` an answer), and never less than the longest game's rounds one after another.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Literal

from harness.calls.limits.settings import LimitSettings
from harness.calls.pricing import PriceTable
from harness.config import ExperimentConfig
from harness.config.agents import ModelAgentConfig
from harness.config.plan import condition_plans
from harness.game.horizon import Horizon
from harness.game.rules import PayoffMatrix
from harness.game.view import RoundView
from harness.players.model.prompts.builder import Ask, PromptBuilder, game_views, shared_start
from harness.players.model.prompts.context import PromptSettings
from harness.players.model.settings import ReplyReader
from harness.providers.base import Message
from harness.providers.registry import is_offline
from harness.providers.tiers import CacheTtl, ServiceTier

Seat = Literal["a", "b"]
CHARS_PER_TOKEN = 4
PROBE_ROUND = 21  # the prompt's growth a round is measured over this many rounds
CACHE_MIN = 1024  # tokens: the shortest start OpenAI (and Anthropic's Sonnet) caches
OPENAI_CACHE_STEP = 128
LATENCY_S = 1.0  # an assumed answer time, to turn the concurrency into a rate
REACH_FLOOR = 1e-9  # a geometric game's rounds less likely than this are left out of the sums
TYPICAL_OUTPUT = {"label": 2, "json": 8, "structured": 12, "free": 24}
"""Output tokens of a typical answer by reply format (a bare label, a JSON object, a short sentence); a reply
asked to reason first (the last-line reader, a structured reply with reasoning) is counted at half its
``max_tokens``. A guess: the figure a run records is the model's."""


@dataclass(slots=True)
class ModelEstimate:
    """One model's share of a run, summed over its seats in every condition and replicate."""

    model: str
    calls: float = 0.0
    reask_calls: float = 0.0  # at most: every move re-asked parse.max_retries times
    input_tokens: float = 0.0
    cached_tokens: float = 0.0  # read from the provider's prompt cache, as the layout allows
    written_tokens: float = 0.0  # written to it (Anthropic)
    output_tokens: float = 0.0  # typical
    output_tokens_max: float = 0.0  # every answer at max_tokens
    longest_game: float = 0.0  # the most rounds one game is expected to take, played one after another
    limits: list[LimitSettings] = field(default_factory=list)
    tier: ServiceTier = ServiceTier.STANDARD  # the tier the run buys at (its first seat's, should seats differ)
    ttl: CacheTtl = CacheTtl.FIVE_MINUTES  # how long Anthropic keeps the cached prefixes (cache_ttl)
    games: float = 0.0  # games with this model in a seat
    batches: float = 0.0  # batch mode: the batches one after another (a round each, and one more per question round)

    def cost(self, prices: PriceTable, tier: ServiceTier, *, cached: bool, most: bool = False) -> float | None:
        """Dollars at ``tier`` (None: no price there); with the cache as the layout allows or without it; with
        the typical output, or (``most``) with every answer at ``max_tokens``."""
        output = self.output_tokens_max if most else self.output_tokens
        return prices.cost(
            self.model,
            round(self.input_tokens),
            round(output),
            cached_input_tokens=round(self.cached_tokens) if cached else 0,
            cache_write_tokens=round(self.written_tokens) if cached else 0,
            tier=tier,
            ttl=self.ttl,
        )

    def seconds(self) -> float:
        """The least time the calls take at the configured limits (see the module's docstring)."""
        return max(self.calls / self._rate(), self.longest_game * LATENCY_S)

    def round_gap(self) -> float:
        """Seconds between two rounds of one game at the configured limits: the games in flight (about the
        concurrency and a quarter, as the scheduler plays them) share the calls per second the limits allow."""
        limits = self.limits[0] if self.limits else LimitSettings()
        in_flight = min(self.games, 1.25 * (limits.concurrency or 1)) or 1.0
        return max(in_flight / self._rate(), LATENCY_S)

    def _rate(self) -> float:
        """Calls per second the limits allow: the concurrency at LATENCY_S an answer, requests and tokens per minute."""
        limits = self.limits[0] if self.limits else LimitSettings()
        rates = [(limits.concurrency or 1) / LATENCY_S]
        if limits.rpm:
            rates.append(limits.rpm / 60)
        tokens_per_call = (self.input_tokens + self.output_tokens) / self.calls if self.calls else 0
        if limits.tpm and tokens_per_call:
            rates.append(limits.tpm / 60 / tokens_per_call)
        return min(rates)


def estimate(config: ExperimentConfig, replicates: int | None = None) -> list[ModelEstimate]:
    """Every model's estimate, in the order the models first appear in the conditions."""
    reps = replicates or config.experiment.replicates
    found: dict[str, ModelEstimate] = {}
    for plan, cond in zip(condition_plans(config), config.experiment.conditions, strict=True):
        seats: tuple[Seat, Seat] = ("a", "b")
        for seat, agent in zip(seats, (cond.agent_a, cond.agent_b), strict=True):
            if not isinstance(agent, ModelAgentConfig):
                continue
            est = found.setdefault(
                agent.model, ModelEstimate(agent.model, tier=agent.service_tier, ttl=agent.cache_ttl)
            )
            est.games += reps
            _add_seat(est, agent, plan.horizon, plan.game, seat, reps)
            if agent.limits not in est.limits:
                est.limits.append(agent.limits)
    return list(found.values())


def _add_seat(
    est: ModelEstimate, agent: ModelAgentConfig, horizon: Horizon, game: PayoffMatrix, seat: Seat, reps: int
) -> None:
    settings = _prompt_settings(agent)
    builder = PromptBuilder(settings)
    reach = list(_reach(horizon))
    probe = min(PROBE_ROUND, len(reach))
    views = game_views(probe, matrix=game, horizon=horizon.known_to_players(), seat=seat)
    texts = [_text(builder.render(view)) for view in views]
    sizes = [_tokens(t) for t in texts]
    shared = [0.0] + [shared_start(a, b) / CHARS_PER_TOKEN for a, b in pairwise(texts)]
    size_at = _line(sizes)
    shared_at = _line(shared[1:], start=2) if probe > 1 else _line([0.0])
    provider = agent.model.partition("/")[0]
    offline = is_offline(agent.model)
    moves = sum(reach)
    est.calls += moves * reps
    est.reask_calls += moves * agent.parse.max_retries * reps
    est.longest_game = max(est.longest_game, moves)
    asked_rounds = len([r for r in agent.comprehension.rounds if r <= len(reach)]) if agent.comprehension else 0
    est.batches = max(est.batches, moves + asked_rounds)
    growth = size_at(2) - size_at(1)
    for r, p in enumerate(reach, start=1):
        est.input_tokens += p * size_at(r) * reps
        if offline or r == 1 or (read := _cache_read(provider, shared_at(r))) == 0:
            continue
        est.cached_tokens += p * read * reps
        if provider == "anthropic":  # each round writes what it adds; the round before the first read wrote it all
            first = _cache_read(provider, shared_at(r - 1)) == 0
            est.written_tokens += (p * growth + (reach[r - 2] * shared_at(r) if first else 0.0)) * reps
    typical = _typical_output(agent)
    est.output_tokens += moves * typical * reps
    est.output_tokens_max += moves * agent.max_tokens * reps
    if agent.comprehension is not None:
        extra = _question_tokens(builder, views[0])
        for r in agent.comprehension.rounds:
            if r > len(reach):
                continue
            asked = agent.comprehension.asked_at(r)
            est.calls += reach[r - 1] * asked * reps
            est.input_tokens += reach[r - 1] * asked * (size_at(r) + extra) * reps
            est.output_tokens += reach[r - 1] * asked * typical * reps
            est.output_tokens_max += reach[r - 1] * asked * agent.max_tokens * reps


def _prompt_settings(agent: ModelAgentConfig) -> PromptSettings:
    if agent.persona is not None and agent.prompts.persona is None:
        return agent.prompts.model_copy(update={"persona": agent.persona})
    return agent.prompts


def _reach(horizon: Horizon) -> Iterator[float]:
    """Each round's chance of being played, from round 1 (a geometric game's rounds less likely than
    :data:`REACH_FLOOR` left out)."""
    r = 1
    while (p := horizon.reach(r, 0)) >= REACH_FLOOR:
        yield p
        r += 1


def _text(messages: list[Message]) -> str:
    return "".join(m.get("content", "") for m in messages)


def _tokens(text: str) -> float:
    """As the offline mock counts a prompt: its characters // 4 + 1."""
    return float(len(text) // CHARS_PER_TOKEN + 1)


def _line(values: list[float], start: int = 1) -> Callable[[int], float]:
    """The straight line through the first and last of ``values`` (measured at rounds ``start``, ``start + 1``,
    ...), as a function of the round: a prompt grows by one history line a round."""
    first, last = values[0], values[-1]
    slope = (last - first) / (len(values) - 1) if len(values) > 1 else 0.0
    return lambda r: first + slope * (r - start)


def _cache_read(provider: str, shared: float) -> float:
    """Tokens read from the provider's cache in a round whose prompt shares ``shared`` tokens with the last one's:
    none below the threshold; OpenAI in whole 128-token steps."""
    if shared < CACHE_MIN:
        return 0.0
    if provider == "anthropic":
        return shared
    return float(math.floor(shared / OPENAI_CACHE_STEP) * OPENAI_CACHE_STEP)


def _typical_output(agent: ModelAgentConfig) -> float:
    if agent.parse.reader is ReplyReader.LAST_LINE or agent.reasoning:
        return agent.max_tokens / 2
    fmt = "structured" if agent.structured else agent.prompts.answer_format
    return float(min(agent.max_tokens, TYPICAL_OUTPUT.get(fmt, TYPICAL_OUTPUT["free"])))


def _question_tokens(builder: PromptBuilder, view: RoundView) -> float:
    """What a comprehension question adds to the round's prompt (measured on the payoff question)."""
    labels = builder.settings.labels
    ask = Ask(kind="payoff", you=labels.cooperate, they=labels.defect, expected="0,0")
    asked = _tokens(_text(builder.render_question(view, ask)))
    return max(asked - _tokens(_text(builder.render(view))), 0.0)

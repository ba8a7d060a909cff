"""``mock/<behaviour>``: an offline provider that answers like a model would.

It writes free text with the move somewhere in it (a bare letter, bold, a JSON object, a
sentence, a final-answer line after some reasoning), is unparseable at a settable rate, can
be slow and can fail with server errors, so every path of the harness runs without a network.
Its answer is a pure function of the messages, the sampling parameters and its options:
the same request always gets the same answer (so the cache and resume can be tested exactly).
Every draw of the model (each condition, replicate and seat: the request's sample identity) sends
its own sampling seed, so two seats that see the same prompt draw independently, as a real model
sampled twice would.

It never reads the prompt's wording: PDBench's model players send it the facts the prompt states
(:class:`~harness.providers.base.PromptFacts`: the labels, the option order, the reply format asked
for, the rounds the prompt shows, the comprehension question and its right answer), so rewording
the templates cannot change how it plays. It replies in the format asked for: ``free`` in one of the
shapes above, ``json`` as ``{"action": "<label>"}``, ``label`` as the bare label; a request for a structured
reply (``params.reply``) gets the JSON object of its schema (at the ``unparseable`` rate one that breaks it). It answers
comprehension questions correctly, except at the ``confused`` rate, when it answers wrongly (a
readable, wrong answer). Asked to judge a reply (facts with ``answer_format`` ``judge``), it answers ``first``
(cooperator), ``second`` (defector), either (random, by ``p``), ``unclear`` at the ``confused`` rate, and
something else at the ``unparseable`` rate. A request without facts is answered with the labels C and D, as in round 1.

Options go after the behaviour as a query string:
``mock/tft?unparseable=0.1&latency_ms=20&error_rate=0.05&confused=0.3&seed=7``.

Behaviours: ``cooperator``, ``defector``, ``random`` (``p`` = probability of cooperating, default
0.5), ``tft`` (copies the other player's last move shown in its prompt), ``grim`` (defects for
ever once the history its prompt shows has a defection by the other player).
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl

import anyio

from harness.errors import ConfigError
from harness.providers.base import (
    CacheHints,
    Completion,
    Endpoint,
    Message,
    PromptFacts,
    QuestionFacts,
    RetryDecision,
    SamplingParams,
    decide_status,
    local_decision,
)
from harness.providers.info import ProviderInfo
from harness.providers.tiers import ServiceTier

if TYPE_CHECKING:
    import httpx2


JUDGING = "judge"
"""``PromptFacts.answer_format`` of a request to judge another model's reply (see harness.players.model.judge)."""
BEHAVIOURS = ("cooperator", "defector", "random", "tft", "grim")
OPTIONS = ("p", "unparseable", "latency_ms", "error_rate", "confused", "seed")
_NO_FACTS = PromptFacts(
    cooperate="C", defect="D", option_order="CD", answer_format="free", own_moves=(), opponent_moves=()
)


# Each option's range: probabilities, and a latency of at most a minute (a longer one only stalls a run).
_RANGES = {
    "p": (0.0, 1.0),
    "unparseable": (0.0, 1.0),
    "error_rate": (0.0, 1.0),
    "confused": (0.0, 1.0),
    "latency_ms": (0.0, 60_000.0),
}
MAX_SEED = 2**63 - 1


def _seed(raw: str, spec: str) -> int:
    """A sampling seed: a whole number from 0 to 2**63 - 1, written in digits (not 1e3, inf or 7.5)."""
    if not raw.isascii() or not raw.isdigit() or len(raw) > 19 or int(raw) > MAX_SEED:
        raise ConfigError(
            f"option seed={raw!r} in 'mock/{spec}' must be a whole number from 0 to {MAX_SEED} written in digits"
        )
    return int(raw)


class MockServerError(Exception):
    """A simulated 5xx from the mock's pretend server (retryable)."""

    def __init__(self, status: int = 500) -> None:
        super().__init__(f"mock server error {status}")
        self.status = status


@dataclass(frozen=True, slots=True)
class MockOptions:
    behaviour: str
    p: float = 0.5
    unparseable: float = 0.0
    latency_ms: float = 0.0
    error_rate: float = 0.0
    confused: float = 0.0
    seed: int = 0

    @classmethod
    def parse(cls, spec: str) -> MockOptions:
        behaviour, _, query = spec.partition("?")
        if behaviour not in BEHAVIOURS:
            raise ConfigError(
                f"unknown mock behaviour {behaviour!r} in 'mock/{spec}'; known: "
                f"{', '.join(f'mock/{b}' for b in BEHAVIOURS)} "
                "(options: ?p=&unparseable=&latency_ms=&error_rate=&confused=&seed=)"
            )
        values: dict[str, float] = {}
        seed = 0
        given: set[str] = set()
        for key, raw in parse_qsl(query, keep_blank_values=True):
            if key not in OPTIONS:
                raise ConfigError(f"unknown option {key!r} in 'mock/{spec}'; options: {', '.join(OPTIONS)}")
            if key in given:
                raise ConfigError(f"option {key} is given twice in 'mock/{spec}'; give each option once")
            given.add(key)
            if key == "seed":
                seed = _seed(raw, spec)
                continue
            try:
                value = float(raw)
            except ValueError:
                raise ConfigError(f"option {key}={raw!r} in 'mock/{spec}' must be a number") from None
            low, high = _RANGES[key]
            if not low <= value <= high:  # also refuses nan
                raise ConfigError(f"option {key} in 'mock/{spec}' must be between {low:g} and {high:g}, got {raw}")
            values[key] = value
        return cls(behaviour=behaviour, seed=seed, **values)


MOCK = ProviderInfo(
    name="mock",
    provider_class="harness.providers.mock:MockProvider",
    offline=True,
    check_model=MockOptions.parse,
)


class MockProvider:
    """A deterministic stand-in for a chat model; see the module docstring."""

    info = MOCK
    name = MOCK.name
    offline = MOCK.offline
    """Its answers are computed here, free and the same every time: the call path neither caches nor looks
    them up (a run of 100,000 mock games would otherwise fill the shared cache with what costs nothing)."""
    service_tier = ServiceTier.STANDARD  # nothing is bought: its calls record no tier

    def __init__(self, model: str) -> None:
        self.model = model
        self.options = MockOptions.parse(model)
        self.endpoint = Endpoint(provider=MOCK.name, base_url=None, key_id=None)
        # Without a latency it answers without ever waiting, so there is nothing to time out and the
        # call path may skip its deadline; with one, the call path's deadline applies as to any provider.

    @classmethod
    def create(
        cls,
        model: str,
        *,
        api_key: str | None,
        base_url: str | None,
        http_client: httpx2.AsyncClient | None,
        service_tier: ServiceTier = ServiceTier.STANDARD,
    ) -> MockProvider:
        """The provider the registry makes: it talks to no server, so it needs no key, URL, client or tier."""
        return cls(model)

    async def generate(
        self,
        messages: list[Message],
        params: SamplingParams,
        timeout: float,
        facts: PromptFacts | None = None,
        *,
        cache: CacheHints | None = None,
    ) -> Completion:
        opts = self.options
        digest = hashlib.sha256(self._request_json(messages, params).encode()).digest()
        rng = random.Random(digest)
        if opts.latency_ms:
            await anyio.sleep(opts.latency_ms / 1000.0)
        if opts.error_rate and rng.random() < opts.error_rate:
            raise MockServerError(500)
        facts = facts or _NO_FACTS
        reply = params.reply
        if reply is not None and facts.question is None:
            # A structured reply, as a constrained decoder gives it; at the unparseable rate one that breaks
            # the schema (as a server that ignores it might send).
            broken = bool(opts.unparseable) and rng.random() < opts.unparseable
            text = _structured(facts.label(self._decide(facts, rng)), reply.reasoning, broken)
        elif opts.unparseable and rng.random() < opts.unparseable:
            text = rng.choice(
                [
                    "Let me think about what the other player is likely to do here.",
                    f"Either {facts.cooperate} or {facts.defect} could make sense in this position.",
                    "I am not sure yet.",
                ]
            )
        elif facts.answer_format == JUDGING:
            # Asked to judge a reply: its behaviour's move names the option (cooperator: the first shown),
            # and at the confused rate it cannot tell.
            unsure = bool(opts.confused) and rng.random() < opts.confused
            text = "unclear" if unsure else "first" if self._decide(facts, rng) == "C" else "second"
        elif facts.question is not None:
            wrong = bool(opts.confused) and rng.random() < opts.confused
            text = _answer(facts.question, facts, wrong, rng)
        else:
            text = _reply(facts.label(self._decide(facts, rng)), facts.answer_format, rng)
        prompt_chars = sum(len(m.get("content", "")) for m in messages)
        return Completion(
            text=text,
            input_tokens=prompt_chars // 4 + 1,
            output_tokens=len(text) // 4 + 1,
            model=f"mock/{opts.behaviour}",
            finish_reason="stop",
        )

    def _request_json(self, messages: list[Message], params: SamplingParams) -> str:
        """The text the answer is drawn from: everything that shapes a real model's answer (model,
        messages, sampling parameters) and the mock's own seed option."""
        return json.dumps([self.model, messages, params.as_dict(), self.options.seed], sort_keys=True)

    def _decide(self, facts: PromptFacts, rng: random.Random) -> str:
        behaviour = self.options.behaviour
        if behaviour == "cooperator":
            return "C"
        if behaviour == "defector":
            return "D"
        if behaviour == "random":
            return "C" if rng.random() < self.options.p else "D"
        theirs = facts.opponent_moves  # the rounds the prompt shows
        if behaviour == "tft":
            return "D" if theirs and theirs[-1] == "D" else "C"
        return "D" if "D" in theirs else "C"  # grim

    def should_retry(self, error: BaseException) -> RetryDecision:
        if isinstance(error, MockServerError):
            return decide_status(error.status, None, None, str(error))
        return local_decision(error)

    async def aclose(self) -> None:
        return None


def _structured(label: str, reasoning: bool, broken: bool) -> str:
    """A structured reply (see harness.providers.structured); ``broken``: one whose action is no label."""
    reply = {"reasoning": "The other player's last move decides mine."} if reasoning else {}
    reply["action"] = "undecided" if broken else label
    return json.dumps(reply)


def _reply(label: str, answer_format: str, rng: random.Random) -> str:
    """A move in the reply format asked for."""
    if answer_format == "json":
        return json.dumps({"action": label})
    if answer_format == "label":
        return label
    return _phrase(label, rng)


def _answer(question: QuestionFacts, facts: PromptFacts, wrong: bool, rng: random.Random) -> str:
    """The answer to a comprehension question in the reply format asked for: right, or if ``wrong``
    readable but wrong (another payoff pair, another horizon, the other move)."""
    fmt = facts.answer_format
    if question.kind == "last_move":
        move = question.expected
        if wrong:
            move = "D" if move == "C" else "C"
        return _reply(facts.label(move), fmt, rng)
    if question.kind == "payoff":
        you, they = question.expected.split(",")
        if wrong:
            you, they = (they, you) if you != they else (_plus_one(you), they)
        if fmt == "json":
            return f'{{"you": {you}, "they": {they}}}'
        if fmt == "label":
            return f"{you}, {they}"
        return f"I would get {you} points and the other player would get {they}."
    value = question.expected
    probability = question.probability
    if wrong:
        value = repr(float(value) / 2) if probability else str(int(value) + 1)
    if fmt == "json":
        return f'{{"{"probability" if probability else "rounds"}": {value}}}'
    if fmt == "label":
        return value
    if probability:
        return f"After each round the game goes on with probability {value}."
    return f"The game lasts {value} round{'' if value == '1' else 's'} in all."


def _plus_one(number: str) -> str:
    value = float(number) + 1
    return str(int(value)) if value.is_integer() else repr(value)


def _phrase(label: str, rng: random.Random) -> str:
    """The move in one of the shapes real models use."""
    return rng.choice(
        [
            f"{label}",
            f"**{label}**",
            f'{{"action": "{label}"}}',
            f"I will play {label}.",
            f"Looking at the scores so far, I think the best move now is clear.\n\nFinal answer: {label}",
            f"Action: {label}",
        ]
    )

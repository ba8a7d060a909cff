"""A language model as a player: render the prompt, ask through the call path, parse, re-ask.

The agent never sleeps, retries a request or counts tokens: the call path does. It owns the
conversation of one round: the rendered prompt, and when the answer cannot be read, the
model's answer and a short corrective message, up to ``parse.max_retries`` times; after the
last failure the configured fallback move is played and the round is flagged.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace

from harness.agents.base import Decision, RoundView
from harness.calls import CallFailed, CallPath, CallRecord, CallTag
from harness.limits import EndpointLimiter
from harness.parsing import ParsePolicy, correction_message, fallback_action, parse_action
from harness.prompts import PromptBuilder, PromptState
from harness.providers.base import Provider, Sample, SamplingParams


class GameFailed(Exception):
    """The game cannot go on (a request failed for good, or an unreadable answer with on_failure: fail)."""

    def __init__(self, reason: str, records: list[CallRecord]) -> None:
        super().__init__(reason)
        self.reason = reason
        self.records = records


@dataclass(frozen=True, slots=True)
class ModelPlayer:
    """Everything one model player needs, shared by all its games."""

    name: str
    provider: Provider
    limiter: EndpointLimiter
    prompts: PromptBuilder
    params: SamplingParams
    parse: ParsePolicy


class LLMAgent:
    """One model in one seat of one game."""

    def __init__(self, player: ModelPlayer, calls: CallPath, *, seat: str, game_id: int, sample: Sample,
                 rng: random.Random, sample_seed: int | None = None) -> None:  # fmt: skip
        self.player = player
        # Every seat of every game is its own draw (``sample``): its requests carry a sampling seed of
        # their own, so a provider that takes a seed draws them independently too (one without ignores it).
        self.params = replace(player.params, seed=sample_seed) if sample_seed is not None else player.params
        self.name = player.name
        self.calls = calls
        self.seat = seat
        self.game_id = game_id
        self.sample = sample
        self.rng = rng
        self.records: list[CallRecord] = []
        self.prompt_state = PromptState()  # this player's history, carried from round to round

    def take_records(self) -> list[CallRecord]:
        """The calls made since the last take (to be written with their round)."""
        out, self.records = self.records, []
        return out

    async def act(self, view: RoundView) -> Decision:
        p = self.player
        labels = p.prompts.settings.labels
        messages = p.prompts.render(view, self.prompt_state)
        tag = CallTag(game_id=self.game_id, round=view.round, player=self.seat, sample=self.sample)
        attempt = 1
        for ask in range(p.parse.max_retries + 1):
            try:
                result = await self.calls.request(p.provider, p.limiter, messages, self.params, tag, attempt)
            except CallFailed as failed:
                self.records.extend(failed.records)
                raise
            self.records.extend(result.records)
            attempt += len(result.records)
            parsed = parse_action(result.text, labels)
            final = result.records[-1]
            final.action = parsed.action
            if parsed.ok:
                return Decision(parsed.action)  # type: ignore[arg-type]
            final.outcome = "unparseable"
            final.error = parsed.reason
            self.calls.stats.parse_failures += 1
            if ask < p.parse.max_retries:
                messages = [*messages, {"role": "assistant", "content": result.text},
                            {"role": "user", "content": correction_message(parsed, labels)}]  # fmt: skip
        fallback = fallback_action(p.parse, self.rng)
        if fallback is None:
            raise GameFailed(
                f"{self.name} gave no readable move in round {view.round} after "
                f"{p.parse.max_retries + 1} tries (on_failure: fail)",
                self.take_records(),
            )
        return Decision(fallback, flagged=True, note=f"fallback after {p.parse.max_retries + 1} unreadable answers")

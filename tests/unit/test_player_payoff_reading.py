"""A model seat reads a reply that names its option by its payoffs with the game's matrix as that seat sees it
(its own payoffs first), in a game and in a re-ask's answer; the parser alone is tested in test_parsing.py."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from harness.calls.limits import EndpointLimiter, LimitSettings
from harness.calls.path import CallPath
from harness.calls.pricing import PriceTable
from harness.game.horizon import FixedHorizonInfo
from harness.game.match import Match, play_game
from harness.game.rules import PayoffMatrix
from harness.players.model.player import LLMAgent, ModelPlayer, as_seen_by
from harness.players.model.prompts.builder import PromptBuilder
from harness.players.model.prompts.context import payoff_outcomes
from harness.players.model.settings import ParsePolicy
from harness.providers.base import CacheHints, Completion, Message, PromptFacts, Sample, SamplingParams
from harness.providers.mock import MockProvider

# An asymmetric game: every payoff of A (3, 0, 5, 1) differs from every payoff of B (4, 1, 6, 2) but 1, so a
# number names a move for one seat only, and reading B's reply with A's payoffs would read nothing or wrong.
GAME = PayoffMatrix(cc=(3.0, 4.0), cd=(0.0, 6.0), dc=(5.0, 1.0), dd=(1.0, 2.0))


class Scripted(MockProvider):
    """The mock provider's plumbing, with the replies given in order."""

    def __init__(self, replies: list[str]) -> None:
        super().__init__("cooperator")
        self.replies: Iterator[str] = iter(replies)

    async def generate(
        self,
        messages: list[Message],
        params: SamplingParams,
        timeout: float,
        facts: PromptFacts | None = None,
        *,
        cache: CacheHints | None = None,
    ) -> Completion:
        return Completion(next(self.replies), None, None, "scripted")


def agent(seat: str, replies: list[str], retries: int = 0) -> LLMAgent:
    player = ModelPlayer(
        name=f"scripted-{seat}",
        provider=Scripted(replies),
        limiter=EndpointLimiter(LimitSettings()),
        prompts=PromptBuilder(),
        params=SamplingParams(),
        parse=ParsePolicy(max_retries=retries),
    )
    calls = CallPath(cache=None, prices=PriceTable([]))
    return LLMAgent(player, calls, seat=seat, game_id=0, game_seed=1, sample=Sample("c", 0, seat), rng=random.Random(0))


@pytest.mark.parametrize("seat", ["a", "b"])
def test_the_matrix_as_a_seat_sees_it_is_the_one_its_prompt_shows(seat: str) -> None:
    seen = as_seen_by(GAME, seat).table()
    for mine, theirs, you, they in payoff_outcomes(GAME, seat):
        assert seen[(mine, theirs)] == (you, they)


async def test_each_seat_reads_its_own_payoffs_in_a_game() -> None:
    # A: 5 is its temptation (D), then 3 its reward (C). B: 4 is its reward (C), then 6 its temptation (D).
    a = agent("a", ["I'll take the 5-point option.", "I'll take the option that gives me 3."])
    b = agent("b", ["I'll take the option that gives me 4.", "I'll take the 6-point option."])
    match = await play_game(Match(GAME, 0.0, random.Random(0)), a, b, 2, FixedHorizonInfo(2))
    assert (match.moves_a, match.moves_b) == (["D", "C"], ["C", "D"])
    records = a.take_records() + b.take_records()
    assert {r.reader for r in records} == {"parser"} and all(r.action is not None for r in records)


async def test_a_payoff_that_is_not_the_seats_own_is_not_read() -> None:
    # 6 is B's temptation but no payoff of A's: A's reply names nothing it could get, and falls back, flagged.
    a = agent("a", ["I'll take the 6-point option."])
    b = agent("b", ["C"])
    match = await play_game(Match(GAME, 0.0, random.Random(0)), a, b, 1, FixedHorizonInfo(1))
    assert match.moves_a == ["D"] and match.flagged_a == [1]


async def test_a_reask_answer_is_read_with_the_payoffs_too() -> None:
    b = agent("b", ["Let me think.", "I'll take the option that gives me 4."], retries=1)
    a = agent("a", ["C"])
    match = await play_game(Match(GAME, 0.0, random.Random(0)), a, b, 1, FixedHorizonInfo(1))
    assert match.moves_b == ["C"]
    assert [r.action for r in b.take_records()] == [None, "C"]

"""What a 429 changes (harness.calls.limits.adaptation): a stray one only its own request's wait; the limit,
told apart by its pattern, a pause and a learned rate that climbs back. Catch-up pacing, closing.

Timing runs on virtual time (``run_virtual``) or on a hand-set clock: no test here sleeps for real.
"""

from __future__ import annotations

import random
from collections import deque
from itertools import pairwise

import anyio
import pytest

from harness.calls.limits import MAX_PAUSE_S, EndpointLimiter, LimiterClosed, LimitSettings
from harness.calls.limits.adaptation import (
    CHAIN_MIN,
    LEARN_SHARE,
    MAX_DEFAULT_PAUSE_S,
    MAX_RAISE_EVERY_S,
    RAISE_EVERY_S,
    RAISE_STEP,
)
from harness.calls.limits.pacing import CATCH_UP_S, WINDOW_MARGIN_S, Pacing
from harness.engine.scheduler import GameSlots
from harness.providers.ratelimit_headers import RateLimitHeaders, parse_rate_limit_headers
from tests.unit.test_limits import Clock, max_in_any_window, run_virtual


class Hand:
    """A clock set by hand, and a limiter on it."""

    def __init__(self, settings: LimitSettings | None = None, now: float = 0.0) -> None:
        self.now = now
        self.limiter = EndpointLimiter(settings or LimitSettings(concurrency=8), clock=lambda: self.now)

    def successes(self, n: int, every: float) -> None:
        """``n`` requests, each started and answered 200 ``every`` seconds apart."""
        for _ in range(n):
            permit = self.limiter._start(self.now, 0)
            self.limiter._release()
            self.limiter.on_success(permit)
            self.now += every

    def refusal(self, retry_after: float | None = 1.0, limits: RateLimitHeaders | None = None) -> None:
        """One request started now and refused at once."""
        permit = self.limiter._start(self.now, 0)
        self.limiter._release()
        self.limiter.on_rate_limited(retry_after, permit=permit, limits=limits)


# ---- a stray 429 -----------------------------------------------------------------------------


def test_a_stray_429_pauses_nothing_and_lowers_no_rate() -> None:
    h = Hand()
    h.successes(50, 0.1)
    h.refusal(1.0)
    h.successes(5, 0.1)
    h.refusal(1.0)
    snap = h.limiter.snapshot()
    assert snap.paused_until is None and snap.learned_rpm is None and snap.effective_rpm is None
    assert (snap.rate_limited_count, snap.limit_reached_count, snap.concurrency) == (2, 0, 8)


def test_answers_to_requests_sent_before_a_refusal_do_not_make_a_chain() -> None:
    """When a stray 429 comes back, the requests in flight may be refused too (a burst of overload): their
    refusals were sent before the first arrived, so they prove nothing about a limit."""
    h = Hand()
    h.successes(20, 0.1)
    permits = [h.limiter._start(h.now, 0) for _ in range(8)]  # eight requests in flight
    for permit in permits:
        h.limiter._release()
        h.now += 0.01
        h.limiter.on_rate_limited(1.0, permit=permit)
    assert h.limiter.snapshot().limit_reached_count == 0
    assert h.limiter.paused_until is None


def test_a_success_of_a_later_request_breaks_the_chain() -> None:
    h = Hand()
    h.successes(20, 0.1)
    for _ in range(CHAIN_MIN - 1):
        h.refusal(1.0)
        h.now += 0.1
    h.successes(1, 0.1)
    for _ in range(CHAIN_MIN - 1):
        h.refusal(1.0)
        h.now += 0.1
    assert h.limiter.snapshot().limit_reached_count == 0


def test_a_success_sent_since_the_chain_began_breaks_it_though_refusals_came_in_between() -> None:
    """Strays at a busy endpoint: refusals arrive while requests sent after the first of them are still
    out. Those requests' successes show the endpoint accepts what is sent: no chain of strays adds up."""
    h = Hand()
    h.successes(20, 0.1)
    for _ in range(10):
        h.refusal(1.0)  # a stray ...
        sent = h.limiter._start(h.now + 0.01, 0)  # ... a request sent after it ...
        h.now += 0.05
        h.refusal(1.0)  # ... another stray, sent after the first, arrives first ...
        h.now += 0.05
        h.limiter._release()
        h.limiter.on_success(sent)  # ... and the request sent since the chain began succeeds
    assert h.limiter.snapshot().limit_reached_count == 0


def test_the_chain_needed_grows_with_the_share_of_stray_refusals() -> None:
    """At 5 % strays, four in a row happen once in 160,000 sequences; one in a million needs five."""
    h = Hand()
    rng = random.Random(1)
    for _ in range(400):  # a 5 % stray share, measured
        if rng.random() < 0.05:
            h.refusal(1.0)
            h.now += 0.05
        h.successes(1, 0.05)
    for _ in range(CHAIN_MIN):
        h.refusal(1.0)
        h.now += 0.01
    assert h.limiter.snapshot().limit_reached_count == 0  # four are no longer enough ...
    h.refusal(1.0)
    assert h.limiter.snapshot().limit_reached_count == 1  # ... five are


# ---- the limit reached --------------------------------------------------------------------------


def test_a_chain_of_refusals_pauses_until_retry_after_and_learns_the_rolling_minute() -> None:
    """A server allowing 300 a rolling minute: 300 successes in 15 s, then it refuses, asking to wait the 45 s
    until its window's oldest request leaves it. The rate learned is 0.95 of 300 a minute."""
    h = Hand()
    h.successes(300, 15.0 / 300)
    for i in range(CHAIN_MIN):
        assert h.limiter.paused_until is None
        h.refusal(45.0 - i * 0.01)
        h.now += 0.01
    snap = h.limiter.snapshot()
    assert snap.limit_reached_count == 1
    assert snap.paused_until == pytest.approx(h.now - 0.01 + 45.0 - (CHAIN_MIN - 1) * 0.01)
    assert snap.pause_reason == "limit reached, Retry-After"
    assert snap.learned_rpm == pytest.approx(LEARN_SHARE * 300, rel=0.01)


def test_headers_that_say_nothing_remains_tell_the_limit_at_once() -> None:
    h = Hand()
    h.successes(10, 0.1)
    spent = RateLimitHeaders(requests_limit=500, requests_remaining=0, requests_reset_s=7.5)
    h.refusal(None, limits=spent)
    snap = h.limiter.snapshot()
    assert snap.limit_reached_count == 1
    assert snap.paused_for == pytest.approx(7.5)  # no Retry-After: the headers' reset
    assert snap.pause_reason == "limit reached, rate-limit headers"
    assert snap.learned_rpm == pytest.approx(LEARN_SHARE * 500)  # the limit the headers state


def test_a_request_limit_is_learned_only_when_requests_ran_out_within_a_minute() -> None:
    """Tokens ran out (the request limit says nothing of the rate to keep), or the request limit is per day:
    the rate is learned from what the server accepted instead."""
    for spent in (
        RateLimitHeaders(requests_limit=50, requests_remaining=12, tokens_remaining=0, tokens_reset_s=45.0),
        RateLimitHeaders(requests_limit=14400, requests_remaining=0, requests_reset_s=6 * 3600.0),
    ):
        h = Hand()
        h.successes(300, 15.0 / 300)
        h.refusal(45.0, limits=spent)
        snap = h.limiter.snapshot()
        assert snap.limit_reached_count == 1
        assert snap.learned_rpm == pytest.approx(LEARN_SHARE * 300, rel=0.01)  # 300 over 15 s + 45 s


def test_headers_with_budget_left_make_a_429_a_stray_one() -> None:
    h = Hand()
    h.successes(10, 0.1)
    h.refusal(1.0, limits=RateLimitHeaders(requests_limit=500, requests_remaining=120))
    assert h.limiter.snapshot().limit_reached_count == 0


def test_mostly_refused_answers_tell_a_limit_that_lets_a_trickle_through() -> None:
    """Every fourth request succeeds, so no chain forms; three quarters refused over 40 answers is the limit."""
    h = Hand()
    h.successes(10, 0.1)
    for i in range(60):
        if i % 4 == 3:
            h.successes(1, 0.05)
        else:
            h.refusal(None)
            h.now += 0.05
        if h.limiter.snapshot().limit_reached_count:
            break
    assert h.limiter.snapshot().limit_reached_count == 1
    assert i < 45


def test_without_retry_after_the_pause_is_1s_and_doubles_to_8s_until_a_success() -> None:
    h = Hand()
    pauses = []
    for _ in range(6):
        for _ in range(CHAIN_MIN):
            h.refusal(None)
        snap = h.limiter.snapshot()
        pauses.append(snap.paused_for)
        assert snap.pause_reason == "limit reached, backoff"
        h.now = snap.paused_until or h.now
    assert pauses == [1.0, 2.0, 4.0, MAX_DEFAULT_PAUSE_S, MAX_DEFAULT_PAUSE_S, MAX_DEFAULT_PAUSE_S]
    h.successes(1, 0.1)
    for _ in range(CHAIN_MIN):
        h.refusal(None)
    assert h.limiter.snapshot().paused_for == 1.0


def test_one_pause_lasts_at_most_max_pause_and_says_why() -> None:
    h = Hand(now=100.0)
    assert MAX_PAUSE_S == 60.0
    for _ in range(CHAIN_MIN):
        h.refusal(600.0)  # sat out in full by its request; the endpoint waits 60 s
    snap = h.limiter.snapshot()
    assert (snap.paused_until, snap.pause_reason) == (160.0, "limit reached, Retry-After 600 s, capped")
    h.now = 160.0
    assert h.limiter.snapshot().pause_reason is None


def test_a_429_whose_request_gives_up_sets_no_pause_from_its_retry_after() -> None:
    h = Hand()
    for _ in range(CHAIN_MIN):
        permit = h.limiter._start(h.now, 0)
        h.limiter._release()
        h.limiter.on_rate_limited(99999999.0, permit=permit, waits=False)  # a daily quota: nobody waits a day
    snap = h.limiter.snapshot()
    assert snap.limit_reached_count == 1 and snap.paused_for == 1.0  # the short backoff, not a day


# ---- the rate climbs back -------------------------------------------------------------------------


def _learned_at_300() -> Hand:
    h = Hand()
    h.successes(300, 15.0 / 300)
    for _ in range(CHAIN_MIN):
        h.refusal(45.0)
    h.now = h.limiter.paused_until or h.now
    return h


def test_the_learned_rate_climbs_after_each_clean_minute_in_which_it_held_requests_back() -> None:
    h = _learned_at_300()
    first = h.limiter.learned_rpm
    assert first is not None
    rates = []
    for _ in range(3):
        h.limiter._adaptation.on_start(h.now, held_back_by_rate=True)
        h.now += RAISE_EVERY_S
        h.successes(1, 0.0)
        rates.append(h.limiter.learned_rpm)
    assert rates == pytest.approx([first * (1 + RAISE_STEP) ** k for k in (1, 2, 3)])  # 5 % of the good rate


def test_a_rate_the_workload_set_is_never_learned_nor_raised() -> None:
    h = _learned_at_300()
    first = h.limiter.learned_rpm
    for _ in range(5):  # the games asked for less than the learned rate: it never held one back
        h.now += RAISE_EVERY_S
        h.successes(1, 0.0)
    assert h.limiter.learned_rpm == first
    h2 = Hand()
    h2.successes(2000, 0.5)  # a slow workload for 1000 s, with strays now and then
    for _ in range(3):
        h2.refusal(1.0)
        h2.successes(30, 0.5)
    assert h2.limiter.learned_rpm is None and h2.limiter.snapshot().limit_reached_count == 0


def test_a_raise_that_reaches_the_limit_again_is_undone_and_the_next_waits_twice_as_long() -> None:
    h = _learned_at_300()
    adaptation = h.limiter._adaptation
    good = h.limiter.learned_rpm
    assert good is not None
    waits = []
    for _ in range(4):
        while True:  # clean intervals in which the rate held requests back, until a raise goes beyond the good rate
            h.limiter._adaptation.on_start(h.now, held_back_by_rate=True)
            h.now = max(h.now, adaptation._next_raise_at)
            h.successes(1, 0.0)
            if (h.limiter.learned_rpm or 0) > good * 1.001:
                break
        raised = h.limiter.learned_rpm
        assert raised == pytest.approx(good * (1 + RAISE_STEP))
        for _ in range(CHAIN_MIN):
            h.refusal(0.5)  # ... and reaches the limit
        assert h.limiter.learned_rpm is not None and h.limiter.learned_rpm <= LEARN_SHARE * raised
        waits.append(adaptation._raise_every)
        h.now = (h.limiter.paused_until or h.now) + 0.01
    assert waits == [2 * RAISE_EVERY_S, 4 * RAISE_EVERY_S, MAX_RAISE_EVERY_S, MAX_RAISE_EVERY_S]


def test_a_spell_of_refusals_at_the_good_rate_lowers_it_a_step_and_recovery_doubles_back() -> None:
    h = _learned_at_300()
    adaptation = h.limiter._adaptation
    good = h.limiter.learned_rpm
    assert good is not None
    h.now = adaptation._next_raise_at  # a clean interval at the good rate ...
    h.successes(1, 0.0)
    for _ in range(6):  # ... then an overload spell: the limit "reached" again and again, below the true one
        for _ in range(CHAIN_MIN):
            h.refusal(0.5)
        h.now = (h.limiter.paused_until or h.now) + 0.01
    low = h.limiter.learned_rpm
    assert low is not None and low <= LEARN_SHARE**5 * good
    assert adaptation._raise_every == RAISE_EVERY_S and adaptation._good_rpm == pytest.approx(LEARN_SHARE * good)
    minutes = 0
    while (h.limiter.learned_rpm or 0) < LEARN_SHARE * good * 0.999:
        h.limiter._adaptation.on_start(h.now, held_back_by_rate=True)
        h.now = max(h.now, adaptation._next_raise_at)
        h.successes(1, 0.0)
        minutes += 1
    assert minutes <= 4  # back to the good rate by doubling, in minutes


def test_a_learned_rate_that_reaches_the_configured_rpm_is_dropped() -> None:
    h = Hand(LimitSettings(concurrency=8, rpm=310))
    h.successes(300, 15.0 / 300)
    for _ in range(CHAIN_MIN):
        h.refusal(45.0)
    assert h.limiter.learned_rpm == pytest.approx(285, rel=0.01)
    h.now = h.limiter.paused_until or h.now
    for _ in range(3):
        h.limiter._adaptation.on_start(h.now, held_back_by_rate=True)
        h.now += RAISE_EVERY_S
        h.successes(1, 0.0)
    assert h.limiter.learned_rpm is None and h.limiter.effective_rpm == 310


# ---- whole runs on virtual time ---------------------------------------------------------------------


def _simulate(
    *,
    limit: int | None,
    stray: float,
    minutes: int = 6,
    seed: int = 0,
    spell: tuple[float, float, float] | None = None,
    after: float = 60.0,
) -> dict[str, float]:
    """16 games against a server allowing ``limit`` requests per rolling minute (None: no limit), refusing
    ``stray`` of the others at random (Retry-After 1 s); latency 1 s, concurrency 8. Each refused request
    sits out its Retry-After plus a jitter, as the call path does. Returns the achieved share of the limit
    after the first minute, 429s, the longest gap between successes after the first minute, and the
    longest Retry-After sent. ``spell`` (start, end, share): refuse that share at random in that time;
    ``after``: where the achieved share is counted from (the first minute by default)."""
    duration = 60.0 * minutes
    rng = random.Random(seed)

    async def main(clock: Clock) -> dict[str, float]:
        limiter = EndpointLimiter(LimitSettings(concurrency=8), clock=clock)
        window: deque[float] = deque()
        ok: list[float] = []
        refused = 0
        longest_wait = 0.0

        def server(t: float) -> float | None:
            while window and window[0] <= t - 60:
                window.popleft()
            if limit is not None and len(window) >= limit:
                return window[0] + 60 - t
            share = spell[2] if spell is not None and spell[0] <= t < spell[1] else stray
            if rng.random() < share:
                return 1.0
            window.append(t)
            return None

        async def game() -> None:
            nonlocal refused, longest_wait
            while clock() < duration:
                async with limiter.acquire() as permit:
                    wait = server(clock())
                    await anyio.sleep(1.0)
                    if wait is None:
                        ok.append(clock())
                        limiter.on_success(permit)
                    else:
                        refused += 1
                        longest_wait = max(longest_wait, wait)
                        limiter.on_rate_limited(wait, permit=permit)
                if wait is not None:
                    await anyio.sleep(wait + rng.uniform(0, min(wait / 10, 1.0)))

        async with anyio.create_task_group() as tg:
            for _ in range(16):
                tg.start_soon(game)
        late = [t for t in ok if t >= after]
        gaps = [b - a for a, b in pairwise(late)]
        achieved = len(late) / ((duration - after) / 60)
        return {
            "share": achieved / limit if limit else achieved,
            "refused": refused,
            "longest_gap": max(gaps, default=0.0),
            "longest_wait": longest_wait,
            "learned": limiter.learned_rpm or 0.0,
        }

    return run_virtual(main)


@pytest.mark.parametrize("concurrency", [1, 4, 8, 32, 64])
def test_a_limit_that_refuses_everything_is_told_by_the_chain_within_a_few_refusals(concurrency: int) -> None:
    """From t = 10 s the server refuses every request (no Retry-After, no headers): the chain tells it after
    a few refusals of requests sent since the first, whatever the requests in flight."""

    async def main(clock: Clock) -> int:
        limiter = EndpointLimiter(LimitSettings(concurrency=concurrency), clock=clock)
        refused = 0

        async def game() -> None:
            nonlocal refused
            while not limiter.snapshot().limit_reached_count:
                async with limiter.acquire() as permit:
                    await anyio.sleep(0.2)
                    if clock() < 10:
                        limiter.on_success(permit)
                        continue
                    if not limiter.snapshot().limit_reached_count:  # answers still in flight after it don't count
                        refused += 1
                        limiter.on_rate_limited(None, permit=permit)
                await anyio.sleep(0.05)

        async with anyio.create_task_group() as tg:
            for _ in range(concurrency):
                tg.start_soon(game)
        return refused

    refused = run_virtual(main)
    # The requests in flight when the first refusal came (at most the concurrency), then the chain's links.
    assert refused <= concurrency + CHAIN_MIN


@pytest.mark.slow
def test_a_spell_of_overload_costs_minutes_not_the_run() -> None:
    """A server allowing 400 a minute refuses 70 % of requests at random for a minute (an overload spell):
    the rate learned during it comes back within a few minutes."""
    result = _simulate(limit=400, stray=0.0, minutes=12, spell=(120.0, 180.0, 0.7), after=480.0)
    assert result["share"] >= 0.9


@pytest.mark.parametrize("limit", [60, 200, 400])
def test_an_unknown_rolling_minute_limit_is_held_at_90_percent_without_long_stalls(limit: int) -> None:
    result = _simulate(limit=limit, stray=0.0)
    assert result["share"] >= 0.9
    # No stall beyond the longest Retry-After, its jitter (at most 1 s) and the answer's latency (1 s).
    assert result["longest_gap"] <= result["longest_wait"] + 2.0


def test_stray_429s_lower_no_rate_and_cost_only_their_own_waits() -> None:
    clean = _simulate(limit=None, stray=0.0, minutes=3)
    noisy = _simulate(limit=None, stray=0.05, minutes=3)
    assert noisy["refused"] > 20 and noisy["learned"] == 0.0
    # Each refusal costs its request a second of 16 games' time; nothing more.
    assert noisy["share"] >= clean["share"] * 0.9


# ---- pacing under a late event loop ------------------------------------------------------------------


def test_late_wake_ups_are_caught_up_so_the_rate_holds_and_no_window_overflows() -> None:
    """A busy CPU wakes the waiting request late, by up to 40 % of the gap: the schedule does not slip."""
    rng = random.Random(3)
    for queued, expected_share in ((True, 0.99), (False, None)):
        pacing, now, starts = Pacing(None), 0.0, []
        for _ in range(1200):
            ready = pacing.ready_at(now, 0, 60.0)
            now = max(now, ready) + rng.uniform(0, 0.4)  # the wake-up's lateness
            pacing.start(now, 0, 60.0, queued=queued)
            starts.append(now)
        rate = len([t for t in starts if t < 600]) / 600 * 60
        assert max_in_any_window(starts, 60.0 + WINDOW_MARGIN_S - 1e-9) <= 60
        if expected_share is not None:
            assert rate >= expected_share * 60  # caught up
        else:
            assert rate < 0.9 * 60  # what booking from the wake-up lost: the lateness, every time


def test_a_request_that_finds_the_rate_idle_gets_no_burst() -> None:
    pacing = Pacing(None)
    pacing.start(0.0, 0, 600.0)
    assert pacing.ready_at(1000.0, 0, 600.0) == pytest.approx(0.1)
    pacing.start(1000.0, 0, 600.0)
    assert pacing.ready_at(1000.0, 0, 600.0) == pytest.approx(1000.1)  # idle time earned nothing
    pacing.start(1000.5, 0, 600.0, queued=True)  # a late waiter
    assert pacing.ready_at(1000.5, 0, 600.0) == pytest.approx(1000.2)  # the schedule holds: catch up
    assert CATCH_UP_S == 1.0


# ---- stopping -------------------------------------------------------------------------------------


def test_closing_a_paused_limiter_releases_every_waiter_at_once() -> None:
    async def main(clock: Clock) -> list[tuple[str, float]]:
        limiter = EndpointLimiter(LimitSettings(concurrency=2), clock=clock)
        limiter.on_rate_limited(50.0, limits=RateLimitHeaders(requests_remaining=0))
        seen: list[tuple[str, float]] = []

        async def call() -> None:
            try:
                async with limiter.acquire():
                    seen.append(("sent", clock()))
            except LimiterClosed:
                seen.append(("closed", clock()))

        async with anyio.create_task_group() as tg:
            for _ in range(5):
                tg.start_soon(call)
            await anyio.sleep(1.0)
            limiter.close()
        await call()  # and every later one
        return seen

    assert run_virtual(main) == [("closed", 1.0)] * 5 + [("closed", 1.0)]


# ---- game slots -----------------------------------------------------------------------------------


async def test_a_game_waiting_to_retry_lends_its_slot_to_the_next_game() -> None:
    slots = GameSlots(2)
    first = await slots.take()
    await slots.take()
    started = anyio.Event()

    async def third() -> None:
        await slots.take()
        started.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(third)
        await anyio.sleep(0.01)
        assert not started.is_set()  # both slots play
        with first.lent(), first.lent():  # both seats of a game sit out a Retry-After: one slot lent, once
            await started.wait()
            assert (slots.playing, slots.lent_out) == (2, 1)
        assert slots.playing == 3  # back from its wait, it plays on at once ...
        late = anyio.Event()

        async def fourth() -> None:
            await slots.take()
            late.set()

        tg.start_soon(fourth)
        await anyio.sleep(0.01)
        assert not late.is_set()  # ... and no new game starts until fewer than two play
        first.end()
        slots.give_back()
        await late.wait()


async def test_at_most_as_many_slots_are_lent_as_there_are() -> None:
    slots = GameSlots(2)
    games = [await slots.take(), await slots.take()]
    with games[0].lent(), games[1].lent():
        games += [await slots.take(), await slots.take()]  # two lent slots, two more games
        assert slots.lent_out == 2
        with games[2].lent():  # a third wait lends nothing: four games in memory at most
            assert (slots.playing, slots.lent_out) == (2, 2)


# ---- the headers -----------------------------------------------------------------------------------


def test_openai_and_anthropic_rate_limit_headers_are_read() -> None:
    openai = parse_rate_limit_headers({
        "x-ratelimit-limit-requests": "500", "x-ratelimit-remaining-requests": "0",
        "x-ratelimit-reset-requests": "6m0s", "x-ratelimit-limit-tokens": "30000",
        "x-ratelimit-remaining-tokens": "29000", "x-ratelimit-reset-tokens": "20ms",
    })  # fmt: skip
    assert openai == RateLimitHeaders(500, 0, 360.0, 30000, 29000, 0.02)
    assert openai.exhausted and openai.reset_s == 360.0
    anthropic = parse_rate_limit_headers(
        {
            "anthropic-ratelimit-requests-limit": "50",
            "anthropic-ratelimit-requests-remaining": "12",
            "anthropic-ratelimit-requests-reset": "2026-11-28T20:00:30Z",
            "anthropic-ratelimit-input-tokens-remaining": "0",
            "anthropic-ratelimit-input-tokens-reset": "2026-11-28T20:00:45Z",
        },
        now=1795896000.0,  # 2026-11-28T20:00:00Z
    )
    assert anthropic is not None
    assert (anthropic.requests_limit, anthropic.requests_remaining, anthropic.requests_reset_s) == (50, 12, 30.0)
    assert anthropic.exhausted and anthropic.reset_s == 45.0
    assert parse_rate_limit_headers({"x-ratelimit-remaining-requests": "lots", "content-type": "json"}) is None
    assert parse_rate_limit_headers({"x-ratelimit-reset-requests": "1h2m3.5s"}) == RateLimitHeaders(
        requests_reset_s=3723.5
    )
    assert parse_rate_limit_headers({"x-ratelimit-reset-requests": "0s"}) == RateLimitHeaders(requests_reset_s=0.0)
    assert parse_rate_limit_headers({"x-ratelimit-reset-tokens": "1d2h"}) == RateLimitHeaders(tokens_reset_s=93600.0)

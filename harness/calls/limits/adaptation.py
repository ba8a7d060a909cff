"""What a 429 changes: nothing but its own request's wait, unless the pattern says the limit was reached.

Providers answer 429 for two causes: the account's limit was reached, or the server is busy (a *stray*
refusal, common in a long run). Treating every 429 as the limit makes a run crawl for ever, since each
stray one lowers the rate; so the policy tells the two apart, and a 429 lowers the rate no longer than
its cause requires (the constants are below; docs/models.md, "Rate limits and 429s", says the same):

1. **A lone 429 delays only its own request**: the request sits out the server's Retry-After (plus a
   jitter, :mod:`harness.calls.retry`), and its game lends its slot to the next game meanwhile. Nothing
   is paused and no rate is lowered.
2. **The limit is reached** when, on a 429, any of these holds:

   * *headers*: the provider's rate-limit headers say nothing remains of a budget
     (:mod:`harness.providers.ratelimit_headers`);
   * *a chain*: a refusal and then ``CHAIN_MIN - 1`` (3) more of requests sent after it arrived, with no
     success of such a request in between (a reached limit refuses everything sent after it; a stray
     refusal is followed by successes); more where stray refusals are common: as many as make a chain
     of strays a one-in-a-million event (``CHAIN_ODDS``) at the share of refusals measured outside
     chains (5 at 5 %, 9 at 20 %; at most ``CHAIN_MAX``). Answers to requests sent before the chain's
     first refusal arrived are left out: a limit refuses at once while earlier requests may still succeed;
   * *a share*: at least ``SATURATED_SHARE`` (3/4) of the last ``SHARE_WINDOW`` (40) answers, or twice
     the requests in flight if more, were refusals (a server that lets a trickle through).
3. **Only then does the endpoint pause**, until the longest Retry-After of the event (at most
   ``MAX_PAUSE_S``, 60 s); without one, until the headers' reset, else 1 s doubling to 8 s
   (``DEFAULT_PAUSE_S``, ``MAX_DEFAULT_PAUSE_S``) while no request succeeds in between.
4. **Only then is a request rate learned**: ``LEARN_SHARE`` (0.95) of the limit the headers state, or of
   the successes of the last minute over the span they fill (the time busy plus the pause, at most a
   minute), which for a server counting a rolling minute is exactly its limit: it refused when its window
   was full, and it says how long until the window's oldest request leaves it. The headers' request limit
   is used only when requests ran out and it resets within a minute (a limit per day says nothing of a
   rate, nor one of requests when the tokens ran out). If the limit is reached again, the rate is learned
   again, never higher than ``LEARN_SHARE`` of the rate it replaces.
5. **The learned rate climbs back** after each ``RAISE_EVERY_S`` (60 s) in which the limit was not reached
   and the rate held requests back: by doubling, up to the *good* rate (the highest that went a clean
   interval), so an overload spell that drove it down costs minutes, not the run; beyond it by additive
   increase, ``RAISE_STEP`` (5 %). A raise beyond the good rate that reaches the limit again is undone
   by step 4, and the wait before the next raise doubles, up to ``MAX_RAISE_EVERY_S`` (5 minutes); the
   limit reached at the good rate or below (a spell, or a limit that was lowered) lowers the good rate
   by ``LEARN_SHARE`` and starts recovery again at the shortest wait. A learned rate that reaches a
   configured rpm is dropped.
6. **What the workload set is never learned**: only the patterns of step 2 teach a rate, so a slow
   workload (few games left, games waiting on each other) never passes its own pace off as the limit.

Measured against a loopback server with a hard sliding-window limit (``tests/benchmarks/bench_rate_limit.py``,
figures in docs/models.md).
"""

from __future__ import annotations

import math
from collections import deque
from itertools import islice

from harness.calls.limits.settings import WINDOW_S, LimitSettings
from harness.providers.ratelimit_headers import RateLimitHeaders

MAX_PAUSE_S = WINDOW_S  # longest pause of the whole endpoint (a per-minute limit clears in it)
DEFAULT_PAUSE_S = 1.0  # pause when the limit is reached and the server said nothing of how long
MAX_DEFAULT_PAUSE_S = 8.0  # cap of that pause, doubled for each further event without a success
CHAIN_MIN = 4  # refusals in a row that tell the limit from strays, at the least
CHAIN_MAX = 12  # ... and at the most, however common strays are
CHAIN_ODDS = 1e-6  # a chain of strays as long as the one required is at most this likely
STRAY_MEMORY = 200  # answers over which the share of refusals (for the chain length) is averaged
SATURATED_SHARE = 0.75  # this share of recent answers refused: the limit was reached
SHARE_WINDOW = 40  # recent answers that share is taken over (twice the requests in flight if more)
LEARN_SHARE = 0.95  # the learned rate is this share of the limit stated or measured
RAISE_STEP = 0.05  # additive increase: this share of the rate first learned ...
RAISE_EVERY_S = 60.0  # ... after this long without reaching the limit, while the rate held requests back
MAX_RAISE_EVERY_S = 300.0  # the wait between raises doubles up to this after a raise that reached the limit
MIN_RATE_SAMPLES = 3  # fewer successes in the last minute say too little to learn a rate from
MIN_SPAN_S = 1.0  # shortest span a rate is measured over, so a burst does not read as a huge rate


class Adaptation:
    """What the endpoint learned from its answers: the current pause and the learned request rate.

    It keeps no clock: the endpoint limiter passes ``now`` to every method, so that one reading of the
    clock serves a whole admission or answer.
    """

    def __init__(self, settings: LimitSettings) -> None:
        self._settings = settings
        self.paused_until = -math.inf
        self.pause_reason = ""  # why the endpoint is (or was last) paused
        self.rate_limited_count = 0
        self.limit_reached_count = 0  # 429s that the pattern told to be the limit, as events
        self.learned_rpm: float | None = None
        self._successes: deque[float] = deque()  # success times in the last minute
        self._last_start = -math.inf
        self._busy_since = -math.inf  # first start after a minute without any
        self._chain = 0  # refusals of requests sent since the chain's first refusal arrived, that one included
        self._chain_began_at = -math.inf  # when the chain's first refusal arrived
        self._stray_share = 0.0  # moving average of the refusal share over STRAY_MEMORY answers
        self._recent: deque[bool] = deque(maxlen=4 * SHARE_WINDOW)  # recent answers, True for a refusal
        self._event_at = -math.inf  # when the limit was last reached
        self._event_retry_after = 0.0  # the longest Retry-After of that event
        self._backoff_events = 0  # events since the last success (doubles the default pause)
        self._good_rpm = math.inf  # the highest learned rate that went a clean interval (or the first learned)
        self._raise_every = RAISE_EVERY_S
        self._next_raise_at = math.inf
        self._held_back = False  # the learned rate held a request back since the last raise
        self._clean_since_event = True  # a clean interval passed since the limit was last reached

    def set_settings(self, settings: LimitSettings) -> None:
        """The limits the user configured changed (tightened): a learned rate above the new rpm is dropped."""
        self._settings = settings
        if self.learned_rpm is not None:
            self._set_learned_rpm(self.learned_rpm)

    # ---- what the endpoint reports ----------------------------------------------------------

    def on_start(self, now: float, held_back_by_rate: bool = False) -> None:
        """A request started; ``held_back_by_rate``: it waited for the request rate (not the pause)."""
        if now - self._last_start > WINDOW_S:
            self._busy_since = now
        self._last_start = now
        self._held_back |= held_back_by_rate

    def on_success(self, now: float, started_at: float | None = None) -> bool:
        """A request succeeded: it breaks a chain, and after a clean interval the learned rate climbs.

        True if a limit was loosened, so that a waiting request may start sooner.
        """
        self._prune(now)
        self._successes.append(now)
        self._backoff_events = 0
        if started_at is None or started_at >= self._chain_began_at:
            self._chain = 0  # the endpoint accepted a request sent since the chain began: no limit
        if started_at is None or started_at >= self._event_at:
            self._answered(refused=False)
        return self._maybe_raise(now)

    def on_rate_limited(
        self,
        now: float,
        retry_after: float | None,
        *,
        started_at: float | None,
        waits: bool,
        in_flight: int,
        limits: RateLimitHeaders | None = None,
    ) -> None:
        """A request got a 429: count it, and if the pattern says the limit was reached, pause and learn a rate.

        ``started_at`` is when the rejected request started, if known; ``waits`` whether it will sit out
        a wait at all (a Retry-After beyond its budget: it gives up, and nobody should wait for it);
        ``limits`` what the 429's rate-limit headers said.
        """
        self.rate_limited_count += 1
        fresh = started_at is None or started_at >= self._event_at  # not an answer to a request of the last event
        began = self._chain == 0
        if began:
            self._chain, self._chain_began_at = 1, now  # any refusal may begin a chain
        elif started_at is None or started_at >= self._chain_began_at:
            self._chain += 1  # sent since the chain began, and refused too
        if fresh:
            self._answered(refused=True, stray=began)
        stated = limits is not None and limits.exhausted
        if now < self.paused_until:
            if waits and fresh and retry_after is not None:  # a later answer of this event asks for longer
                self._extend_pause(now, retry_after)
            return
        chain = self._chain >= self._chain_needed()
        if not (stated or chain or self._mostly_refused(in_flight)):
            return  # a stray refusal: only its own request waits
        self._limit_reached(now, retry_after if waits else None, limits)

    # ---- the pattern --------------------------------------------------------------------------

    def _answered(self, *, refused: bool, stray: bool = True) -> None:
        """Note an answer for the share rule and, for the stray share, a success or a refusal that began a
        chain (the refusals during a chain would otherwise raise the bar it has to clear)."""
        self._recent.append(refused)
        if stray:
            self._stray_share += (float(refused) - self._stray_share) / STRAY_MEMORY

    def _chain_needed(self) -> int:
        """Refusals in a row needed: enough that strays at the share seen would make such a chain a
        one-in-a-million event."""
        p = self._stray_share
        if p <= 0.0:
            return CHAIN_MIN
        if p >= 0.5:
            return CHAIN_MAX
        return min(CHAIN_MAX, max(CHAIN_MIN, math.ceil(math.log(CHAIN_ODDS) / math.log(p))))

    def _mostly_refused(self, in_flight: int) -> bool:
        window = max(SHARE_WINDOW, 2 * in_flight)
        if len(self._recent) < window:
            return False
        refused = sum(islice(reversed(self._recent), window))
        return refused >= SATURATED_SHARE * window

    # ---- the limit reached ----------------------------------------------------------------------

    def _limit_reached(self, now: float, retry_after: float | None, limits: RateLimitHeaders | None) -> None:
        """Pause the endpoint and learn a rate (steps 3 and 4 of the module doc)."""
        self.limit_reached_count += 1
        self._backoff_events += 1
        if self._chain:  # the chain's first refusal was counted as a stray: it was the limit
            self._stray_share = max(0.0, self._stray_share - 1.0 / STRAY_MEMORY)
        self._chain = 0
        self._recent.clear()
        reset = limits.reset_s if limits is not None else None
        if retry_after is not None:
            pause, reason = retry_after, "limit reached, Retry-After"
        elif reset is not None:
            pause, reason = reset, "limit reached, rate-limit headers"
        else:
            pause = min(DEFAULT_PAUSE_S * 2 ** (self._backoff_events - 1), MAX_DEFAULT_PAUSE_S)
            reason = "limit reached, backoff"
        if pause > MAX_PAUSE_S:
            pause, reason = MAX_PAUSE_S, f"{reason} {pause:g} s, capped"
        pause = max(pause, 0.0)
        self.paused_until = now + pause
        self.pause_reason = reason
        self._event_at = now
        self._event_retry_after = pause
        self._learn(now, pause, limits)

    def _extend_pause(self, now: float, retry_after: float) -> None:
        until = now + min(max(retry_after, 0.0), MAX_PAUSE_S)
        if until > self.paused_until:
            self.paused_until = until
            self._next_raise_at = max(self._next_raise_at, until + self._raise_every)

    def _learn(self, now: float, pause: float, limits: RateLimitHeaders | None) -> None:
        stated = _stated_rpm(limits)
        if stated is not None:
            rate: float | None = LEARN_SHARE * stated
        else:
            measured = self._measured_rpm(now, pause)
            rate = None if measured is None else LEARN_SHARE * measured
        previous = self.learned_rpm
        if previous is not None:
            if previous > self._good_rpm * (1 + 1e-9):
                self._raise_every = min(2 * self._raise_every, MAX_RAISE_EVERY_S)  # the last raise went too far
            else:
                # Reached at (or below) the rate known to be good: an overload spell, or a limit that was lowered.
                # The good rate gives a step, not more, and recovery starts again at the shortest wait.
                if previous >= self._good_rpm * (1 - 1e-9) and self._clean_since_event:
                    self._good_rpm = LEARN_SHARE * previous  # once a spell: its later events find it lowered
                self._raise_every = RAISE_EVERY_S
            rate = LEARN_SHARE * previous if rate is None else min(rate, LEARN_SHARE * previous)
        if rate is None:
            return  # too few successes to tell: the pause alone acts
        self._set_learned_rpm(rate)
        if previous is None and self.learned_rpm is not None:
            self._good_rpm = self.learned_rpm
        self._held_back = False
        self._clean_since_event = False
        self._next_raise_at = self.paused_until + self._raise_every

    def _maybe_raise(self, now: float) -> bool:
        """After a clean interval in which the learned rate held requests back: back to the good rate by
        doubling, then additive increase beyond it (see the module doc)."""
        rate = self.learned_rpm
        if rate is None or now < self._next_raise_at:
            return False
        self._next_raise_at = now + self._raise_every
        self._clean_since_event = True
        if not self._held_back:
            return False  # the workload set the pace: nothing to learn about the limit
        self._held_back = False
        if rate < self._good_rpm:
            self._set_learned_rpm(min(self._good_rpm, 2 * rate))
        else:
            self._good_rpm = rate  # a clean interval at this rate: it is good
            self._set_learned_rpm(rate + RAISE_STEP * rate)
        return True

    def _set_learned_rpm(self, rpm: float) -> None:
        configured = self._settings.rpm
        self.learned_rpm = None if configured is not None and rpm >= configured else rpm

    def _measured_rpm(self, now: float, pause: float) -> float | None:
        """The successes of the last minute, per minute of the span they fill (see the module doc)."""
        self._prune(now)
        if len(self._successes) < MIN_RATE_SAMPLES:
            return None
        span = min(WINDOW_S, max(now - self._busy_since + pause, MIN_SPAN_S))
        return len(self._successes) * 60.0 / span

    def _prune(self, now: float) -> None:
        """Forget the successes that left the rolling minute."""
        while self._successes and self._successes[0] + WINDOW_S <= now:
            self._successes.popleft()


def _stated_rpm(limits: RateLimitHeaders | None) -> float | None:
    """The request limit the headers state, when it is the budget that ran out and it is a per-minute one (its
    reset within a minute): a limit per day (some servers send that), or one of requests when the tokens ran
    out, says nothing of the rate to keep."""
    if limits is None or limits.requests_limit is None or limits.requests_limit <= 0:
        return None
    if limits.requests_remaining != 0:
        return None
    reset = limits.requests_reset_s
    return limits.requests_limit if reset is None or reset <= WINDOW_S else None

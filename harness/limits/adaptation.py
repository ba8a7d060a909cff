"""What a 429 changes: nothing but its own request's wait, unless the pattern says the limit was reached.

Providers answer 429 for two causes: the account's limit was reached, or the server is busy (a *stray*
refusal, common in a long run). Treating every 429 as the limit makes a run crawl for ever, since each
stray one lowers the rate; so the policy tells the two apart, and a 429 lowers the rate no longer than
its cause requires (the constants are below; the README's "Rate limits and 429s" says the same):

1. **A lone 429 delays only its own request**: the request sits out the server's Retry-After (plus a
   jitter, :mod:`harness.calls_retry`), and its game lends its slot to the next game meanwhile. Nothing
   is paused and no rate is lowered.
2. **The limit is reached** when, on a 429, any of these holds:

   * *headers*: the provider's rate-limit headers say nothing remains of a budget
     (:mod:`harness.providers.ratelimit_headers`);
   * *a chain*: ``CHAIN_MIN`` (4) refusals in a row of requests sent after the previous refusal arrived,
     or more where stray refusals are common: as many as make a chain of strays a one-in-a-million
     event (``CHAIN_ODDS``) at the share of refusals measured outside chains (5 at 5 %, 9 at 20 %; at most
     ``CHAIN_MAX``), with no success of a request sent since the chain began. Answers to requests sent
     before a refusal arrived are left out, since a limit refuses at once while earlier requests may
     still succeed; a success of a request sent since the chain's first refusal breaks it, since a
     reached limit refuses everything sent after it;
   * *a share*: at least ``SATURATED_SHARE`` (3/4) of the last ``SHARE_WINDOW`` (40) answers, or twice
     the requests in flight if more, were refusals (a server that lets a trickle through).
3. **Only then does the endpoint pause**, until the longest Retry-After of the event (at most
   ``MAX_PAUSE_S``, 60 s); without one, until the headers' reset, else 1 s doubling to 8 s
   (``DEFAULT_PAUSE_S``, ``MAX_DEFAULT_PAUSE_S``) while no request succeeds in between.
4. **Only then is a request rate learned**: ``LEARN_SHARE`` (0.95) of the limit the headers state, or of
   the successes of the last minute over the span they fill (the time busy plus the pause, at most a
   minute), which for a server counting a rolling minute is exactly its limit: it refused when its window
   was full, and it says how long until the window's oldest request leaves it. If the limit is reached
   again, the rate is learned again, never higher than ``LEARN_SHARE`` of the rate it replaces.
5. **The learned rate climbs back** by additive increase: ``RAISE_STEP`` (5 %) of the rate first learned,
   after each ``RAISE_EVERY_S`` (60 s) in which the limit was not reached and the rate held requests
   back. A raise that reaches the limit again is undone by step 4, and the wait before the next raise
   doubles, up to ``MAX_RAISE_EVERY_S`` (5 minutes). A learned rate that reaches a configured rpm is
   dropped.
6. **What the workload set is never learned**: only the patterns of step 2 teach a rate, so a slow
   workload (few games left, games waiting on each other) never passes its own pace off as the limit.

Measured against a loopback server with a hard sliding-window limit (``tests/benchmarks/bench_rate_limit.py``,
figures in the README).
"""

from __future__ import annotations

import math
from collections import deque
from itertools import islice

from harness.limits.settings import WINDOW_S, LimitSettings
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
        self._last_refusal_at = -math.inf  # when the latest 429 arrived
        self._chain = 0  # refusals in a row of requests sent after the previous refusal arrived
        self._chain_began_at = -math.inf  # when the chain's first refusal arrived
        self._stray_share = 0.0  # moving average of the refusal share over STRAY_MEMORY answers
        self._recent: deque[bool] = deque(maxlen=4 * SHARE_WINDOW)  # recent answers, True for a refusal
        self._event_at = -math.inf  # when the limit was last reached
        self._event_retry_after = 0.0  # the longest Retry-After of that event
        self._backoff_events = 0  # events since the last success (doubles the default pause)
        self._first_learned: float | None = None  # the rate first learned: the step of the increase
        self._raise_every = RAISE_EVERY_S
        self._next_raise_at = math.inf
        self._held_back = False  # the learned rate held a request back since the last raise

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
        sent_after = started_at is None or started_at >= self._last_refusal_at
        self._last_refusal_at = max(self._last_refusal_at, now)
        if sent_after:
            if self._chain == 0:
                self._chain_began_at = now
            self._chain += 1
        if fresh:
            self._answered(refused=True, stray=self._chain <= 1)
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
        """Note an answer for the share rule and, unless it is a later link of a chain, for the stray share
        (a chain's own refusals would otherwise raise the bar it has to clear)."""
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
        stated = limits.requests_limit if limits is not None else None
        if stated is not None and stated > 0:
            rate: float | None = LEARN_SHARE * stated
        else:
            measured = self._measured_rpm(now, pause)
            rate = None if measured is None else LEARN_SHARE * measured
        previous = self.learned_rpm
        if previous is not None:
            self._raise_every = min(2 * self._raise_every, MAX_RAISE_EVERY_S)  # the last raise went too far
            rate = LEARN_SHARE * previous if rate is None else min(rate, LEARN_SHARE * previous)
        if rate is None:
            return  # too few successes to tell: the pause alone acts
        self._set_learned_rpm(rate)
        if self._first_learned is None or previous is None:
            self._first_learned = self.learned_rpm
        self._held_back = False
        self._next_raise_at = self.paused_until + self._raise_every

    def _maybe_raise(self, now: float) -> bool:
        """Additive increase after a clean interval in which the learned rate held requests back."""
        if self.learned_rpm is None or now < self._next_raise_at:
            return False
        self._next_raise_at = now + self._raise_every
        if not self._held_back:
            return False  # the workload set the pace: nothing to learn about the limit
        self._held_back = False
        step = RAISE_STEP * (self._first_learned or self.learned_rpm)
        self._set_learned_rpm(self.learned_rpm + step)
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

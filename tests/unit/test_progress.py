"""The live display says when an endpoint is paused after a 429, for how much longer and why."""

from __future__ import annotations

import io
import itertools
from collections import Counter
from dataclasses import replace

import pytest
from rich.console import Console

from harness.calls.limits import LimiterRegistry, LimitSettings
from harness.calls.path import CallStats
from harness.cli.progress import _View, pauses, summary_line
from harness.config.plan import ConditionPlan, condition_plans
from harness.config.presets.evaluation import eval_config
from harness.engine.model_games import Monitor
from harness.engine.progress import Progress
from harness.game.horizon import FixedHorizon, GeometricHorizon, Horizon
from harness.providers.ratelimit_headers import RateLimitHeaders

SPENT = RateLimitHeaders(requests_remaining=0)  # a 429 whose headers say the limit was reached


def monitor(now: list[float]) -> tuple[Monitor, LimiterRegistry]:
    registry = LimiterRegistry(clock=lambda: now[0])
    progress = Progress(games_total=4, per_condition_total=Counter({"vs_TFT": 4}))
    return Monitor(run_id="r1", progress=progress, stats=CallStats(), limiters=registry), registry


def test_a_paused_endpoint_is_shown_with_the_seconds_left_and_the_reason() -> None:
    now = [1000.0]
    m, registry = monitor(now)
    openai = registry.get("openai", "https://api.openai.com/v1", "sk-a", LimitSettings())
    registry.get("anthropic", "https://api.anthropic.com", "sk-b", LimitSettings())
    assert pauses(m) == [] and "paused" not in summary_line(m)

    openai.on_rate_limited(12.0)  # a stray 429: only its own request waits
    assert pauses(m) == []
    openai.on_rate_limited(12.0, limits=SPENT)
    assert pauses(m) == ["openai paused 12 s (limit reached, Retry-After)"]
    assert summary_line(m).endswith(" | ETA — | openai paused 12 s (limit reached, Retry-After)")
    now[0] += 12.5
    assert pauses(m) == []
    openai.on_rate_limited(3600.0, limits=SPENT)
    now[0] += 2.5
    assert pauses(m) == ["openai paused 58 s (limit reached, Retry-After 3600 s, capped)"]  # 57.5 s left
    now[0] += 60
    assert pauses(m) == [] and "paused" not in summary_line(m)


def test_two_endpoints_of_one_provider_are_told_apart_by_host() -> None:
    now = [0.0]
    m, registry = monitor(now)
    local = registry.get("openai", "http://127.0.0.1:8000/v1", None, LimitSettings())
    registry.get("openai", "https://api.openai.com/v1", "sk-a", LimitSettings())
    local.on_rate_limited(None, limits=SPENT)
    assert pauses(m) == ["openai 127.0.0.1:8000 paused 1 s (limit reached, backoff)"]


def test_the_terminal_view_shows_the_pause_on_its_own_line() -> None:
    now = [0.0]
    m, registry = monitor(now)
    registry.get("openai", None, "sk-a", LimitSettings()).on_rate_limited(12.0, limits=SPENT)
    out = io.StringIO()
    Console(file=out, width=200, color_system=None).print(_View(m))
    lines = out.getvalue().splitlines()
    assert "⏸ openai paused 12 s (limit reached, Retry-After)" in lines
    assert sum("paused" in line for line in lines) == 1  # not repeated in the dim summary line


# -- progress and the time left, counted in model moves -------------------------------------------------------
def test_eta_text_reads_seconds_minutes_hours_days() -> None:
    from harness.cli.progress import eta_text

    cases = {None: "—", float("inf"): "—", -3.0: "0s", 0.2: "1s", 59.0: "59s", 60.0: "1m00s", 185.4: "3m06s",
             3599.0: "59m59s", 3600.0: "1h00m", 7_621.0: "2h08m", 86_400.0: "1d00h",
             3 * 86_400 + 4 * 3600: "3d04h"}  # fmt: skip
    for seconds, text in cases.items():
        assert eta_text(seconds) == text, seconds


def test_share_is_bounded_and_a_condition_with_nothing_left_is_full() -> None:
    from harness.cli.progress import share

    assert share(0, 40) == 0.0 and share(10, 40) == 0.25 and share(50, 40) == 1.0
    assert share(0, 0) == 1.0 and share(3, 0.0) == 1.0


def test_counters_wrap_between_counters_never_inside_one() -> None:
    from harness.cli.progress import wrap

    items = ["games 10/27", "model moves 200/540 (37%)", "rounds 200", "calls 208 (51.0/s)"]
    assert wrap(items, 80) == ["games 10/27  ·  model moves 200/540 (37%)  ·  rounds 200  ·  calls 208 (51.0/s)"]
    assert wrap(items, 41) == ["games 10/27  ·  model moves 200/540 (37%)", "rounds 200  ·  calls 208 (51.0/s)"]
    assert wrap(items, 40) == ["games 10/27", "model moves 200/540 (37%)  ·  rounds 200", "calls 208 (51.0/s)"]
    assert wrap(items, 12) == items  # each alone; one longer than the width keeps its own line whole


def condition(name: str, horizon: Horizon, seats: int = 1, comprehension: list[int] | None = None) -> ConditionPlan:
    """A condition named ``name`` with ``seats`` model seats (mock/tft; ``comprehension``: the rounds it is asked
    the rules in, every kind of question: 5 in round 1, 6 later) against TFT."""
    base = condition_plans(eval_config("mock/tft", opponents=["TFT"], rounds=10, comprehension=comprehension))[0]
    a = base.player_a if seats >= 1 else base.player_b
    b = base.player_a if seats == 2 else base.player_b
    return replace(base, name=name, player_a=a, player_b=b, horizon=horizon)


def test_seconds_left_is_the_calls_left_at_the_rate_so_far() -> None:
    # Two conditions of 4 games: one model seat and 10 rounds; two seats (LLM against LLM) and a geometric
    # horizon of stop probability 0.1 (10 rounds expected, 9 more after any round played).
    one, two = condition("one_model", FixedHorizon(10)), condition("two_models", GeometricHorizon(0.1), seats=2)
    p = Progress(games_total=8, started=100.0)
    p.plan(one, 4)
    p.plan(two, 4)
    assert (p.rounds_planned, p.moves_planned) == (80.0, 120.0)
    assert p.seconds_left(100.0) is None  # before the first move nothing can be told
    for r in range(1, 6):
        p.round_played(one, 0, r)
        p.round_played(two, 4, r)
    assert (p.rounds, p.moves) == (10, 15)
    # Game 4 has played 5 rounds and is expected to play 9 more: 14 rounds (28 moves) instead of 10 (20).
    assert p.rounds_planned == pytest.approx(84.0) and p.moves_planned == pytest.approx(128.0)
    assert p.seconds_left(130.0) == pytest.approx(226.0)  # 15 moves in 30 s, 113 left: 30 / 15 * 113
    # It ends after those 5 rounds: 9 rounds, 18 moves fewer to play.
    p.game_ended(two, 4, 5)
    assert (p.rounds_planned, p.moves_planned) == (pytest.approx(75.0), pytest.approx(110.0))
    assert p.seconds_left(130.0) == pytest.approx(190.0)  # 30 / 15 * 95
    assert p.per_condition_rounds_planned["two_models"] == pytest.approx(35.0)
    assert p.per_condition_rounds["two_models"] == 5


def test_the_last_geometric_game_shows_progress_instead_of_sitting_at_100_percent() -> None:
    """One game of stop probability 1/4 (4 rounds expected, 3 more after any round) that lasts 10 rounds: the
    share after round r is r / (r + 3) and reaches 100% when the game ends. Counted against its expected
    length, it sat at 100% from round 4 on (the 6 minutes the issue saw); under a cap of 6 rounds the rest
    shrinks to what the cap leaves."""
    from harness.cli.progress import run_share

    game = condition("vs_TFT", GeometricHorizon(0.25))
    p = Progress(games_total=1, started=0.0)
    p.plan(game, 1)
    shares = []
    for r in range(1, 11):
        p.round_played(game, 0, r)
        shares.append(run_share(p))
        assert shares[-1] == pytest.approx(r / (r + 3))
        assert p.seconds_left(float(r)) == pytest.approx(3.0)  # a round a second, 3 expected to come
    assert all(a < b < 1 for a, b in itertools.pairwise(shares))
    p.game_ended(game, 0, 10)
    assert run_share(p) == 1.0 and p.seconds_left(10.0) is None
    capped = condition("capped", GeometricHorizon(0.25, max_rounds=6))
    p = Progress(games_total=1, started=0.0)
    p.plan(capped, 1)
    for r in range(1, 3):
        p.round_played(capped, 0, r)
    assert p.rounds_planned == pytest.approx(2 + 0.75 + 0.5625 + 0.421875 + 0.31640625)  # rounds 3 to 6
    for r in range(3, 7):
        p.round_played(capped, 0, r)
    assert p.rounds_planned == pytest.approx(6.0) and run_share(p) == pytest.approx(1.0)


def test_comprehension_questions_are_counted_as_they_are_answered() -> None:
    """Two games of 10 rounds with questions before rounds 1 and 5: 20 moves and 2 x (5 + 6) = 22 questions
    planned. The first answers move the bar before any move is made (the issue saw 40 s of 0%)."""
    from harness.cli.progress import calls_counter, run_share

    checked = condition("vs_TFT", FixedHorizon(10), comprehension=[1, 5])
    p = Progress(games_total=2, started=0.0)
    p.plan(checked, 2)
    assert (p.moves_planned, p.questions_planned, p.calls_planned) == (20.0, 22.0, 42.0)
    for _ in range(3):
        p.question_answered(0)
    assert (p.moves, p.questions) == (0, 3) and run_share(p) == pytest.approx(3 / 42)
    assert calls_counter(p) == "model moves 0/20, questions 3/22 (7%)"
    assert p.seconds_left(6.0) == pytest.approx(6.0 / 3 * 39)
    for _ in range(2):
        p.question_answered(0)
    p.round_played(checked, 0, 1)
    assert (p.moves, p.questions, p.calls_planned) == (1, 5, 42.0)  # a fixed game's plan does not move
    assert calls_counter(condition_free_progress()) == "model moves 0/10 (0%)"  # no check: as before


def condition_free_progress() -> Progress:
    p = Progress(games_total=1)
    p.plan(condition("vs_TFT", FixedHorizon(10)), 1)
    return p


def test_the_eta_of_a_tournament_with_a_model_never_grows_at_a_steady_rate() -> None:
    """A tournament of 3 strategies and a model, 2 replicates, 10 rounds a game: the 12 games among strategies
    end at once, the 8 with the model at 2 moves a second. Counted in games, the ETA jumped up as the fast games
    were done and the slow ones were left (the growth issue 11 saw); counted in model moves it falls by exactly
    the time that passed: at a steady rate r, ETA(t) = moves_planned / r - t."""
    strategies, with_model = condition("strategies", FixedHorizon(10), 0), condition("with_model", FixedHorizon(10))
    p = Progress(games_total=20, started=0.0)
    p.plan(strategies, 12)
    p.plan(with_model, 8)
    t, etas, by_games = 0.0, [], []
    for game in range(12):  # the strategy games, in the first instant
        for r in range(1, 11):
            p.round_played(strategies, game, r)
        p.game_ended(strategies, game, 10)
        p.games_done += 1
    for game in range(8):
        for r in range(1, 11):
            t += 0.5
            p.round_played(with_model, 12 + game, r)
            if (game, p.rounds) != (7, 200):
                etas.append((t, p.seconds_left(t)))
        p.game_ended(with_model, 12 + game, 10)
        p.games_done += 1
        if p.games_done < p.games_total:
            by_games.append(t / p.games_done * (p.games_total - p.games_done))
    assert all(eta is not None and abs(t + eta - 40.0) < 1e-9 for t, eta in etas)  # 80 moves at 2/s: 40 s in all
    assert p.seconds_left(t) is None  # every move made
    assert max(b - a for a, b in itertools.pairwise(by_games)) > 0  # the old count in games grew


def test_a_resumed_run_starts_from_what_it_had_recorded() -> None:
    """Two conditions of 3 games of 10 rounds with questions before rounds 1 and 5 (5 + 6 a game): a resume
    keeps 2 games of the first (done before: 20 rounds, 20 moves, 22 questions) and replays game 3, which had
    recorded 4 rounds and the 5 answers of round 1 and 2 of round 5's 6. Its counts start there and its total is
    the whole run's; the replayed rounds and answers are not counted again, and its rate counts only this session."""
    first = condition("first", FixedHorizon(10), comprehension=[1, 5])
    second = replace(first, name="second")
    p = Progress(games_total=6, started=0.0)
    for cond, kept in ((first, 2), (second, 0)):
        p.plan(cond, 3 - kept)
    p.recorded(first, 10, 2)
    p.replaying(first, 3, 4, 7)
    assert (p.games_done, p.per_condition_done["first"]) == (2, 2)
    assert (p.rounds, p.moves, p.questions) == (24, 24, 29) and p.before == 53
    assert (p.rounds_planned, p.moves_planned, p.questions_planned) == (60.0, 60.0, 66.0)
    assert p.per_condition_rounds["first"] == 24 and p.per_condition_rounds_planned["first"] == 30.0
    assert p.seconds_left(5.0) is None  # nothing made in this session yet
    for _ in range(5 + 2):  # the replay: round 1's answers and rounds 1 to 4, then round 5's first answers ...
        p.question_answered(3)
    for r in range(1, 5):
        p.round_played(first, 3, r)
    assert (p.rounds, p.moves, p.questions) == (24, 24, 29)  # ... counted before the resume
    for _ in range(4):  # round 5's other 4 answers and its move are new
        p.question_answered(3)
    p.round_played(first, 3, 5)
    assert (p.rounds, p.moves, p.questions) == (25, 25, 33)
    assert p.seconds_left(5.0) == pytest.approx(5.0 / 5 * (126 - 58))  # 5 calls in 5 s; 68 left


# -- a stop is said at once, with what the run waits for ------------------------------------------------------


def test_a_stop_is_shown_at_once_with_what_the_run_waits_for_instead_of_the_pauses() -> None:
    from harness.cli.progress import stopping
    from harness.engine.interrupts import StopFlag

    now = [0.0]
    m, registry = monitor(now)
    m.stop = StopFlag()
    limiter = registry.get("openai", None, "sk-a", LimitSettings())
    limiter.on_rate_limited(30.0, limits=SPENT)  # paused for 30 s ...
    limiter._start(0.0, 0)  # ... with one answer still to come
    assert stopping(m) is None
    m.stop.set("interrupted by the user (Ctrl-C)")
    note = stopping(m)
    assert note == (
        "Stopping (interrupted by the user (Ctrl-C)): no new game, round or request starts; waiting for the 1 answer "
        "already sent (paid for, so kept); Ctrl-C twice more abandons them"
    )
    out = io.StringIO()
    Console(file=out, width=300, color_system=None).print(_View(m))
    lines = out.getvalue().splitlines()
    assert note in lines and not any("paused" in line for line in lines)  # the pause no longer holds the run
    limiter._release()
    assert stopping(m) == (
        "Stopping (interrupted by the user (Ctrl-C)): no new game, round or request starts; saving what was recorded"
    )


def test_off_a_terminal_a_stop_is_printed_before_the_next_status_line() -> None:
    import time

    from harness.cli.progress import live_display
    from harness.engine.interrupts import StopFlag

    now = [0.0]
    m, _ = monitor(now)
    m.stop = StopFlag()
    out = io.StringIO()
    console = Console(file=out, force_terminal=False)
    with live_display(m, console, plain_every=3600.0):  # no status line for an hour
        m.stop.set("interrupted by the user (Ctrl-C)")
        deadline = time.monotonic() + 30  # a bound for a stalled machine, not the promise (0.1 s polls)
        while "Stopping" not in out.getvalue() and time.monotonic() < deadline:
            time.sleep(0.01)
        lines = out.getvalue().splitlines()
    assert lines == ["[r1] Stopping (interrupted by the user (Ctrl-C)): no new game, round or request starts; "
                     "saving what was recorded"]  # fmt: skip


def test_the_prompt_cache_counter_shows_once_an_answer_reported_the_providers_cache() -> None:
    m, _ = monitor([0.0])
    m.stats.input_tokens = 4000
    assert "prompt cache" not in summary_line(m)  # a provider silent on its cache: nothing new
    m.stats.cache_reported, m.stats.cached_input_tokens, m.stats.cache_saved_usd = True, 3000, 0.0123
    assert " | prompt cache 75% of input, saved $0.0123 | " in summary_line(m)  # 3,000 of 4,000 input tokens


def test_batch_mode_shows_its_batches_and_the_time_waited() -> None:
    from harness.calls.batch import BatchCounters

    now = [0.0]
    m, _ = monitor(now)
    assert "batches" not in summary_line(m, now=0.0)  # a run without batch mode says nothing of batches
    b = m.batches = BatchCounters()
    b.sent(40)
    assert b.out_since is not None
    start = b.out_since
    b.sent(40)
    assert "batches 2 submitted, 2 in progress, 0 done; waited 1m05s" in summary_line(m, now=start + 65)
    b.finished(failed=False)
    b.finished(failed=True)  # the last out: the wait ends
    assert b.in_progress == 0 and b.out_since is None
    waited = b.waited_s
    assert "batches 2 submitted, 0 in progress, 1 done, 1 failed" in summary_line(m, now=start + 1e6)
    assert b.waited(now=start + 1e6) == waited  # no batch out: the wait does not grow


async def test_unreadable_answers_to_questions_are_counted_apart_from_move_parse_failures() -> None:
    """A run with comprehension questions the model cannot answer readably: its live "parse failures" counts moves
    only (the issue saw 51, of which 50 were comprehension answers)."""
    from harness.calls.limits import EndpointLimiter
    from harness.calls.path import CallPath, CallTag, Reading
    from harness.calls.pricing import PriceTable
    from harness.providers.base import Completion, Endpoint, Sample, SamplingParams, local_decision

    class Mumbles:
        name, model, offline = "fake", "m", True
        endpoint = Endpoint("fake", None)
        service_tier = None

        async def generate(self, *args: object, **kwargs: object) -> Completion:
            return Completion(text="hmm", input_tokens=1, output_tokens=1, model="m")

        def should_retry(self, error: BaseException) -> object:
            return local_decision(error)

        async def aclose(self) -> None:
            pass

    path = CallPath(cache=None, prices=PriceTable([]))
    limiter = EndpointLimiter(LimitSettings())

    def unreadable(text: str) -> Reading[None]:
        return Reading(None, unreadable="no move in it")

    for purpose, n in (("comprehension", 3), ("move", 1)):
        tag = CallTag(game_id=1, round=1, player="a", sample=Sample("c", 0, "a"), purpose=purpose)
        for i in range(n):
            await path.request(Mumbles(), limiter, [{"role": "user", "content": f"q{i}"}], SamplingParams(), tag, 1,
                               read=unreadable)  # type: ignore[arg-type]  # fmt: skip
    assert (path.stats.parse_failures, path.stats.unreadable_other) == (1, 3)
    m, _ = monitor([0.0])
    m.stats.parse_failures, m.stats.unreadable_other = 1, 3
    line = summary_line(m, now=0.0)
    assert "parse failures 1" in line and "unreadable answers to questions 3" in line

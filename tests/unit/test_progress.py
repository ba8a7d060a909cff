"""The live display says when an endpoint is paused after a 429, for how much longer and why."""

from __future__ import annotations

import io
from collections import Counter

from rich.console import Console

from harness.calls import CallStats
from harness.limits import LimiterRegistry, LimitSettings
from harness.progress import _View, pauses, summary_line
from harness.runner import Monitor
from harness.scheduler import Progress


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

    openai.on_rate_limited(12.0)
    assert pauses(m) == ["openai paused 12 s (429 Retry-After)"]
    assert summary_line(m).endswith(" | ETA — | openai paused 12 s (429 Retry-After)")
    now[0] += 2.5
    assert pauses(m) == ["openai paused 10 s (429 Retry-After)"]  # 9.5 s left, rounded up
    openai.on_rate_limited(3600.0)
    assert pauses(m) == ["openai paused 60 s (429 Retry-After 3600 s, capped)"]
    now[0] += 60
    assert pauses(m) == [] and "paused" not in summary_line(m)


def test_two_endpoints_of_one_provider_are_told_apart_by_host() -> None:
    now = [0.0]
    m, registry = monitor(now)
    local = registry.get("openai", "http://127.0.0.1:8000/v1", None, LimitSettings())
    registry.get("openai", "https://api.openai.com/v1", "sk-a", LimitSettings())
    local.on_rate_limited(None)
    assert pauses(m) == ["openai 127.0.0.1:8000 paused 1 s (429 backoff)"]


def test_the_terminal_view_shows_the_pause_on_its_own_line() -> None:
    now = [0.0]
    m, registry = monitor(now)
    registry.get("openai", None, "sk-a", LimitSettings()).on_rate_limited(12.0)
    out = io.StringIO()
    Console(file=out, width=200, color_system=None).print(_View(m))
    lines = out.getvalue().splitlines()
    assert "⏸ openai paused 12 s (429 Retry-After)" in lines
    assert sum("paused" in line for line in lines) == 1  # not repeated in the dim summary line

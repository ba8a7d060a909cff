"""The live view of a run with model players: Rich on a terminal, plain lines elsewhere.

The display polls the run's counters (:class:`~harness.runner.Monitor`) a few times a second
from Rich's refresh thread; the run itself never waits for the screen. While an endpoint is paused
after a 429 (see :mod:`harness.limits`), it says so, with the time left and why: a run that seems
to stand still is waiting for the server, not hung.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO
from urllib.parse import urlsplit

from rich.console import Console, Group
from rich.live import Live
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from harness.runner import Monitor


def _eta(m: Monitor) -> str:
    p = m.progress
    elapsed = time.monotonic() - p.started
    done = p.games_done
    if done == 0 or done >= p.games_total:
        return "—"
    left = elapsed / done * (p.games_total - done)
    return f"{int(left // 60)}m{int(left % 60):02d}s"


def pauses(m: Monitor) -> list[str]:
    """One note per paused endpoint, e.g. ``openai paused 12 s (429 Retry-After)``. An endpoint is
    named by its provider, and by its host too when the run uses several endpoints of that provider."""
    limiters = m.limiters.limiters()
    providers = [provider for provider, _, _ in limiters]
    notes = []
    for (provider, base_url, _), limiter in limiters.items():
        snap = limiter.snapshot()
        if snap.paused_for is None:
            continue
        name = provider
        if providers.count(provider) > 1 and base_url:
            name = f"{provider} {urlsplit(base_url).netloc or base_url}"
        notes.append(f"{name} paused {math.ceil(snap.paused_for)} s ({snap.pause_reason})")
    return notes


def summary_line(m: Monitor, *, with_pauses: bool = True) -> str:
    p, s = m.progress, m.stats
    elapsed = max(time.monotonic() - p.started, 1e-9)
    limited = sum(lim.rate_limited_count for lim in m.limiters.limiters().values())
    return (
        f"games {p.games_done}/{p.games_total}"
        + (f" ({p.games_failed} failed)" if p.games_failed else "")
        + f" | rounds {p.rounds:,} | calls {s.calls:,} ({s.calls / elapsed:,.1f}/s) | cache hits {s.cached:,}"
        f" | tokens in {s.input_tokens:,} out {s.output_tokens:,} | cost ${s.cost_usd:,.4f}"
        f" | retries {s.retries} | 429s {max(limited, s.rate_limited)} | parse failures {s.parse_failures}"
        f" | ETA {_eta(m)}" + ("".join(f" | {note}" for note in pauses(m)) if with_pauses else "")
    )


class _View:
    def __init__(self, monitor: Monitor) -> None:
        self.m = monitor

    def __rich__(self) -> Group:
        p = self.m.progress
        table = Table(title=f"[bold]{self.m.run_id}[/bold]", show_edge=False, header_style="bold")
        table.add_column("condition")
        table.add_column("games", justify="right")
        table.add_column("", width=30)
        for name, total in p.per_condition_total.items():
            done = p.per_condition_done[name]
            table.add_row(name, f"{done}/{total}", ProgressBar(total=max(total, 1), completed=done, width=30))
        summary = Text(summary_line(self.m, with_pauses=False).replace(" | ", "  ·  "), style="dim")
        return Group(table, summary, *(Text(f"⏸ {note}", style="yellow") for note in pauses(self.m)))


@contextmanager
def live_display(monitor: Monitor, console: Console, plain_every: float = 5.0) -> Iterator[None]:
    """Rich live progress on a terminal; otherwise a plain status line every ``plain_every`` seconds."""
    if console.is_terminal:
        with Live(_View(monitor), console=console, refresh_per_second=4, transient=False):
            yield
        return
    stop = threading.Event()
    out: IO[str] = console.file

    def report() -> None:
        while not stop.wait(plain_every):
            print(f"[{monitor.run_id}] {summary_line(monitor)}", file=out, flush=True)

    thread = threading.Thread(target=report, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        print(f"[{monitor.run_id}] {summary_line(monitor)}", file=out, flush=True)

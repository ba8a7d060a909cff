"""The live view of a run with model players: Rich on a terminal, plain lines elsewhere.

The display polls the run's counters (:class:`~harness.engine.model_games.Monitor`) a few times a second
from Rich's refresh thread; the run itself never waits for the screen. Progress and the time left
are counted in model calls (moves and comprehension questions) and rounds
(:class:`~harness.engine.progress.Progress`), not in games: a game takes minutes, a call a second, so the bars
move from the first answer, and the ETA, taken from :meth:`~harness.engine.progress.Progress.seconds_left`,
does not grow because fast games (strategies against each other) finished first. While an endpoint is paused
after a 429 (see :mod:`harness.calls.limits`), the view says so, with the time left and why: a run that seems
to stand still is waiting for the server, not hung.

The view fits the terminal: at 80 columns it shows each condition's name, its bar (by rounds) and its
games, at 100 and more its rounds and share too; the counters are laid out on as many lines as the
width needs, a counter never split; and when the conditions outnumber the lines, the unfinished ones
are shown first and the rest summed on one line, so the counters are never pushed off the screen.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO
from urllib.parse import urlsplit

from rich.console import Console, ConsoleOptions, RenderableType
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from harness.calls.batch import BatchCounters
from harness.calls.request import CallStats
from harness.engine.model_games import Monitor
from harness.engine.progress import Progress
from harness.util.plural import plural

WIDE = 100  # from this many columns, each condition's rounds and share are shown too
STOP_POLL_S = 0.1  # how often the plain display looks for a stop, to say it at once
SEPARATOR = "  ·  "


def eta_text(seconds: float | None) -> str:
    """The time left, to the second under an hour (``45s``, ``3m05s``), then to the minute (``2h07m``), then
    to the hour (``3d04h``); ``—`` when it cannot be told (before the first model move, after the last)."""
    if seconds is None or not math.isfinite(seconds):
        return "—"
    s = max(0, math.ceil(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    m = math.ceil(s / 60)
    if m < 24 * 60:
        return f"{m // 60}h{m % 60:02d}m"
    h = math.ceil(s / 3600)
    return f"{h // 24}d{h % 24:02d}h"


def share(done: float, planned: float) -> float:
    """``done`` out of ``planned``, from 0 to 1; all done when nothing was planned (a condition a resumed run
    had already finished) and at most 1 (a geometric game longer than expected overshoots its plan)."""
    if planned <= 0:
        return 1.0
    return min(1.0, max(0.0, done / planned))


def run_share(p: Progress) -> float:
    """How far the run is, by model calls, moves and comprehension questions (what takes the time, and what the
    ETA counts); by rounds in the odd session that plans no model call."""
    return share(p.calls, p.calls_planned) if p.calls_planned > 0 else share(p.rounds, p.rounds_planned)


def calls_counter(p: Progress) -> str:
    """``model moves 200/540 (37%)``, or with a comprehension check ``model moves 200/540, questions 50/60 (39%)``:
    the calls the bar counts, by what they ask, and the share of them made."""
    moves = f"model moves {p.moves:,}/{max(p.moves_planned, p.moves):,.0f}"
    questions = (
        f", questions {p.questions:,}/{max(p.questions_planned, p.questions):,.0f}"
        if p.questions_planned > 0 or p.questions
        else ""
    )
    return f"{moves}{questions} ({run_share(p):.0%})"


def pauses(m: Monitor) -> list[str]:
    """One note per paused endpoint, e.g. ``openai paused 12 s (limit reached, Retry-After)``. An endpoint is
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


def stopping(m: Monitor) -> str | None:
    """What a stopping run waits for, once it was asked to stop (None before): shown at once, whatever the
    endpoints are doing, since a request that was not sent is no longer sent (a pause or a rate no longer
    holds the run) and a retry's wait is cut short."""
    if m.stop is None or not m.stop.is_set():
        return None
    in_flight = sum(lim.in_flight for lim in m.limiters.limiters().values())
    why = m.stop.reason or "asked to stop"
    if m.stop.forced:
        waits = "requests in flight abandoned; saving what was recorded"
    elif in_flight:
        waits = (
            f"waiting for the {plural(in_flight, 'answer')} already sent (paid for, so kept); "
            "Ctrl-C twice more abandons them"
        )
    else:
        waits = "saving what was recorded"
    return f"Stopping ({why}): no new game, round or request starts; {waits}"


def counters(m: Monitor, now: float | None = None) -> list[str]:
    """The run's counters, each a short ``name value`` never to be split across lines, most telling first."""
    p, s = m.progress, m.stats
    elapsed = max((time.monotonic() if now is None else now) - p.started, 1e-9)
    limited = sum(lim.rate_limited_count for lim in m.limiters.limiters().values())
    return [
        f"games {p.games_done}/{p.games_total}" + (f" ({p.games_failed} failed)" if p.games_failed else ""),
        calls_counter(p),
        f"rounds {p.rounds:,}",
        f"calls {s.calls:,} ({s.calls / elapsed:,.1f}/s)",
        f"cache hits {s.cached:,}",
        f"tokens in {s.input_tokens:,} out {s.output_tokens:,}",
        f"cost ${s.cost_usd:,.4f}",
        *([prompt_cache_counter(s)] if s.cache_reported else []),
        *([batch_counter(m.batches, now)] if m.batches is not None else []),
        f"retries {s.retries}",
        f"429s {max(limited, s.rate_limited)}",
        f"parse failures {s.parse_failures}",
        *([f"unreadable answers to questions {s.unreadable_other}"] if s.unreadable_other else []),
    ]


def prompt_cache_counter(s: CallStats) -> str:
    """The share of paid input tokens the provider read from its prompt cache, and the dollars that saved against
    the input price (shown once an answer reported the provider's cache)."""
    share = s.cached_input_tokens / s.input_tokens if s.input_tokens else 0.0
    return f"prompt cache {share:.0%} of input, saved ${s.cache_saved_usd:,.4f}"


def batch_counter(b: BatchCounters, now: float | None = None) -> str:
    """Batch mode: the batches submitted (resumed ones included), in progress and done, and the time the run has
    waited with a batch out (a batch takes minutes to hours: this, not the calls per second, says where it is)."""
    failed = f", {b.failed} failed" if b.failed else ""
    return (
        f"batches {b.submitted} submitted, {b.in_progress} in progress, {b.ended} done{failed}; "
        f"waited {eta_text(b.waited(now))}"
    )


def summary_line(m: Monitor, *, with_pauses: bool = True, now: float | None = None) -> str:
    """Every counter and the ETA on one line (the plain display prints it every few seconds; a log wraps it)."""
    eta = f"ETA {eta_text(m.progress.seconds_left(now))}"
    return " | ".join([*counters(m, now), eta]) + ("".join(f" | {note}" for note in pauses(m)) if with_pauses else "")


def wrap(items: list[str], width: int, separator: str = SEPARATOR) -> list[str]:
    """``items`` joined by ``separator`` into lines of at most ``width`` characters, an item never split (one
    longer than the width gets a line of its own)."""
    lines: list[str] = []
    for item in items:
        if lines and len(lines[-1]) + len(separator) + len(item) <= width:
            lines[-1] += separator + item
        else:
            lines.append(item)
    return lines


class _View:
    """The live view, laid out afresh for the terminal's size at every refresh (``clock``: the time now, on
    the clock of :attr:`Progress.started`)."""

    def __init__(self, monitor: Monitor, clock: Callable[[], float] = time.monotonic) -> None:
        self.m = monitor
        self.clock = clock

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[RenderableType]:
        width, height = options.max_width, options.max_height
        p = self.m.progress
        status = wrap(counters(self.m, self.clock()), width)
        notes = [f"⏸ {note}" for note in pauses(self.m)]
        stop = stopping(self.m)
        if stop is not None:
            notes = [stop]  # a stopped run sends nothing more: its pauses no longer matter
        yield self.headline(width)
        # The headline, the table's header, the counters, the pauses and a spare line for the cursor.
        room = max(1, height - 3 - len(status) - len(notes))
        yield self.conditions(p, width, room)
        for line in status:
            yield Text(line, style="dim")
        for note in notes:
            yield Text(note, style="bold red" if stop is not None else "yellow")

    def headline(self, width: int) -> Table:
        """``run_id  ━━━━━━╺━━━━  37%  ETA 3m05s``: the run's bar by model calls (moves and questions), its share
        and the time left."""
        p = self.m.progress
        grid = Table.grid(padding=(0, 2), expand=True)
        grid.add_column(no_wrap=True, overflow="ellipsis", max_width=max(10, width // 3))
        grid.add_column(ratio=1)
        grid.add_column(no_wrap=True, justify="right")
        done = run_share(p)
        grid.add_row(
            Text(self.m.run_id, style="bold"),
            ProgressBar(total=1.0, completed=done),
            f"{done:.0%}  ETA {eta_text(p.seconds_left(self.clock()))}",
        )
        return grid

    def conditions(self, p: Progress, width: int, room: int) -> Table:
        """One row per condition (its bar by rounds, its games), as many as ``room`` lines hold, the unfinished
        first; the others summed on a last line."""
        wide = width >= WIDE
        order = list(p.per_condition_total)  # the plan's order, kept while every row fits
        if len(order) > room:
            unfinished = [c for c in order if p.per_condition_done[c] < p.per_condition_total[c]]
            order = unfinished + [c for c in order if c not in unfinished]
        shown = order if len(order) <= room else order[: max(room - 1, 0)]
        table = Table(box=None, show_edge=False, expand=True, padding=(0, 1), header_style="bold")
        table.add_column("condition", no_wrap=True, overflow="ellipsis", max_width=max(12, width * 2 // 5))
        table.add_column("rounds" if not wide else "", ratio=1, no_wrap=True)
        if wide:
            table.add_column("", justify="right", no_wrap=True)
            table.add_column("rounds", justify="right", no_wrap=True)
        table.add_column("games", justify="right", no_wrap=True)
        for name in shown:
            rounds, planned = p.per_condition_rounds[name], p.per_condition_rounds_planned[name]
            bar = ProgressBar(total=1.0, completed=share(rounds, planned))
            games = f"{p.per_condition_done[name]}/{p.per_condition_total[name]}"
            extra = [f"{share(rounds, planned):.0%}", f"{rounds:,}/{max(planned, rounds):,.0f}"] if wide else []
            table.add_row(name, bar, *extra, games)
        rest = order[len(shown) :]
        if rest:
            done = sum(p.per_condition_done[c] for c in rest)
            total = sum(p.per_condition_total[c] for c in rest)
            more = f"+ {plural(len(rest), 'more condition')}"
            blanks = [""] * (3 if wide else 1)
            table.add_row(Text(more, style="dim"), *blanks, Text(f"{done}/{total}", style="dim"))
        return table


@contextmanager
def live_display(monitor: Monitor, console: Console, plain_every: float = 5.0) -> Iterator[None]:
    """Rich live progress on a terminal; otherwise a plain status line every ``plain_every`` seconds."""
    if console.is_terminal:
        from rich.live import Live

        with Live(_View(monitor), console=console, refresh_per_second=4, transient=False):
            yield
        return
    stop = threading.Event()
    out: IO[str] = console.file

    told = threading.Event()  # the stop was said

    def tell_stop() -> None:
        note = stopping(monitor)
        if note is not None and not told.is_set():  # said at once, not at the next status line
            told.set()
            print(f"[{monitor.run_id}] {note}", file=out, flush=True)

    def report() -> None:
        next_line = time.monotonic() + plain_every
        while not stop.wait(min(STOP_POLL_S, max(next_line - time.monotonic(), 0.0))):
            tell_stop()
            if time.monotonic() >= next_line:
                next_line += plain_every
                print(f"[{monitor.run_id}] {summary_line(monitor)}", file=out, flush=True)

    thread = threading.Thread(target=report, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        tell_stop()  # a run that stopped between two looks still says so
        print(f"[{monitor.run_id}] {summary_line(monitor)}", file=out, flush=True)

"""What ``pdbench evolve`` shows: a live bar per player while the population evolves, then the final shares, the
winner or the fixation, and the run id; for a sweep, a line per finished run and the sweep's summary."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
from rich.console import Console, RenderableType
from rich.live import Live
from rich.markup import escape
from rich.progress_bar import ProgressBar
from rich.table import Table

from harness.engine.evolution.run import EvolutionOutcome
from harness.evolution import EvolutionSettings
from harness.states import RunStatus
from harness.util.plural import plural

BAR_WIDTH = 40
PLAIN_EVERY = 5.0  # seconds between status lines off a terminal


def shares_table(players: tuple[str, ...], shares: np.ndarray, counts: np.ndarray | None, title: str) -> Table:
    """A bar per player: its share of the population (and its individuals, for a finite population)."""
    table = Table(title=title, title_justify="left", show_header=True, header_style="bold", box=None)
    table.add_column("player", no_wrap=True)
    table.add_column("share", no_wrap=True)
    table.add_column("", justify="right", no_wrap=True)
    if counts is not None:
        table.add_column("individuals", justify="right", no_wrap=True)
    for i, player in enumerate(players):
        bar = ProgressBar(total=1.0, completed=float(shares[i]), width=BAR_WIDTH, complete_style="green")
        row: list[RenderableType] = [escape(player), bar, f"{100 * float(shares[i]):5.1f}%"]
        if counts is not None:
            row.append(f"{int(counts[i]):,}")
        table.add_row(*row)
    return table


class LiveView:
    """The population as it evolves. ``update`` is the generation callback (called up to millions of times for a
    Moran process), so it only keeps the latest population; the screen is redrawn from it a few times a second."""

    def __init__(self, settings: EvolutionSettings, run_id: str) -> None:
        self.players = tuple(settings.players)
        self.size = None if settings.dynamics.value == "replicator" else settings.size
        self.total = settings.generations
        self.unit = "time" if self.size is None else ("step" if settings.dynamics.value == "moran" else "generation")
        self.run_id = run_id
        self.generation = 0
        self.population = settings.initial_shares if self.size is None else settings.initial_counts
        self._lock = threading.Lock()

    def update(self, generation: int, population: np.ndarray) -> None:
        with self._lock:
            self.generation, self.population = generation, population.copy()

    def _state(self) -> tuple[int, np.ndarray]:
        with self._lock:
            return self.generation, self.population

    def __rich__(self) -> RenderableType:
        generation, population = self._state()
        shares = population / self.size if self.size else population
        title = f"[bold]{escape(self.run_id)}[/bold]  {self.unit} {generation:,} of {self.total:,}"
        return shares_table(self.players, shares, population if self.size else None, title)

    def line(self) -> str:
        generation, population = self._state()
        shares = population / self.size if self.size else population
        mix = ", ".join(f"{p} {100 * float(x):.1f}%" for p, x in zip(self.players, shares, strict=True))
        return f"{self.run_id}: {self.unit} {generation:,} of {self.total:,}: {mix}"


@contextmanager
def live(view: LiveView, console: Console) -> Iterator[None]:
    """The live view on a terminal; off one (a pipe, a CI log), a status line every few seconds."""
    if console.is_terminal:
        with Live(view, console=console, refresh_per_second=8, transient=True):
            yield
        return
    done = threading.Event()

    def lines() -> None:
        while not done.wait(PLAIN_EVERY):
            console.print(view.line(), highlight=False, soft_wrap=True)

    thread = threading.Thread(target=lines, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


def print_outcome(out: Console, err: Console, outcome: EvolutionOutcome, settings: EvolutionSettings) -> None:
    """The final shares, the winner or fixation (and when), and the run id."""
    size = outcome.size
    shares = outcome.last / size if size else outcome.last
    unit = "time" if size is None else ("step" if settings.dynamics.value == "moran" else "generation")
    out.print(
        shares_table(
            outcome.players,
            shares,
            outcome.last if size else None,
            f"Final shares after {unit} {outcome.generations:,}",
        )
    )
    if outcome.fixation is not None:
        fix = outcome.fixation
        still = "" if outcome.final_shares().get(fix.player) == 1.0 else " (mutation has since brought others back)"
        out.print(f"[bold]{escape(fix.player)}[/bold] took over the population at {unit} {fix.generation:,}{still}.")
        if still:
            _leader(out, outcome)
    else:
        _leader(out, outcome)
    colour = "green" if outcome.status == RunStatus.COMPLETE else "yellow"
    why = f" ({escape(outcome.reason)}; the generations played are kept)" if outcome.reason else ""
    err.print(f"[{colour}]{outcome.status}[/{colour}] in {outcome.seconds:.2f} s{why}")
    source = f"   payoffs from run: {escape(outcome.payoff_run)}" if outcome.payoff_run else ""
    out.print(
        f"run id: [bold]{escape(outcome.run_id)}[/bold]   results: {escape(str(outcome.path))}{source}", highlight=False
    )


def _leader(out: Console, outcome: EvolutionOutcome) -> None:
    winner = outcome.winner()
    shares = outcome.final_shares()
    if winner is None:
        best = max(shares.values())
        tied = [p for p, x in shares.items() if abs(x - best) <= 1e-12]
        out.print(f"No player took over; {', '.join(map(escape, tied))} share the lead at {100 * best:.1f}% each.")
    else:
        out.print(
            f"No player took over; the largest share is [bold]{escape(winner)}[/bold]'s, {100 * shares[winner]:.1f}%."
        )


def sweep_line(done: int, total: int, run_id: str, status: RunStatus, winner: str | None, seconds: float) -> str:
    """One finished run of a sweep, as a status line."""
    lead = f", lead: {winner}" if winner else ""
    return f"[{done}/{total}] {run_id}: {status}{lead} ({seconds:.1f} s since the start)"


def sweep_done(n_runs: int, n_cells: int, seeds: int, sweep_id: str, started: float) -> str:
    return (
        f"{plural(n_runs, 'run')} of {plural(n_cells, 'cell')} × {plural(seeds, 'seed')} in "
        f"{time.monotonic() - started:.1f} s; sweep id: {sweep_id} (see `pdbench report {sweep_id}`)"
    )

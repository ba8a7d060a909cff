"""What ``pdbench evolve`` shows: a live bar per player while the population evolves, then the final shares, the
winner or the fixation, and the run id; for a sweep, a line per finished run and the sweep's summary."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderableType
from rich.live import Live
from rich.markup import escape
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from harness.engine.evolution.run import EvolutionOutcome
from harness.evolution import EvolutionSettings, Trajectory
from harness.evolution.scenarios import Scenario
from harness.states import RunStatus
from harness.util.plural import plural

BAR_WIDTH = 40  # the longest bar, when the width allows
MIN_BAR = 10  # the shortest; narrower than its name and numbers need, a name goes above its bar
PLAIN_EVERY = 5.0  # seconds between status lines off a terminal


class SharesTable:
    """A bar per player: its share of the population (and its individuals, for a finite population). The bars are
    as long as the width leaves room for, from :data:`MIN_BAR` to :data:`BAR_WIDTH`: the names and numbers are
    never cut. A name too long even for the shortest bar goes on a line of its own, above its bar."""

    def __init__(self, players: tuple[str, ...], shares: np.ndarray, counts: np.ndarray | None, title: str) -> None:
        self.players = players
        self.shares = shares
        self.counts = counts
        self.title = title

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[RenderableType]:
        names = max((cell_len(p) for p in (*self.players, "player")), default=0)
        counts = 0 if self.counts is None else max(len("individuals"), *(len(f"{int(c):,}") for c in self.counts))
        # Columns: the name, the bar, the percentage (6), the individuals; a space of padding each side of each.
        numbers = 6 + counts + 2 * (3 if counts else 2)  # the numbers' columns and the bar's padding
        room = options.max_width - numbers - names - 2
        if room >= MIN_BAR:
            yield self._table(min(BAR_WIDTH, room), with_names=True)
        else:
            yield self._stacked(min(BAR_WIDTH, max(MIN_BAR, options.max_width - numbers)))

    def _numbers(self, i: int) -> list[RenderableType]:
        numbers: list[RenderableType] = [f"{100 * float(self.shares[i]):5.1f}%"]
        if self.counts is not None:
            numbers.append(f"{int(self.counts[i]):,}")
        return numbers

    def _bar(self, i: int, width: int) -> ProgressBar:
        return ProgressBar(total=1.0, completed=float(self.shares[i]), width=width, complete_style="green")

    def _table(self, bar_width: int, with_names: bool, only: int | None = None) -> Table:
        header = only is None
        table = Table(
            title=self.title if header else None,
            title_justify="left",
            show_header=header,
            header_style="bold",
            box=None,
        )
        if with_names:
            table.add_column("player", no_wrap=True)
        table.add_column("share", no_wrap=True, width=bar_width)
        table.add_column("", justify="right", no_wrap=True, width=6)
        if self.counts is not None:
            table.add_column("individuals", justify="right", no_wrap=True)
        for i, player in enumerate(self.players):
            if only is None or i == only:
                table.add_row(*([escape(player)] if with_names else []), self._bar(i, bar_width), *self._numbers(i))
        return table

    def _stacked(self, bar_width: int) -> Group:
        """Each player's name on a line of its own (wrapped if it must be), its bar and numbers under it."""
        parts: list[RenderableType] = [Text.from_markup(self.title)]
        for i, player in enumerate(self.players):
            parts += [Text(player, style="bold"), self._table(bar_width, with_names=False, only=i)]
        return Group(*parts)


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
        return SharesTable(self.players, shares, population if self.size else None, title)

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
        SharesTable(
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


def narrate(
    out: Console, trajectory: Trajectory, settings: EvolutionSettings, pace: float, wait: Callable[[float], bool]
) -> None:
    """The population one generation a line, ``pace`` seconds apart (``wait`` returns True to stop early: a
    Ctrl-C), so a teacher can talk over each; a generation where nothing changed is skipped (a Moran step that
    replaced an individual by its own kind), the last always shown."""
    rows = np.asarray(trajectory.population)
    size = trajectory.size
    unit = "time" if size is None else ("step" if settings.dynamics.value == "moran" else "generation")
    last = len(rows) - 1
    previous: np.ndarray | None = None
    for g, row in enumerate(rows):
        if previous is not None and g < last and np.array_equal(row, previous):
            continue
        previous = row
        out.print(f"[bold]{unit} {g:,}[/bold]  {_mix(trajectory.players, row, size)}", highlight=False)
        if g < last and pace > 0 and wait(pace):
            out.print("[yellow]stopped[/yellow] (Ctrl-C): the run itself is complete and stored.", highlight=False)
            return


def _mix(players: tuple[str, ...], row: np.ndarray, size: int | None) -> str:
    """``ALLC 10 (40%) · ALLD 7 (28%)``, or shares alone for the replicator."""
    if size is None:
        return " · ".join(f"{escape(p)} {100 * float(x):.1f}%" for p, x in zip(players, row, strict=True))
    return " · ".join(f"{escape(p)} {int(c)} ({100 * int(c) / size:.0f}%)" for p, c in zip(players, row, strict=True))


def print_lesson(out: Console, scenario: Scenario, settings: EvolutionSettings, trajectory: Trajectory | None) -> None:
    """The scenario's lesson with the numbers of this run that show it; or that this run did not show it (and which
    of the scenario's settings were changed, when some were)."""
    evidence = None if trajectory is None else scenario.evidence(settings, trajectory)
    if evidence is not None:
        out.print(f"💡 [bold]{escape(scenario.lesson)}[/bold] {escape(evidence)}", highlight=False)
        return
    ours, theirs = settings.model_dump(mode="json"), scenario.settings().model_dump(mode="json")
    changed = [key for key in ours if ours.get(key) != theirs.get(key)]
    why = f" (its settings changed: {', '.join(changed)})" if changed else ""
    out.print(
        f"This run did not show the lesson of --scenario {scenario.key}{why}: “{escape(scenario.lesson)}”",
        highlight=False,
    )

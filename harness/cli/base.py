"""The ``pdbench`` Typer app itself: its consoles, how a user error is shown, the root options, and the
option types several commands share."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from dotenv import load_dotenv
from rich.console import Console
from rich.markup import escape
from typer.core import TyperGroup, TyperOption

from harness import __version__
from harness.config.presets.payoffs import PAYOFF_MATRIX_HELP
from harness.errors import PDBenchError, QueryInterrupted
from harness.game.rules import MAX_ROUNDS
from harness.providers.keys import scrub
from harness.util.bounds import MAX_SEED

INTERRUPTED = (
    "pdbench: interrupted (Ctrl-C). Nothing is lost: a run that had started is kept, and "
    "`pdbench resume RUN_ID` continues it."
)

# Off a terminal (a pipe, a CI log) Rich would wrap tables at 80 columns; give them room instead. The reports that
# pick a layout for the width (report, runs, strategies, evolve's result) take 100 columns there, or `--width N`:
# see laid_out.
out = Console(width=None if sys.stdout.isatty() else 160)
PIPED_WIDTH = 100
err = Console(stderr=True, width=None if sys.stderr.isatty() else 160)


def _flags_without_metavar() -> None:
    """Typer's rich help shows the type of every option, and for a flag (``--no-cache``, ``--help``), which takes
    no value, that is a misleading ``<bool>``; its plain help, like click's, shows none. Show none here too."""
    shown = TyperOption.display_type_rich

    def display_type_rich(self: TyperOption, ctx: typer.Context) -> str | None:
        return None if self.is_flag else shown(self, ctx)

    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign,assignment]


_flags_without_metavar()


class _Commands(TyperGroup):
    """Prints a user error as one paragraph and exits with its code, for every command; Ctrl-C outside a
    run (which handles its own, see harness.engine.interrupts) is one line and exit code 130."""

    def invoke(self, ctx: typer.Context) -> object:  # type: ignore[override]
        try:
            return super().invoke(ctx)
        except QueryInterrupted as exc:  # the user stopped a query: nothing went wrong, so no "error:"
            print(f"pdbench: {exc}", file=sys.stderr, flush=True)
            raise typer.Exit(exc.exit_code) from None
        except PDBenchError as exc:
            err.print(f"[bold red]error:[/bold red] {escape(scrub(str(exc)))}", highlight=False, soft_wrap=True)
            raise typer.Exit(exc.exit_code) from None
        except KeyboardInterrupt:
            print(INTERRUPTED, file=sys.stderr, flush=True)
            raise typer.Exit(130) from None


app = typer.Typer(
    name="pdbench",
    cls=_Commands,
    help="PDBench: how do language models behave in the iterated Prisoner's Dilemma?",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
)


def _version(value: bool) -> None:
    if value:
        out.print(f"pdbench {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version and exit.")
    ] = False,
) -> None:
    """PDBench: how do language models behave in the iterated Prisoner's Dilemma?"""
    # Settings and keys may live in ./.env; variables already set in the environment win.
    load_dotenv(Path.cwd() / ".env", override=False)


class Format(StrEnum):
    table = "table"
    csv = "csv"
    json = "json"


# Every numeric option has bounds, so that no value can make a run hang or overflow (docs/experiments.md, "Limits").
MAX_COST_USD = 1_000_000.0
MAX_DAYS = 36_500.0  # a century

# A str, not a Path: Path("") is ".", and `--results ''` (an empty variable in a script) must be refused,
# not read as the current folder.
ResultsOpt = Annotated[
    str | None,
    typer.Option("--results", help="Results folder (default: $PDBENCH_RESULTS or results/)."),
]
StopProbOpt = Annotated[
    float | None, typer.Option(min=0.0, max=1.0, help="Geometric horizon: per-round stop probability.")
]
MaxRoundsOpt = Annotated[int | None, typer.Option(min=1, max=MAX_ROUNDS, help="Hard cap on a geometric game's length.")]
NoiseOpt = Annotated[
    float, typer.Option(min=0.0, max=1.0, help="Execution noise: probability that a move is flipped as it is played.")
]
ObservationNoiseOpt = Annotated[
    float,
    typer.Option(
        min=0.0,
        max=1.0,
        help="Observation noise: probability that a player sees the other's move flipped (payoffs use the move "
        "as played).",
    ),
]
SeedOpt = Annotated[int, typer.Option(min=0, max=MAX_SEED, help="Master seed.")]
MaxCostOpt = Annotated[
    float | None, typer.Option(min=0.0, max=MAX_COST_USD, help="Stop starting paid calls at this cost (USD).")
]
DespiteEstimateOpt = Annotated[
    bool,
    typer.Option(
        "--despite-estimate",
        help="Start the run although its estimate is above --max-cost (it stops starting calls at the limit).",
    ),
]
NoCacheOpt = Annotated[bool, typer.Option("--no-cache", help="Neither read nor fill the response cache.")]
PricesOpt = Annotated[Path | None, typer.Option(help="Your own price table (YAML), read before the shipped one.")]
PayoffMatrixOpt = Annotated[str | None, typer.Option(metavar="T,R,P,S|PRESET", help=PAYOFF_MATRIX_HELP)]
OverwriteOpt = Annotated[bool, typer.Option(help="Replace an existing run with the same id.")]
AllowKeyToOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--allow-key-to",
        metavar="HOST",
        help="Let a key the experiment names (api_key_env) go to this host (HOST or HOST:PORT), a base_url of the "
        "file's that is neither the provider's own endpoint nor $OPENAI_BASE_URL/$ANTHROPIC_BASE_URL. Repeatable.",
    ),
]
WidthOpt = Annotated[
    int | None,
    typer.Option(
        "--width",
        min=40,
        max=1000,
        help=f"Lay the tables out for this many columns (default: the terminal's width; {PIPED_WIDTH} when piped).",
    ),
]


@contextmanager
def laid_out(width: int | None) -> Iterator[None]:
    """Print to ``out`` for ``width`` columns (``--width``) within the block, then as before; without a width, for
    the terminal's, or :data:`PIPED_WIDTH` off a terminal. A report picks its layout from the width it is given
    (see harness.cli.report_view), so a script gets the layout it asks for."""
    if width is None and out.is_terminal:
        yield
        return
    width = width or PIPED_WIDTH
    before = out._width  # None on a terminal: its width is read at each print (Rich has no public getter for it)
    out.width = width
    try:
        yield
    finally:
        out._width = before

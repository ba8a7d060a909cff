"""The ``pdbench`` command line. Thin: parse options, call the library, render the result.

Errors a user can fix (:class:`~harness.errors.PDBenchError`) are printed as one paragraph
on stderr with a non-zero exit code; they never show a traceback.

One module per concern: :mod:`~harness.cli.base` (the app, its consoles and shared options),
:mod:`~harness.cli.play` (how every playing command plays and exits), :mod:`~harness.cli.show`
(what is printed under a run), and the commands by group: :mod:`~harness.cli.experiments`
(validate, run, tournament, eval, resume), :mod:`~harness.cli.evolve` (evolve),
:mod:`~harness.cli.fingerprint` (fingerprint), :mod:`~harness.cli.browse`
(sql, report, strategies), :mod:`~harness.cli.compare` (compare), :mod:`~harness.cli.probe` (probe),
:mod:`~harness.cli.runs` (runs), :mod:`~harness.cli.analyze` (analyze),
:mod:`~harness.cli.plot` (plot), :mod:`~harness.cli.cache_commands` (cache) and :mod:`~harness.cli.dashboard` (ui).

May import: errors, states, util, game, providers, calls, players, config, evolution, store, analysis,
engine, ui, figures.
"""

from __future__ import annotations

import sys
import traceback

from harness.cli.base import INTERRUPTED, app, err, out
from harness.providers.keys import scrub

# Importing a command module registers its commands, in this order in `pdbench --help`.
# isort: off
from harness.cli import experiments  # noqa: F401
from harness.cli import evolve  # noqa: F401
from harness.cli import fingerprint  # noqa: F401
from harness.cli import cache_commands  # noqa: F401
from harness.cli import browse  # noqa: F401
from harness.cli import compare  # noqa: F401
from harness.cli import probe  # noqa: F401
from harness.cli import runs  # noqa: F401
from harness.cli import analyze  # noqa: F401
from harness.cli import plot  # noqa: F401
from harness.cli import dashboard  # noqa: F401
# isort: on

__all__ = ["INTERRUPTED", "app", "err", "main", "out"]


def main() -> None:
    """Entry point of the ``pdbench`` script. A bug's traceback is printed as Python prints it, but without
    any API key in it (an exception's text may quote one; see harness.providers.keys)."""
    try:
        app()
    except Exception as exc:
        sys.stderr.write(scrub("".join(traceback.format_exception(exc))))
        sys.exit(1)

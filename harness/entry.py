"""The ``pdbench`` console script, kept apart from :mod:`harness.cli` so that Ctrl-C is one line at any moment.

Importing the command line takes about a second (DuckDB, pydantic, Rich, Typer); a Ctrl-C in that
second, or anywhere before a run installs its own handler (see :mod:`harness.engine.interrupts`), would
otherwise end in a KeyboardInterrupt traceback, or, when Python swallows it inside an import's callback,
be lost while the run goes ahead. This module imports nothing heavy itself.
"""

from __future__ import annotations

import signal
import sys
from typing import NoReturn

from harness.engine.interrupts import LOST_CTRL_C, keep_swallowed_interrupts


def main() -> None:
    """Run the command line; a Ctrl-C that nothing else handled exits with one line and code 130."""
    try:
        _let_ctrl_c_in()
        keep_swallowed_interrupts()
        from harness.cli import INTERRUPTED
        from harness.cli import main as cli_main

        if LOST_CTRL_C.is_set():
            raise KeyboardInterrupt
    except KeyboardInterrupt:
        _interrupted_while_starting()
    try:
        cli_main()
    except KeyboardInterrupt:
        print(INTERRUPTED, file=sys.stderr, flush=True)
        raise SystemExit(130) from None
    except SystemExit as exc:
        if _ctrl_c_caught_by_typer(exc):
            print(INTERRUPTED, file=sys.stderr, flush=True)
        raise
    finally:
        # The command is over and its results saved: a Ctrl-C now would only kill the exiting interpreter
        # (Python restores the default action while it shuts down) and lose the exit code.
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def _let_ctrl_c_in() -> None:
    """Deliver a Ctrl-C held back until now, here, where it is handled: a caller that must not lose one between
    starting and this ``try`` (a launcher, the tests) blocks SIGINT first; Python raises a pending one as soon as it
    is unblocked. Unblocking a signal that is not blocked does nothing."""
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _interrupted_while_starting() -> NoReturn:
    print("pdbench: interrupted (Ctrl-C) while starting; nothing was done.", file=sys.stderr, flush=True)
    raise SystemExit(130) from None


def _ctrl_c_caught_by_typer(exc: SystemExit) -> bool:
    """Whether Typer turned a Ctrl-C into this exit itself, silently: one that lands while Typer still builds
    the command (it imports parts of pydantic lazily then), before any PDBench code could report it."""
    cause: BaseException | None = exc.__context__
    while cause is not None:
        if isinstance(cause.__cause__, KeyboardInterrupt):
            return True
        cause = cause.__context__
    return False


if __name__ == "__main__":
    main()

"""A Ctrl-C that Python swallows (raised in a weak-reference callback or ``__del__``, as the import system's
module locks run them) is kept, not lost: the start-up exits 130 and a run that starts afterwards stops."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest

from harness.engine.interrupts import LOST_CTRL_C, StopFlag, graceful_interrupt, keep_swallowed_interrupts


class _InterruptedOnCollection:
    """Raises KeyboardInterrupt where Python cannot propagate it, as a Ctrl-C in an import's lock callback."""

    def __del__(self) -> None:
        raise KeyboardInterrupt


@pytest.fixture
def hook() -> Iterator[None]:
    previous = sys.unraisablehook
    keep_swallowed_interrupts()
    try:
        yield
    finally:
        sys.unraisablehook = previous
        LOST_CTRL_C.clear()


def test_a_swallowed_ctrl_c_is_noted_and_not_printed(hook: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert not LOST_CTRL_C.is_set()
    _InterruptedOnCollection()  # collected at once: __del__ raises into the unraisable hook
    assert LOST_CTRL_C.is_set()
    assert capsys.readouterr().err == ""


def test_other_unraisable_exceptions_still_reach_pythons_hook(hook: None) -> None:
    seen: list[type[BaseException] | None] = []
    previous = sys.unraisablehook
    sys.unraisablehook = lambda args: seen.append(args.exc_type)
    keep_swallowed_interrupts()  # chains to the recording hook above

    class Failing:
        def __del__(self) -> None:
            raise ValueError("not an interrupt")

    Failing()
    sys.unraisablehook = previous
    assert seen == [ValueError] and not LOST_CTRL_C.is_set()


def test_a_run_that_starts_after_a_swallowed_ctrl_c_stops_at_once(hook: None) -> None:
    _InterruptedOnCollection()
    flag = StopFlag()
    with graceful_interrupt(flag):
        assert flag.is_set() and flag.presses == 1
        assert flag.reason == "interrupted by the user (Ctrl-C)"
    assert not LOST_CTRL_C.is_set()  # acted on once
    with graceful_interrupt(later := StopFlag()):
        assert not later.is_set()


def test_the_console_script_exits_130_in_one_line_when_a_ctrl_c_was_swallowed_while_it_imported() -> None:
    """The failure seen in CI: SIGINT landed in importlib's lock callback, Python printed "Exception ignored
    ... KeyboardInterrupt" and the eval then ran to the end with exit code 0."""
    script = (
        "import sys\n"
        "from harness import entry\n"
        "real = entry.keep_swallowed_interrupts\n"
        "class Late:\n"
        "    def __del__(self):\n"
        "        raise KeyboardInterrupt\n"
        "def keep_then_swallow():\n"
        "    real()\n"
        "    Late()\n"
        "entry.keep_swallowed_interrupts = keep_then_swallow\n"
        "sys.argv = ['pdbench', 'strategies']\n"
        "entry.main()\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 130, proc.stderr
    assert proc.stdout == ""
    assert proc.stderr == "pdbench: interrupted (Ctrl-C) while starting; nothing was done.\n"

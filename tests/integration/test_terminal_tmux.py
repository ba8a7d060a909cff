"""``pdbench eval`` in a real terminal (tmux) of 80×24 and 120×40: the live view and the scorecard fit.

tmux plays the terminal: the command runs in a detached session of that size on its own server socket, and
its screen is captured while the run plays and once it has ended. Lines are captured joined (``-J``), so a
line wider than the terminal, which the terminal would have wrapped, shows at its full width and fails.
Skipped without tmux (``apt-get install -y tmux``). The layouts themselves are compared with captures in
``tests/unit/test_terminal_fit.py``.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rich.cells import cell_len

from tests.unit.test_terminal_fit import row_heights

TMUX = shutil.which("tmux")
ROOT = Path(__file__).resolve().parents[2]
OPPONENTS = ["🕊️ ALLC", "😈 ALLD", "🪞 TFT", "💀 GRIM", "😇 GTFT", "🔄 WSLS", "🐱 TF2T", "🤨 STFT", "🎲 RAND"]

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(TMUX is None, reason="tmux is not installed (apt-get install -y tmux)"),
]


class Terminal:
    """A detached tmux session of a given size running one command, on a server of its own."""

    def __init__(self, width: int, height: int, command: list[str], folder: Path) -> None:
        assert TMUX is not None
        # A session with no client attached may be resized to the server's default size (80×24): make it this one.
        conf = folder / "tmux.conf"
        conf.write_text(f"set -g default-size {width}x{height}\n")
        self.tmux = [TMUX, "-L", f"pdbench-test-{os.getpid()}-{width}x{height}", "-f", str(conf)]
        shell = f"cd {shlex.quote(str(ROOT))} && {shlex.join(command)}; echo PDBENCH-EXIT=$?; sleep 120"
        # COLUMNS and LINES, if this process has them, would override the terminal's size (Rich reads them first).
        env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
        subprocess.run(
            [*self.tmux, "new-session", "-d", "-x", str(width), "-y", str(height), shell], check=True, env=env
        )

    def screen(self, history: bool = False) -> list[str]:
        args = ["capture-pane", "-p", "-J", *(["-S", "-"] if history else [])]
        done = subprocess.run([*self.tmux, *args], check=True, capture_output=True, text=True)
        return done.stdout.rstrip("\n").splitlines()

    def close(self) -> None:
        subprocess.run([*self.tmux, "kill-server"], check=False, capture_output=True)


@pytest.mark.parametrize(("width", "height"), [(80, 24), (120, 40)])
def test_eval_fits_a_real_terminal(tmp_path: Path, width: int, height: int) -> None:
    # 18 games of 6 rounds at 40 ms a call, 4 at a time: about 1.2 s of play with the live view on screen, and two
    # replicates a condition, so the note that they repeat one game is shown.
    results = str(tmp_path / "results")
    command = [sys.executable, "-m", "harness.entry", "eval", "--model", "mock/tft?latency_ms=40", "--rounds", "6",
               "--replicates", "2", "--concurrency", "4", "--results", results, "--run-id", "tty"]  # fmt: skip
    term = Terminal(width, height, command, tmp_path)
    try:
        live: list[str] = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            screen = term.screen()
            text = "\n".join(screen)
            if "PDBENCH-EXIT=" in text:
                break
            if "model moves" in text and "parse failures" in text and not live:
                live = screen
            time.sleep(0.1)
        final = term.screen(history=True)
    finally:
        term.close()
    assert live, "the live view was never seen while the run played"
    assert "PDBENCH-EXIT=0" in "\n".join(final), "\n".join(final)

    view = [line for line in live if line.strip()]
    # Above the live view, the note that the deterministic mock's replicates will repeat one game (told before
    # the run starts, so it stays on the screen).
    start = next(i for i, line in enumerate(view) if line.startswith("tty "))
    assert "will repeat one game" in " ".join(view[:start])
    view = view[start:]
    assert "ETA " in view[0]
    assert all(cell_len(line) <= width for line in live), "\n".join(live)
    assert len(view) <= height - 1
    rows = [i for i, line in enumerate(view) if line.startswith(" vs_")]
    assert len(rows) == 9 and all(re.search(r"\d/2\s*$", view[i]) for i in rows)
    status = "  ·  ".join(view[rows[-1] + 1 :])  # the counters, under the conditions: all of them, whole
    assert re.fullmatch(r"games \d+/18  ·  model moves .*  ·  parse failures \d+", status), status

    assert all(cell_len(line) <= width for line in final), "a line of the scorecard is wider than the terminal"
    tables = sum("Scorecard tty" in line for line in final)
    heights = row_heights(final, OPPONENTS)
    assert len(heights) == tables * 9 and max(heights) <= 2
    assert (tables == 2) if width == 80 else (tables == 1), "\n".join(final)
    assert any(line.startswith("Summary: 18 complete games") for line in final)

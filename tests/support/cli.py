"""``pdbench`` run in-process, as the CLI tests run it: the one helper every test of a command uses.

In-process (Typer's runner) rather than a subprocess because starting the interpreter costs more than most
commands; tests that need a real process (signals, a terminal, a hang held to a limit) start one themselves.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from harness.cli import app

ROOT = Path(__file__).resolve().parents[2]
"""The checkout: its ``configs/`` hold the shipped examples the tests run."""

runner = CliRunner()


def pdbench(*args: object) -> tuple[int, str, str]:
    """Run the CLI in-process; its exit code, stdout and stderr. Any exception other than an exit is a
    traceback the user would have seen, so it is raised."""
    result = runner.invoke(app, [str(a) for a in args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def sql_json(results: Path, query: str) -> list[dict[str, Any]]:
    """``pdbench sql QUERY --format json`` on ``results``: the rows as dicts (stdout is one JSON array)."""
    code, out, err = pdbench("sql", query, "--results", results, "--format", "json")
    assert code == 0, err
    rows: list[dict[str, Any]] = json.loads(out)
    return rows

"""The command line starts fast: importing it, and the commands that need little, load no heavy library.

`pdbench --help` once took over a second of CPU before printing a line, mostly importing scipy.stats for one
t quantile. Each check runs in a fresh interpreter (this one has imported everything long ago) and reads
``sys.modules``. The CPU time itself is measured by ``tests/benchmarks/bench_cli_startup.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

# Never needed to parse options or print help: the statistics and data-frame stacks, the dashboard, the
# provider SDKs (and the HTTP client under them), the engine's numeric and template libraries, the database.
HEAVY = ("scipy", "pandas", "numpy", "matplotlib", "streamlit", "altair", "openai", "anthropic", "httpx2", "jinja2",
         "duckdb")  # fmt: skip


def loaded_after(code: str) -> set[str]:
    """The top-level packages loaded once ``code`` has run in a fresh interpreter."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}})))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def test_importing_the_command_line_loads_no_heavy_library() -> None:
    loaded = loaded_after("import harness.cli")
    assert "harness" in loaded and "typer" in loaded  # the probe works
    assert not loaded & set(HEAVY), f"`import harness.cli` loads {sorted(loaded & set(HEAVY))}"


def test_help_loads_no_heavy_library() -> None:
    loaded = loaded_after(
        "import sys\nfrom harness.cli import app\nsys.argv = ['pdbench', '--help']\ntry:\n    app()\n"
        "except SystemExit:\n    pass"
    )
    assert not loaded & set(HEAVY), f"`pdbench --help` loads {sorted(loaded & set(HEAVY))}"


@pytest.mark.slow
def test_sql_loads_the_database_but_not_the_statistics(tmp_path: Path) -> None:
    loaded = loaded_after(
        f"import sys\nfrom harness.cli import app\nsys.argv = ['pdbench', 'sql', 'select 1', '--results', "
        f"{str(tmp_path)!r}]\ntry:\n    app()\nexcept SystemExit:\n    pass"
    )
    assert "duckdb" in loaded
    unexpected = loaded & (set(HEAVY) - {"duckdb"})
    assert not unexpected, f"`pdbench sql` loads {sorted(unexpected)}"

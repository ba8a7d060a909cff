"""Games of classic strategies are stored a row a game, and users' SQL answers as it did.

The fixtures in tests/fixtures/schema_v3 were written by the last PDBench that stored every round as a row,
with the views of that version inside them. Each command that wrote one is run again here; every query
docs/results.md documents (its example queries, and every table and view of its schema read whole) must give
the same rows on the new file, read on its own and through ``pdbench sql``'s catalog, as the old file read
with its own views, and as the old file once migrated.
"""

from __future__ import annotations

import gzip
import json
import math
import re
import shutil
from pathlib import Path
from typing import Any

import duckdb
import pytest
from typer.testing import CliRunner

from harness.cli import app
from harness.store.catalog import Catalog

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "schema_v3"

# The commands that wrote the fixtures (tests/fixtures/schema_v3/README.md); the eval's prompts were those that are
# now the classic layout (the mock's answers are drawn from the prompt, so another layout draws others).
COMMANDS = {
    "schema_v3_tournament": ["tournament", "--players", "ALLC,ALLD,TFT,GRIM,GTFT,WSLS,RAND,ALT", "--rounds", "12",
                             "--replicates", "3", "--seed", "7"],
    "schema_v3_noisy": ["tournament", "--players", "TFT,ALLD,GRIM,GTFT,WSLS", "--stop-prob", "0.15", "--max-rounds",
                        "30", "--replicates", "3", "--noise", "0.1", "--seed", "11"],
    "schema_v3_eval": ["eval", "--model", "mock/random?p=0.6&unparseable=0.2", "--opponents", "TFT,ALLD", "--rounds",
                       "6", "--replicates", "2", "--noise", "0.1", "--comprehension", "1,3", "--seed", "5",
                       "--prompt-layout", "classic"],
}  # fmt: skip

# What differs between two runs of one command by nature: when, how long, and by which version (a later version
# stores its new settings, at their defaults, in config_json and a model's params: checked apart, by contains_config).
VOLATILE = {
    "games": ["params_a", "params_b"],
    "runs": ["created_at", "finished_at", "pdbench_version", "schema_version", "config_json"],
    "calls": ["created_at", "duration_ms"],
    "superseded_calls": ["created_at", "duration_ms", "superseded_at"],
}


def readme_queries() -> list[str]:
    """The results reference's example queries, and every table and view of its schema read whole."""
    results = (ROOT / "docs" / "results.md").read_text()
    examples = [" ".join(q.split()) for q in re.findall(r'pdbench sql "(.+?)"', results, flags=re.DOTALL)]
    names = re.findall(r"^\| `(\w+)` \|", results, flags=re.MULTILINE)
    if "superseded_calls" in results:
        names.append("superseded_calls")
    assert len(examples) >= 2 and {"rounds", "games", "player_metrics", "tournament", "matchups"} <= set(names)
    whole = [f"SELECT * EXCLUDE ({', '.join(VOLATILE[n])}) FROM {n}" if n in VOLATILE else f"SELECT * FROM {n}"
             for n in names]  # fmt: skip
    return examples + whole


# Views renamed since the fixtures were written: the old file holds them under their old names.
RENAMED = {"per_game_strategy_fit": "strategy_fit", "per_game_best_fit_shares": "strategy_attribution"}


def _as_named_then(query: str) -> str:
    for new, old in RENAMED.items():
        query = re.sub(rf"\b{new}\b", old, query)
    return query


def answer(con: duckdb.DuckDBPyConnection | Catalog, query: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    """The columns and rows (in a fixed order, floats to 9 digits: sums may add up in another order)."""
    if isinstance(con, Catalog):
        columns, rows = con.query(query)
    else:
        cur = con.execute(query)
        columns, rows = [d[0] for d in cur.description or []], cur.fetchall()
    normal = [tuple(float(f"{v:.9g}") if isinstance(v, float) and math.isfinite(v) else v for v in r) for r in rows]
    return columns, sorted(normal, key=repr)


GROWN = {"cooperate_words", "defect_words"}
"""Settings whose default list may have grown since the fixtures were made: the words read as each move (issue 21
added "betray" to the defect words); a reply is read from more words, the prompt is the same."""


RENAMED = {"coop_prob": "p"}
"""Settings stored under another name since the fixtures were made (issue 23: RAND's parameter is ``p`` everywhere)."""


def contains_config(new: object, old: object) -> bool:
    """Whether the config ``new`` holds every setting of ``old`` with the same value (it may hold more)."""
    if isinstance(old, dict) and isinstance(new, dict):
        old = {RENAMED.get(k, k): v for k, v in old.items()}
        return all(
            k in new
            and (
                contains_config(new[k], v)
                or (k in GROWN and isinstance(v, list) and isinstance(new[k], list) and new[k][: len(v)] == v)
            )
            for k, v in old.items()
        )
    if isinstance(old, list) and isinstance(new, list):
        return len(old) == len(new) and all(contains_config(n, o) for n, o in zip(new, old, strict=True))
    return new == old


@pytest.mark.parametrize("run_id", sorted(COMMANDS))
def test_the_readme_queries_answer_as_they_did_when_every_round_was_a_row(tmp_path: Path, run_id: str) -> None:
    old = tmp_path / "old" / f"{run_id}.duckdb"
    old.parent.mkdir()
    with gzip.open(FIXTURES / f"{run_id}.duckdb.gz") as src, open(old, "wb") as dst:
        shutil.copyfileobj(src, dst)
    new_dir = tmp_path / "new"
    result = CliRunner().invoke(app, [*COMMANDS[run_id], "--results", str(new_dir), "--run-id", run_id])
    assert result.exit_code == 0, result.output
    with duckdb.connect(str(old), read_only=True) as con:  # the old file, read by the old views inside it
        assert con.execute("SELECT value FROM pdbench_meta WHERE key = 'schema_version'").fetchone() == ("3",)
        # Later schemas add tables, views and columns (schema 5: calls.answer_format, calls.reader, move_readers):
        # what the old file has must answer as it did, read as it was (its columns, in its order).
        known = {
            r[0]
            for r in con.execute(
                "SELECT table_name FROM duckdb_tables() UNION SELECT view_name FROM duckdb_views()"
            ).fetchall()
        }
        queries = [
            q for q in readme_queries() if (m := re.search(r"FROM (\w+)$", q)) is None or _as_named_then(m[1]) in known
        ]
        before = {q: answer(con, _as_named_then(q)) for q in queries}
    queries = [f"SELECT {', '.join(before[q][0])} FROM ({q})" if q.startswith("SELECT *") else q for q in queries]
    before = {new_q: before[old_q] for new_q, old_q in zip(queries, before, strict=True)}
    with duckdb.connect(str(new_dir / f"{run_id}.duckdb"), read_only=True) as con:
        (new_config,) = con.execute("SELECT config_json FROM runs").fetchone()
        with duckdb.connect(str(old), read_only=True) as old_con:
            (old_config,) = old_con.execute("SELECT config_json FROM runs").fetchone()
        assert contains_config(json.loads(new_config), json.loads(old_config))
        params = "SELECT game_id, params_a, params_b FROM games ORDER BY game_id"
        with duckdb.connect(str(old), read_only=True) as old_con:
            old_params = old_con.execute(params).fetchall()
        new_params = con.execute(params).fetchall()
        assert [r[0] for r in new_params] == [r[0] for r in old_params]
        for new_row, old_row in zip(new_params, old_params, strict=True):
            for new_p, old_p in zip(new_row[1:], old_row[1:], strict=True):
                assert (new_p is None) == (old_p is None)
                assert old_p is None or contains_config(json.loads(new_p), json.loads(old_p))
        stored = {
            t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("games", "game_moves", "round_rows")
        }
        for q in queries:
            assert answer(con, q) == before[q], q
    if run_id == "schema_v3_eval":  # a model's games are recorded round by round, as they are played
        rounds = next(q for q in before if q.endswith("FROM (SELECT * FROM rounds)"))
        assert stored["game_moves"] == 0 and stored["round_rows"] == len(before[rounds][1])
    else:  # a row a game
        assert stored["game_moves"] == stored["games"] > 0 and stored["round_rows"] == 0
    with Catalog(new_dir) as cat:  # what `pdbench sql` sees
        for q in queries:
            assert answer(cat, q) == before[q], q
    with Catalog(old.parent) as cat:  # the old file, migrated: its rows kept as rows
        assert cat.skipped == []
        for q in queries:
            assert answer(cat, q) == before[q], q

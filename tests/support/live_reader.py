"""A reader of a run being written, in a process of its own: for the live-read tests and benchmark.

It opens a :class:`harness.store.catalog.Catalog` on the results folder every ``--every`` seconds, as
the dashboard does, and prints one JSON line per look: when the query returned, whether the run was
read from a live copy (and that copy's time), the run's status, the ids of its complete games and
the number of rows that break the run's invariants (which must all be 0 in every state a reader can
see). It stops when the run is no longer running, or after ``--timeout`` seconds::

    python -m tests.support.live_reader RESULTS_DIR RUN_ID --every 0.5
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from harness.store.catalog import Catalog

# Rows that would show a half-written state. The model is player a in every condition of an eval.
INVARIANTS = {
    # a complete game holds exactly its rounds_played rounds, numbered 1..rounds_played
    "complete_games_missing_rounds": """
        SELECT count(*) FROM games g WHERE g.status = 'complete' AND (g.rounds_played = 0
            OR g.rounds_played <> (SELECT count(*) FROM rounds r WHERE r.run_id = g.run_id AND r.game_id = g.game_id)
            OR g.rounds_played <> (SELECT count(DISTINCT r.round) FROM rounds r WHERE r.run_id = g.run_id
                                   AND r.game_id = g.game_id AND r.round BETWEEN 1 AND g.rounds_played))
        """,
    # every round comes with the model's call that chose its move
    "rounds_without_their_call": """
        SELECT count(*) FROM rounds r WHERE NOT EXISTS (
            SELECT 1 FROM calls c WHERE c.run_id = r.run_id AND c.game_id = r.game_id AND c.round = r.round
            AND c.player = 'a' AND c.purpose = 'move' AND c.action = r.intended_a)
        """,
    # every move call belongs to a round that is stored (no failures are scripted in these runs)
    "calls_without_their_round": """
        SELECT count(*) FROM calls c WHERE NOT EXISTS (
            SELECT 1 FROM rounds r WHERE r.run_id = c.run_id AND r.game_id = c.game_id AND r.round = c.round)
        """,
    # every round belongs to a stored game
    "rounds_without_their_game": """
        SELECT count(*) FROM rounds r WHERE NOT EXISTS (
            SELECT 1 FROM games g WHERE g.run_id = r.run_id AND g.game_id = r.game_id)
        """,
}


def look(results: Path, run_id: str, *, check: bool = True) -> dict[str, object]:
    """One look at the run: what a reader sees now (and, if ``check``, whether it breaks an invariant)."""
    with Catalog(results, [run_id]) as cat:
        live = cat.live.get(results / f"{run_id}.duckdb")
        status = cat.query("SELECT status FROM runs WHERE run_id = ?", [run_id])[1]
        complete = [r[0] for r in cat.query("SELECT game_id FROM games WHERE status = 'complete' ORDER BY 1")[1]]
        broken = {name: int(cat.query(sql)[1][0][0]) for name, sql in INVARIANTS.items()} if check else {}
        skipped = [reason for _, reason in cat.skipped]
    return {
        "t": time.time(),
        "live_at": None if live is None else live.timestamp(),
        "status": status[0][0] if status else None,
        "complete": complete,
        "broken": broken,
        "skipped": skipped,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("results", type=Path)
    parser.add_argument("run_id")
    parser.add_argument("--every", type=float, default=0.5)
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--light", action="store_true", help="only look (no invariant checks): as a dashboard does")
    args = parser.parse_args(argv)
    deadline = time.monotonic() + args.timeout
    while time.monotonic() < deadline:
        started = time.monotonic()
        if (args.results / f"{args.run_id}.duckdb").exists():
            seen = look(args.results, args.run_id, check=not args.light)
            print(json.dumps(seen), flush=True)
            if seen["status"] not in (None, "running"):
                return 0
        time.sleep(max(0.0, args.every - (time.monotonic() - started)))
    return 1


if __name__ == "__main__":
    sys.exit(main())

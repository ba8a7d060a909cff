"""``pdbench evolve --suite payne2025``: a whole run of the protocol with the mock model (5 phases of 22 agents,
stored with ``suite: payne2025``), and the options the suite fixes refused in one paragraph before anything runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import pdbench, sql_json


@pytest.mark.slow
def test_payne2025_plays_their_phases_with_the_model_and_stores_the_suite(results: Path) -> None:
    code, _, err = pdbench("evolve", "--suite", "payne2025", "--players", "mock/tft", "--stop-prob", "0.75",
                           "--results", results, "--run-id", "pa")  # fmt: skip
    assert code == 0, err
    [run] = sql_json(results, "SELECT status, config_json FROM runs WHERE run_id = 'pa'")
    config = json.loads(run["config_json"])
    assert run["status"] == "complete" and config["suite"] == "payne2025"
    assert config["horizon"] == {"type": "geometric", "n_rounds": None, "stop_prob": 0.75, "max_rounds": 30}
    phases = sql_json(results, "SELECT generation, sum(matches) AS m FROM phase_scores GROUP BY 1 ORDER BY 1")
    assert [p["generation"] for p in phases] == [0, 1, 2, 3, 4]  # 4 updates, 5 phases
    assert all(p["m"] == 22 * 21 for p in phases)  # every agent meets the 21 others once
    # phase 0: 22 agents, the 2 of the model in C(22, 2) - C(20, 2) = 41 matches, all in its phase run
    [games] = sql_json(
        results, "SELECT count(*) AS n, max(rounds_played) AS longest FROM games WHERE run_id = 'pa_phase0'"
    )
    assert games["n"] == 41 and games["longest"] <= 30
    # The mock writes free text, never the move alone on the last line: every reply is unreadable to their reader,
    # so every model move is a flagged C, with one call a move (no re-ask), as [R] turns it into C.
    seats = sql_json(results, """
        SELECT sum(CASE WHEN g.player_a = 'mock/tft' THEN 1 ELSE 0 END + CASE WHEN g.player_b = 'mock/tft' THEN 1
                   ELSE 0 END) AS moves,
               sum(CASE WHEN (g.player_a = 'mock/tft' AND NOT (r.flagged_a AND r.action_a = 'C'))
                          OR (g.player_b = 'mock/tft' AND NOT (r.flagged_b AND r.action_b = 'C')) THEN 1 ELSE 0 END)
                   AS other
        FROM rounds r JOIN games g ON g.run_id = r.run_id AND g.game_id = r.game_id
        WHERE r.run_id LIKE 'pa_phase%'""")  # fmt: skip
    [calls] = sql_json(results, "SELECT count(*) AS n, count(action) AS read FROM calls WHERE run_id LIKE 'pa_phase%'")
    assert seats[0]["moves"] == calls["n"] > 0 and seats[0]["other"] == 0 and calls["read"] == 0


def test_the_options_it_fixes_are_one_paragraph_and_nothing_runs(results: Path) -> None:
    code, out, err = pdbench("evolve", "--suite", "payne2025", "--players", "mock/tft", "--stop-prob", "0.25",
                             "--counts", "2,2", "--max-rounds", "10", "--model-settings", "missing.yaml",
                             "--results", results)  # fmt: skip
    said = " ".join(err.split())
    assert code == 2 and out == "" and "Traceback" not in err and err.startswith("error:")
    assert "--counts (the initial population), --max-rounds (the horizon), --model-settings" in said
    for args, wanted in (
        (["--players", "mock/tft", "--stop-prob", "0.3"], "ran 0.1, 0.25, 0.75 only"),
        (["--stop-prob", "0.1"], "needs the language models"),
        (["--players", "TFT,mock/tft", "--stop-prob", "0.1"], "names only the language models"),
    ):
        code, _, err = pdbench("evolve", "--suite", "payne2025", *args, "--results", results)
        assert code == 2 and wanted in " ".join(err.split()), err
    code, _, err = pdbench("evolve", "--suite", "payne", "--players", "mock/tft", "--results", results)
    assert code == 2 and "unknown evolve suite 'payne'" in err
    assert list(results.iterdir()) == []

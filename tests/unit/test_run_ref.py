"""Run ids as a user types them (harness.store.run_ref): the whole id, a prefix no other run shares, or
``latest``; the same words accepted by ``report`` and ``resume``, and one-paragraph errors for a prefix several
runs share (listing them) and for a run that is not there (saying how to list the runs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import RunNotFoundError, StoreError
from harness.store.run_ref import resolve_run_id
from tests.conftest import write_games
from tests.support.cli import pdbench


def touch(folder: Path, *run_ids: str) -> None:
    """Results files by name only: resolving a prefix reads names, never the files."""
    for run_id in run_ids:
        (folder / f"{run_id}.duckdb").write_bytes(b"")


def test_a_whole_id_is_itself_even_when_it_starts_another(results: Path) -> None:
    touch(results, "eval_1", "eval_10")
    assert resolve_run_id(results, "eval_1") == "eval_1"


def test_a_prefix_one_run_has_names_that_run(results: Path) -> None:
    touch(results, "eval_20261122_120000", "tournament_20261122_130000")
    assert resolve_run_id(results, "ev") == "eval_20261122_120000"
    assert resolve_run_id(results, "tournament_2026") == "tournament_20261122_130000"


def test_a_prefix_several_runs_share_is_refused_with_the_candidates(results: Path) -> None:
    touch(results, "eval_a", "eval_b", "tournament_c")
    with pytest.raises(StoreError) as caught:
        resolve_run_id(results, "eval")
    message = str(caught.value)
    assert "could be any of 2 runs" in message and "eval_a, eval_b" in message and "tournament_c" not in message
    assert "\n" not in message


def test_an_unknown_id_says_how_to_list_the_runs(results: Path) -> None:
    touch(results, "eval_a")
    with pytest.raises(RunNotFoundError, match=r"`pdbench runs --results .*`"):
        resolve_run_id(results, "nope")


def test_latest_is_the_newest_run_not_the_last_name(results: Path) -> None:
    write_games(results, "b_older", [("CC", "CC")]).close()
    write_games(results, "a_newer", [("CD", "DC")]).close()
    assert resolve_run_id(results, "latest") == "a_newer"


def test_latest_in_an_empty_folder_says_there_is_no_run(results: Path) -> None:
    with pytest.raises(RunNotFoundError, match=r"no runs in .* yet"):
        resolve_run_id(results, "latest")


def test_report_takes_latest_and_a_prefix_as_it_takes_the_id(results: Path) -> None:
    write_games(results, "hand_older", [("CC", "CC")]).close()
    write_games(results, "hand_newer", [("CD", "DC"), ("DD", "DD")]).close()
    whole = pdbench("report", "hand_newer", "--results", results, "--format", "json")
    assert whole[0] == 0, whole[2]
    assert pdbench("report", "latest", "--results", results, "--format", "json") == whole
    assert pdbench("report", "hand_n", "--results", results, "--format", "json") == whole
    code, _, err = pdbench("report", "hand", "--results", results)
    assert code == 2 and "could be any of 2 runs" in err and "hand_newer" in err and "hand_older" in err


def test_resume_refuses_an_ambiguous_prefix_before_anything_runs(results: Path) -> None:
    write_games(results, "hand_one", [("CC", "CC")]).close()
    write_games(results, "hand_two", [("CC", "CC")]).close()
    code, _, err = pdbench("resume", "hand_", "--results", results)
    assert code == 2 and "could be any of 2 runs" in err and "Traceback" not in err

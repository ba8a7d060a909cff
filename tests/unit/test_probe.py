"""Counterfactual probes (``pdbench probe``, issue 24 point 3) with mock models whose answer to a flip is known by hand.

mock/tft copies the opponent's last move shown, so flipping that move flips its answer: every probe changes its move
(share 1 for both kinds). mock/cooperator never reads the history: no probe changes its move (share 0). mock/grim
defects for ever once its prompt shows a defection by the opponent, so a flip changes its move only when the flipped
move at t - 1 is the one defection (or the only cooperation before it) that decides; worked out per game below.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.console import Console

from harness.analysis.compare import compare, resolve_players
from harness.analysis.memory_one import pooled_rate
from harness.analysis.probes import Flip, probe_shares
from harness.cli.probe import probe_table
from harness.config import parse_experiment
from harness.engine.probe import parse_rounds, plan_probes, run_probes
from harness.engine.runner import run_experiment
from harness.errors import ConfigError
from harness.states import RunStatus
from harness.store.catalog import Catalog
from tests.support.cli import pdbench, sql_json


def _play(
    folder: Path, run_id: str, player: dict[str, str], opponents: list[str], rounds: int, replicates: int
) -> None:
    conditions = [{"name": f"vs_{o}", "agent_a": player, "agent_b": {"policy": o}} for o in opponents]
    config = {"horizon": {"n_rounds": rounds}, "experiment": {"replicates": replicates, "conditions": conditions}}
    result = run_experiment(parse_experiment(config), results_dir=folder, run_id=run_id)
    assert result.status is RunStatus.COMPLETE


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The source runs, played once for the module (a test copies the ones it probes into its own folder)."""
    folder = tmp_path_factory.mktemp("sources")
    _play(folder, "tft", {"model": "mock/tft"}, ["ALTERNATOR"], 6, 2)
    _play(folder, "coop", {"model": "mock/cooperator"}, ["ALTERNATOR"], 6, 2)
    _play(folder, "grim", {"model": "mock/grim"}, ["ALTERNATOR", "ALLC"], 6, 3)
    _play(folder, "t", {"policy": "TFT"}, ["ALLD"], 5, 1)
    yield folder


def _copy(sources: Path, results: Path, *run_ids: str) -> Path:
    for run_id in run_ids:
        shutil.copy(sources / f"{run_id}.duckdb", results / f"{run_id}.duckdb")
    return results


def _shares(results: Path, source: str, probe_id: str, rounds: list[int] | None = None) -> dict[Flip, tuple[int, int]]:
    result = run_probes(plan_probes(results, source, rounds), results_dir=results, run_id=probe_id)
    assert result.unmatched == 0 and result.factual_paid == 0
    with Catalog(results, [probe_id, source]) as cat:
        return {s.flip: (s.changed, s.probes) for s in probe_shares(cat, probe_id)}


def test_every_flip_changes_tft_and_none_changes_a_cooperator(sources: Path, results: Path) -> None:
    # ALTERNATOR plays C, D, C, D, C, D: in 6 rounds the probes at t = 2, 4, 6 flip a C (C->D), at t = 3, 5 a D.
    _copy(sources, results, "tft", "coop")
    assert _shares(results, "tft", "p_tft") == {Flip.C_TO_D: (6, 6), Flip.D_TO_C: (4, 4)}
    assert _shares(results, "coop", "p_coop") == {Flip.C_TO_D: (0, 6), Flip.D_TO_C: (0, 4)}


def test_under_observation_noise_the_probe_shows_what_the_model_saw(tmp_path: Path) -> None:
    """mock/tft copies the opponent's move as it saw it. Rebuilt from the moves as played, the factual request of a
    round after a misreading would differ from the one sent and the probe would be dropped; rebuilt from what it
    saw, every probe matches, and each flip (of the move as seen) changes its move."""
    conditions = [{"name": "vs_RAND", "agent_a": {"model": "mock/tft"}, "agent_b": {"policy": "RAND"}}]
    config = {
        "horizon": {"n_rounds": 8},
        "noise": {"execution": 0.0, "observation": 0.3},
        "experiment": {"replicates": 4, "conditions": conditions},
    }
    assert run_experiment(parse_experiment(config), results_dir=tmp_path, run_id="obs").status is RunStatus.COMPLETE
    seen = sql_json(tmp_path, "select count(*) as n from rounds where run_id = 'obs' and observed_a <> action_b")
    assert seen[0]["n"] > 0  # the model misread some of RAND's moves
    result = run_probes(plan_probes(tmp_path, "obs", None), results_dir=tmp_path, run_id="p_obs")
    assert result.unmatched == 0
    with Catalog(tmp_path, ["p_obs", "obs"]) as cat:
        shares = probe_shares(cat, "p_obs")
    assert shares and all(s.changed == s.probes for s in shares)
    assert sum(s.probes for s in shares) == 4 * 7  # every round from 2 on, in each of the 4 games


def test_latest_passes_over_probe_runs_and_runs_lists_them_by_kind(sources: Path, results: Path) -> None:
    from harness.store.run_ref import resolve_run_id

    _copy(sources, results, "tft")
    run_probes(plan_probes(results, "tft", [2]), results_dir=results, run_id="p_latest")
    assert resolve_run_id(results, "latest") == "tft"  # the probe run is newer, but holds no games
    assert resolve_run_id(results, "p_lat") == "p_latest"  # by id or prefix it is found
    code, out, err = pdbench("runs", "--kind", "probe", "--results", results, "--format", "csv")
    assert code == 0, err
    assert [line.split(",")[0] for line in out.splitlines()[1:]] == ["p_latest"]


def test_grim_changes_only_where_the_flipped_move_decides(sources: Path, results: Path) -> None:
    # Against ALTERNATOR (C D C D C D): t = 2 (C->D at 1: the first defection) and t = 3 (D->C at 2: the only
    # defection so far) change grim's move; at t = 4, 5, 6 the defection of round 2 (or 4) decides already.
    # Against ALLC grim always cooperates and every flip is the first defection: all 5 probes change.
    _copy(sources, results, "grim")
    alternator, allc = (1, 3), (5, 5)  # (changed, probes) of C->D flips per game
    shares = _shares(results, "grim", "p_grim")
    assert shares == {Flip.C_TO_D: (3 * 1 + 3 * 5, 3 * 3 + 3 * 5), Flip.D_TO_C: (3, 6)}
    with Catalog(results, ["p_grim", "grim"]) as cat:
        by_flip = {s.flip: s.share for s in probe_shares(cat, "p_grim")}
    assert by_flip[Flip.C_TO_D].mean == pytest.approx(18 / 24)
    assert by_flip[Flip.C_TO_D] == pooled_rate([alternator] * 3 + [allc] * 3)  # clustered by game: 6 games
    assert by_flip[Flip.D_TO_C].n == 3 and by_flip[Flip.D_TO_C].mean == pytest.approx(0.5)


def test_chosen_rounds_the_view_and_the_table(sources: Path, results: Path) -> None:
    # Rounds 2 and 5 only. ALTERNATOR's games (0-2): t = 2 flips its C of round 1 and changes grim's move; t = 5
    # flips its D of round 4, and its D of round 2 still decides. ALLC's games (3-5): both flip a C, both change.
    _copy(sources, results, "grim")
    shares = _shares(results, "grim", "p", rounds=[2, 5])
    assert shares == {Flip.C_TO_D: (3 + 6, 3 + 6), Flip.D_TO_C: (0, 3)}
    rows = sql_json(results, "select * from counterfactual_probes order by game_id, round")
    got = [(r["game_id"], r["round"], r["flip"], r["factual_action"], r["counterfactual_action"]) for r in rows]
    assert got[:2] == [(0, 2, "C->D", "C", "D"), (0, 5, "D->C", "D", "D")]
    assert got[-2:] == [(5, 2, "C->D", "C", "D"), (5, 5, "C->D", "C", "D")]
    assert {r["source_run"] for r in rows} == {"grim"} and {r["player_name"] for r in rows} == {"mock/grim"}
    calls = sql_json(results, "select purpose, count(*) as n from calls where run_id = 'p' group by all order by all")
    assert calls == [{"purpose": "counterfactual", "n": 12}, {"purpose": "factual", "n": 12}]
    with Catalog(results, ["p", "grim"]) as cat:
        console = Console(width=80, record=True)
        console.print(probe_table(cat, "p"))
    assert max(len(line) for line in console.export_text().splitlines()) <= 80


@pytest.mark.slow  # several commands, each opening the results folder: about 3 s on a loaded machine
def test_the_command_prints_the_plan_and_the_shares(sources: Path, results: Path) -> None:
    _copy(sources, results, "tft")
    code, out, err = pdbench("probe", "tft", "--dry-run", "--results", results)
    assert code == 0 and "10 probes of run tft" in out, err
    assert "asked again, free: a mock's answers are not cached" in " ".join(out.split())  # not "from the cache"
    assert sql_json(results, "select count(*) as n from runs") == [{"n": 1}]  # a dry run records nothing

    code, out, err = pdbench("probe", "latest", "--max-probes", "4", "--run-id", "pt", "--results", results)
    assert code == 0, err
    assert "D->C forgiveness" in out and "100.0%" in out and "0 unmatched" in out
    assert sql_json(results, "select kind, status from runs where run_id = 'pt'") == [
        {"kind": "probe", "status": "complete"}
    ]
    # The earliest rounds of every game first: t = 2 and t = 3 of both games.
    assert sql_json(results, "select round, count(*) as n from counterfactual_probes group by all order by all") == [
        {"round": 2, "n": 2},
        {"round": 3, "n": 2},
    ]


@pytest.mark.slow  # several commands, each opening the results folder: about 3 s on a loaded machine
def test_bad_input_is_one_paragraph_before_anything_runs(sources: Path, results: Path) -> None:
    _copy(sources, results, "t", "tft")
    for args, words in (
        (("t",), "has no model player"),
        (("tft", "--rounds", "5,9"), "--rounds 9: beyond every game"),
        (("tft", "--rounds", "1"), "at least 2"),
        (("nope",), "no run 'nope'"),
    ):
        code, _, err = pdbench("probe", *args, "--results", results)
        assert code != 0 and words in err and "Traceback" not in err, (args, err)
    code, _, err = pdbench("probe", "tft", "--max-probes", "1", "--run-id", "p", "--results", results)
    assert code == 0, err
    code, _, err = pdbench("probe", "p", "--results", results)
    assert code != 0 and "is itself a probe run" in err
    assert sql_json(results, "select count(*) as n from runs") == [{"n": 3}]


def test_parse_rounds() -> None:
    assert parse_rounds("all") is None and parse_rounds(" 5, 2,5 ") == [2, 5]
    with pytest.raises(ConfigError, match="at least 2"):
        parse_rounds("2,x")


@pytest.mark.slow  # several commands, each opening the results folder: about 3 s on a loaded machine
def test_the_model_comparison_shows_the_probe_shares_of_each_run(sources: Path, results: Path) -> None:
    # mock/tft and mock/grim share the opponent ALTERNATOR. Over its games: tft changes at every flip, (3, 3) C->D
    # flips a game; grim at t = 2 only of t = 2, 4, 6, (1, 3) a game. Probing grim's rounds twice counts them once.
    _copy(sources, results, "tft", "grim")
    for source, probe_id in (("tft", "p1"), ("grim", "p2"), ("grim", "p3")):
        run_probes(plan_probes(results, source), results_dir=results, run_id=probe_id)
    with Catalog(results) as cat:
        players = resolve_players(cat, ["tft", "grim"], {"tft": ["tft"], "grim": ["grim"]})
        result = compare(cat, players)
    tft, grim = result.overall["probe_retaliation"]
    assert tft.estimate == pooled_rate([(3, 3)] * 2) and tft.estimate.mean == 1.0
    assert grim.estimate == pooled_rate([(1, 3)] * 3) and grim.estimate.mean == pytest.approx(1 / 3)
    assert result.overall["probe_forgiveness"][1].estimate.mean == pytest.approx(3 / 6)  # t = 3 of t = 3, 5

"""Sweeps: ``pdbench evolve --sweep KEY=V1,V2 --seeds N`` in a process pool (and on a local Ray cluster), each
cell × seed its own run tagged with the sweep id, and ``pdbench report <sweep_id>``'s confidence intervals."""

from __future__ import annotations

import json
import math
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from harness.engine.evolution.options import EvolutionOptions, parse_sweep
from harness.engine.evolution.sweep import plan_sweep, run_local
from harness.engine.interrupts import StopFlag
from harness.errors import ConfigError
from harness.evolution import EvolutionSettings, evolve
from harness.states import RunStatus
from harness.store.evolution_writer import list_evolution_runs, read_evolution
from tests.support.cli import pdbench
from tests.support.ports import free_port

SWEEP = ["evolve", "--players", "TFT,ALLD,GTFT(p=0.3)", "--counts", "6,6,6", "--generations", "40", "--rounds", "30",
         "--sweep", "noise=0,0.1", "--seeds", "3", "--seed", "10"]  # fmt: skip


def _settings(noise: float, seed: int) -> EvolutionSettings:
    return EvolutionSettings(players=["TFT", "ALLD", "GTFT(p=0.3)"], counts=[6, 6, 6], generations=40,
                             horizon={"type": "fixed", "n_rounds": 30}, noise=noise, seed=seed)  # fmt: skip


def _check_sweep_runs(results: Path, sweep_id: str) -> dict[tuple[float, int], np.ndarray]:
    """Every cell × seed is its own complete run, tagged, and the very run evolve gives for its settings."""
    runs = {r.run_id: r for r in list_evolution_runs(results, sweep_id=sweep_id)}
    assert sorted(runs) == [f"{sweep_id}_c{c}_s{s}" for c in (0, 1) for s in (10, 11, 12)]
    finals = {}
    for run_id, run in runs.items():
        noise = [0.0, 0.1][int(run_id.split("_c")[1][0])]
        seed = int(run_id.rsplit("_s", 1)[1])
        assert run.status == RunStatus.COMPLETE and run.sweep_id == sweep_id and run.sweep_cell == {"noise": noise}
        assert run.settings == _settings(noise, seed)
        _, stored = read_evolution(results, run_id)
        assert np.array_equal(stored.population, evolve(_settings(noise, seed)).population), run_id
        finals[(noise, seed)] = stored.shares()[-1]
    return finals


@pytest.mark.slow
def test_a_sweep_runs_every_cell_and_seed_in_processes_and_reports_a_t_interval(results: Path) -> None:
    code, out, err = pdbench(*SWEEP, "--workers", "2", "--results", results, "--run-id", "sw")
    assert code == 0, err
    assert "6 runs of 2 cells × 3 seeds" in out and "on 2 processes" in err
    finals = _check_sweep_runs(results, "sw")
    code, out, err = pdbench("report", "sw", "--results", results, "--format", "json")
    assert code == 0, err
    rows = {(r["cell"], r["player"]): r for r in json.loads(out)}
    assert len(rows) == 6
    import scipy.stats  # here, not at the top: scipy costs every test process ~1 s to collect

    players = ["TFT", "ALLD", "GTFT(generous_prob=0.3)"]
    for noise in (0.0, 0.1):
        for i, player in enumerate(players):
            xs = np.array([finals[(noise, s)][i] for s in (10, 11, 12)])
            mean = xs.mean()
            half = scipy.stats.t.ppf(0.975, df=2) * xs.std(ddof=1) / math.sqrt(3)
            row = rows[(f"noise={noise}", player)]
            assert row["runs"] == 3 and row["unfinished"] == 0
            assert row["mean_share"] == pytest.approx(mean, abs=1e-12)
            assert row["ci_low"] == pytest.approx(max(0.0, mean - half), abs=1e-12)
            assert row["ci_high"] == pytest.approx(min(1.0, mean + half), abs=1e-12)
            assert row["fixed_in"] == sum(1 for s in (10, 11, 12) if finals[(noise, s)][i] == 1.0)
    code, out, _ = pdbench("report", "sw", "--results", results)
    assert code == 0 and "Sweep sw: final share per player" in out and "noise=0.1" in out
    assert "Selection read the mean payoff per round over the others met" in " ".join(out.split())


def test_the_interval_is_cut_at_0_and_1() -> None:
    """Shares 0, 0, 1 over three seeds: mean 1/3, t half-width 4.303 × 0.577 / √3 = 1.434, so the symmetric
    interval [-1.10, 1.77] is cut to [0, 1]."""
    from harness.analysis.stats import mean_ci

    est = mean_ci([0.0, 0.0, 1.0], bounds=(0.0, 1.0))
    half = 4.302652729911275 * math.sqrt(1 / 3) / math.sqrt(3)
    assert est.mean == pytest.approx(1 / 3) and half == pytest.approx(1.4342, abs=1e-4)
    assert (est.low, est.high) == (0.0, 1.0)


@pytest.mark.slow
def test_a_sweep_refuses_runs_of_other_settings_it_would_overwrite_and_bad_seed_counts(results: Path) -> None:
    code, _, err = pdbench(*SWEEP, "--workers", "1", "--results", results, "--run-id", "dup")
    assert code == 0, err
    code, _, err = pdbench(*SWEEP, "--results", results, "--run-id", "dup")  # the same command: nothing to do
    assert code == 0 and "Sweep dup: its 6 runs are complete already." in err, err
    code, _, err = pdbench(*SWEEP, "--mutation", "0.01", "--results", results, "--run-id", "dup")
    assert code == 2 and "sweep 'dup' has runs of other settings already (dup_c0_s10, dup_c0_s11" in err, err
    code, _, err = pdbench("evolve", "--counts", "2,2,2,2", "--sweep", "noise=0", "--seeds", "0", "--results", results)
    assert code == 2 and "--seeds 0" in err


@pytest.mark.slow
def test_a_stopped_sweep_interrupts_the_runs_playing_and_starts_no_other(results: Path) -> None:
    options = EvolutionOptions("TFT,ALLD,ALLC,GRIM", counts="100,100,100,100", dynamics="moran",
                               generations=5_000_000, mutation=0.01, noise=0.05)  # fmt: skip
    jobs = plan_sweep(options, parse_sweep(["selection=0.5,1"]), range(3), "stopped")
    stop = StopFlag()
    timer = threading.Timer(4.0, stop.set, ["stopped by the test"])
    timer.start()
    try:
        done = run_local(jobs, results_dir=results, sweep_id="stopped", workers=2, stop=stop)
    finally:
        timer.cancel()
    assert done and all(r.status == RunStatus.INTERRUPTED for r in done)
    assert all(r.reason == "the sweep was stopped" for r in done)
    files = sorted(p.stem for p in results.glob("stopped_*.duckdb"))
    assert files == sorted(r.run_id for r in done) and len(files) < len(jobs)
    for r in done:
        run, stored = read_evolution(results, r.run_id)
        assert run.status == RunStatus.INTERRUPTED and stored.generations == r.generations


def _children(pid: int) -> set[int]:
    """The live processes whose parent is ``pid`` (Linux's /proc; a zombie is no live process)."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.add(int(stat.parent.name))
    return found


def _alive(pids: set[int]) -> set[int]:
    alive = set()
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != "Z":
            alive.add(pid)
    return alive


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process table from Linux's /proc")
def test_a_killed_sweep_takes_its_workers_with_it_and_the_same_command_resumes_it(results: Path) -> None:
    # Before: the workers outlived a kill -9 of the sweep, played every queued run and stayed alive; the same
    # command then refused to run ("has runs already") without --overwrite, which threw the finished runs away.
    sweep = ["evolve", "--players", "TFT,ALLD,ALLC,GRIM", "--counts", "100,100,100,100", "--dynamics", "moran",
             "--sweep", "generations=10,11,30000", "--workers", "2", "--results", str(results),
             "--run-id", "k"]  # fmt: skip
    proc = subprocess.Popen([sys.executable, "-m", "harness.cli", *sweep], stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(iter(proc.stderr.readline, "")), daemon=True)  # type: ignore[union-attr]
    reader.start()
    deadline = time.monotonic() + 60
    while not (any(line.startswith("[2/3]") for line in lines) and (results / "k_c2_s0.duckdb").exists()):
        assert proc.poll() is None and time.monotonic() < deadline, "".join(lines)
        time.sleep(0.02)
    workers = _children(proc.pid)
    assert workers, "the sweep's worker processes were not found"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 5
    while _alive(workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(workers), f"workers {sorted(_alive(workers))} outlived the sweep's process"
    runs = {r.run_id: r for r in list_evolution_runs(results, sweep_id="k")}
    assert [runs[f"k_c{c}_s0"].status for c in range(3)] == ["complete", "complete", "interrupted"]
    kept = {rid: runs[rid].created_at for rid in ("k_c0_s0", "k_c1_s0")}

    code, _, err = pdbench(*sweep)

    assert code == 0, err
    assert "3 runs on 1 processes (2 complete already, kept; 1 to play)" in err and "[3/3] k_c2_s0: complete" in err
    runs = {r.run_id: r for r in list_evolution_runs(results, sweep_id="k")}
    assert {r.status for r in runs.values()} == {RunStatus.COMPLETE} and len(runs) == 3
    assert {rid: runs[rid].created_at for rid in kept} == kept  # reused, not played again
    assert runs["k_c2_s0"].generations == 30000


# -- on a Ray cluster ------------------------------------------------------------------------------------
@pytest.fixture
def ray_cluster() -> Iterator[tuple[str, dict[str, str]]]:
    """A one-node Ray cluster on 127.0.0.1, started here and stopped by its process group (nothing else)."""
    if not _has_ray():
        pytest.skip("Ray is not installed (it is the optional extra pdbench[ray]): the --ray sweep is not tested")
    port = free_port()
    # On Linux Ray would advertise the machine's network address; this keeps every socket on loopback.
    env = {**os.environ, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_USAGE_STATS_ENABLED": "0"}
    ray = Path(sys.executable).with_name("ray")
    proc = subprocess.Popen(
        [str(ray), "start", "--head", "--block", "--node-ip-address=127.0.0.1", f"--port={port}",
         "--include-dashboard=false", "--num-cpus=2", "--disable-usage-stats"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 90
        while True:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert proc.poll() is None and time.monotonic() < deadline, "the Ray head did not start"
            time.sleep(0.2)
        yield f"127.0.0.1:{port}", env
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        deadline = time.monotonic() + 5
        while _group_alive(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        if _group_alive(proc.pid):
            os.killpg(proc.pid, signal.SIGKILL)


def _has_ray() -> bool:
    import importlib.util

    return importlib.util.find_spec("ray") is not None


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_sweep_on_a_ray_cluster_writes_the_same_runs(results: Path, ray_cluster: tuple[str, dict[str, str]]) -> None:
    address, env = ray_cluster
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli", *SWEEP, "--ray", address, "--results", str(results), "--run-id", "rs"],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"on the Ray cluster at {address}" in done.stderr
    _check_sweep_runs(results, "rs")


@pytest.mark.slow
def test_a_sweep_with_a_model_plays_one_payoff_tournament_per_game_it_sweeps(results: Path) -> None:
    """Noise changes the games, so each noise level has its payoff games (played before the sweep, at the first
    seed); the seeds of a cell share them, and each run names the tournament its table came from."""
    code, _, err = pdbench("evolve", "--players", "TFT,ALLD,mock/tft", "--counts", "3,3,3", "--rounds", "5",
                           "--replicates", "2", "--generations", "10", "--sweep", "noise=0,0.1", "--seeds", "2",
                           "--workers", "2", "--results", results, "--run-id", "ms")  # fmt: skip
    assert code == 0, err
    runs = {r.run_id: r for r in list_evolution_runs(results, sweep_id="ms")}
    assert {r: run.payoff_run for r, run in runs.items()} == {
        "ms_c0_s0": "ms_g0_payoffs", "ms_c0_s1": "ms_g0_payoffs", "ms_c1_s0": "ms_g1_payoffs",
        "ms_c1_s1": "ms_g1_payoffs",
    }  # fmt: skip
    query = "select run_id, config_json->>'$.noise.prob' as noise from runs where kind = 'tournament' order by 1"
    code, out, err = pdbench("sql", query, "--results", results, "--format", "json")
    assert code == 0, err
    assert json.loads(out) == [{"run_id": "ms_g0_payoffs", "noise": "0.0"}, {"run_id": "ms_g1_payoffs", "noise": "0.1"}]
    from harness.engine.evolution.models import payoffs_from_run

    for run_id, run in runs.items():
        _, stored = read_evolution(results, run_id)
        table = payoffs_from_run(results, run.payoff_run or "", run.settings)
        assert np.array_equal(stored.payoffs.values, table.values), run_id
        assert np.array_equal(stored.payoffs.matches, table.matches) and (table.matches == 2).all()


def test_ray_missing_or_unreachable_is_one_paragraph(results: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    args = ["evolve", "--counts", "2,2,2,2", "--generations", "5", "--sweep", "noise=0", "--results", results]
    if _has_ray():
        code, _, err = pdbench(*args, "--ray", f"127.0.0.1:{free_port()}", "--run-id", "nobody")
        assert code == 2 and "nothing answers at the Ray address" in err and "Traceback" not in err
    monkeypatch.setitem(sys.modules, "ray", None)  # as where Ray is not installed
    code, _, err = pdbench(*args, "--ray", "127.0.0.1:6379", "--run-id", "noray")
    assert code == 2 and "--ray needs Ray, which is not installed" in " ".join(err.split())
    assert list(results.glob("*.duckdb")) == []


def test_a_sweep_id_too_long_for_its_runs_is_refused(results: Path) -> None:
    code, _, err = pdbench("evolve", "--counts", "2,2,2,2", "--sweep", "noise=0,0.1", "--seeds", "12",
                           "--run-id", "s" * 122, "--results", results)  # fmt: skip
    assert code == 2 and "is too long for the ids of its runs" in err and "_c1_s11" in err
    assert list(results.iterdir()) == []


def test_a_strategy_with_parameters_is_one_player_however_many_commas() -> None:
    """`--players` splits on commas between players, not between a strategy's parameters."""
    settings = EvolutionOptions("TFT, GTFT(p=0.3), RAND(p=0.7)", counts="2,2,2").settings()
    assert len(settings.players) == 3
    with pytest.raises(ConfigError, match="gives the parameter 'p' twice"):
        EvolutionOptions("TFT,GTFT(p=0.3,p=0.4)", counts="2,2").settings()


def test_a_sweep_that_would_make_any_cell_squared_share_with_a_model_is_refused_before_anything_runs(
    tmp_path: Path,
) -> None:
    code, _, err = pdbench("evolve", "--players", "TFT,ALLD,mock/tft", "--counts", "2,2,2", "--sweep",
                           "dynamics=generational,squared_share", "--seeds", "1", "--results", tmp_path)  # fmt: skip
    assert code == 2 and "Traceback" not in err
    assert "a sweep of squared_share with language models (mock/tft) is not built" in " ".join(err.split())
    assert list(tmp_path.iterdir()) == []

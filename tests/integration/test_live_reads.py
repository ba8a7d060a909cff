"""Reading a run while another process writes it: the writer publishes live copies on request
(harness/store/snapshot.py), and every read (Catalog, `pdbench sql`, `pdbench report`, the folder listing)
uses them. Writers and readers are real processes here where it matters (DuckDB's lock is per process)."""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from datetime import UTC
from itertools import pairwise
from pathlib import Path

import duckdb
import pytest

from harness.config.presets.tournament import tournament_config
from harness.engine.runner import run_experiment
from harness.store import browse, snapshot
from harness.store.catalog import Catalog
from tests.support.cli import pdbench
from tests.support.live_reader import INVARIANTS

# Readers racing a writer with a clock (a game seen within 5 s, copies spaced in time) run after the parallel run,
# so the suite's load does not decide them: those tests are marked serial, and this module's run one at a time
# (beside only the dashboard's browser tests, a module to each of two workers). The rest check what a reader sees,
# not when, in their own results folders: they run in parallel.

ROOT = Path(__file__).resolve().parents[2]
LIVE_SUFFIXES = (".live", ".live-wanted")


# A writer whose run file is checkpointed every 64 KB of log, and whose whole copies (the copy a checkpoint makes
# necessary) take 0.6 s, as they do for a run file of a gigabyte or two: what a long run's reader lives with.
COSTLY_CHECKPOINTS = """
import atexit, runpy, sys, time
from harness.store import snapshot, writer
writer.CHECKPOINT_BYTES = 64 << 10
copy = snapshot._copy
whole = []
def slow_copy(src, dst, start, end):
    if start == 0 and dst.suffix == ".duckdb":
        whole.append(dst.name)
        time.sleep(0.6)
    copy(src, dst, start, end)
atexit.register(lambda: print(f"whole copies: {len(whole)}", file=sys.stderr))
snapshot._copy = slow_copy
sys.argv = ["pdbench", *sys.argv[1:]]
runpy.run_module("harness.cli", run_name="__main__")
"""


def start_eval(
    results: Path, run_id: str, *, replicates: int, costly_checkpoints: bool = False
) -> subprocess.Popen[str]:
    """`pdbench eval` of the mock (answering in 50 ms, 3 requests at a time) against TFT and ALLD, 2 rounds a game,
    in a process of its own: 60 calls a second, so ``replicates`` 150 (300 games) take about 10 s, and games
    finish all along (there are many more of them than games played at once)."""
    program = ["-c", COSTLY_CHECKPOINTS] if costly_checkpoints else ["-m", "harness.cli"]
    return subprocess.Popen(
        [sys.executable, *program, "eval", "--model", "mock/tft?latency_ms=50", "--opponents", "TFT,ALLD",
         "--rounds", "2", "--replicates", str(replicates), "--concurrency", "3", "--no-cache",
         "--results", str(results), "--run-id", run_id],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def start_reader(results: Path, run_id: str, every: float) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.support.live_reader", str(results), run_id, "--every", str(every)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def wait_for_games(results: Path, run_id: str, at_least: int, timeout: float = 60.0) -> None:
    """Until the run, read live, has ``at_least`` complete games."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (results / f"{run_id}.duckdb").exists():
            with Catalog(results, [run_id]) as cat:
                done = cat.query("SELECT count(*) FROM games WHERE status = 'complete'")[1]
                if done and done[0][0] >= at_least:
                    return
        time.sleep(0.2)
    raise AssertionError(f"run {run_id} showed no {at_least} complete games within {timeout} s")


def live_files(results: Path) -> list[str]:
    return sorted(p.name for p in results.iterdir() if p.name.endswith(LIVE_SUFFIXES))


def game_ends(results: Path, run_id: str) -> dict[int, float]:
    """When each complete game ended (epoch seconds): its last call's start plus its duration, from the run file."""
    con = duckdb.connect(str(results / f"{run_id}.duckdb"), read_only=True)
    try:
        rows = con.execute(
            "SELECT game_id, max(created_at + duration_ms * INTERVAL 1 MILLISECOND) FROM calls JOIN games "
            "USING (run_id, game_id) WHERE games.status = 'complete' GROUP BY game_id"
        ).fetchall()
    finally:
        con.close()
    return {game_id: end.replace(tzinfo=UTC).timestamp() for game_id, end in rows}


@pytest.mark.serial
@pytest.mark.slow
@pytest.mark.parametrize(
    ("costly_checkpoints", "replicates"), [(False, 100), (True, 150)], ids=["plain", "costly-checkpoints"]
)
def test_a_reader_in_another_process_sees_each_finished_game_within_5_s_and_never_a_half_written_state(
    results: Path, costly_checkpoints: bool, replicates: int
) -> None:
    """With ``costly_checkpoints`` the run is checkpointed many times and every whole copy takes 0.6 s: games are
    still seen within 5 s (appends are never held back for a whole copy), and never half-written across copies.
    Plain, a run of about 7 s (200 games) is long enough for a game seen more than 5 s late to show; with costly
    checkpoints about 10 s (300 games), as a second whole copy comes only after a checkpoint held back 6 s."""
    games = 2 * replicates
    writer = start_eval(results, "watched", replicates=replicates, costly_checkpoints=costly_checkpoints)
    reader = start_reader(results, "watched", every=0.3)
    try:
        wait_for_games(results, "watched", at_least=3)
        # The listing shows the run once, as being written and read live; its copy is not a run of its own.
        folder = browse.list_runs(results)
        assert [r.run_id for r in folder.runs] == ["watched"] and str(folder.runs[0].status) == "running"
        assert folder.unreadable == [] and folder.being_written == {"watched.duckdb"}
        assert set(folder.live) == {"watched.duckdb"}
        assert (results / "watched.duckdb.live" / "info.json").is_file()
        # `pdbench sql` and `pdbench report` read it, and say on stderr that they read a live copy.
        code, out, err = pdbench("sql", "select run_id, status from runs", "--results", results, "--format", "json")
        assert code == 0, err
        assert json.loads(out) == [{"run_id": "watched", "status": "running"}]
        assert "note: run watched is being written; read from its live copy of" in err and "skipped" not in err
        code, out, err = pdbench("report", "watched", "--results", results, "--format", "json")
        assert code == 0, err
        assert "read from its live copy" in err and {r["condition"] for r in json.loads(out)} == {"vs_TFT", "vs_ALLD"}
        # `pdbench runs` lists it once, as what it is, with the games finished so far.
        code, out, err = pdbench("runs", "--results", results, "--format", "json")
        assert code == 0, err
        (run,) = json.loads(out)
        assert (run["run_id"], run["kind"], run["status"], run["games_planned"]) == (
            "watched",
            "eval",
            "running",
            games,
        )
        assert 3 <= run["games_done"] < games and run["models"] == ["mock/tft?latency_ms=50"]
        _, err_w = writer.communicate(timeout=120)
        assert writer.returncode == 0, err_w
        if costly_checkpoints:  # copied whole at first, and again after a checkpoint (held back 6 s after each)
            assert int(err_w.rsplit("whole copies: ", 1)[1].split()[0]) >= 2, err_w
        out_r, err_r = reader.communicate(timeout=60)
        assert reader.returncode == 0, err_r
    finally:
        for proc in (writer, reader):
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    looks = [json.loads(line) for line in out_r.splitlines()]
    assert all(look["broken"] == dict.fromkeys(INVARIANTS, 0) for look in looks), [
        look["broken"] for look in looks if any(look["broken"].values())
    ]
    live_looks = [look for look in looks if look["status"] == "running"]
    assert live_looks and all(look["live_at"] is not None for look in live_looks)
    first_seen: dict[int, float] = {}
    for look in looks:
        for game_id in look["complete"]:
            first_seen.setdefault(game_id, look["t"])
    # What the reader saw only grows: a game once complete stays complete.
    seen_before: set[int] = set()
    for look in looks:
        assert seen_before <= set(look["complete"])
        seen_before = set(look["complete"])
    ends = game_ends(results, "watched")
    assert len(ends) == games and set(first_seen) == set(ends)
    seen_live = [g for g in ends if any(g in look["complete"] for look in live_looks)]
    assert len(seen_live) >= games // 2, "most games must be seen while the run is being written"
    late = {g: round(first_seen[g] - ends[g], 2) for g in seen_live if first_seen[g] - ends[g] > 5.0}
    assert not late, f"games seen more than 5 s after they ended: {late}"
    assert live_files(results) == []  # the writer removed its copies and the request when it closed


@pytest.mark.slow
def test_a_stale_live_copy_left_by_a_killed_writer_is_not_read_and_is_removed(results: Path) -> None:
    writer = start_eval(results, "killed", replicates=600)
    try:
        wait_for_games(results, "killed", at_least=3)
        assert (results / "killed.duckdb.live" / "info.json").is_file()
        writer.send_signal(signal.SIGKILL)
        writer.wait(timeout=30)
    finally:
        if writer.poll() is None:
            writer.kill()
            writer.wait()
    assert live_files(results) == ["killed.duckdb.live", "killed.duckdb.live-wanted"]  # a killed writer leaves them
    # Make the newest copy unmistakable, and say it is fresh: the run file must still win, as it is not locked.
    info_path = results / "killed.duckdb.live" / "info.json"
    info = json.loads(info_path.read_text())
    con = duckdb.connect(str(results / "killed.duckdb.live" / f"{info['generation']}.duckdb"))
    con.execute("UPDATE runs SET status = 'complete', error = 'from the stale copy'")
    con.close()
    info_path.write_text(json.dumps({**info, "at": time.time()}))
    with Catalog(results) as cat:
        assert cat.live == {} and cat.busy == set() and cat.skipped == []
        assert cat.query("SELECT status, error FROM runs")[1] == [("running", None)]
        assert live_files(results) == []  # no one writes the run: the reader removed what its writer left
    code, _, err = pdbench("sql", "select count(*) from runs", "--results", results)
    assert code == 0 and "live copy" not in err


def test_a_run_no_one_reads_publishes_nothing(results: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    published: list[Path] = []
    original = snapshot.Publisher.publish

    def spy(self: snapshot.Publisher, con: duckdb.DuckDBPyConnection) -> None:
        published.append(self.run_file)
        original(self, con)

    monkeypatch.setattr(snapshot.Publisher, "publish", spy)
    config = tournament_config(["mock/tft", "TFT", "ALLD"], rounds=10, replicates=2)
    seen: set[str] = set()
    stop = threading.Event()

    def watch() -> None:  # what appears beside the run while it is written
        while not stop.is_set():
            if results.is_dir():
                seen.update(p.relative_to(results).as_posix() for p in results.rglob("*") if "live" in p.name)
            time.sleep(0.01)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        run_experiment(config, results_dir=results, run_id="alone")
    finally:
        stop.set()
        watcher.join()
    # The writer only said it would publish (an empty folder for copies, and what its generation is: none).
    assert published == [] and seen <= {"alone.duckdb.live", "alone.duckdb.live/info.json"}
    assert sorted(p.name for p in results.iterdir()) == ["alone.duckdb"]


@pytest.mark.slow
def test_a_strategy_run_written_in_this_process_is_read_live(results: Path) -> None:
    """The dashboard plays runs in a thread of its own process: DuckDB refuses that process the file too, and
    the live copy serves it. Strategy runs write games in batches; a reader's request makes the writer flush."""
    config = tournament_config(["TFT", "ALLD", "GRIM", "WSLS", "TF2T", "RAND"], rounds=20_000, replicates=8)
    errors: list[BaseException] = []

    def play() -> None:
        try:
            run_experiment(config, results_dir=results, run_id="strategies")
        except BaseException as exc:  # reported by the test
            errors.append(exc)

    player = threading.Thread(target=play)
    player.start()
    looks: list[tuple[str, int, int]] = []
    try:
        while player.is_alive():
            if (results / "strategies.duckdb").exists():
                with Catalog(results) as cat:
                    if cat.live:
                        status = cat.query("SELECT status FROM runs")[1][0][0]
                        done = cat.query("SELECT count(*) FROM games WHERE status = 'complete'")[1][0][0]
                        broken = cat.query(INVARIANTS["complete_games_missing_rounds"])[1][0][0]
                        looks.append((status, done, broken))
            time.sleep(0.1)
    finally:
        player.join()
    assert not errors, errors
    running = [look for look in looks if look[0] == "running"]
    assert any(done > 0 for _, done, _ in running), looks  # finished games were seen while it ran
    assert all(broken == 0 for _, _, broken in looks)
    assert live_files(results) == []


@pytest.mark.slow
def test_a_writer_that_offers_no_copy_is_skipped_after_one_wait(results: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file held by a writer that publishes nothing (another program, an older PDBench, a writer still setting
    up): skipped, as before live copies; when the writer said it would publish, after one wait in vain, and a
    process does not wait again for that run for a while."""
    run_experiment(tournament_config(["TFT", "ALLD"], rounds=5), results_dir=results, run_id="held")
    run_file = results / "held.duckdb"
    (results / "held.duckdb.live").mkdir()  # what a writer that publishes copies says when it opens
    (results / "held.duckdb.live" / "info.json").write_text(json.dumps({"generation": None, "at": None, "every": 1}))
    monkeypatch.setattr(snapshot, "WAIT_S", 0.5)
    monkeypatch.setattr(snapshot, "_unanswered", {})
    holder = subprocess.Popen(
        [sys.executable, "-c", "import duckdb, sys; con = duckdb.connect(sys.argv[1]); print('locked', flush=True); "
         "sys.stdin.read()", str(run_file)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        with Catalog(results) as cat:
            assert cat.attached == {} and cat.busy == {run_file} and cat.live == {}
            assert cat.skipped == [(run_file, "it is being written by another PDBench process; try again when it ends")]
        assert run_file in snapshot._unanswered and (results / "held.duckdb.live-wanted").exists()

        def no_wait(seconds: float) -> None:
            raise AssertionError("waited again for a writer that did not answer")

        with monkeypatch.context() as patched:
            patched.setattr(snapshot.time, "sleep", no_wait)
            with Catalog(results) as cat:
                assert cat.busy == {run_file} and [p for p, _ in cat.skipped] == [run_file]
    finally:
        holder.communicate("", timeout=30)
    with Catalog(results) as cat:  # the holder is gone: the run file is read, and the live files removed
        assert list(cat.attached.values()) == [run_file] and cat.busy == set()
    assert live_files(results) == []


def test_a_writer_still_setting_up_a_run_is_not_waited_for(results: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A writer says it publishes only once it plays: before (a run being created, a resume reading what it must
    replay) a reader skips the run at once rather than wait for a copy that cannot come yet."""
    from harness.store.writer import RunWriter

    def no_wait(seconds: float) -> None:
        raise AssertionError("waited for a writer that is not playing yet")

    writer = RunWriter.create(results, "early")
    try:
        with monkeypatch.context() as patched:
            patched.setattr(snapshot.time, "sleep", no_wait)
            folder = browse.list_runs(results)
        assert folder.runs == [] and folder.being_written == {"early.duckdb"} and folder.live == {}
        why = "it is being written by this process; try again when the run ends"
        assert folder.unreadable == [("early.duckdb", why)]
    finally:
        writer.close()
    assert live_files(results) == []


@pytest.mark.serial  # its copies are told apart by file times and short sleeps: under a loaded parallel run it failed
@pytest.mark.slow
def test_copies_are_whole_databases_that_stay_as_they_were_published(
    results: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each copy holds every committed game with its rounds; bringing a copy up to date (its log appended to)
    leaves what a reader opened before as it was; a checkpoint of the run file makes a new copy, and old
    copies go once no reader can still be choosing them; publishing keeps the writer's lock."""
    from harness.store.writer import RunWriter
    from tests.conftest import write_games

    write_games(results, "base", [("CCD", "CDD"), ("DD", "CC")]).close()
    writer = RunWriter.reopen(results / "base.duckdb", "base")
    folder = results / "base.duckdb.live"
    try:
        (results / "base.duckdb.live-wanted").touch()
        time.sleep(0.2)  # the run file's times settle (the kernel keeps them coarsely)
        assert writer.live.due()
        writer.live.publish()
        first = folder / "1.duckdb"
        held = duckdb.connect(str(first), read_only=True)  # a reader keeps the first copy open
        try:
            writer.con.execute("UPDATE games SET score_a = score_a + 100")  # to the log only
            writer.live._next_publish = 0.0  # due at once, not after the interval
            writer.live.publish()
            assert writer.live.published == 2 and not (folder / "2.duckdb").exists()  # appended to copy 1's log
            assert held.execute("SELECT sum(score_a) FROM games").fetchone()[0] < 100  # as it was opened
        finally:
            held.close()
        # Copying did not cost the writer its lock (a POSIX record lock goes with any descriptor of the file closed).
        probe = subprocess.run([sys.executable, "-c", "import duckdb, sys; duckdb.connect(sys.argv[1], read_only=True)",
                                str(results / "base.duckdb")], capture_output=True, text=True)  # fmt: skip
        assert probe.returncode != 0 and "Could not set lock" in probe.stderr
        with Catalog(results) as cat:
            assert set(cat.live) == {results / "base.duckdb"}
            assert cat.query("SELECT sum(score_a) FROM games")[1][0][0] >= 200  # the update, from the log
            assert cat.query("SELECT count(*) FROM rounds")[1][0][0] == 5
        # A checkpoint rewrites the run file: the next copy is a new one; superseded copies go after a while.
        monkeypatch.setattr(snapshot, "KEEP_S", 0.0)
        for score_b in (7, 0):
            writer.con.execute("CHECKPOINT")
            writer.con.execute("UPDATE games SET score_b = ?", [score_b])
            time.sleep(0.2)
            writer.live._next_publish = 0.0
            writer.live.publish()
        assert sorted(p.name for p in folder.glob("*.duckdb")) == ["2.duckdb", "3.duckdb"]  # 1 went, 2 stays a while
        con = duckdb.connect(str(folder / "3.duckdb"), read_only=True)
        assert con.execute("SELECT sum(score_a), sum(score_b) FROM games").fetchone()[1] == 0
        con.close()
    finally:
        writer.close()
    assert live_files(results) == []


@pytest.mark.serial
@pytest.mark.slow
def test_checkpoints_wait_for_readers_and_a_costly_copy_never_delays_the_next(
    results: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writer checkpoints itself once its log is large enough; while someone reads, only when whole copies
    (which every checkpoint makes necessary) take at most a tenth of its time; and a costly whole copy does
    not delay the next publication, which only appends the log."""
    from harness.store import writer as writer_module
    from harness.store.writer import RunWriter
    from tests.conftest import write_games

    monkeypatch.setattr(writer_module, "CHECKPOINT_BYTES", 1)  # any log is large enough
    write_games(results, "base", [("CC", "CD")]).close()
    writer = RunWriter.reopen(results / "base.duckdb", "base")
    wal = results / "base.duckdb.wal"
    try:
        assert writer.con.execute("SELECT current_setting('wal_autocheckpoint')").fetchone() == ("64.0 MiB",)
        writer.con.execute("UPDATE games SET score_a = 1")
        assert wal.exists()
        writer.committed()  # no one reads: a checkpoint at once
        assert not wal.exists() and writer.live.published == 0

        (results / "base.duckdb.live-wanted").touch()
        time.sleep(0.2)  # the run file's times settle
        copy = snapshot._copy

        def costly(src: int, dst: Path, start: int, end: int) -> None:
            if start == 0 and dst.suffix == ".duckdb":
                time.sleep(0.2)  # a whole copy of a large run file
            copy(src, dst, start, end)

        monkeypatch.setattr(snapshot, "_copy", costly)
        writer.con.execute("UPDATE games SET score_a = 2")
        started = time.monotonic()
        writer.committed()  # the first copy, whole (0.2 s): checkpoints are held back for 2 s after it
        assert writer.live.published == 1 and wal.exists()
        assert not writer.live.may_checkpoint()
        time.sleep(max(0.0, started + snapshot.PUBLISH_EVERY_S - time.monotonic()) + 0.05)
        writer.live._next_check = 0.0  # look for the request now, not up to 0.2 s later
        writer.con.execute("UPDATE games SET score_a = 3")
        before = browse.folder_signature(results)
        writer.committed()  # a second later: published by appending the log, and still no checkpoint
        assert browse.folder_signature(results) != before  # the dashboard's cached reads see the copy grow
        assert writer.live.published == 2 and wal.exists() and not (results / "base.duckdb.live" / "2.duckdb").exists()
        with Catalog(results) as cat:
            assert cat.query("SELECT max(score_a) FROM games")[1] == [(3,)]
        hold_until = writer.live._next_checkpoint  # the whole copy's end plus ten times what it took
        assert started + 0.2 + 0.2 / snapshot.PUBLISH_SHARE <= hold_until <= time.monotonic() + 10.0
        time.sleep(max(0.0, hold_until - time.monotonic()) + 0.05)
        writer.live._next_check = 0.0
        assert writer.live.may_checkpoint()
        writer.con.execute("UPDATE games SET score_a = 35")
        writer.live._next_publish = time.monotonic() + 60.0  # no copy due ...
        published = writer.live.published
        writer.committed()  # ... but the hold is over: a checkpoint, and before it a copy of what it will hold
        assert not wal.exists() and writer.live.published == published + 1
        with Catalog(results) as cat:
            assert cat.query("SELECT max(score_a) FROM games")[1] == [(35,)]
        writer.con.execute("UPDATE games SET score_a = 4")
        time.sleep(0.2)
        writer.live._next_check = writer.live._next_publish = 0.0
        writer.committed()  # the copy after a checkpoint is a whole one
        assert (results / "base.duckdb.live" / "2.duckdb").exists()
        with Catalog(results) as cat:
            assert cat.query("SELECT max(score_a) FROM games")[1] == [(4,)]
    finally:
        writer.close()


@pytest.mark.serial
@pytest.mark.slow
def test_batches_written_straight_to_the_run_file_get_whole_copies_at_a_tenth_of_the_time(
    results: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch of a row group or more (a fast strategy run's) goes straight to the run file, so every copy after
    one is whole: whole copies then come no sooner than ten times what the last one took, readers are told
    that interval, and no more than KEEP_COPIES superseded copies stay beside the newest."""
    from harness.store.writer import RunWriter
    from tests.conftest import write_games

    monkeypatch.setattr(snapshot, "KEEP_S", 60.0)  # only the cap on their number removes copies here
    write_games(results, "big", [("CC", "CD")]).close()
    writer = RunWriter.reopen(results / "big.duckdb", "big")
    folder = results / "big.duckdb.live"
    copy = snapshot._copy
    whole: list[tuple[float, float]] = []  # (start, end) of each whole copy of the run file

    def timed(src: int, dst: Path, start: int, end: int) -> None:
        began = time.monotonic()
        if start == 0 and dst.suffix == ".duckdb":
            time.sleep(0.15)  # a whole copy of a large run file: ten times that is more than the interval
        copy(src, dst, start, end)
        if start == 0 and dst.suffix == ".duckdb":
            whole.append((began, time.monotonic()))

    monkeypatch.setattr(snapshot, "_copy", timed)
    try:
        (results / "big.duckdb.live-wanted").touch()
        most_kept = 0
        deadline = time.monotonic() + 4.0
        batch = 0
        while time.monotonic() < deadline:
            batch += 1
            # The two NULLs: observed_a and observed_b (schema 8), i.e. as played.
            writer.con.execute("INSERT INTO round_rows SELECT 'big', 1000 + ?, i, 'C', 'C', 'C', 'C', 3, 3, false, "
                               "false, NULL, NULL FROM range(200000) t(i)", [batch])  # fmt: skip
            writer.committed()
            most_kept = max(most_kept, len(list(folder.glob("*.duckdb"))))
        assert batch >= 4 and len(whole) >= 2, (batch, whole)
        for (began, ended), (next_began, _) in pairwise(whole):
            assert next_began - ended >= (ended - began) / snapshot.PUBLISH_SHARE * 0.95
        assert 2 <= most_kept <= 1 + snapshot.KEEP_COPIES
        info = json.loads((folder / "info.json").read_text())
        assert info["every"] >= (whole[-1][1] - whole[-1][0]) / snapshot.PUBLISH_SHARE * 0.95
        time.sleep(max(0.0, writer.live._next_whole - time.monotonic()) + 0.2)
        writer.live._next_check = writer.live._next_publish = 0.0
        writer.committed()  # the last batch, once whole copies are allowed again
        with Catalog(results) as cat:
            assert cat.query("SELECT count(*) FROM rounds WHERE game_id >= 1000")[1] == [(200000 * batch,)]
    finally:
        writer.close()
    assert live_files(results) == []


@pytest.mark.slow
def test_a_copy_read_while_its_log_grows_holds_whole_batches(results: Path, tmp_path: Path) -> None:
    """A reader may open a copy while the writer appends to its log. DuckDB then reads the log as one cut short
    by a crash, up to the last whole transaction: checked here at every cut of a real log of five batches."""
    from harness.config.plan import iter_games
    from harness.players.strategies.games import StrategyGames
    from harness.store.writer import RunWriter

    config = tournament_config(["TFT", "ALLD"], rounds=7, replicates=8)
    writer = RunWriter.create(results, "cut")
    try:
        writer.start_run(kind="tournament", config=config.resolved_dict(), seed=0, games_planned=16, collapse_k=10,
                         collapse_threshold=0.2)  # fmt: skip
        writer.con.execute("CHECKPOINT")  # the schema and the run in the file; the batches go to the log
        games = StrategyGames()
        plans = list(iter_games(config))[:15]
        for batch in range(5):  # five transactions of three games each
            for plan in plans[batch * 3 : batch * 3 + 3]:
                cond = plan.condition
                match, length = games.play(*cond.strategies(), cond.game, cond.horizon, cond.noise, plan.seed)
                writer.add_game(plan, match, length)
            writer._write_buffered()
        (results / "cut.duckdb.live-wanted").touch()
        writer.live.publish()
        log = (results / "cut.duckdb.live" / "1.duckdb.wal").read_bytes()
        shutil.copy(results / "cut.duckdb.live" / "1.duckdb", tmp_path / "copy.duckdb")
    finally:
        writer.close()
    seen = set()
    for cut in [*range(0, len(log), max(1, len(log) // 60)), len(log)]:
        (tmp_path / "copy.duckdb.wal").write_bytes(log[:cut])
        con = duckdb.connect(str(tmp_path / "copy.duckdb"), read_only=True)
        try:
            n_games = con.execute("SELECT count(*) FROM games").fetchone()[0]
            broken = con.execute(INVARIANTS["complete_games_missing_rounds"]).fetchone()[0]
        finally:
            con.close()
        assert n_games % 3 == 0 and broken == 0, (cut, n_games, broken)
        seen.add(n_games)
    assert seen == {0, 3, 6, 9, 12, 15}  # every prefix of whole batches, and nothing else


def test_a_copy_that_cannot_be_made_never_stops_the_run(
    results: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A full disk while copying: the copy is given up (nothing half-made is left for readers), said in the log,
    tried again after a pause; the run goes on and finishes."""
    from harness.states import RunStatus
    from harness.store.writer import RunWriter
    from tests.conftest import write_games

    write_games(results, "full", [("CC", "CD")]).close()
    writer = RunWriter.reopen(results / "full.duckdb", "full")
    folder = results / "full.duckdb.live"
    try:
        (results / "full.duckdb.live-wanted").touch()

        def disk_full(src: int, dst: Path, start: int, end: int) -> None:
            dst.write_bytes(b"half a copy")
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        with monkeypatch.context() as patched:
            patched.setattr(snapshot, "_copy", disk_full)
            assert writer.live.due()
            writer.live.publish()
        assert "could not publish a live copy" in caplog.text and "No space left on device" in caplog.text
        assert sorted(p.name for p in folder.iterdir()) == ["info.json"]  # no copy, and none named in info.json
        assert json.loads((folder / "info.json").read_text())["generation"] is None
        writer.live._next_check = 0.0
        assert not writer.live.due()  # it waits before trying again
        writer.live._next_check = writer.live._next_publish = 0.0
        assert writer.live.due()
        writer.live.publish()
        assert (folder / "1.duckdb").is_file()
        with Catalog(results) as cat:
            assert set(cat.live) == {results / "full.duckdb"} and cat.query("SELECT count(*) FROM games")[1] == [(1,)]
        assert writer.finish(RunStatus.COMPLETE) == (RunStatus.COMPLETE, None)
    finally:
        writer.close()
    assert live_files(results) == []


HOLD = """
import sys
from pathlib import Path
from tests.support.running_run import HeldRun
held = HeldRun(Path(sys.argv[1]))
print("held", flush=True)
sys.stdin.read()
held.close()
"""


@pytest.mark.slow
def test_a_run_file_reached_through_a_symbolic_link_is_read_live_and_leaves_no_request_behind(
    results: Path, tmp_path: Path
) -> None:
    """Issue 19, point 12: a results folder that links a run file kept elsewhere. Its reader asked for a live copy
    beside the link, where the writer never looks: the run was skipped, and the request stayed there for good."""
    from tests.conftest import write_games

    kept = tmp_path / "kept"
    kept.mkdir()
    write_games(kept, "linked", [("CC", "CD"), ("DD", "CC")]).close()
    (results / "linked.duckdb").symlink_to(kept / "linked.duckdb")
    writer = subprocess.Popen([sys.executable, "-c", HOLD, str(kept / "linked.duckdb")], cwd=ROOT,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert writer.stdout is not None and writer.stdout.readline() == "held\n"
        code, out, err = pdbench("sql", "select run_id, (select count(*) from games) as games from runs",
                                 "--results", results, "--format", "json")  # fmt: skip
        assert code == 0 and json.loads(out) == [{"run_id": "linked", "games": 2}], err
        assert "run linked is being written; read from its live copy" in err and "skipped" not in err, err
        assert live_files(results) == []  # nothing asked for beside the link
        assert "linked.duckdb.live-wanted" in live_files(kept)  # but beside the file, where its writer looks
    finally:
        assert writer.stdin is not None
        writer.stdin.close()
        writer.wait(timeout=30)
    assert live_files(kept) == [] and live_files(results) == []  # the writer took the request away as it closed
    (results / "linked.duckdb.live-wanted").touch()  # as a reader left it before links were followed
    code, _out, err = pdbench("sql", "select count(*) from runs", "--results", results)
    assert code == 0 and "live copy" not in err and live_files(results) == [], err  # removed once the file opened

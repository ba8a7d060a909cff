"""Response cache: stable keys, round trips, first writer wins, several processes, clear errors."""

from __future__ import annotations

import inspect
import os
import random
import sqlite3
import subprocess
import sys
import textwrap
import threading
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from harness.calls.cache import responses
from harness.calls.cache.cache import ResponseCache
from harness.calls.cache.file import delete_cache
from harness.calls.cache.keys import cache_key
from harness.calls.cache.responses import CachedResponse
from harness.calls.cache.storage import Storage
from harness.errors import StoreError

ROOT = Path(__file__).resolve().parents[2]

MESSAGES = [{"role": "system", "content": "You play the iterated PD."}, {"role": "user", "content": "Round 1."}]
PARAMS = {"temperature": 0.7, "max_tokens": 16}
BASE: dict[str, Any] = {
    "provider": "openai",
    "model": "gpt-4o-mini",
    "base_url": None,
    "messages": MESSAGES,
    "params": PARAMS,
    "sample": {"condition": "vs_TFT", "replicate": 0, "seat": "a"},
}


def response(text: str = "C", **overrides: Any) -> CachedResponse:
    fields: dict[str, Any] = {
        "text": text,
        "input_tokens": 40,
        "output_tokens": 1,
        "model": "gpt-4o-mini-2024-07-18",
        "provider": "openai",
        "created_at": datetime(2025, 1, 2, 3, 4, 5, 678901, tzinfo=UTC),
        "raw": {"finish_reason": "stop", "id": "chatcmpl-1"},
    }
    fields.update(overrides)
    return CachedResponse(**fields)


@pytest.fixture
def cache(tmp_path: Path) -> Any:
    with ResponseCache(tmp_path / ".cache" / "responses.sqlite") as c:
        yield c


# ---- keys -----------------------------------------------------------------------------------


def test_key_is_a_stable_sha256_hex() -> None:
    key = cache_key(**BASE)
    assert len(key) == 64 and int(key, 16) >= 0
    assert cache_key(**BASE) == key
    # Pinned: a change of the canonical form would silently invalidate every user's cache.
    assert key == "e531809a2a4591685d78f3cda0682bcb45a09541ba593baf8193822a2eacbe28"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("provider", "anthropic"),
        ("model", "gpt-4o"),
        ("base_url", "http://127.0.0.1:8000/v1"),
        ("messages", [*MESSAGES, {"role": "assistant", "content": "C"}]),
        ("messages", [{**MESSAGES[0], "content": "You play the iterated PD!"}, MESSAGES[1]]),
        ("params", {**PARAMS, "temperature": 0.8}),
        ("params", {**PARAMS, "seed": 1}),
        ("sample", {"condition": "vs_TFT", "replicate": 1, "seat": "a"}),
        ("sample", {"condition": "vs_TFT", "replicate": 0, "seat": "b"}),
        ("sample", {"condition": "vs_ALLD", "replicate": 0, "seat": "a"}),
    ],
)
def test_every_field_changes_the_key(field: str, value: Any) -> None:
    assert cache_key(**{**BASE, field: value}) != cache_key(**BASE)


def test_dict_key_order_and_a_trailing_slash_do_not_change_the_key() -> None:
    shuffled_messages = [dict(reversed(list(m.items()))) for m in MESSAGES]
    shuffled_params = dict(reversed(list(PARAMS.items())))
    assert cache_key(**{**BASE, "messages": shuffled_messages, "params": shuffled_params}) == cache_key(**BASE)
    url = "http://127.0.0.1:8000/v1"
    assert cache_key(**{**BASE, "base_url": url + "/"}) == cache_key(**{**BASE, "base_url": url})


def test_the_api_key_is_not_an_input_of_the_key() -> None:
    names = set(inspect.signature(cache_key).parameters)
    assert names == {"provider", "model", "base_url", "messages", "params", "sample"}
    assert not any("key" in n or "auth" in n or "secret" in n for n in names)


def test_non_json_params_are_refused_with_a_clear_error() -> None:
    with pytest.raises(ValueError, match="JSON"):
        cache_key(**{**BASE, "params": {"temperature": float("nan")}})
    with pytest.raises(ValueError, match="JSON"):
        cache_key(**{**BASE, "params": {"stop": {"a", "b"}}})


# ---- round trips and first writer wins ------------------------------------------------------


async def test_put_then_get_round_trips_every_field(cache: ResponseCache) -> None:
    key = cache_key(**BASE)
    assert await cache.aget(key) is None
    original = response()
    assert await cache.aput(key, original) is True
    assert await cache.aget(key) == original
    minimal = response(input_tokens=None, output_tokens=None, raw=None)
    other = cache_key(**{**BASE, "sample": {**BASE["sample"], "replicate": 1}})
    await cache.aput(other, minimal)
    assert await cache.aget(other) == minimal


async def test_created_at_comes_back_in_utc_and_defaults_to_now(cache: ResponseCache) -> None:
    plus_two = datetime(2025, 6, 1, 14, 0, tzinfo=timezone(timedelta(hours=2)))
    await cache.aput("k1", response(created_at=plus_two))
    got = await cache.aget("k1")
    assert got is not None and got.created_at == plus_two and got.created_at.tzinfo == UTC
    before = datetime.now(UTC)
    fresh = CachedResponse(text="D", input_tokens=1, output_tokens=1, model="m", provider="mock")
    await cache.aput("k2", fresh)
    got = await cache.aget("k2")
    assert got is not None and before - timedelta(seconds=1) <= got.created_at <= datetime.now(UTC)


async def test_insert_or_ignore_keeps_the_first_value(cache: ResponseCache) -> None:
    assert await cache.aput("same", response("C")) is True
    assert await cache.aput("same", response("D")) is False
    got = await cache.aget("same")
    assert got is not None and got.text == "C"


async def test_stats_count_entries_ages_and_models(cache: ResponseCache) -> None:
    empty = cache.stats()
    assert (empty.entries, empty.oldest, empty.newest) == (0, None, None)
    t0 = datetime(2025, 1, 1, tzinfo=UTC)
    await cache.aput("a", response(created_at=t0))
    await cache.aput("b", response(created_at=t0 + timedelta(days=1)))
    await cache.aput("c", response(provider="anthropic", model="claude-x", created_at=t0 + timedelta(days=2)))
    s = cache.stats()
    assert s.entries == 3
    assert (s.oldest, s.newest) == (t0, t0 + timedelta(days=2))
    assert s.by_model == {("anthropic", "claude-x"): 1, ("openai", "gpt-4o-mini-2024-07-18"): 2}
    assert s.size_bytes > 0
    assert s.path == cache.path


async def test_clear_older_than_then_all(cache: ResponseCache) -> None:
    t0 = datetime(2025, 1, 1, tzinfo=UTC)
    for day in range(5):
        await cache.aput(f"k{day}", response(text="x" * 10_000, created_at=t0 + timedelta(days=day)))
    assert cache.clear(older_than=t0 + timedelta(days=2)) == 2
    assert await cache.aget("k1") is None and await cache.aget("k2") is not None
    assert cache.stats().entries == 3
    full = cache.stats().size_bytes
    assert cache.clear() == 3
    s = cache.stats()
    assert s.entries == 0 and s.oldest is None
    assert s.size_bytes < full  # VACUUM gave the space back


# ---- threads, async, processes --------------------------------------------------------------


def test_threads_each_get_their_own_connection(cache: ResponseCache) -> None:
    errors: list[BaseException] = []

    async def put_and_get(n: int) -> None:
        for i in range(50):
            await cache.aput(f"t{n}-{i}", response(str(i)))
            assert await cache.aget(f"t{n}-{i}") is not None

    def work(n: int) -> None:
        try:
            anyio.run(put_and_get, n)  # an event loop of its own in each thread
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert cache.stats().entries == 200


async def test_async_calls_of_one_turn_share_one_query_or_one_transaction(
    cache: ResponseCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    writes: list[int] = []
    reads: list[int] = []
    store, select = ResponseCache._store, responses.select
    monkeypatch.setattr(
        ResponseCache, "_store", lambda self, conn, rows: writes.append(len(rows)) or store(self, conn, rows)
    )
    monkeypatch.setattr(responses, "select", lambda conn, keys: reads.append(len(keys)) or select(conn, keys))
    stored: dict[int, bool] = {}

    async def put(i: int, key: str) -> None:
        stored[i] = await cache.aput(key, response(str(i)))

    async with anyio.create_task_group() as tg:
        for i in range(20):
            tg.start_soon(put, i, f"a{i % 15}")  # five keys twice: the first writer wins, in one transaction too
    assert writes == [20]
    assert [i for i in range(20) if stored[i]] == list(range(15))
    got: dict[str, CachedResponse | None] = {}

    async def get(key: str) -> None:
        got[key] = await cache.aget(key)

    async with anyio.create_task_group() as tg:
        for key in ["a7", "a3", "nope", "a7"]:
            tg.start_soon(get, key)
    assert reads == [4]
    assert got["a7"] is not None and got["a7"].text == "7"
    assert got["a3"] is not None and got["a3"] == response("3")
    assert got["nope"] is None
    assert cache.stats().entries == 15


async def test_an_aput_returns_only_once_its_row_is_committed(cache: ResponseCache) -> None:
    """What resume relies on: an answer the call path has is in the file for any other process."""
    assert await cache.aput("k", response("C")) is True
    other = sqlite3.connect(cache.path)
    try:
        assert other.execute("SELECT text FROM responses WHERE key = 'k'").fetchone() == ("C",)
    finally:
        other.close()
    assert await cache.aput("k", response("D")) is False


async def test_aget_sees_a_row_that_is_still_being_written(cache: ResponseCache) -> None:
    got: list[CachedResponse | None] = []

    async def put_then_get() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(cache.aput, "k", response("C"))
            await anyio.lowlevel.checkpoint()  # let the aput add its row, not yet commit it
            got.append(await cache.aget("k"))

    await put_then_get()
    assert got[0] is not None and got[0].text == "C"


async def test_async_calls_wait_for_another_process_in_a_worker_thread(cache: ResponseCache) -> None:
    """A busy file never blocks the event loop: the call goes to a worker thread, which waits."""
    await cache.aput("old", response("C"))
    other = sqlite3.connect(cache.path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process is writing
    other.execute("INSERT INTO responses VALUES ('theirs', 'p', 'm', 'x', 1, 1, NULL, 0)")
    try:
        ticks = 0
        done = anyio.Event()

        async def tick() -> None:
            nonlocal ticks
            while not done.is_set():
                ticks += 1
                await anyio.sleep(0.01)

        async def put() -> None:
            assert await cache.aput("new", response("D")) is True
            done.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(tick)
            tg.start_soon(put)
            got = await cache.aget("old")  # readers do not wait for a writer
            assert got is not None and got.text == "C"
            await anyio.sleep(0.2)
            assert not done.is_set() and ticks >= 5  # the event loop runs on while the write waits
            other.execute("COMMIT")
        assert await cache.aget("new") is not None and await cache.aget("theirs") is not None
    finally:
        other.close()


async def test_a_cancelled_aput_still_stores_its_row(cache: ResponseCache) -> None:
    with anyio.CancelScope() as scope:
        scope.cancel()
        await cache.aput("k", response("C"))
    assert await cache.aget("k") is not None


async def test_async_writes_are_checkpointed_in_the_background(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("harness.calls.cache.storage.CHECKPOINT_ROWS", 10)
    checkpoints = 0
    checkpoint = Storage._checkpoint

    def counted(self: Storage) -> None:
        nonlocal checkpoints
        checkpoints += 1
        checkpoint(self)

    monkeypatch.setattr(Storage, "_checkpoint", counted)
    cache = ResponseCache(tmp_path / "c.sqlite")
    for i in range(25):
        await cache.aput(f"k{i}", response(str(i)))
    cache.close()  # waits for a checkpoint still running
    assert checkpoints >= 1
    with ResponseCache(tmp_path / "c.sqlite") as again:
        assert again.stats().entries == 25


WRITER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    import anyio
    from harness.calls.cache.cache import ResponseCache
    from harness.calls.cache.responses import CachedResponse

    path, name, go = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    cache = ResponseCache(path)
    print("ready", flush=True)
    while not go.exists():
        time.sleep(0.002)

    async def write():
        for i in range(200):
            await cache.aput(f"{name}-{i}", CachedResponse(text=f"{name}{i}", input_tokens=i, output_tokens=1,
                                                           model="m", provider=name))
            await cache.aput(f"shared-{i}", CachedResponse(text="same", input_tokens=1, output_tokens=1,
                                                           model="m", provider="shared"))
            if i % 10 == 0:
                assert await cache.aget(f"{name}-{i}") is not None

    anyio.run(write)
    cache.close()
    print("done", flush=True)
    """
)


async def test_two_processes_write_the_same_file_at_once(tmp_path: Path) -> None:
    path = tmp_path / "cache" / "responses.sqlite"
    go = tmp_path / "go"
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), name, str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env=env,
        )
        for name in ("p1", "p2")
    ]
    try:
        for proc in procs:  # both have opened the (new) file before either writes
            assert proc.stdout is not None
            assert proc.stdout.readline().strip() == "ready", proc.stderr.read() if proc.stderr else ""
        go.touch()
        outputs = [proc.communicate(timeout=60) for proc in procs]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
    for proc, (out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err
        assert out.strip() == "done"
    with ResponseCache(path) as cache:
        stats = cache.stats()
        assert stats.by_model == {("p1", "m"): 200, ("p2", "m"): 200, ("shared", "m"): 200}
        assert stats.entries == 600
        got = await cache.aget("p2-199")
        assert got is not None and got.text == "p2199"


# ---- broken files ---------------------------------------------------------------------------


def test_a_file_that_is_not_a_database_raises_store_error(tmp_path: Path) -> None:
    path = tmp_path / "responses.sqlite"
    path.write_bytes(b"this is not a database, just some bytes " * 200)
    with pytest.raises(StoreError) as info:
        ResponseCache(path)
    message = str(info.value)
    assert str(path) in message
    assert "pdbench cache clear" in message and "delete" in message
    assert delete_cache(path) is True
    with ResponseCache(path) as cache:  # the way out works
        assert cache.stats().entries == 0


async def test_a_damaged_database_raises_store_error_not_sqlite_error(tmp_path: Path) -> None:
    path = tmp_path / "responses.sqlite"
    with ResponseCache(path) as cache:
        for i in range(300):
            await cache.aput(f"k{i}", response("x" * 500))
    size = path.stat().st_size
    with path.open("r+b") as f:  # scribble over every page but the first (header and schema)
        f.seek(4096)
        f.write(random.Random(0).randbytes(size - 4096))
    with pytest.raises(StoreError) as info:
        cache = ResponseCache(path)
        for i in range(300):
            await cache.aget(f"k{i}")
        cache.stats()
    assert str(path) in str(info.value)
    assert "pdbench cache clear" in str(info.value)


def test_a_cache_from_a_newer_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "responses.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    with pytest.raises(StoreError, match="newer PDBench"):
        ResponseCache(path)


def test_using_a_closed_cache_is_a_clear_error(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    cache.close()
    with pytest.raises(StoreError, match="closed"):
        cache.stats()


def test_dead_worker_threads_do_not_keep_connections_open(cache: ResponseCache) -> None:
    for _ in range(6):  # as the call path gives up claims, from worker threads that come and go
        t = threading.Thread(target=cache.release, args=("k",))
        t.start()
        t.join()
    assert len(cache._storage._waiting) <= 2  # the fixture's thread and the last one

"""Shared test helpers: hand-made games written to a results file, a results folder, and the loopback LLM server."""

from __future__ import annotations

import dataclasses
import random
import re
import signal
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from harness.config import parse_experiment
from harness.config.plan import iter_games
from harness.game.match import Match
from harness.game.rules import PayoffMatrix
from harness.states import RunStatus
from harness.store.catalog import Catalog
from harness.store.writer import RunWriter
from tests.support.llm_server import FakeLLMServer, ServerConfig


def write_games(
    results: Path,
    run_id: str,
    games: Sequence[tuple[str, str]],
    *,
    k: int = 10,
    threshold: float = 0.2,
    players: tuple[str, str] = ("TFT", "ALLD"),
) -> Catalog:
    """Write hand-made games (pairs of played-move strings) into a run, and open a catalog on it."""
    config = parse_experiment(
        {
            "metrics": {"collapse": {"k": k, "cooperation_threshold": threshold}},
            "experiment": {
                "replicates": len(games),
                "conditions": [{"name": "hand", "agent_a": {"policy": players[0]}, "agent_b": {"policy": players[1]}}],
            },
        }
    )
    writer = RunWriter.create(results, run_id)
    writer.start_run(
        kind="experiment",
        config=config.resolved_dict(),
        seed=0,
        games_planned=len(games),
        collapse_k=k,
        collapse_threshold=threshold,
    )
    for plan, (a, b) in zip(iter_games(config), games, strict=True):
        match = Match(PayoffMatrix(), 0.0, random.Random(0))
        for x, y in zip(a, b, strict=True):
            match.record(x, y)  # type: ignore[arg-type]
        writer.add_game(plan, match, planned_rounds=len(a))
    writer.finish(RunStatus.COMPLETE)
    writer.close()
    return Catalog(results)


def pytest_configure(config: pytest.Config) -> None:
    """Ctrl-C as a terminal gives it: a suite started in the background by a non-interactive shell (``cmd &`` in a
    script, as CI or a timing script does) inherits SIGINT ignored, and so does every process a test starts. The
    tests that press Ctrl-C then saw a run finish untouched (exit 0, not 130), and the query guard's main-thread
    case ran its runaway query forever."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if config.option.markexpr == SERIAL_ONLY:
        # No serial test uses Hypothesis, and its plugin imports all of it (about 1 s) for its closing summary.
        hypothesis_plugin = config.pluginmanager.get_plugin("hypothesispytest")
        if hypothesis_plugin is not None:
            config.pluginmanager.unregister(hypothesis_plugin)


SERIAL_ONLY = "serial"  # the README's serial run: `pytest -m serial`
_SERIAL_MARK = re.compile(rb"\bmark\.serial\b")


def _may_hold_serial_tests(path: Path) -> bool:
    """Whether a test module (or any module under a folder) says ``mark.serial``, read as text, not imported."""
    files = path.rglob("*.py") if path.is_dir() else [path]
    return any(_SERIAL_MARK.search(file.read_bytes()) for file in files)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """The serial run selects about 30 tests of 2,300: it skips the modules (and folders, with their conftests) that
    never say ``mark.serial``, without importing them, instead of importing the whole suite (8 s) to deselect
    them. Only for the exact expression ``serial``; any other (``-m "(serial)"`` too) collects everything.
    tests/architecture/test_serial_collection.py checks that no module it would skip holds a serial test."""
    if config.option.markexpr != SERIAL_ONLY or collection_path.name == "conftest.py":
        return None
    if collection_path.is_dir() or collection_path.suffix == ".py":
        return None if _may_hold_serial_tests(collection_path) else True
    return None


SERIAL_MODULES = pytest.StashKey[set[Path]]()


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Note, before ``-m`` deselects any, the modules that hold serial tests (for the check above)."""
    config.stash[SERIAL_MODULES] = {item.path for item in items if item.get_closest_marker("serial") is not None}


@pytest.fixture
def results(tmp_path: Path) -> Path:
    path = tmp_path / "results"
    path.mkdir()
    return path


@pytest.fixture(scope="module")
def module_llm_server() -> Iterator[FakeLLMServer]:
    """One loopback LLM server for a module: starting uvicorn costs more than most tests that use it."""
    with FakeLLMServer() as server:
        yield server


@pytest.fixture
def llm_server(module_llm_server: FakeLLMServer) -> FakeLLMServer:
    """The module's loopback LLM server as if new: default settings, no requests, no queued failures."""
    defaults = ServerConfig()
    module_llm_server.configure(**{f.name: getattr(defaults, f.name) for f in dataclasses.fields(ServerConfig)})
    module_llm_server.reset()
    return module_llm_server

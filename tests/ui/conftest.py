"""Fixtures for the dashboard's AppTest tests: a results folder with runs, and the app driven headless."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from streamlit.components.v2 import manifest_scanner
from streamlit.runtime.scriptrunner.script_cache import ScriptCache
from streamlit.testing.v1 import AppTest, app_test

from harness.config.presets.tournament import tournament_config
from harness.engine.runner import run_experiment
from harness.ui import playback
from harness.ui.app import CHARTS_WARM
from harness.ui.launch import APP
from harness.ui.views import PENDING_VIEW

TIMEOUT_S = 60


class Clock:
    """A clock that moves only when told: the animations' ticks measure time with it (``playback.clock``)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture(autouse=True)
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    """The animations' clock, held still: a tick steps by wall time since the last one (one step per ``speed``),
    so with the real clock a headless run that takes longer than 1.5 speeds on a loaded machine shows several
    steps. Held still, every run while playing is exactly one step; a test moves it with ``clock.advance``."""
    fake = Clock()
    monkeypatch.setattr(playback, "clock", fake)
    return fake


@pytest.fixture(autouse=True, scope="session")
def streamlit_started_once() -> Iterator[None]:
    """What a Streamlit server does once at start, done once per session instead of once per ``AppTest`` run.

    Each ``AppTest`` builds its own custom-component registry on its first run, which scans the metadata of every
    installed distribution (``scan_component_manifests``: 0.2-0.6 s, most of a small test's time), and each of its
    runs compiles the script afresh (a new ``ScriptCache``: parse, Streamlit's magic rewrite, compile). A server
    scans once and keeps one script cache for every run of every session. The installed packages and the app's
    source do not change during the tests, so every ``AppTest`` reads the same manifests and the same bytecode,
    as the sessions of one server do."""
    found = manifest_scanner.scan_component_manifests()

    def scanned(max_workers: int | None = None) -> list[Any]:
        return list(found)

    scripts = ScriptCache()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(manifest_scanner, "scan_component_manifests", scanned)
        patch.setattr(app_test, "ScriptCache", lambda: scripts)
        yield


@pytest.fixture(scope="session")
def tournament_results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A results folder with one small tournament (run id ``tour``): TFT, ALLD, GRIM, 10 rounds, 2 replicates."""
    folder = tmp_path_factory.mktemp("results")
    config = tournament_config(["TFT", "ALLD", "GRIM"], rounds=10, replicates=2)
    run_experiment(config, results_dir=folder, run_id="tour")
    return folder


@pytest.fixture
def app(monkeypatch: pytest.MonkeyPatch) -> Callable[..., AppTest]:
    """``app(folder, view=None)``: the dashboard on ``folder``, run once, on view ``view`` if given."""

    def start(folder: Path, view: str | None = None) -> AppTest:
        monkeypatch.setattr(sys, "argv", [str(APP), "--results", str(folder)])
        monkeypatch.setenv("PDBENCH_RESULTS", str(folder))
        monkeypatch.setenv("PDBENCH_CACHE", str(folder / ".cache" / "responses.sqlite"))
        at = AppTest.from_file(str(APP), default_timeout=TIMEOUT_S)
        at.session_state[CHARTS_WARM] = True  # no warm-up chart: tests count the charts a view draws
        if view is not None:
            at.session_state[PENDING_VIEW] = view
        at.run()
        assert not at.exception, at.exception
        return at

    return start


def picker(at: AppTest, prefix: str) -> Any:
    """The selectbox whose key starts with ``prefix`` (condition and replicate keys carry the run id)."""
    return next(s for s in at.selectbox if s.key and s.key.startswith(prefix))


@pytest.fixture
def fragments(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, float | None]]:
    """(module.qualname, run_every) of every fragment the app declares from now on: AppTest never runs a fragment
    on its timer, so a test checks what the page asked the browser to do."""
    import streamlit as st

    seen: list[tuple[str, float | None]] = []
    real = st.fragment

    def spy(func: Callable[..., Any] | None = None, *, run_every: float | None = None) -> Any:
        def record(f: Callable[..., Any]) -> Any:
            seen.append((f"{f.__module__}.{f.__qualname__}", run_every))
            return real(f, run_every=run_every)

        return record if func is None else record(func)

    monkeypatch.setattr(st, "fragment", spy)
    return seen

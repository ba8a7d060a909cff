"""Fixtures for the dashboard's end-to-end test: `pdbench ui` on a free loopback port, driven by
Debian's Chromium through Playwright (``executable_path``; no browser download).

Without Chromium (or without the playwright package) the browser tests skip and say how to install
it; the server tests still run.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.support.ports import free_port

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT = {"width": 1280, "height": 900}
STARTUP_S = 60
TIMEOUT_MS = 30_000


def chromium_path() -> str:
    return os.environ.get("PDBENCH_CHROMIUM") or DEFAULT_CHROMIUM


def ui_command(results: Path, port: int) -> list[str]:
    """`pdbench ui` as a user types it, through this interpreter."""
    return [sys.executable, "-m", "harness.cli", "ui", "--results", str(results), "--port", str(port)]


def ui_env(tmp: Path) -> dict[str, str]:
    """`pdbench ui`'s environment under test: no provider keys, its own response cache, the checkout importable."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k != "PDBENCH_RESULTS" and not k.endswith(("_API_KEY", "_BASE_URL"))  # only mock models: no network
    }
    env["PDBENCH_CACHE"] = str(tmp / "cache" / "responses.sqlite")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    env["PYTHONUNBUFFERED"] = "1"
    return env


@dataclass
class Server:
    url: str
    port: int
    results: Path
    log: Path
    proc: subprocess.Popen[bytes]

    def output(self) -> str:
        return self.log.read_text(errors="replace")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """`pdbench ui --results <tmp> --port <free>`, healthy; terminated (then killed) afterwards."""
    tmp = tmp_path_factory.mktemp("ui")
    port = free_port()
    log = tmp / "server.log"
    with log.open("wb") as fh:
        proc = subprocess.Popen(
            ui_command(tmp / "results", port), cwd=tmp, env=ui_env(tmp), stdout=fh, stderr=subprocess.STDOUT
        )
    srv = Server(f"http://127.0.0.1:{port}", port, tmp / "results", log, proc)
    try:
        started = time.monotonic()
        while True:
            if proc.poll() is not None:
                pytest.fail(f"`pdbench ui` exited with code {proc.returncode} before serving:\n{srv.output()}")
            try:
                with urllib.request.urlopen(f"{srv.url}/_stcore/health", timeout=2) as resp:
                    if resp.read().decode().strip() == "ok":
                        break
            except OSError:
                pass
            if time.monotonic() - started > STARTUP_S:
                pytest.fail(f"`pdbench ui` not healthy after {STARTUP_S}s:\n{srv.output()}")
            time.sleep(0.2)
        print(f"\n`pdbench ui` healthy on {srv.url} after {time.monotonic() - started:.1f}s")
        yield srv
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


@pytest.fixture(scope="module")
def screenshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the screenshots go: $PDBENCH_SCREENSHOTS, else a temporary folder (printed)."""
    chosen = os.environ.get("PDBENCH_SCREENSHOTS")
    folder = Path(chosen).expanduser().resolve() if chosen else tmp_path_factory.mktemp("screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    print(f"\ndashboard screenshots: {folder}")
    return folder


@dataclass
class Offline:
    """Requests the page tried to make beyond 127.0.0.1 (all aborted)."""

    blocked: list[str] = field(default_factory=list)

    def handle(self, route: Any) -> None:
        host = urlsplit(route.request.url).hostname
        if host in ("127.0.0.1", "localhost"):
            route.continue_()
        else:
            self.blocked.append(route.request.url)
            route.abort()


@pytest.fixture(scope="module")
def browser_context(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, Offline]]:
    """A fresh Chromium profile with every request beyond 127.0.0.1 aborted; skips without Chromium."""
    executable = chromium_path()
    if not os.path.exists(executable):
        pytest.skip(
            f"Chromium not found at {executable}: install it with `apt-get install -y chromium` (Debian) "
            "to run the dashboard end-to-end test"
        )
    try:
        from playwright.sync_api import expect, sync_playwright
    except ImportError:
        pytest.skip('the playwright package is not installed: run `pip install -e ".[dev]"`')
    expect.set_options(timeout=TIMEOUT_MS)  # fresh pages take 2-6 s; a busy CI machine more
    offline = Offline()
    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")),
            executable_path=executable,
            args=CHROMIUM_ARGS,
            headless=True,
            viewport=VIEWPORT,
            device_scale_factor=1,
            locale="en-US",
            timezone_id="UTC",
            service_workers="block",
        )
        context.set_default_timeout(TIMEOUT_MS)
        context.route("**/*", offline.handle)
        try:
            yield context, offline
        finally:
            context.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Keep each phase's report on the test item, so fixtures can tell whether the test failed."""
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report


@pytest.fixture
def page(
    request: pytest.FixtureRequest, browser_context: tuple[Any, Offline], server: Server, screenshots: Path
) -> Iterator[Any]:
    """A page on the dashboard. On failure it saves ``failure.png`` and prints the server's output;
    it fails the test if the page tried to reach anything beyond 127.0.0.1."""
    context, offline = browser_context
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        yield pg
        report = getattr(request.node, "report_call", None)
        if report is not None and report.failed:
            pg.screenshot(path=str(screenshots / "failure.png"), full_page=True)
            print(f"\nfailure screenshot: {screenshots / 'failure.png'}\n`pdbench ui` output:\n{server.output()}")
    finally:
        pg.close()
    if errors:
        print("page errors:\n" + "\n".join(errors))
    assert not offline.blocked, f"the dashboard tried to reach beyond 127.0.0.1: {offline.blocked}"

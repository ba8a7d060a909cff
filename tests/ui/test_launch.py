"""`pdbench ui`: the Streamlit command line it runs, and its errors before anything starts."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from harness.errors import ConfigError
from harness.ui.app import results_folder
from harness.ui.launch import APP, SERVER, check_port, command


def test_the_server_binds_loopback_without_telemetry_and_gets_the_folder(tmp_path: Path) -> None:
    argv = command(tmp_path, 8765)
    pairs = dict(zip(argv[5::2], argv[6::2], strict=False))
    assert argv[1:5] == ["-m", "streamlit", "run", str(SERVER)]
    assert pairs["--server.address"] == "127.0.0.1" and pairs["--server.port"] == "8765"
    assert pairs["--browser.gatherUsageStats"] == "false" and pairs["--server.headless"] == "true"
    assert argv[-3:] == ["--", "--results", str(tmp_path)]
    assert results_folder(argv[argv.index("--") + 1 :], {}) == tmp_path.resolve()


def test_streamlit_serves_the_dashboard_script_behind_the_host_guard() -> None:
    """`streamlit run server.py` must find an st.App there (else it would run server.py as a script, and
    no guard would stand in front of the dashboard)."""
    from streamlit.web.server.app_discovery import discover_asgi_app

    found = discover_asgi_app(SERVER)
    assert found.is_asgi_app and found.import_string == "server:app"
    from harness.ui.server import app

    assert app.script_path == APP
    assert [m.cls.__name__ for m in app._user_middleware] == ["HostGuard"]


def test_the_app_finds_its_folder_from_arguments_environment_or_default(tmp_path: Path) -> None:
    assert results_folder(["--results", str(tmp_path)], {"PDBENCH_RESULTS": "/elsewhere"}) == tmp_path.resolve()
    assert results_folder(["--unknown", "x"], {"PDBENCH_RESULTS": str(tmp_path)}) == tmp_path.resolve()
    assert results_folder([], {}) == (Path.cwd() / "results").resolve()


def test_a_taken_port_is_a_clear_error() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(ConfigError, match=f"cannot listen on 127.0.0.1:{port}.*--port"):
            check_port("127.0.0.1", port)


def test_a_sessions_first_page_warms_the_chart_library_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from streamlit.testing.v1 import AppTest

    monkeypatch.setattr(sys, "argv", [str(APP), "--results", str(tmp_path)])
    at = AppTest.from_file(str(APP), default_timeout=60).run()
    assert len(at.get("vega_lite_chart")) == 1  # an empty chart, drawn in a 1-pixel container
    at.run()
    assert len(at.get("vega_lite_chart")) == 0

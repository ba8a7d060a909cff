"""Starting the dashboard: `pdbench ui` becomes a Streamlit server bound to loopback.

The CLI process is replaced by Streamlit's (``os.execv``), so stopping `pdbench ui` (Ctrl-C,
SIGTERM) stops the server with it and no orphan keeps the port. Streamlit serves :data:`SERVER`,
which puts :class:`~harness.ui.host_guard.HostGuard` in front of the dashboard script :data:`APP`.
"""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

from harness.errors import ConfigError

APP = Path(__file__).with_name("app.py")
SERVER = Path(__file__).with_name("server.py")
DEFAULT_PORT = 8501
"""Streamlit's own default port, which `pdbench ui --port` defaults to."""


def command(results: Path, port: int, host: str = "127.0.0.1") -> list[str]:
    """The `streamlit run` command line: loopback, headless, no usage statistics, no file watcher."""
    return [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(SERVER),
        "--server.address",
        host,
        "--server.port",
        str(port),
        "--server.headless",
        "true",
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
        "--client.toolbarMode",
        "minimal",
        "--theme.base",
        "light",
        "--",  # what follows reaches the app's sys.argv
        "--results",
        str(results),
    ]


def check_port(host: str, port: int) -> None:
    """Fail with a clear message, before Streamlit starts, if the port is taken."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM) as sock:
        # as the server binds: a port whose last server just stopped (TIME_WAIT) is free
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            raise ConfigError(
                f"cannot listen on {host}:{port} ({exc.strerror or exc}); another program (perhaps another "
                f"`pdbench ui`) uses it: pick another port with --port"
            ) from None


def serve(results: Path, port: int, host: str = "127.0.0.1") -> None:
    """Replace this process by the Streamlit server (does not return)."""
    try:
        import streamlit  # noqa: F401
    except ImportError:
        raise ConfigError(
            "the dashboard needs Streamlit, which is not installed: run `pip install -e .` in the PDBench folder"
        ) from None
    results.mkdir(parents=True, exist_ok=True)
    check_port(host, port)
    print(f"PDBench dashboard for {results}: http://{host}:{port}  (Ctrl-C stops it)", flush=True)
    argv = command(results, port, host)
    env = {**os.environ, "PDBENCH_RESULTS": str(results)}
    os.execve(argv[0], argv, env)

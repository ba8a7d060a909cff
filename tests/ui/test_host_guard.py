"""Which Host and Origin headers name the dashboard, for each address `pdbench ui --host` may bind.

The real server is tested over loopback in tests/e2e/test_host_guard.py; here, the rules, case by case.
"""

from __future__ import annotations

import socket

import pytest

from harness.ui.host_guard import allowed_hosts, is_loopback, refusal


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.1", True), ("127.3.2.1", True), ("localhost", True), ("LOCALHOST.", True), ("::1", True),
     ("[::1]", True), ("0.0.0.0", False), ("::", False), ("192.168.1.20", False), ("localhost.evil.example", False),
     ("dashboard.lan", False), ("", False)],
)  # fmt: skip
def test_loopback_addresses(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_the_names_of_each_kind_of_bound_address() -> None:
    assert allowed_hosts("127.0.0.1", 8501) == {"127.0.0.1:8501", "localhost:8501", "[::1]:8501"}
    assert allowed_hosts("127.0.0.2", 8501) == {"127.0.0.1:8501", "localhost:8501", "[::1]:8501", "127.0.0.2:8501"}
    assert allowed_hosts("::1", 80) == {"127.0.0.1:80", "localhost:80", "[::1]:80", "127.0.0.1", "localhost", "[::1]"}
    assert allowed_hosts("192.168.1.20", 8501) == {"192.168.1.20:8501"}
    assert allowed_hosts("Dashboard.LAN", 9000) == {"dashboard.lan:9000"}
    everywhere = {"127.0.0.1:8501", "localhost:8501", "[::1]:8501", f"{socket.gethostname().lower()}:8501"}
    assert allowed_hosts("0.0.0.0", 8501) == allowed_hosts("::", 8501) == allowed_hosts(None, 8501) == everywhere


def scope(kind: str = "http", **headers: str) -> dict[str, object]:
    return {"type": kind, "headers": [(k.lower().encode(), v.encode("latin-1")) for k, v in headers.items()]}


HOSTS = allowed_hosts("127.0.0.1", 8501)


@pytest.mark.parametrize(
    ("headers", "refused"),
    [
        ({"Host": "127.0.0.1:8501"}, None),
        ({"Host": "LOCALHOST:8501", "Origin": "http://localhost:8501/"}, None),  # case and a trailing slash
        ({"Host": "127.0.0.1:8501", "Origin": "https://127.0.0.1:8501"}, None),
        ({"Host": "evil.example:8501"}, "its Host header ('evil.example:8501') does not name the address"),
        ({"Host": "127.0.0.1:8501", "Origin": "http://evil.example"}, "another site (Origin 'http://evil.example')"),
        ({"Host": "127.0.0.1:8501", "Origin": "null"}, "another site (Origin 'null')"),
        ({"Host": "127.0.0.1:8501", "Origin": "http://127.0.0.1:8502"}, "another site"),
        ({}, "its Host header ('') does not name"),
    ],
)
def test_requests_are_refused_by_host_then_by_origin(headers: dict[str, str], refused: str | None) -> None:
    for kind in ("http", "websocket"):
        why = refusal(scope(kind, **headers), HOSTS)
        assert why is None if refused is None else (why is not None and refused in why)


def test_a_second_host_header_does_not_override_the_first_and_lifespan_passes() -> None:
    two = {"type": "http", "headers": [(b"host", b"evil.example:8501"), (b"host", b"127.0.0.1:8501")]}
    assert refusal(two, HOSTS) is not None
    assert refusal({"type": "lifespan"}, HOSTS) is None

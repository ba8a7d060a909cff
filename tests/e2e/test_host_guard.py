"""DNS rebinding and cross-site requests, against the real `pdbench ui` over loopback.

A rebinding page reaches 127.0.0.1 under its own name, so its requests carry ``Host: evil.example``; a
page elsewhere that opens the dashboard's websocket sends ``Origin: http://evil.example``. Both must be
refused, on plain HTTP and on the websocket, while the dashboard's own address keeps working. Raw
sockets, so that the headers are exactly the ones written here. (No browser needed: this always runs.)
"""

from __future__ import annotations

import socket

import pytest

from tests.e2e.conftest import Server

# It asks the dashboard tests' server (one for the session). The serial run gives each worker whole modules
# (--dist loadfile): on the live readers' worker this module starts a server of its own (about 1.5 s).
pytestmark = [pytest.mark.serial, pytest.mark.slow, pytest.mark.xdist_group("e2e-dashboard")]
WEBSOCKET = "/_stcore/stream"


def exchange(port: int, path: str, headers: dict[str, str], websocket: bool = False) -> tuple[int, str]:
    """One request to 127.0.0.1:port with exactly these headers; the status code and, for HTTP, the body.

    HTTP/1.0 without a Host header (HTTP/1.1 requires one, and the server would refuse it before the guard)."""
    version = "HTTP/1.1" if "Host" in headers else "HTTP/1.0"
    lines = [f"GET {path} {version}", *(f"{k}: {v}" for k, v in headers.items())]
    if websocket:
        lines += ["Connection: Upgrade", "Upgrade: websocket", "Sec-WebSocket-Version: 13",
                  "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=="]  # fmt: skip
    else:
        lines.append("Connection: close")
    data = b""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        while chunk := sock.recv(65536):  # HTTP: until the server closes; a websocket: its handshake's end
            data += chunk
            if websocket and b"\r\n\r\n" in data:
                break
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body.decode("utf-8", "replace")


@pytest.mark.parametrize("websocket", [False, True], ids=["http", "websocket"])
def test_the_dashboards_own_address_is_served(server: Server, websocket: bool) -> None:
    path = WEBSOCKET if websocket else "/_stcore/health"
    for host in (f"127.0.0.1:{server.port}", f"localhost:{server.port}"):
        status, body = exchange(server.port, path, {"Host": host, "Origin": f"http://{host}"}, websocket)
        assert status == (101 if websocket else 200), body
    status, body = exchange(server.port, "/_stcore/health", {"Host": f"127.0.0.1:{server.port}"})  # no Origin
    assert (status, body) == (200, "ok")


@pytest.mark.parametrize("websocket", [False, True], ids=["http", "websocket"])
@pytest.mark.parametrize(
    "headers",
    [
        {"Host": "evil.example:{port}"},  # DNS rebinding: the page's own name
        {"Host": "evil.example:{port}", "Origin": "http://evil.example:{port}"},  # ... same-origin for the browser
        {"Host": "127.0.0.1.evil.example:{port}"},
        {"Host": "127.0.0.1:1{port}"},  # the right name, another port
        {"Host": "127.0.0.1"},  # no port: not how a browser names the dashboard
        {},  # no Host at all
        {"Host": "127.0.0.1:{port}", "Origin": "http://evil.example"},  # a page elsewhere opening the websocket
        {"Host": "127.0.0.1:{port}", "Origin": "null"},  # a sandboxed frame or a file:// page
        {"Host": "127.0.0.1:{port}", "Origin": "http://127.0.0.1:1{port}"},
    ],
    ids=[
        "rebound",
        "rebound-same-origin",
        "suffix",
        "other-port",
        "no-port",
        "no-host",
        "cross-site",
        "null-origin",
        "origin-other-port",
    ],
)
def test_a_request_for_another_host_or_from_another_origin_is_refused(
    server: Server, headers: dict[str, str], websocket: bool
) -> None:
    sent = {k: v.format(port=server.port) for k, v in headers.items()}
    status, body = exchange(server.port, WEBSOCKET if websocket else "/_stcore/health", sent, websocket)
    assert status == 403, body
    if not websocket:
        assert body.startswith("PDBench refused this request:") and "DNS rebinding" in body
        assert f"http://127.0.0.1:{server.port}" in body


def test_the_page_itself_is_refused_to_a_rebinding_name(server: Server) -> None:
    status, body = exchange(server.port, "/", {"Host": f"evil.example:{server.port}"})
    assert status == 403 and "<html" not in body.lower()
    status, body = exchange(server.port, "/", {"Host": f"127.0.0.1:{server.port}"})
    assert status == 200 and "<html" in body.lower()

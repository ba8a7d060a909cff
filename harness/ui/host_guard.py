"""Refuse requests that name another host than the one the dashboard is bound to (DNS rebinding).

The dashboard has no login: whoever can talk to it can start runs that spend the user's API keys. Bound
to 127.0.0.1 only this machine can, but a web page open in the user's browser can still try, two ways:

- DNS rebinding: ``evil.example`` first resolves to the attacker's server, then to 127.0.0.1; the page's
  requests then reach the dashboard as same-origin requests for ``evil.example``. Their ``Host`` header
  says ``evil.example``, which is how they are recognised.
- Cross-site requests: a page on ``evil.example`` opens ``ws://127.0.0.1:8501/_stcore/stream``. The
  ``Host`` is right, but the browser sends ``Origin: http://evil.example``.

:class:`HostGuard` is an ASGI middleware, handed to Streamlit through its documented ``st.App`` hook
(:mod:`harness.ui.server`), that answers 403 to every HTTP request and refuses every websocket whose
``Host`` is not the bound address (with its port), or whose ``Origin``, when there is one, is not an
``http://`` or ``https://`` URL of that address. Streamlit's own ``server.allowedHosts`` covers only
websockets, ignores the port and is off by default; this covers every request.

Which names count as the bound address: for a loopback address, ``localhost``, ``127.0.0.1`` and
``[::1]`` (none of them can be an attacker's name); for another address, that address as given; for
all interfaces (``0.0.0.0``, ``::``), the loopback names and this machine's host name.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
WILDCARDS = ("", "0.0.0.0", "::")  # the names of "all interfaces"
POLICY_VIOLATION = 1008  # websocket close code: the request breaks the server's policy


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address, IPv6 with or without brackets) is this machine only."""
    name = host.strip().strip("[]").rstrip(".").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def allowed_hosts(address: str | None, port: int) -> frozenset[str]:
    """The ``Host`` header values that name the dashboard bound to ``address``:``port`` (lower-case)."""
    bound = (address or "").strip().strip("[]").rstrip(".").lower()
    if bound in WILDCARDS:
        names = {*LOOPBACK_NAMES, socket.gethostname().lower()}
    elif is_loopback(bound):
        names = {*LOOPBACK_NAMES, bound}
    else:
        names = {bound}
    out: set[str] = set()
    for name in names:
        host = f"[{name}]" if ":" in name else name
        out.add(f"{host}:{port}")
        if port == 80:  # a browser leaves the default port out
            out.add(host)
    return frozenset(out)


def allowed_origins(hosts: frozenset[str]) -> frozenset[str]:
    return frozenset(f"{scheme}://{host}" for host in hosts for scheme in ("http", "https"))


def refusal(scope: Scope, hosts: frozenset[str]) -> str | None:
    """Why a request must be refused (None: it may pass). Only HTTP and websocket requests are checked."""
    if scope.get("type") not in ("http", "websocket"):
        return None
    headers: dict[bytes, bytes] = {}
    for name, value in scope.get("headers") or ():
        headers.setdefault(bytes(name).lower(), bytes(value))
    host = headers.get(b"host", b"").decode("latin-1").strip().lower()
    if host not in hosts:
        return f"its Host header ({host[:100]!r}) does not name the address the dashboard is bound to"
    origin = headers.get(b"origin")
    if origin is not None:
        text = origin.decode("latin-1").strip().lower().rstrip("/")
        if text not in allowed_origins(hosts):
            return f"it comes from a page on another site (Origin {text[:100]!r})"
    return None


class HostGuard:
    """ASGI middleware: refuses requests for another host or from another origin (see the module's doc).

    ``address`` and ``port`` are those the server is bound to; by default Streamlit's ``server.address``
    and ``server.port``, read at the first request (the port is final only once the server listens)."""

    def __init__(self, app: ASGIApp, address: str | None = None, port: int | None = None) -> None:
        self.app = app
        self._bound = (address, port) if port is not None else None
        self._hosts: frozenset[str] | None = None

    def hosts(self) -> frozenset[str]:
        if self._hosts is None:
            if self._bound is None:
                from streamlit import config

                self._bound = (config.get_option("server.address"), int(config.get_option("server.port")))
            self._hosts = allowed_hosts(*self._bound)
        return self._hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        why = refusal(scope, self.hosts())
        if why is None:
            await self.app(scope, receive, send)
            return
        where = ", ".join(sorted(f"http://{h}" for h in self.hosts()))
        message = (
            f"PDBench refused this request: {why}. The dashboard answers only requests addressed to it "
            f"({where}), so that no other web page can drive it (DNS rebinding) and spend your API keys. "
            "Open the address `pdbench ui` printed."
        )
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": POLICY_VIOLATION, "reason": why[:120]})
            return
        body = message.encode("utf-8")
        headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 403, "headers": headers})
        await send({"type": "http.response.body", "body": body})

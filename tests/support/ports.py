"""A free TCP port on 127.0.0.1, for tests that start a server of their own (the dashboard, llama.cpp, Ray)."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A port the kernel just handed out and released: free now, though another process could take it before the
    server binds (tests accept that small race rather than pass an open socket to a child)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])

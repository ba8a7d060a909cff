"""What `pdbench ui` serves: the dashboard script (:mod:`harness.ui.app`) behind :class:`HostGuard`.

``streamlit run`` finds ``app`` below (an ``st.App``, Streamlit's documented way to add ASGI middleware)
and serves it with its own server; the guard sees every HTTP request and websocket before Streamlit does.
"""

from __future__ import annotations

from pathlib import Path

from starlette.middleware import Middleware
from streamlit.starlette import App

from harness.ui.host_guard import HostGuard

app = App(Path(__file__).with_name("app.py"), middleware=[Middleware(HostGuard)])

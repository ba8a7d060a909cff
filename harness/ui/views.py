"""The dashboard's views, by the names the navigation shows, and moving between them."""

from __future__ import annotations

import importlib
import threading
from pathlib import Path

import streamlit as st

RUN = "🧪 Run Experiment"
RESULTS = "📊 View Results"
COMPARE = "⚖️ Compare"
REPLAY = "🎬 Animated Replay"
PLAY = "🎮 Play"
TOURNAMENT = "🏆 Tournament"
EVOLUTION = "🧬 Evolution"

# view name -> module with a ``render(folder: Path) -> None``; imported when first shown
VIEWS: dict[str, str] = {
    RUN: "harness.ui.run_view",
    RESULTS: "harness.ui.results_view",
    COMPARE: "harness.ui.compare_view",
    REPLAY: "harness.ui.replay_view",
    PLAY: "harness.ui.play_view",
    TOURNAMENT: "harness.ui.tournament_view",
    EVOLUTION: "harness.ui.evolution_view",
}
VIEW = "view"  # the navigation widget's key
PENDING_VIEW = "view_pending"  # a view asked for by go_to, applied before the widget is drawn
LAST_VIEW = "view_last"


def render(name: str, folder: Path) -> None:
    importlib.import_module(VIEWS[name]).render(folder)


def go_to(name: str) -> None:
    """Show view ``name`` now (e.g. a finished run lands on its results)."""
    st.session_state[PENDING_VIEW] = name
    st.rerun()


_preloading = threading.Lock()
_preloaded = False


def preload() -> None:
    """Import every view (and scipy, Altair, DuckDB behind them) in the background, once per server.

    The first page a server draws imports only its own view; without this, the first visit to
    another view would pay a second or two of imports on top of reading its data.
    """
    global _preloaded
    with _preloading:
        if _preloaded:
            return
        _preloaded = True
    threading.Thread(target=_import_views, name="pdbench-preload-views", daemon=True).start()


def _import_views() -> None:
    for module in VIEWS.values():
        importlib.import_module(module)

"""Streamlit caching around :mod:`harness.ui.data`: results are re-read only when a run file changes.

Every cached call takes the folder's signature (names, sizes and modification times of its run
files), so a new run, a finished run or a run still being written is seen at the next rerun,
and nothing is read twice while the files stay the same.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import streamlit as st

from harness.analysis.report import ConditionSummary
from harness.ui import data

Signature = tuple[tuple[str, int, int], ...]


def signature(folder: Path) -> Signature:
    return data.folder_signature(folder)


@st.cache_data(show_spinner=False, max_entries=64)
def list_runs(folder: Path, sig: Signature, kind: str | None = None) -> data.Folder:
    return data.list_runs(folder, kind)


@st.cache_data(show_spinner=False, max_entries=256)
def conditions(folder: Path, sig: Signature, run_id: str) -> list[data.ConditionRow]:
    return data.conditions(folder, run_id)


@st.cache_data(show_spinner=False, max_entries=256)
def games(folder: Path, sig: Signature, run_id: str, condition: str) -> list[data.GameRow]:
    return data.games(folder, run_id, condition)


@st.cache_data(show_spinner=False, max_entries=256)
def game_detail(folder: Path, sig: Signature, run_id: str, game_id: int) -> data.GameDetail:
    return data.game_detail(folder, run_id, game_id)


@st.cache_data(show_spinner=False, max_entries=256)
def game_curves(folder: Path, sig: Signature, run_id: str, game_id: int) -> list[dict[str, Any]]:
    return data.game_curves(folder, run_id, game_id)


@st.cache_data(show_spinner=False, max_entries=64)
def game_calls(folder: Path, sig: Signature, run_id: str, game_id: int) -> list[dict[str, Any]]:
    return data.game_calls(folder, run_id, game_id)


@st.cache_data(show_spinner=False, max_entries=64)
def summary(folder: Path, sig: Signature, run_id: str, condition: str | None = None) -> list[ConditionSummary]:
    return data.summary(folder, run_id, condition)


@st.cache_data(show_spinner=False, max_entries=64)
def leaderboard(folder: Path, sig: Signature, run_id: str) -> list[dict[str, Any]]:
    return data.leaderboard(folder, run_id)


@st.cache_data(show_spinner=False, max_entries=64)
def matchups(folder: Path, sig: Signature, run_id: str) -> list[dict[str, Any]]:
    return data.matchups(folder, run_id)

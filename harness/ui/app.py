"""The PDBench dashboard: `pdbench ui` serves this script with Streamlit.

Four views over one results folder: run an experiment, look at results, replay a game, run a
tournament. The views read through :mod:`harness.ui.data` (the catalog and its SQL views) and
run through :func:`harness.engine.runner.run_experiment`, so what they show is what `pdbench sql`
shows and a run started here is an ordinary run.

Run it directly with ``streamlit run harness/ui/app.py -- --results DIR``.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import streamlit as st

from harness.errors import StoreError
from harness.ui import cached, views
from harness.ui.views import LAST_VIEW, PENDING_VIEW, VIEW, VIEWS

CHARTS_WARM = "charts_warm"


def results_folder(argv: list[str], environ: dict[str, str] | os._Environ[str]) -> Path:
    """The results folder: ``--results DIR`` after ``--``, else $PDBENCH_RESULTS, else ./results."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--results")
    known, _ = parser.parse_known_args(argv)
    chosen = known.results or environ.get("PDBENCH_RESULTS") or "results"
    return Path(chosen).expanduser().resolve()


def main() -> None:
    st.set_page_config(page_title="PDBench", page_icon="🤝", layout="wide")
    st.html("<style>.block-container{padding-top:2.2rem}</style>")  # Streamlit's default leaves a wide top gap
    folder = results_folder(sys.argv[1:], os.environ)
    st.markdown("## 🤝 PDBench · the iterated Prisoner's Dilemma")
    st.caption(f"Results folder: `{folder}` · the same runs and SQL views as `pdbench sql`")
    names = list(VIEWS)
    last = st.session_state.get(LAST_VIEW, names[0])
    pending = st.session_state.pop(PENDING_VIEW, None)
    if pending in names:
        st.session_state[VIEW] = pending
    elif st.session_state.get(VIEW) not in names:
        st.session_state[VIEW] = last
    choice = st.segmented_control("View", names, key=VIEW, label_visibility="collapsed")
    if choice is None:  # clicking the selected view again deselects it; stay where we were
        choice = last
    st.session_state[LAST_VIEW] = choice
    cached.new_page()
    try:
        views.render(choice, folder)
    except StoreError as exc:  # a run file found damaged as the view read it (harness.ui.cached)
        st.error(str(exc), icon="🧱")
    views.preload()
    _warm_charts()


def _warm_charts() -> None:
    """On a session's first page, draw an empty chart out of sight: the browser then loads the
    chart library (fetched on first use) while the user reads, not when they open a view with charts."""
    if st.session_state.get(CHARTS_WARM):
        return
    st.session_state[CHARTS_WARM] = True
    with st.container(height=1, border=False):
        st.vega_lite_chart({"data": {"values": []}, "mark": "point"}, width="content")


if __name__ == "__main__":  # Streamlit runs this file as __main__; importing it draws nothing
    main()

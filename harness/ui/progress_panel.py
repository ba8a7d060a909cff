"""A background run (:mod:`harness.ui.background`) on the page: the Run and Tournament views share it.

The view keeps its session's run in session state under a key of its own. :func:`launch` puts it
there; :func:`follow` draws it: while it plays, a fragment redraws the progress bar on a timer
(only the fragment reruns, so the rest of the page stays as it is) with a Stop button; when it has
ended, the whole page reruns and the view's ``on_end`` shows how (once).
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from harness.ui.background import Job

POLL_S = 0.5  # progress refresh
QUICK_S = 2.0  # wait this long for a run to end before showing a progress bar


def running(key: str) -> bool:
    """Whether the session's run kept under ``key`` is still playing (one run at a time per view)."""
    job: Job | None = st.session_state.get(key)
    return job is not None and job.running


def launch(key: str, job: Job) -> None:
    """Keep ``job`` as the session's run under ``key``. A run over within ``QUICK_S`` is shown finished
    by the :func:`follow` that comes next in this script run; for a longer one the page is redrawn
    (its Run button disabled, the progress panel below it)."""
    st.session_state[key] = job
    if not job.wait(QUICK_S):
        st.rerun()


def follow(key: str, *, title: str, stop_key: str, on_end: Callable[[Job], None]) -> None:
    """The progress of the session's run under ``key`` while it plays; once it has ended, forget it
    and call ``on_end`` with it."""
    job: Job | None = st.session_state.get(key)
    if job is None:
        return
    if job.running:
        _panel(job, title, stop_key)
        return
    del st.session_state[key]
    on_end(job)


@st.fragment(run_every=POLL_S)
def _panel(job: Job, title: str, stop_key: str) -> None:
    if not job.running:
        st.rerun()  # the whole page, which shows how the run ended
    st.progress(job.counters().fraction, text=f"{title} `{job.run_id}`: {job.describe()}")
    if not job.stop and st.button(
        "⏹️ Stop", key=stop_key, help="Stop cleanly: finished games are kept; `pdbench resume` finishes the run later."
    ):
        job.request_stop()
    if job.stop:
        st.caption(
            "⏹️ Stopping once the moves in progress are recorded: every finished game is kept, and "
            "`pdbench resume` finishes the run."
        )
    else:
        st.caption("You can switch views meanwhile: the run goes on, and its progress is here when you come back.")

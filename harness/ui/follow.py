"""Following a results folder while runs are written: the Results, Replay and Tournament views look again on their own.

A run in progress changes under the page: its games finish one by one, and a file another process writes
(locked until the run ends) is released when it ends. A view calls :func:`follow` once per full run with the
run it shows. While that run is ``running``, or a file of the folder is being written, a fragment re-lists the
folder every ``REFRESH_S`` (cheap: the listing is cached by the folder's signature) and reruns the page only
when what the page shows has changed (the run's status or number of finished games, the files in progress).
What the page shows is the listing it was drawn from (:func:`harness.ui.cached.listing`, one per full run), not
a look taken after it: a writer that moves on while the page is drawn is then seen at the next look.
When nothing is running, nothing is declared, and an idle page costs nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from harness.states import RunStatus
from harness.store.browse import Folder
from harness.ui import cached


@dataclass(frozen=True, slots=True)
class Shown:
    """What a page shows that a run in progress can change."""

    busy: frozenset[str]  # files being written, which the page lists as in progress
    run: tuple[str, RunStatus, int] | None  # the run shown: id, status, finished games

    @property
    def live(self) -> bool:
        """Whether the page must keep looking: a file is being written, or the run shown is running."""
        return bool(self.busy) or (self.run is not None and self.run[1] is RunStatus.RUNNING)


def shown(listing: Folder, run_id: str | None) -> Shown:
    run = next((r for r in listing.runs if r.run_id == run_id), None)
    return Shown(listing.being_written, None if run is None else (run.run_id, run.status, run.games_done))


def follow(folder: Path, run_id: str | None, kind: str | None = None, *, hold: bool = False) -> bool:
    """Keep the page up to date with ``run_id`` and the folder's runs in progress; whether it is followed.

    ``hold``: do not rerun the page for now (the Replay view while it plays: a rerun would not lose the
    position, but need not interrupt the animation); it looks again at its next full run."""
    now = shown(cached.listing(folder, kind), run_id)  # what the page shows: the listing it was drawn from
    if not now.live or hold:
        return now.live
    first = [True]  # the full run's own call of the fragment: the page was just drawn from `now`

    @st.fragment(run_every=cached.REFRESH_S)
    def watch() -> None:
        if first:
            first.clear()
            return
        if shown(cached.look(folder, kind), run_id) != now:
            st.rerun()  # the whole page, drawn from what the folder holds now

    watch()
    return True

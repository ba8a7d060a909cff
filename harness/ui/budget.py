"""The cost limit of a run started from the dashboard, as the Run and Tournament views ask for it.

A budget of 0 is a budget of nothing: no paid call starts (answers already in the response cache are
free and still used), as with `--max-cost 0`. No limit at all is a choice of its own (a box to untick),
so a 0 typed to mean "nothing" can never turn into "no limit".
"""

from __future__ import annotations

from typing import Any

import streamlit as st

DEFAULT_USD = 1.0
HELP = (
    "No new paid call starts once the run has spent this much; 0 allows none (answers already in the "
    "response cache are free). The run then ends interrupted, and `pdbench resume` can finish it."
)


def budget_input(key: str, **widget: Any) -> float | None:
    """The budget in USD (``key`` is the number's widget key), or None when the user unticks the limit.
    ``widget`` goes to both widgets (e.g. ``persist_state``)."""
    limited = st.checkbox(
        "Limit the cost",
        value=True,
        key=f"{key}_limited",
        **widget,
        help="Untick to let the run spend whatever its calls cost.",
    )
    if not limited:
        st.caption("⚠️ No cost limit: every call the run needs is paid.")
        return None
    budget = st.number_input(
        "Budget in USD (0: no paid call)",
        min_value=0.0,
        max_value=10_000.0,
        value=DEFAULT_USD,
        step=0.5,
        key=key,
        help=HELP,
        **widget,
    )
    return float(budget)

"""The "Evolutionary analysis" expander of a run with a payoff table: `pdbench analyze` in the dashboard.

For a finite population of N under the Moran process or pairwise comparison (Fermi rule), the long-run share of
each player when mutations are rare (the small-mutation-limit stationary distribution) and the invasion table (the
fixation probability rho of one invader among N - 1 residents, against the neutral 1/N), each with a 95% interval
from a bootstrap over the games (:mod:`harness.analysis.evolutionary`, read through :mod:`harness.ui.cached`). The
caption gives the `pdbench analyze` command that prints the same figures, with the gradients and the replicator's
rest points besides. A run without a payoff table (an eval, a tournament without self-play, an evolution that kept
only cell means) shows analyze's one-paragraph reason instead.

The expander computes only while it is open (``on_change="rerun"``), so a view that shows it collapsed pays
nothing; each setting's figures are computed once (``st.cache_data``), a small bootstrap by default so that a
change answers in a second or so.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from harness.analysis.evolutionary import Process
from harness.errors import PDBenchError
from harness.ui import cached, charts

TITLE = "Evolutionary analysis"
DEFAULT_SIZE = 100  # pdbench analyze's --population
DEFAULT_INTENSITY = {Process.moran: 0.1, Process.fermi: 1.0}  # pdbench analyze's --selection and --beta
DEFAULT_DRAWS = 200  # a second or so for five players; pdbench analyze's default is 1,000
MAX_DRAWS = 5_000  # more from a terminal: pdbench analyze --bootstrap K
DYNAMICS_LABELS = {Process.moran: "Moran (birth-death)", Process.fermi: "Fermi (pairwise comparison)"}
INTENSITY_LABELS = {Process.moran: "Selection w", Process.fermi: "Selection β"}
INTENSITY_HELP = {
    Process.moran: "Fitness 1 − w + w · payoff per round: 0 is neutral drift (--selection).",
    Process.fermi: "A focal player copies a role model with probability 1 / (1 + exp(−β · payoff gap)) (--beta).",
}


@dataclass(frozen=True, slots=True)
class Settings:
    """What the expander's inputs ask for (`pdbench analyze`'s options of the same names)."""

    size: int
    process: Process
    intensity: float
    draws: int
    seed: int

    def command(self, run_id: str, folder: Path) -> str:
        """The `pdbench analyze` command that computes the same figures."""
        intensity = "--selection" if self.process is Process.moran else "--beta"
        return (
            f"pdbench analyze {run_id} --results {folder} --population {self.size} --dynamics {self.process.value} "
            f"{intensity} {_number(self.intensity)} --bootstrap {self.draws} --seed {self.seed}"
        )


def render(folder: Path, run_id: str, key: str) -> None:
    """The expander for run ``run_id``; ``key`` prefixes its widgets' keys (one prefix per view)."""
    box = st.expander(TITLE, icon="🧮", key=key + "open", on_change="rerun")
    with box:
        if not box.open:
            return
        sig = cached.signature(folder)
        try:
            cached.payoff_table(folder, sig, run_id)
        except PDBenchError as exc:
            st.info(f"No evolutionary analysis of `{run_id}`: {exc}", icon="🚫")
            return
        settings = _inputs(key)
        try:
            with st.spinner("Bootstrapping the payoff table…"):
                result = cached.evolutionary_analysis(
                    folder, sig, run_id, settings.process.value, settings.intensity, settings.size, settings.draws,
                    settings.seed,
                )  # fmt: skip
        except PDBenchError as exc:
            st.error(str(exc), icon="🚫")
            return
        _show(result, settings, run_id, folder)


def _inputs(key: str) -> Settings:
    state = st.session_state
    state.setdefault(key + "population", DEFAULT_SIZE)
    state.setdefault(key + "dynamics", Process.moran.value)
    for process, value in DEFAULT_INTENSITY.items():
        state.setdefault(key + process.value, value)
    state.setdefault(key + "bootstrap", DEFAULT_DRAWS)
    state.setdefault(key + "seed", 0)
    size_col, dynamics_col, intensity_col, draws_col, seed_col = st.columns([2, 3, 2, 2, 2])
    with size_col:
        size = st.number_input(
            "Population N", min_value=2, step=10, key=key + "population", persist_state="session",
            help="Individuals in the population (at least the players).",
        )  # fmt: skip
    with dynamics_col:
        dynamics = st.radio(
            "Dynamics", [p.value for p in Process], key=key + "dynamics", persist_state="session",
            format_func=lambda p: DYNAMICS_LABELS[Process(p)], help="How the population updates (--dynamics).",
        )  # fmt: skip
    process = Process(str(dynamics))
    with intensity_col:
        intensity = st.number_input(
            INTENSITY_LABELS[process], min_value=0.0, step=0.05 if process is Process.moran else 0.5, format="%g",
            key=key + process.value, persist_state="session", help=INTENSITY_HELP[process],
        )  # fmt: skip
    with draws_col:
        draws = st.number_input(
            "Bootstrap draws", min_value=1, max_value=MAX_DRAWS, step=100, key=key + "bootstrap",
            persist_state="session",
            help="Resampled payoff tables behind the 95% intervals (--bootstrap; 1,000 is usual, slower).",
        )  # fmt: skip
    with seed_col:
        seed = st.number_input("Seed", min_value=0, key=key + "seed", persist_state="session", help="--seed")
    return Settings(int(size), process, float(intensity), int(draws), int(seed))


def _show(d: dict[str, Any], settings: Settings, run_id: str, folder: Path) -> None:
    n = d["population"]
    st.caption(f"Payoff table: {d['origin']}.")
    st.markdown("**Long-run shares** · rare mutations")
    st.altair_chart(charts.long_run_shares(d["stationary"]), width="stretch")
    st.markdown(f"**Invasions** · one invader among {n - 1} residents; it invades when ρ > 1/N = {1 / n:.3g}")
    invasions = invasion_frame(d["fixation"])
    st.dataframe(
        invasions,
        hide_index=True,
        column_config={"ρ": st.column_config.NumberColumn(format="%.3g")},
        height=min(38 + 35 * len(invasions), 640),  # as the leaderboard: 17 rows, then a scroll
    )
    st.caption(
        f"{DYNAMICS_LABELS[settings.process]} dynamics, N = {n}, {INTENSITY_LABELS[settings.process].split()[-1]} = "
        f"{_number(settings.intensity)}. Long-run share: the stationary distribution of the small-mutation limit "
        "(a mutant is rare enough to fix or vanish before the next, so the population rests on one player at a time "
        "and moves between them by the fixation probabilities ρ). "
        f"{d['interval']} The same as `{settings.command(run_id, folder)}`, which adds each pair's gradient of "
        "selection and the replicator's rest points."
    )


def invasion_frame(fixation: list[dict[str, Any]]) -> pd.DataFrame:
    """The invasion table: one row per invader and resident, ρ with its interval, and whether it invades (in the
    estimate, and in what share of the bootstrap draws)."""
    return pd.DataFrame(
        [
            {
                "invader": c["player"],
                "resident": c["opponent"],
                "ρ": c["estimate"],
                "95% interval": _interval(c["low"], c["high"]),
                "invades": "yes" if c["invades"] else "no",
                "invades in % of draws": round(100 * c["invades_share"], 1),
            }
            for c in fixation
        ]
    )


def _interval(low: float | None, high: float | None) -> str:
    return "" if low is None or high is None else f"[{low:.3g}, {high:.3g}]"


def _number(x: float) -> str:
    """``x`` as short as it reads back exactly (so the command repeats the very setting)."""
    short = f"{x:g}"
    return short if float(short) == x else repr(x)

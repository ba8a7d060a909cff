"""The payoff matrix a dashboard form plays (🏆 Tournament): a preset of ``--payoff-matrix`` or four numbers
T, R, P, S, the teacher's lever (changing the payoffs is The Evolution of Trust's key chapter).

The inputs give the four numbers as the command line does; they are checked where the option's are
(:func:`harness.config.presets.payoffs.payoff_matrix_of`, when the view builds its config), and whether the
game is a prisoner's dilemma is the config's own warning (:meth:`harness.config.ExperimentConfig.warnings`),
which the view shows. Which matrix a stored run played is read from the run (:func:`matrix_text`).
"""

from __future__ import annotations

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from harness.config.presets.payoffs import PAYOFF_PRESETS
from harness.game.rules import PayoffMatrix

CUSTOM = "custom"
PRESET_NAMES = {"axelrod": "Axelrod's", "trust": "The Evolution of Trust's"}
NAMES = (("T", "temptation"), ("R", "reward"), ("P", "punishment"), ("S", "sucker's payoff"))
HELP = {
    "T": "What you get for defecting against a cooperator.",
    "R": "What each gets when both cooperate.",
    "P": "What each gets when both defect.",
    "S": "What you get for cooperating against a defector.",
}

Payoffs = tuple[float, float, float, float]  # T, R, P, S, in --payoff-matrix's order


def trps(matrix: PayoffMatrix) -> Payoffs:
    return (matrix.T, matrix.R, matrix.P, matrix.S)


def payoff_input(key: str) -> Payoffs:
    """A preset, or (``✏️ custom``) four number inputs that start from the preset last chosen; returns T, R,
    P, S unchecked (the view's config checks them, with its other settings)."""
    options = [*PAYOFF_PRESETS, CUSTOM]
    choice, inputs = st.columns([2, 3], vertical_alignment="bottom")
    with choice:
        preset = st.radio(
            "Payoffs",
            options,
            horizontal=True,
            key=key + "payoffs",
            persist_state="session",
            format_func=lambda o: "✏️ custom" if o == CUSTOM else f"{o} ({_numbers(trps(PAYOFF_PRESETS[o]))})",
            on_change=_start_custom,
            args=(key,),
            help="T, R, P, S: temptation, reward, punishment, sucker's payoff (as `--payoff-matrix`). axelrod is "
            "PDBench's default; trust is The Evolution of Trust's coins (cooperating costs you 1 and gives the "
            "other 3). Custom: set the four yourself.",
        )
    if preset != CUSTOM:
        st.session_state[key + "from"] = preset
        values = trps(PAYOFF_PRESETS[str(preset)])
    else:
        starts = trps(PAYOFF_PRESETS[st.session_state.get(key + "from", "axelrod")])
        with inputs:
            t, r, p, s = (
                _number(col, key + name, f"{name}: {what}", start, HELP[name])
                for col, (name, what), start in zip(st.columns(4), NAMES, starts, strict=True)
            )
        values = (t, r, p, s)
    st.caption(_outcomes(values))
    return values


def _number(col: DeltaGenerator, key: str, label: str, start: float, help: str) -> float:
    """One payoff's input; it starts at ``start`` (set as its state, not as its default: Streamlit warns of a
    widget given both)."""
    if key not in st.session_state:
        st.session_state[key] = start
    return float(col.number_input(label, step=0.5, format="%g", key=key, persist_state="session", help=help))


def _start_custom(key: str) -> None:
    """Switching to custom: the four inputs start from the preset shown until now."""
    if st.session_state.get(key + "payoffs") == CUSTOM:
        start = trps(PAYOFF_PRESETS[st.session_state.get(key + "from", "axelrod")])
        for (name, _), value in zip(NAMES, start, strict=True):
            st.session_state[key + name] = value


def _numbers(values: Payoffs) -> str:
    return ", ".join(f"{v:g}" for v in values)


def _outcomes(values: Payoffs) -> str:
    """Each round's outcomes in words: what a teacher reads out."""
    t, r, p, s = values
    return (
        f"Each round: both cooperate → {r:g} each · both defect → {p:g} each · "
        f"one defects → {t:g} for the defector, {s:g} for the cooperator."
    )


def matrix_text(matrix: PayoffMatrix) -> str:
    """A stored run's matrix in one line: T, R, P, S and the preset's name when it is one."""
    name = next((PRESET_NAMES[n] for n, m in PAYOFF_PRESETS.items() if m == matrix), None)
    symmetric = matrix == PayoffMatrix.from_rstp(R=matrix.R, S=matrix.S, T=matrix.T, P=matrix.P)
    values = ", ".join(f"{n} = {v:g}" for (n, _), v in zip(NAMES, trps(matrix), strict=True))
    if not symmetric:
        values = "; ".join(f"{a}{b} ({x:g}, {y:g})" for (a, b), (x, y) in matrix.table().items())
    return f"{values} ({name})" if name else values

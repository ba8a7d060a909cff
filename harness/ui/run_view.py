"""🧪 Run Experiment: pick two players, the game and the horizon, and play it with the CLI's engine.

The run plays in the background (:mod:`harness.ui.background`); this page shows its progress
(:mod:`harness.ui.progress_panel`) and, when it ends, lands on its results. Settings are validated
by the same config models as a YAML file, so a bad choice gets the same one-paragraph error as
`pdbench validate`.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from harness.config.plan import summarize
from harness.config.presets.duel import duel_config
from harness.engine.runner import default_run_id
from harness.errors import PDBenchError
from harness.game.horizon import HorizonKind
from harness.game.rules import PayoffMatrix
from harness.players.model.prompts.builder import available_personas
from harness.providers.info import OPENAI
from harness.providers.registry import PROVIDERS, is_offline, sends_key
from harness.ui import background, choices, components, progress_panel
from harness.ui.budget import budget_input
from harness.ui.data import agent_info
from harness.ui.pickers import SELECTED_CONDITION, SELECTED_GAME, SELECTED_RUN
from harness.ui.views import PENDING_VIEW, RESULTS, go_to

LATE_S = 5.0  # a run that ended longer ago than this ended while the user was elsewhere
ACTIVE = "run_active"  # the background.Job of this browser session, while it plays or until its end is shown
NO_PERSONA = "(none)"


def render(folder: Path) -> None:
    st.markdown("### 🧪 Run a new experiment")
    left, right = st.columns(2)
    with left:
        agent_a = _player("a", default="TFT")
    with right:
        agent_b = _player("b", default="ALLD")
    # The cards get a row of their own below every input, so they stay level whatever one side asks for
    # (another model's name and base URL); they are drawn once the settings below have set persona and temperature.
    cards = st.columns(2)
    settings = _game_settings(agent_a, agent_b)
    for col, seat, agent in zip(cards, ("a", "b"), (agent_a, agent_b), strict=True):
        with col:
            _card(seat, agent)
    matrix = _payoff_matrix()
    busy = progress_panel.running(ACTIVE)
    if (
        st.button(
            "🚀 Run experiment",
            type="primary",
            key="run_start",
            disabled=busy,
            help="One run at a time: this one is still playing." if busy else None,
        )
        and not busy
    ):
        _start(folder, agent_a, agent_b, settings, matrix)
    progress_panel.follow(ACTIVE, title="Run", stop_key="run_stop", on_end=_finished)


def _player(seat: str, default: str) -> dict[str, Any]:
    """A player picker (and, for another model, its name and base URL); returns the agent's config mapping."""
    options = [*choices.strategies(), *choices.models(os.environ), choices.OTHER_MODEL]
    name = st.selectbox(
        f"Player {seat.upper()}",
        options,
        index=options.index(default),
        key=f"run_player_{seat}",
        format_func=choices.label,
    )
    if name == choices.OTHER_MODEL:
        hint = "openai/<model> for any OpenAI-compatible server (vLLM, llama.cpp, Ollama) with the base URL below"
        model = st.text_input(
            "Model (provider/name)", key=f"run_model_{seat}", placeholder="openai/llama3.1:8b", help=hint
        )
        base_url = st.text_input(
            "Base URL (OpenAI-compatible server)",
            key=f"run_base_url_{seat}",
            placeholder="http://127.0.0.1:11434/v1",
            help="Your API key goes only to the provider's own endpoint or to the base URL "
            "set in the environment `pdbench ui` was started in (or .env); any other address "
            "typed here gets requests without a key.",
        )
        agent: dict[str, Any] = {"model": model.strip()}
        if base_url.strip():
            agent["base_url"] = base_url.strip()
            agent["key_only_to_configured"] = True  # typed here, by whoever reaches the page
            _key_note(model.strip(), base_url.strip())
        return agent
    return {"model": name} if "/" in name else {"policy": name}


def _card(seat: str, agent: dict[str, Any]) -> None:
    """The player's card as it will play: strategy, or model with its persona and temperature."""
    name = agent.get("model") or agent.get("policy")
    if not name:
        st.caption(f"Player {seat.upper()}: type a model name above to see its card.")
        return
    st.markdown(components.agent_card(agent_info(name, agent), seat), unsafe_allow_html=True)


def _key_note(model: str, base_url: str) -> None:
    """Say whether the API key goes with requests to a typed base URL (see registry.sends_key)."""
    provider = model.partition("/")[0] if "/" in model else OPENAI.name
    info = PROVIDERS.get(provider)
    if info is None or info.key_env is None or info.base_url_env is None:  # no key to send (the mock)
        return
    key_env, base_env = info.key_env, info.base_url_env
    if sends_key(provider, base_url, os.environ):
        st.caption(
            f"🔑 `{base_url}` is configured for {provider} (its own endpoint or {base_env}): requests to it "
            f"carry your {key_env}."
        )
    else:
        st.caption(
            f"🔓 No key is sent to `{base_url}`: your {key_env} goes only to {provider}'s own endpoint or to "
            f"the base URL in {base_env}. For a server that needs your key, set {base_env} to it in the "
            "environment or .env and restart `pdbench ui`."
        )


def _game_settings(agent_a: dict[str, Any], agent_b: dict[str, Any]) -> dict[str, Any]:
    st.markdown("#### ⚙️ Game settings")
    c1, c2, c3 = st.columns(3)
    kind = c1.radio(
        "Horizon",
        list(HorizonKind),
        key="run_horizon",
        horizontal=True,
        format_func=str.capitalize,
        help="Fixed: every game has the same known length. Geometric: after each round the game "
        "ends with the stop probability, so players never know which round is the last.",
    )
    out: dict[str, Any] = {}
    if kind == HorizonKind.FIXED:
        out["rounds"] = c2.slider("Rounds", 1, 500, 50, key="run_rounds")
    else:
        out["stop_prob"] = c2.number_input(
            "Stop probability per round", 0.001, 1.0, 0.02, step=0.005, format="%.3f", key="run_stop_prob"
        )
        out["max_rounds"] = c2.number_input("Longest game (rounds)", 1, 100_000, 1_000, key="run_max_rounds")
    out["replicates"] = c3.slider("Replicates", 1, 100, 3, key="run_replicates")
    c4, c5, c6 = st.columns(3)
    out["noise"] = c4.slider("Noise (probability a move is flipped)", 0.0, 0.5, 0.0, step=0.01, key="run_noise")
    out["seed"] = int(c5.number_input("Seed", 0, 2**31 - 1, 0, key="run_seed"))
    out["run_id"] = c6.text_input("Run id (optional)", key="run_id", placeholder="experiment_YYYYmmdd_HHMMSS").strip()
    models = [a for a in (agent_a, agent_b) if "model" in a]
    if models:
        personas = [NO_PERSONA, *available_personas()]
        c7, c8 = st.columns(2)
        persona = c7.selectbox("Persona for the model players", personas, key="run_persona")
        temperature = None
        if c8.checkbox(
            "Set the temperature",
            key="run_set_temperature",
            help="Unchecked: the provider's default, as `pdbench eval` without --temperature",
        ):
            temperature = c8.slider("Temperature", 0.0, 2.0, 0.0, step=0.1, key="run_temperature")
        for agent in models:
            if persona != NO_PERSONA:
                agent["persona"] = persona
            if temperature is not None:
                agent["temperature"] = temperature
        if any(not is_offline(str(a["model"])) for a in models):
            out["max_cost"] = budget_input("run_max_cost")
    return out


def _payoff_matrix() -> PayoffMatrix | None:
    """The symmetric game's four payoffs, editable, shown as the matrix each player faces."""
    current = {k: st.session_state.get(f"run_{k}", v) for k, v in (("T", 5.0), ("R", 3.0), ("P", 1.0), ("S", 0.0))}
    summary = ", ".join(f"{k}={v:g}" for k, v in current.items())
    with st.expander(f"🎲 Payoff matrix: {summary}", expanded=False):
        st.caption("Payoffs to the row player (you) given both moves. Defaults are Axelrod's: T=5, R=3, P=1, S=0.")
        c1, c2, c3, c4 = st.columns(4)
        R = c1.number_input("R: both cooperate", value=3.0, step=0.5, key="run_R")
        S = c2.number_input("S: you cooperate, they defect", value=0.0, step=0.5, key="run_S")
        T = c3.number_input("T: you defect, they cooperate", value=5.0, step=0.5, key="run_T")
        P = c4.number_input("P: both defect", value=1.0, step=0.5, key="run_P")
        matrix = PayoffMatrix.from_rstp(R=R, S=S, T=T, P=P)
        table = pd.DataFrame(
            {
                "they cooperate (C)": [f"{R:g}, {R:g}", f"{T:g}, {S:g}"],
                "they defect (D)": [f"{S:g}, {T:g}", f"{P:g}, {P:g}"],
            },
            index=["you cooperate (C)", "you defect (D)"],
        )
        st.table(table)
        st.caption("Each cell: (your payoff, their payoff).")
    for warning in matrix.warnings():  # outside the expander: seen even when it is closed
        st.warning(f"Not a standard Prisoner's Dilemma: {warning}.", icon="⚠️")
    return matrix


def _start(
    folder: Path,
    agent_a: dict[str, Any],
    agent_b: dict[str, Any],
    settings: dict[str, Any],
    matrix: PayoffMatrix | None,
) -> None:
    try:
        for seat, agent in (("A", agent_a), ("B", agent_b)):
            if "model" in agent and not agent["model"]:
                raise PDBenchError(f"player {seat}: type a model name such as openai/gpt-4o-mini, or pick one")
        if settings["run_id"]:
            background.check_new_run_id(folder, settings["run_id"])
        run_id = settings["run_id"] or default_run_id("experiment", folder)
        config = duel_config(
            agent_a,
            agent_b,
            rounds=settings.get("rounds"),
            stop_prob=settings.get("stop_prob"),
            max_rounds=settings.get("max_rounds"),
            replicates=settings["replicates"],
            noise=settings["noise"],
            seed=settings["seed"],
            payoff_matrix=matrix,
        )
        plan = summarize(config)
        if plan.model_calls:
            st.caption(f"{plan.games:,} games, about {plan.model_calls:,.0f} model calls (more with re-asks).")
        job = background.start(config, folder, run_id, max_cost=settings.get("max_cost"))
    except PDBenchError as exc:
        st.error(str(exc), icon="🚫")
        return
    progress_panel.launch(ACTIVE, job)


def _finished(job: background.Job) -> None:
    """The session's run has ended: land on its results (or say why it could not run).

    A run that ended while the user was in another view does not pull them away on their next
    visit here: it says so, with a button to its results."""
    if job.error is not None:
        st.error(job.error, icon="🚫")
        return
    assert job.result is not None
    ended_ago = time.monotonic() - (job.ended or time.monotonic())
    if ended_ago > LATE_S:
        st.success(f"Run `{job.run_id}` ended **{job.result.status}** while you were away.", icon="🏁")
        st.button("📊 View its results", key="run_view_results", on_click=_land, args=(job,))
        return
    _land(job)
    go_to(RESULTS)


def _land(job: background.Job) -> None:
    """Select the run's results and ask for the Results view (also a button callback, before a rerun)."""
    assert job.result is not None
    st.session_state[SELECTED_RUN] = job.run_id
    st.session_state.pop(SELECTED_CONDITION, None)
    st.session_state.pop(SELECTED_GAME, None)
    st.session_state["run_finished"] = (job.run_id, job.result.status, job.result.reason)
    st.session_state[PENDING_VIEW] = RESULTS

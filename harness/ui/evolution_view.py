"""🧬 Evolution: a population of strategies plays, and the better scorers spread, after The Evolution of Trust.

The form (:mod:`harness.ui.evolution_setup`) builds the same :class:`~harness.evolution.EvolutionSettings` as
`pdbench evolve`, and a run goes through :func:`harness.engine.evolution.run.run_evolution` into its own results file
(kind ``evolution``), so `pdbench sql` and `pdbench report` see it like every run. The run shown below the form
is read back from that file (:func:`harness.store.evolution_writer.read_evolution`), whether it was just made here or
reopened from the folder: what the view draws is what the file holds.

The scenario buttons load a scenario into the form and run it (or reopen the newest complete run with the very same
settings and seed, which would give the same trajectory byte for byte). A run made from a scenario, unchanged,
shows the scenario's lesson with the numbers of that run that show it (see
:class:`~harness.evolution.scenarios.Scenario`, which ``pdbench evolve --scenario`` reads alike).

The payoffs are a preset of ``--payoff-matrix`` or the teacher's own T, R, P, S; a game that is not a prisoner's
dilemma gets the config's warning (:meth:`~harness.game.rules.PayoffMatrix.warnings`) and runs as given.

The frame (generation label, population bars, agent grid) is one element per generation
(:mod:`harness.ui.evolution_frame`), animated by :mod:`harness.ui.playback` like the replay, up to 3 s a generation
so a teacher can talk over each; at phone width its controls take two short rows and Play brings the grid into view
(:mod:`harness.ui.phone`, as the replay's).

Below the run, the "Evolutionary analysis" expander (:mod:`harness.ui.evolutionary_panel`) is `pdbench analyze` on
the run's payoff table: long-run shares and invasions with their bootstrap intervals, or why the run has no table.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import streamlit as st
from streamlit.runtime.scriptrunner_utils.exceptions import ScriptControlException

from harness.engine.runner import default_run_id
from harness.errors import PDBenchError
from harness.evolution import Dynamics, EvolutionSettings, Fitness, PayoffMode, Trajectory
from harness.evolution.scenarios import SCENARIOS, SCENARIOS_BY_KEY, Scenario, same_settings, scenario_of
from harness.states import RunStatus
from harness.store.evolution_writer import EvolutionRun
from harness.ui import cached, charts, choices, evolutionary_panel, phone
from harness.ui.evolution_frame import FRAME_CLASS, PHONE_CSS, Film, emoji_of, frame_html
from harness.ui.evolution_setup import (
    DYNAMICS_LABELS,
    MAX_COUNT,
    MAX_GENERATIONS,
    MAX_ROUNDS,
    PAYOFF_BOUND,
    PAYOFF_LABELS,
    Form,
    PayoffChoice,
    selection_note,
)
from harness.ui.playback import Playback

K = "evo_"  # prefix of this view's keys
# Slow enough to talk over: up to 3 s a generation (a scenario's few generations are otherwise over in seconds).
PLAYBACK = Playback(
    "evo", "generation", jump_help="Generation 0 is the initial population.", default_speed_ms=500, slowest_ms=3000
)
SELECTED = "selected_evolution"  # the run shown below the form, across reruns and views
PICKER = K + "run"
PENDING_SELECT = K + "pending_select"  # a run to select at the next script run (set before the picker is drawn)
RUN_PRESET = K + "run_preset"  # a scenario just loaded into the form: run it in this script run
FLASH = K + "flash"  # (level, message): how the last run ended, shown once
DEFAULT = Form(players=("ALLC", "ALLD", "TFT", "GRIM", "GTFT"), counts=(5, 5, 5, 5, 5))
DEFAULT_COUNT = 5
PAYOFF_NAMES = ("T", "R", "P", "S")  # the custom payoffs' keys (K + name), in --payoff-matrix's order
PAYOFF_HELP = {
    "T": ("T · temptation", "What you get for defecting while the other cooperates."),
    "R": ("R · reward", "What each gets when both cooperate."),
    "P": ("P · punishment", "What each gets when both defect."),
    "S": ("S · sucker's payoff", "What you get for cooperating while the other defects."),
}
PROGRESS_EVERY_S = 0.1
LESSON_ICON = "💡"


def render(folder: Path) -> None:
    """Draw the view: presets, the form (and a run, if asked), then the chosen run, animated."""
    pending = st.session_state.pop(PENDING_SELECT, None)
    if pending:
        st.session_state[SELECTED] = pending
        st.session_state[PICKER] = pending
    st.markdown("### 🧬 Evolution")
    st.caption(
        "After [The Evolution of Trust](https://ncase.me/trust/): a population of strategies plays round robins "
        "of the iterated Prisoner's Dilemma, and the better scorers spread. Each individual is one emoji below."
    )
    _presets()
    with st.container(border=True):
        form = _form()
    settings = _check(form)
    preset = SCENARIOS_BY_KEY.get(st.session_state.pop(RUN_PRESET, ""))
    clicked = st.button("🧬 Run evolution", type="primary", key=K + "go", disabled=settings is None)
    if settings is not None and (clicked or preset is not None):
        _start(folder, settings, reuse=preset is not None)
    flash = st.session_state.pop(FLASH, None)
    if flash:
        getattr(st, flash[0])(flash[1])
    st.markdown("#### 📜 Runs")
    run = _pick(folder)
    if run is not None:
        _show(folder, run)


# ----------------------------------------------------------------------------------------- the form


def _presets() -> None:
    st.markdown("##### 🎬 Scenarios")
    for col, preset in zip(st.columns(len(SCENARIOS)), SCENARIOS, strict=True):
        with col:
            st.button(
                preset.title,
                key=K + "preset_" + preset.key,
                on_click=_load,
                args=(preset,),
                width="stretch",
                help=f"{preset.blurb} Loads these settings and runs them.",
            )
            st.caption(preset.blurb)


def _load(preset: Scenario) -> None:
    """Put a scenario's settings in the form (before its widgets are drawn) and ask for its run."""
    form = Form.of(preset.settings())
    state = st.session_state
    state[K + "players"] = list(form.players)
    for player, count in zip(form.players, form.counts, strict=True):
        state[_count_key(player)] = count
    state[K + "dynamics"], state[K + "generations"], state[K + "rounds"] = form.dynamics, form.generations, form.rounds
    state[K + "noise"], state[K + "selection"], state[K + "mutation"] = form.noise, form.selection, form.mutation
    state[K + "k"], state[K + "seed"], state[K + "payoffs"] = form.k, form.seed, form.payoffs
    state[K + "fitness"], state[K + "payoff_mode"] = form.fitness, form.payoff_mode
    for name, value in zip(PAYOFF_NAMES, form.custom, strict=True):
        state[K + name] = value
    state[RUN_PRESET] = preset.key


def _count_key(player: str) -> str:
    return f"{K}count_{player}"


def _defaults() -> None:
    """The form's first values (set once; no widget is given a value of its own, so a preset can set any)."""
    state = st.session_state
    state.setdefault(K + "players", list(DEFAULT.players))
    for name, value in (
        ("dynamics", DEFAULT.dynamics),
        ("generations", DEFAULT.generations),
        ("rounds", DEFAULT.rounds),
        ("noise", DEFAULT.noise),
        ("selection", DEFAULT.selection),
        ("mutation", DEFAULT.mutation),
        ("k", DEFAULT.k),
        ("seed", DEFAULT.seed),
        ("payoffs", DEFAULT.payoffs),
        *zip(PAYOFF_NAMES, DEFAULT.custom, strict=True),
        ("fitness", DEFAULT.fitness),
        ("payoff_mode", DEFAULT.payoff_mode),
    ):
        state.setdefault(K + name, value)
    for player in state[K + "players"]:
        state.setdefault(_count_key(player), DEFAULT_COUNT)


def _form() -> Form:
    _defaults()
    left, middle, right = st.columns([5, 3, 3], gap="medium")
    with left:
        players = st.multiselect(
            "Players",
            choices.strategies(),
            key=K + "players",
            format_func=_player_label,
            accept_new_options=True,
            persist_state="session",
            placeholder="Choose strategies (or type one: GTFT(p=0.2))",
            help="Every strategy of the dashboard; type a strategy with its settings, e.g. GTFT(p=0.2) or RAND(p=0.8).",
        )
        st.markdown("**Initial mix** · individuals per player (0 leaves one out)")
        counts = []
        for player in players:
            st.session_state.setdefault(_count_key(player), DEFAULT_COUNT)
            counts.append(
                st.slider(f"{emoji_of(player)} {player}", 0, MAX_COUNT, key=_count_key(player), persist_state="session")
            )
        total = sum(counts)
        st.caption(f"Population: **{total}** individual{'s' if total != 1 else ''}")
    with middle:
        dynamics = st.selectbox(
            "Dynamics",
            list(DYNAMICS_LABELS),
            key=K + "dynamics",
            format_func=lambda d: DYNAMICS_LABELS[d],
            persist_state="session",
            help="How the population changes. The Evolution of Trust: everyone plays everyone, "
            "the k lowest scorers are removed and the k highest copied. Generational: all N of the "
            "next generation drawn in proportion to fitness. Moran: each step one individual, "
            "chosen by fitness, replaces one chosen at random. Replicator: the shares of an "
            "infinite population, a deterministic ODE.",
        )
        generations = st.slider(
            "Generations",
            1,
            MAX_GENERATIONS,
            key=K + "generations",
            persist_state="session",
            help="Moran: steps (one birth and one death each). Replicator: units of time. "
            "Without mutation a run stops when one player has taken over.",
        )
        rounds = st.slider("Rounds per match", 1, MAX_ROUNDS, key=K + "rounds", persist_state="session")
        noise = st.slider(
            "Miscommunication (noise)",
            0.0,
            0.5,
            step=0.01,
            key=K + "noise",
            persist_state="session",
            help="Probability that a move is flipped by mistake (C played as D, or D as C).",
        )
    with right:
        selection = st.slider(
            "Selection strength w",
            0.0,
            1.0,
            step=0.01,
            key=K + "selection",
            persist_state="session",
            help="How strongly scores decide who reproduces; 0 is neutral drift. A score is the mean payoff per "
            "round over the others met, so w reads on the payoff table's scale: 0.01 is near drift, 1 strong "
            "(see the two selection scenarios). The trust rule only ranks scores, so for it any w > 0 is the same.",
        )
        mutation = st.slider(
            "Mutation",
            0.0,
            0.2,
            step=0.005,
            format="%.3f",
            key=K + "mutation",
            persist_state="session",
            help="Probability that an offspring is another player.",
        )
        k = st.slider(
            "Replaced per generation (k)",
            1,
            20,
            key=K + "k",
            persist_state="session",
            disabled=dynamics != Dynamics.trust.value,
            help="The trust rule removes the k lowest scorers and copies the k highest (at most half the population).",
        )
        seed = st.number_input("Seed", min_value=0, key=K + "seed", persist_state="session")
        with st.expander("More settings"):
            fitness = st.radio(
                "Fitness (generational, Moran)",
                [f.value for f in Fitness],
                key=K + "fitness",
                persist_state="session",
                horizontal=True,
                help="exponential: exp(w · score); linear: 1 − w + w · score.",
            )
            payoff_mode = st.radio(
                "Random matches",
                [m.value for m in PayoffMode],
                key=K + "payoff_mode",
                persist_state="session",
                horizontal=True,
                format_func={"exact": "played every generation", "estimated": "estimated once"}.get,
                help="With noise, a match's outcome is random: play it afresh every generation, or estimate "
                "each pair's payoff once from 50 matches.",
            )
    payoffs, custom = _payoffs()
    return Form(
        players=tuple(players),
        counts=tuple(int(c) for c in counts),
        dynamics=str(dynamics),
        generations=int(generations),
        rounds=int(rounds),
        noise=float(noise),
        selection=float(selection),
        fitness=str(fitness),
        mutation=float(mutation),
        k=int(k),
        payoffs=payoffs,
        custom=custom,
        payoff_mode=str(payoff_mode),
        seed=int(seed),
    )


def _payoffs() -> tuple[str, tuple[float, float, float, float]]:
    """The game: a preset, or the teacher's own T, R, P, S (the number inputs show the preset's values, and keep
    them when custom is chosen, to start from); a game that is not a prisoner's dilemma gets the config's warning
    and runs as given."""
    st.markdown("**Payoffs** · what each pair of moves pays, per round")
    choice = st.radio(
        "Payoffs",
        list(PAYOFF_LABELS),
        key=K + "payoffs",
        format_func=PAYOFF_LABELS.get,
        horizontal=True,
        label_visibility="collapsed",
        persist_state="session",
    )
    custom = choice == PayoffChoice.custom.value
    if not custom:  # before the inputs are drawn: they show the preset
        preset = Form(players=(), counts=(), payoffs=str(choice)).matrix()
        for name, value in zip(PAYOFF_NAMES, (preset.T, preset.R, preset.P, preset.S), strict=True):
            st.session_state[K + name] = value
    values = []
    for col, name in zip(st.columns(len(PAYOFF_NAMES)), PAYOFF_NAMES, strict=True):
        with col:
            values.append(
                st.number_input(
                    PAYOFF_HELP[name][0],
                    -PAYOFF_BOUND,
                    PAYOFF_BOUND,
                    step=0.5,
                    format="%g",
                    key=K + name,
                    disabled=not custom,
                    persist_state="session",
                    help=PAYOFF_HELP[name][1],
                )
            )
    t, r, p, s = (float(v) for v in values)
    form = Form(players=(), counts=(), payoffs=str(choice), custom=(t, r, p, s))
    problems = form.matrix().warnings()
    if problems:
        st.warning(
            "These payoffs are not a prisoner's dilemma: "
            + "; ".join(problems)
            + ". The run plays them as given, but the lessons of the scenarios assume T > R > P > S and 2R > T + S.",
            icon="⚠️",
        )
    return str(choice), (t, r, p, s)


def _player_label(player: str) -> str:
    """A strategy as the other pickers show it; one typed with its settings (GTFT(p=0.2)) exactly as typed: the
    browser sends a typed option back as it shows it, so anything added here would become part of the name."""
    return choices.label(player) if player in choices.strategies() else player


def _check(form: Form) -> EvolutionSettings | None:
    try:
        return form.settings()
    except PDBenchError as exc:
        st.error(str(exc), icon="🚫")
        return None


# ------------------------------------------------------------------------------------------ the run


def _start(folder: Path, settings: EvolutionSettings, *, reuse: bool) -> None:
    """Run ``settings`` into a new results file and select it; a preset first looks for the same run done."""
    if reuse:
        same = next(
            (
                r
                for r in cached.evolution_runs(folder, cached.signature(folder))
                if r.status is RunStatus.COMPLETE and same_settings(r.settings, settings)
            ),
            None,
        )
        if same is not None:
            st.session_state[FLASH] = (
                "info",
                f"Reopened `{same.run_id}`: a run with these very settings and seed "
                "(running them again would give the same trajectory).",
            )
            _select(same.run_id)
            return
    from harness.engine.evolution.run import run_evolution
    from harness.engine.interrupts import StopFlag

    run_id = default_run_id("evolution", folder)
    bar = st.progress(0.0, text=f"🧬 Running `{run_id}`…")
    stop, left = StopFlag(), list[BaseException]()
    shown = [0.0]

    def tick(generation: int, population: np.ndarray) -> None:
        if left or time.monotonic() - shown[0] < PROGRESS_EVERY_S:
            return
        shown[0] = time.monotonic()
        try:
            bar.progress(
                min(generation / settings.generations, 1.0),
                text=f"🧬 Generation {generation:,} of {settings.generations:,}",
            )
        except ScriptControlException as exc:  # the page was left or rerun: end the run cleanly, then obey
            left.append(exc)
            stop.set("stopped: the page was left while the run played")

    try:
        outcome = run_evolution(settings, results_dir=folder, run_id=run_id, stop=stop, on_generation=tick)
    except PDBenchError as exc:
        st.session_state[FLASH] = ("error", f"Evolution `{run_id}` could not run: {exc}")
        bar.empty()
        return
    if left:
        raise left[0]
    bar.empty()
    winner = outcome.winner()
    st.session_state[FLASH] = (
        "success",
        f"🏁 `{run_id}` ran {outcome.generations:,} generation"
        f"{'s' if outcome.generations != 1 else ''} in {outcome.seconds:.2f} s"
        + (f": {emoji_of(winner)} {winner} ends ahead." if winner else "."),
    )
    _select(run_id)


def _select(run_id: str) -> None:
    """Show ``run_id`` below, from the next script run (the picker is drawn later in this one, but its
    state can only be set before it is drawn), starting paused at generation 0."""
    st.session_state[PENDING_SELECT] = run_id
    st.rerun()


# -------------------------------------------------------------------------------------- the results


def run_label(run: EvolutionRun) -> str:
    """How the picker names a run: id, players, dynamics, how it ended (or how far it got), the sweep it is a
    cell of, date."""
    s = run.settings
    players = " ".join(f"{emoji_of(p)}{p}" for p in s.players[:5]) + (
        f" +{len(s.players) - 5}" if len(s.players) > 5 else ""
    )
    ended = f"{run.fixation.player} took over" if run.fixation is not None else f"{max(run.generations, 0)} gen."
    status = "" if run.status is RunStatus.COMPLETE else f" · {run.status}"
    sweep = f" · sweep {run.sweep_id}" if run.sweep_id else ""
    return f"{run.run_id} · {players} · {s.dynamics} · {ended}{status}{sweep} · {run.created_at:%Y-%m-%d %H:%M}"


def _pick(folder: Path) -> EvolutionRun | None:
    runs = cached.evolution_runs(folder, cached.signature(folder))
    if not runs:
        st.info(
            f"No evolution runs yet in `{folder}`: pick a scenario above, or set the form and press 🧬 Run "
            "evolution. From a terminal: `pdbench evolve --players TFT,ALLD,ALLC --counts 10,10,5`."
        )
        return None
    by_id = {r.run_id: r for r in runs}
    ids = list(by_id)
    remembered = st.session_state.get(SELECTED)
    if st.session_state.get(PICKER) not in by_id:
        st.session_state[PICKER] = remembered if remembered in by_id else ids[0]
    run_id = st.selectbox("Evolution run", ids, key=PICKER, format_func=lambda r: run_label(by_id[r]))
    if run_id is None:
        return None
    st.session_state[SELECTED] = run_id
    return by_id[run_id]


def _show(folder: Path, run: EvolutionRun) -> None:
    """The chosen run: how it ended, its lesson if it is a preset's, the animated frame and the shares over time."""
    _, trajectory = cached.evolution(folder, cached.signature(folder), run.run_id)
    settings = run.settings
    if run.status is RunStatus.CRASHED:
        st.warning(
            f"Run `{run.run_id}` **crashed**: its process ended without finishing it (killed, or the machine "
            "stopped). What it recorded is shown below."
        )
    elif run.status is not RunStatus.COMPLETE:
        st.warning(f"Run `{run.run_id}` is **{run.status}**" + (f": {run.error}" if run.error else "") + ".")
    if trajectory.generations < 0 or not len(trajectory.population):
        st.info("This run recorded no generation.")
        return
    _lesson(settings, trajectory)
    st.markdown(_outcome(settings, trajectory))
    st.caption(selection_note(settings))
    film = Film.of(trajectory, settings.generations, drawn=settings.size)
    PLAYBACK.follow(run.run_id)
    phone.style(PLAYBACK, FRAME_CLASS)
    st.html(PHONE_CSS)
    PLAYBACK.fragment(film.length, lambda g: _draw(film, g))
    st.markdown("##### 📈 Shares over generations")
    labels = [f"{emoji} {p}" for emoji, p in zip(film.emoji, film.players, strict=True)]
    st.altair_chart(charts.shares_over_time(film.players, film.shares, film.colours, labels), width="stretch")
    st.caption(
        f'The same numbers from a terminal: `pdbench sql "select * from population_shares where run_id = '
        f"'{run.run_id}'\" --results {folder}`."
    )
    evolutionary_panel.render(folder, run.run_id, K + "analysis_")


def _draw(film: Film, g: int) -> None:
    st.markdown(frame_html(film, g), unsafe_allow_html=True)  # one element: see evolution_frame
    phone.scroll_when_play_starts(PLAYBACK)  # at phone width, the grid in view when Play is pressed


def _lesson(settings: EvolutionSettings, trajectory: Trajectory) -> None:
    preset = scenario_of(settings)
    if preset is None:
        return
    evidence = preset.evidence(settings, trajectory)
    if evidence is None:  # the tests run every scenario: its own run always shows its lesson
        st.warning(f"This run has the settings of {preset.title} but does not show its lesson ({preset.lesson}).")
        return
    st.success(f"**{preset.lesson}** {evidence}", icon=LESSON_ICON)


def _outcome(settings: EvolutionSettings, t: Trajectory) -> str:
    """One line: who took over (or leads) and the final mix."""
    final = t.final_shares()
    mix = " · ".join(f"{emoji_of(p)} {p} {x:.0%}" for p, x in sorted(final.items(), key=lambda kv: -kv[1]) if x > 0)
    if t.fixation is not None:
        head = (
            f"🏁 **{emoji_of(t.fixation.player)} {t.fixation.player}** took over at generation {t.fixation.generation}"
        )
    else:
        winner = t.winner()
        head = (
            f"After {t.generations} generations, **{emoji_of(winner)} {winner}** leads"
            if winner
            else f"After {t.generations} generations, no single leader"
        )
    return f"{head} · final mix: {mix}"

"""The 🏆 Tournament view: set up a round robin, play it, and read its leaderboard and matchups.

The form builds the same config as `pdbench tournament` (:func:`harness.config.presets.tournament.tournament_config`)
and plays it with :func:`harness.engine.runner.run_experiment`, so a tournament started here is an ordinary
run of kind ``tournament``: `pdbench report`, `pdbench sql` and the other views read it like any other.
The leaderboard and the heatmap are the ``tournament`` and ``matchups`` SQL views, unchanged: they read the
payoffs each round stored, so a tournament played on other payoffs (the form's 🎲 Payoffs, as `--payoff-matrix`)
is ranked on its own game, and the results say which matrix the chosen run played, from its stored config.

The run plays in a thread owned by the browser session (:mod:`harness.ui.background`), not inside a
script run, so it goes on when someone switches views; :mod:`harness.ui.progress_panel` draws its
progress and its Stop button, which ends the run cleanly (status ``interrupted``, every finished game
kept, resumable with `pdbench resume`).

Below the matchups, the "Evolutionary analysis" expander (:mod:`harness.ui.evolutionary_panel`) is `pdbench analyze`
on the tournament's games (a round robin with self-play; one without is told why not).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import altair as alt
import pandas as pd
import streamlit as st

from harness.config import ExperimentConfig
from harness.config.plan import PlanSummary, summarize
from harness.config.presets.payoffs import payoff_matrix_of
from harness.config.presets.tournament import tournament_config
from harness.engine.runner import RunResult, default_run_id
from harness.errors import PDBenchError
from harness.game.horizon import HorizonKind
from harness.providers.registry import is_offline
from harness.states import RunStatus
from harness.store.browse import PlannedPlayer, RunRow
from harness.store.views.leaderboard import RANKING_NOTE, TIE_TOLERANCE
from harness.ui import (
    background,
    cached,
    charts,
    choices,
    components,
    data,
    evolutionary_panel,
    pickers,
    progress_panel,
)
from harness.ui.budget import budget_input
from harness.ui.follow import follow
from harness.ui.payoff_input import Payoffs, matrix_text, payoff_input

DEFAULT_STRATEGIES = ("ALLC", "ALLD", "TFT", "GRIM", "GTFT", "WSLS")

SELECTED_TOURNAMENT = "selected_tournament"  # the tournament shown below the form, across reruns and views
PICKER_KEY = "tournament"  # pickers.pick_run(key=...) makes the widget key f"{PICKER_KEY}_run"
FLASH = "tournament_flash"  # (level, message): how the last run ended, shown once
JOB = "tournament_job"  # the session's tournament (a background.Job), while it plays or until its end is shown
PENDING_SELECT = "tournament_pending_select"  # a run to select at the next script run
CLEAR_RUN_ID = "tournament_clear_run_id"  # empty the run id field at the next script run (it is used now)
K = "tour_"  # prefix of this view's widget keys


def render(folder: Path) -> None:
    """Draw the view: the form (and a run, if asked), then the chosen tournament's results."""
    pending = st.session_state.pop(PENDING_SELECT, None)
    if pending:
        _select(folder, pending)
    st.markdown("### 🏆 Tournament")
    st.caption(
        "A round robin in the style of Axelrod's tournaments: every player meets every other (and itself, "
        "with self-play: shown in the matchups, left out of the ranking), and is ranked as the Axelrod library "
        "ranks, by the median over repetitions of its score per turn against the others."
    )
    with st.container(border=True):
        _form(folder)
    st.markdown("#### 📜 Results")
    run = pickers.pick_run(folder, key=PICKER_KEY, kind="tournament", remember=SELECTED_TOURNAMENT)
    if run is not None:
        pickers.run_notes(folder, run, kind="tournament")
        played = cached.payoff_matrices(folder, run.run_id, run.created_at.isoformat(), run.status.value)
        if played:
            st.caption("🎲 Payoffs: " + " · ".join(matrix_text(m) for m in played))
        _results(folder, run)
    follow(folder, None if run is None else run.run_id, kind="tournament")  # a tournament still playing


# ----------------------------------------------------------------------------------------- the form


@dataclass(frozen=True, slots=True)
class Choice:
    """What the form asks for, as plain values (so it can be checked without Streamlit)."""

    players: list[str]
    rounds: int | None
    stop_prob: float | None
    max_rounds: int | None
    replicates: int
    noise: float
    seed: int
    self_play: bool
    run_id: str | None
    max_cost: float | None
    payoffs: Payoffs  # T, R, P, S, as --payoff-matrix

    def config(self, folder: Path) -> ExperimentConfig:
        """The tournament config, with every check the CLI makes before a run starts (user errors raise)."""
        config = tournament_config(
            self.players,
            rounds=self.rounds,
            stop_prob=self.stop_prob,
            max_rounds=self.max_rounds,
            replicates=self.replicates,
            noise=self.noise,
            seed=self.seed,
            self_play=self.self_play,
            payoff_matrix=payoff_matrix_of(*self.payoffs, option="Payoffs").to_mapping(),
        )
        background.prepare(config, folder, max_cost=self.max_cost)  # keys, model names, prices under a budget
        if self.run_id:
            background.check_new_run_id(folder, self.run_id)
        return config


def _form(folder: Path) -> None:
    """The tournament's settings, checked as they change; the button plays it."""
    if st.session_state.pop(CLEAR_RUN_ID, False):
        st.session_state[K + "run_id"] = ""
    left, middle, right = st.columns([5, 3, 3], gap="medium")
    with left:
        strategies = st.multiselect(
            "Strategies",
            choices.strategies(),
            default=list(DEFAULT_STRATEGIES),
            format_func=choices.label,
            key=K + "strategies",
            persist_state="session",
            placeholder="Choose classic strategies",
            wrap=True,
        )
        offered = choices.models(os.environ)
        chosen_models = st.multiselect(
            "Models",
            offered,
            default=[],
            key=K + "models",
            persist_state="session",
            accept_new_options=True,
            wrap=True,
            format_func=lambda m: choices.label(m) if m in offered else m,  # typed: as is
            placeholder="Add language models (or type provider/model)",
            help="The offline mock models need no key and cost nothing. Paid models appear when "
            "OPENAI_API_KEY or ANTHROPIC_API_KEY is set; any provider/model name can be typed.",
        )
        paid = [m for m in chosen_models if not is_offline(m)]
        max_cost: float | None = None
        if paid:
            max_cost = budget_input(K + "budget", persist_state="session")
    with middle:
        horizon = st.radio(
            "Horizon",
            list(HorizonKind),
            horizontal=True,
            key=K + "horizon",
            persist_state="session",
            format_func={HorizonKind.FIXED: "📏 fixed", HorizonKind.GEOMETRIC: "🎲 geometric"}.get,
            help="Fixed: every game has the same length (players could count down to the end). "
            "Geometric: after each round the game stops with a given probability, so no one knows the last round.",
        )
        rounds = stop_prob = max_rounds = None
        if horizon == HorizonKind.FIXED:
            rounds = st.slider("Rounds per game", 1, 1000, 200, key=K + "rounds", persist_state="session")
        else:
            stop_prob = st.number_input(
                "Stop probability per round",
                min_value=0.001,
                max_value=1.0,
                value=0.01,
                step=0.005,
                format="%.3f",
                key=K + "stop_prob",
                persist_state="session",
                help="Expected game length: 1 / p rounds.",
            )
            cap = st.number_input(
                "Max rounds (0 = no cap)", min_value=0, value=0, step=50, key=K + "max_rounds", persist_state="session"
            )
            max_rounds = int(cap) or None
        noise = st.slider(
            "Noise",
            0.0,
            0.5,
            0.0,
            step=0.005,
            format="%.3f",
            key=K + "noise",
            persist_state="session",
            help="Probability that a move is flipped by mistake.",
        )
    with right:
        replicates = st.number_input(
            "Replicates (games per pair)",
            min_value=1,
            max_value=10_000,
            value=1,
            key=K + "replicates",
            persist_state="session",
        )
        seed = st.number_input("Seed", min_value=0, value=0, key=K + "seed", persist_state="session")
        self_play = st.checkbox(
            "Self-play (each player also meets itself)", value=True, key=K + "self_play", persist_state="session"
        )
        run_id = st.text_input(
            "Run id (optional)", key=K + "run_id", persist_state="session", placeholder="tournament_YYYYmmdd_HHMMSS"
        ).strip()
    payoffs = payoff_input(K)

    choice = Choice(
        players=[*strategies, *chosen_models],
        rounds=rounds,
        stop_prob=stop_prob,
        max_rounds=max_rounds,
        replicates=int(replicates),
        noise=float(noise),
        seed=int(seed),
        self_play=self_play,
        run_id=run_id or None,
        max_cost=max_cost,
        payoffs=payoffs,
    )
    try:
        config = choice.config(folder)
    except PDBenchError as exc:
        st.error(str(exc), icon="🚫")
        config = None
    for warning in [] if config is None else config.warnings():  # e.g. payoffs that are no prisoner's dilemma
        st.warning(warning, icon="⚠️")
    button, plan = st.columns([1, 4], vertical_alignment="center")
    with plan:
        if config is not None:
            st.caption(_plan_text(choice, summarize(config), paid))
    busy = progress_panel.running(JOB)
    with button:
        clicked = st.button(
            "🚀 Run tournament",
            type="primary",
            key=K + "run",
            disabled=config is None or busy,
            help="One tournament at a time: this one is still playing." if busy else None,
        )
    if clicked and config is not None and not busy:
        _start(folder, config, choice)
    progress_panel.follow(JOB, title="Tournament", stop_key=K + "stop", on_end=_finish)
    flash = st.session_state.pop(FLASH, None)
    if flash:  # how the last run ended
        getattr(st, flash[0])(flash[1])


def _plan_text(choice: Choice, s: PlanSummary, paid: list[str]) -> str:
    n = len(choice.players)
    rounds = f"{s.expected_rounds:,.0f} rounds" if s.fixed_rounds else f"about {s.expected_rounds:,.0f} rounds"
    text = (
        f"{n} player{'s' if n != 1 else ''} → {s.conditions} pairing{'s' if s.conditions != 1 else ''} × "
        f"{s.replicates} replicate{'s' if s.replicates != 1 else ''} = **{s.games:,} games**, {rounds}"
    )
    if s.has_models:
        text += f", at least {s.model_calls:,.0f} model calls"
        text += f" ({', '.join(paid)} paid)" if paid else " (offline mock: free)"
    return text


# ------------------------------------------------------------------------------------------ the run


def _start(folder: Path, config: ExperimentConfig, choice: Choice) -> None:
    try:
        job = background.start(
            config, folder, choice.run_id or default_run_id("tournament", folder), max_cost=choice.max_cost
        )
    except PDBenchError as exc:
        st.error(str(exc), icon="🚫")
        return
    st.session_state[CLEAR_RUN_ID] = True  # that id is taken now
    progress_panel.launch(JOB, job)


def _finish(job: background.Job) -> None:
    """The run has ended: say how, select it in the results below, and redraw the page."""
    result = job.result
    if result is None:  # e.g. the results folder cannot be written
        st.session_state[FLASH] = ("error", f"Tournament `{job.run_id}` could not run: {job.error}")
    else:
        st.session_state[PENDING_SELECT] = job.run_id
        if result.status is RunStatus.COMPLETE:
            failed = job.counters().games_failed
            more = f" ({failed} failed: see 🎬 Animated Replay for why)" if failed else ""
            st.session_state[FLASH] = (
                "success",
                f"🏁 Tournament `{job.run_id}` finished: {result.games_done:,} of {result.games_planned:,} games"
                f"{more}, {result.rounds:,} rounds in {result.seconds:.1f} s.",
            )
        else:
            st.session_state[FLASH] = ("warning", _stopped_text(job.run_id, result))
    st.rerun()


def _stopped_text(run_id: str, result: RunResult) -> str:
    """How a stopped run ended (the run picker below says how to finish it)."""
    return (
        f"⏹️ Tournament `{run_id}` was stopped after {result.games_done:,} of {result.games_planned:,} games; "
        f"every finished game is kept."
    )


# -------------------------------------------------------------------------------------- the results


def _listed(folder: Path, run_id: str) -> bool:
    return any(r.run_id == run_id for r in cached.listing(folder, "tournament").runs)


def _select(folder: Path, run_id: str) -> None:
    """Show ``run_id`` in the results below. The picker's own state is set too: a widget the browser
    already shows keeps its value unless the script sets it through its key."""
    st.session_state[SELECTED_TOURNAMENT] = run_id
    if _listed(folder, run_id):
        st.session_state[f"{PICKER_KEY}_run"] = run_id


def leaderboard_frame(board: list[dict[str, Any]]) -> pd.DataFrame:
    """The leaderboard as the table shows it: medal, emoji and name, then the numbers."""
    rows = []
    for r in board:
        info = data.agent_info(r["player"])
        rows.append(
            {
                "rank": components.medal(r["rank"]),
                "player": f"{info.emoji} {r['player']}",
                "median / turn": r["median_score_per_turn"],
                "mean / turn": r["mean_score_per_turn"],
                "cooperation": (r["cooperation_rate"] or 0.0) * 100,
                "wins": r["wins"],
                "draws": r["draws"],
                "losses": r["losses"],
                "games": r["games"],
            }
        )
    return pd.DataFrame(rows)


COLUMNS = {
    "rank": st.column_config.TextColumn("", width="small"),
    "player": st.column_config.TextColumn("player", width="medium"),
    "median / turn": st.column_config.NumberColumn(
        format="%.3f",
        help="The ranking key: median over repetitions of its score per turn against the others "
        "(in each repetition, the mean of each game's payoff per round; self-play left out)",
    ),
    "mean / turn": st.column_config.NumberColumn(format="%.3f", help="The same scores' mean over repetitions"),
    "cooperation": st.column_config.ProgressColumn(
        format="%.1f%%",
        min_value=0,
        max_value=100,
        help="Share of its moves that were C against the others, as played (after noise); self-play left out",
    ),
    "wins": st.column_config.NumberColumn(help="Games won against other players (self-play is not counted)"),
    "draws": st.column_config.NumberColumn(),
    "losses": st.column_config.NumberColumn(),
    "games": st.column_config.NumberColumn(help="Complete games against other players (self-play is not counted)"),
}


def podium_card(row: dict[str, Any], player: PlannedPlayer | None = None) -> str:
    """One of the top three: an agent card with the medal and its score (no description, so the three
    cards are the same height and the numbers line up); a model keeps its model and persona (``player``)."""
    spec = {"model": player.model, "persona": player.persona} if player is not None and player.model else None
    info = replace(data.agent_info(row["player"], spec), description="")
    extra = (
        f"<div style='display:flex;align-items:center;gap:12px'>"
        f"<span style='font-size:2.2em'>{components.medal(row['rank'])}</span>"
        f"<span><b style='font-size:1.3em'>{components.num(row['median_score_per_turn'], 3)}</b> median per turn"
        f" · mean {components.num(row['mean_score_per_turn'], 3)}<br>"
        f"{components.pct(row['cooperation_rate'])} cooperation · "
        f"<span style='opacity:.75'>{row['wins']} W · {row['draws']} D · {row['losses']} L</span></span></div>"
    )
    return components.agent_card(info, extra=extra)


def missing_players(planned: list[PlannedPlayer], board: list[dict[str, Any]]) -> list[str]:
    """The planned players the leaderboard leaves out (it ranks a player on its complete games against others)."""
    ranked = {r["player"] for r in board}
    return [p.label for p in planned if p.label not in ranked]


def missing_text(missing: list[str], run: RunRow, folder: Path) -> str:
    """Which players the leaderboard leaves out, and why, for each state a run can be in."""
    names = _names(missing)
    verb = "is" if len(missing) == 1 else "are"
    head = f"{names} {verb} not on the leaderboard: no finished game against another player"
    progress = f"{run.games_done:,} of {run.games_planned:,} games finished"
    if run.status is RunStatus.RUNNING:
        return f"{head} yet. The tournament is still playing ({progress})."
    if run.status in (RunStatus.INTERRUPTED, RunStatus.CRASHED):
        how = "was stopped" if run.status is RunStatus.INTERRUPTED else "crashed (its process ended unfinished)"
        return (
            f"{head}. The tournament {how} with {progress}; "
            f"`pdbench resume {run.run_id} --results {folder}` plays the rest."
        )
    return f"{head}: every such game failed ({progress}; 🎬 Animated Replay shows each failed game's error)."


def _results(folder: Path, run: RunRow) -> None:
    sig = cached.signature(folder)
    board = cached.leaderboard(folder, sig, run.run_id)
    planned = cached.players_of(folder, cached.listing(folder, "tournament")).get(run.run_id, [])
    if not board:
        st.info(
            f"Tournament `{run.run_id}` has no complete game between two different players yet, so no "
            "leaderboard (self-play is left out of the ranking)."
        )
        return
    missing = missing_players(planned, board)
    if missing:
        st.warning(missing_text(missing, run, folder), icon="⚠️")
    by_label = {p.label: p for p in planned}
    # Every medallist stands on the podium: players tied on a rank share its medal, so there may be more than three.
    medallists = [r for r in board if r["rank"] <= len(components.MEDALS)]
    for start in range(0, len(medallists), 3):
        for col, row in zip(st.columns(3), medallists[start : start + 3], strict=False):
            with col:
                st.markdown(podium_card(row, by_label.get(row["player"])), unsafe_allow_html=True)
    st.markdown("##### 🏅 Leaderboard")
    frame = leaderboard_frame(board)
    st.dataframe(frame, hide_index=True, column_config=COLUMNS, height=min(38 + 35 * len(frame), 640))
    st.caption(f"{RANKING_NOTE} Same numbers from a terminal: `pdbench report {run.run_id} --results {folder}`.")
    matrix = cached.matchups(folder, sig, run.run_id)
    # "pad": the chart's width is its grid, and axes and legend come on top. Streamlit's default ("fit")
    # squeezes them all into that width, which leaves the cells too narrow for their numbers.
    heatmap = charts.matchup_heatmap(matrix).properties(autosize=alt.AutoSizeParams(type="pad", contains="padding"))
    st.markdown("##### 🔥 Matchups")
    side_by_side = len(board) <= 10  # beyond that the grid needs the whole width
    chart, notes = st.columns([3, 2], gap="large") if side_by_side else (st.container(), st.container())
    with chart:
        st.altair_chart(heatmap, width="content")
        st.caption("Each cell: the row player's mean payoff per round against the column player (green is better).")
    with notes:
        for line in highlights(board, matrix):
            st.markdown(line)
    evolutionary_panel.render(folder, run.run_id, K + "analysis_")


def highlights(board: list[dict[str, Any]], matrix: list[dict[str, Any]]) -> list[str]:
    """A few lines on what the numbers say: who cooperated most, the most lopsided pairing, and
    Axelrod's lesson when it shows (the player who wins the most games is not the one who scores most)."""
    out: list[str] = []
    if not board:
        return out
    best = max(r["cooperation_rate"] or 0.0 for r in board)
    nicest = [r["player"] for r in board if (r["cooperation_rate"] or 0.0) >= best - TIE_TOLERANCE]
    out.append(
        f"🤝 **Most cooperative:** {_names(nicest)}, "
        f"{components.pct(best)} of {'its' if len(nicest) == 1 else 'their'} moves were C."
    )
    cells = {(m["player"], m["opponent"]): m["mean_payoff_per_round"] for m in matrix}
    gaps = [
        (payoff - cells[(opp, player)], player, opp)
        for (player, opp), payoff in cells.items()
        if player != opp and (opp, player) in cells
    ]
    if gaps:
        gap, winner, loser = max(gaps)
        if round(gap, 2) > 0:  # as printed: a gap that rounds to nothing is no lopsided pairing
            out.append(
                f"🗡️ **Most lopsided pairing:** {_who(winner)} scored {cells[(winner, loser)]:.2f} a round "
                f"against {_who(loser)}, who got {cells[(loser, winner)]:.2f}."
            )
    # Ties share the honours: every player on rank 1 "scored most", every player with the most wins "won most".
    top = [r["player"] for r in board if r["rank"] == 1]
    most = max(r["wins"] for r in board)
    winners = [r for r in board if r["wins"] == most]
    if most > 0 and all(r["rank"] > 1 for r in winners):
        ranks = _and([_ordinal(rank) for rank in sorted({r["rank"] for r in winners})])
        one = len(winners) == 1
        out.append(
            f"🧮 **Winning is not scoring:** {_names([r['player'] for r in winners])} won the most games "
            f"({most}{'' if one else ' each'}) but {'ranks' if one else 'rank'} only {ranks}; {_names(top)} "
            f"scored most by doing well with everyone."
        )
    return out


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _who(player: str) -> str:
    return f"{data.agent_info(player).emoji} {player}"


def _names(players: list[str]) -> str:
    """``A``, ``A and B``, ``A, B and C``, each with its emoji."""
    return _and([_who(p) for p in players])


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"

"""📊 View Results: one game in detail (timeline, charts, metric cards, the model's prompts and
answers) and its condition summarised over replicates with 95% confidence intervals."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from harness.analysis.fingerprint import RUN_KIND as FINGERPRINT_KIND
from harness.analysis.memory_one import NOTE, MemoryOneProfile, Outcome
from harness.analysis.notes import FORGIVENESS_NOTE, REPEATED_NOTE
from harness.analysis.probes import PROBE_NOTE, ProbeShare
from harness.analysis.profile_summary import PROFILE_DIMENSIONS
from harness.analysis.report import METRICS, RATES, ConditionSummary
from harness.analysis.stats import Estimate
from harness.game.horizon import HorizonKind
from harness.states import GameStatus, RunStatus
from harness.store.browse import GameDetail
from harness.ui import cached, charts, components, fingerprint_section
from harness.ui.data import FALLBACK, NOISE_FLIP, agent_info, round_events, rounds_text
from harness.ui.follow import follow
from harness.ui.pickers import SELECTED_RUN, Selection, pick_game

_METRIC_NAMES = {
    "payoff_per_round": "payoff per round",
    "cooperation_rate": "cooperation rate",
    "retaliation_rate": "retaliation rate",
    "forgiveness_rate": "forgiveness rate",
    "exploitability_gap": "exploitability gap",
    "time_to_collapse": "time to collapse (round)",
    "cooperation_rate_played": "cooperation rate, as played",
    "retaliation_rate_played": "retaliation rate, as played",
    "forgiveness_rate_played": "forgiveness rate, as played",
}


def render(folder: Path) -> None:
    finished = st.session_state.pop("run_finished", None)
    if finished is not None:
        _announce(folder, *finished)
    with cached.reading(folder) as source:
        _render(folder, source)
    follow(folder, st.session_state.get(SELECTED_RUN))  # a run still playing: the page looks again on its own


def _render(folder: Path, source: cached.RunSource) -> None:
    selection = pick_game(folder, key="results", source=source)
    if selection is None:
        return
    sig = cached.signature(folder)
    run_id, game_id = selection.run.run_id, selection.game.game_id
    if selection.run.kind == FINGERPRINT_KIND:
        fingerprint_section.render(folder, selection.run, source)
    detail = cached.game_detail(folder, sig, run_id, game_id, _source=source)
    _agents(detail)
    _game_status(detail)
    _timeline(detail)
    _metric_cards(detail)
    curves = cached.game_curves(folder, sig, run_id, game_id, _source=source)
    if curves:
        left, right = st.columns(2)
        left.markdown(
            "**Actions over time** · each move as played (C = 1) and the cumulative cooperation rate "
            "of the player's choices"
        )
        events = round_events(detail.rounds, (detail.game["player_a"], detail.game["player_b"]))
        left.altair_chart(charts.actions_over_time(curves, events), width="stretch")
        right.markdown("**Cumulative payoffs**")
        right.altair_chart(charts.cumulative_payoffs(curves), width="stretch")
    if detail.has_calls:
        _calls(folder, selection, source)
    condition = selection.condition.condition
    _condition_summary(
        cached.summary(folder, sig, run_id, condition, _source=source),
        cached.profile(folder, sig, run_id, condition, _source=source),
        selection,
    )
    _memory_one(cached.memory_one(folder, sig, run_id, condition, _source=source), selection)
    _probes(cached.probes(folder, sig, run_id), selection)


def _announce(folder: Path, run_id: str, status: RunStatus, reason: str | None) -> None:
    """How the run just played ended: complete, complete with failed games, or stopped."""
    run = next((r for r in cached.listing(folder).runs if r.run_id == run_id), None)
    failed = run.games_planned - run.games_done if run is not None and status is RunStatus.COMPLETE else 0
    if status is not RunStatus.COMPLETE:
        st.warning(
            f"Run `{run_id}` ended **{status}**: {reason}. `pdbench resume {run_id} --results {folder}` finishes it.",
            icon="⏹️",
        )
    elif failed:
        st.warning(
            f"Run `{run_id}` ended, but **{failed} of {run.games_planned if run else '?'} games failed** "
            "(each failed game shows its error below; the rest of the run is complete).",
            icon="⚠️",
        )
    else:
        st.success(f"Run `{run_id}` is complete: here are its results.", icon="✅")


def _agents(detail: GameDetail) -> None:
    game = detail.game
    left, right = st.columns(2)
    for col, seat in ((left, "a"), (right, "b")):
        info = agent_info(game[f"player_{seat}"], game.get(f"params_{seat}"))
        col.markdown(components.agent_card(info, seat), unsafe_allow_html=True)


def _game_status(detail: GameDetail) -> None:
    game = detail.game
    horizon = (
        f"fixed horizon of {game['planned_rounds']} rounds"
        if HorizonKind(game["horizon"]) is HorizonKind.FIXED
        else f"geometric horizon (stop probability {game['stop_prob']:g}; "
        f"this game drew {game['planned_rounds']} rounds)"
    )
    noise = f", noise {game['noise']:g}" if game["noise"] else ""
    st.caption(
        f"Game {game['game_id']} · replicate {game['replicate']} · {horizon}{noise} · game seed {game['seed']} "
        "(derived from the run's seed)"
    )
    if game["status"] != GameStatus.COMPLETE:
        why = f": {game['error']}" if game.get("error") else ""
        st.warning(f"This game is **{game['status']}** after {game['rounds_played']} rounds{why}", icon="⚠️")


def _timeline(detail: GameDetail) -> None:
    st.markdown("#### 🎮 Game timeline")
    if not detail.rounds:
        st.info("No round of this game was recorded.")
        return
    game = detail.game
    rows = []
    for seat in ("a", "b"):
        moves = [r[f"action_{seat}"] for r in detail.rounds]
        info = agent_info(game[f"player_{seat}"])
        dots = components.timeline(moves).replace("\n", "<br>")
        label = f"<b>{seat.upper()} · {info.emoji} {html.escape(info.name)}</b>"
        dots_row = (  # a long game scrolls inside its box instead of pushing the page down
            f"<div class='pdb-timeline' style='font-size:1.05em;line-height:1.35;max-height:9.5em;"
            f"overflow-y:auto'>{dots}</div>"
        )
        rows.append(f"<div style='margin:0 0 .6em 0'>{label}{dots_row}</div>")
    st.markdown("".join(rows), unsafe_allow_html=True)
    notes = [components.LEGEND]
    events = round_events(detail.rounds, (game["player_a"], game["player_b"]))
    flips = [e for e in events if e["kind"] != FALLBACK]
    if flips:
        notes.append(
            f"🎲 {len(flips)} move{'s' if len(flips) > 1 else ''} flipped by noise (played moves shown): "
            f"{_where(flips)}"
        )
    flagged = [e for e in events if e["kind"] != NOISE_FLIP]
    if flagged:
        notes.append(
            f"⚠️ {len(flagged)} fallback move{'s' if len(flagged) > 1 else ''} (the model's answer was "
            f"unreadable): {_where(flagged)}"
        )
    if events:
        notes.append("each is marked on the actions chart below (hover a mark for what happened)")
    st.caption(" · ".join(notes))


def _where(events: list[dict[str, Any]]) -> str:
    """Which rounds, per player: "A in round 4, B in rounds 9 and 12"."""
    seats = [(seat, [e["round"] for e in events if e["seat"] == seat]) for seat in ("A", "B")]
    return ", ".join(f"{seat} in {rounds_text(rounds)}" for seat, rounds in seats if rounds)


def _metric_cards(detail: GameDetail) -> None:
    st.markdown("#### 📈 Metrics")
    a, b = detail.metrics.get("a"), detail.metrics.get("b")
    if a is None or b is None:
        st.info("No metrics: the game has no recorded round.")
        return
    cols = st.columns(4)
    cols[0].metric("Rounds", a["rounds"])
    for col, (seat, row) in zip(cols[1:3], (("A", a), ("B", b)), strict=True):
        played = components.pct(row["cooperation_rate_played"])
        col.metric(
            f"{seat} cooperation",
            components.pct(row["cooperation_rate"]),
            help=f"share of C among the player's choices ({row['rounds_chosen']} of {row['rounds']} rounds; "
            f"fallback moves left out). As played: {played}",
        )
    collapse = a["time_to_collapse"]
    cols[3].metric("Time to collapse", "never" if collapse is None else f"round {collapse}")
    cols = st.columns(4)
    cols[0].metric("A payoff", f"{a['payoff_total']:g}", help=f"{a['payoff_per_round']:.3f} per round")
    cols[1].metric("B payoff", f"{b['payoff_total']:g}", help=f"{b['payoff_per_round']:.3f} per round")
    cols[2].metric("A payoff / round", components.num(a["payoff_per_round"], 3))
    cols[3].metric("B payoff / round", components.num(b["payoff_per_round"], 3))
    cols = st.columns(4)
    for col, (seat, row) in zip(cols[0:2], (("A", a), ("B", b)), strict=True):
        col.metric(
            f"{seat} retaliation",
            components.pct(row["retaliation_rate"]),
            help="P(chose D at t | opponent played D at t-1), fallback rounds left out; — when the opponent "
            f"never defected. As played: {components.pct(row['retaliation_rate_played'])}",
        )
    for col, (seat, row) in zip(cols[2:4], (("A", a), ("B", b)), strict=True):
        col.metric(
            f"{seat} forgiveness",
            components.pct(row["forgiveness_rate"]),
            help="P(chose C at t | opponent played D at t-1), fallback rounds left out; — when the opponent "
            f"never defected. As played: {components.pct(row['forgiveness_rate_played'])}",
        )


def _calls(folder: Path, selection: Selection, source: cached.RunSource) -> None:
    """The prompts and raw answers of the model players, failed parses and retries included."""
    with st.expander("🤖 Prompts and answers of the model players", expanded=False):
        rows = cached.game_calls(
            folder, cached.signature(folder), selection.run.run_id, selection.game.game_id, _source=source
        )
        if not rows:
            st.info("No calls recorded for this game.")
            return
        rounds = sorted({r["round"] for r in rows})
        st.caption(f"{len(rows)} calls over {len(rounds)} rounds (every attempt is a row of `calls`).")
        chosen = st.select_slider("Round", rounds, key="results_calls_round") if len(rounds) > 1 else rounds[0]
        for row in (r for r in rows if r["round"] == chosen):
            _call(row)


def _call(row: dict[str, Any]) -> None:
    question = row.get("purpose") == "comprehension"
    ok = row["outcome"] == "ok" and (question or row["action"] is not None)
    badge = "✅" if ok else "❌"
    cached_note = " · from cache" if row["cached"] else ""
    tokens = ""
    if row["input_tokens"] is not None:
        tokens = f" · {row['input_tokens']} in / {row['output_tokens']} out tokens"
    order = f" · options shown {row['option_order']}" if row.get("option_order") else ""
    what = "comprehension question" if question else f"parsed move **{row['action'] or '—'}**"
    st.markdown(
        f"{badge} **player {row['player'].upper()}** · `{row['provider']}/{row['model']}` · attempt {row['attempt']} · "
        f"outcome `{row['outcome']}` · {what}{order}{tokens}{cached_note}"
    )
    if row["error"]:
        st.caption(f"error: {row['error']}")
    for message in row["messages"]:
        st.text(f"[{message['role']}]\n{message['content']}")
    st.text(f"[answer]\n{row['response_text'] if row['response_text'] is not None else '(no answer)'}")
    st.divider()


def _condition_summary(
    summaries: list[ConditionSummary], profile: dict[str, dict[str, float | None]], selection: Selection
) -> None:
    st.markdown(f"#### 🧮 Condition `{selection.condition.condition}` over its replicates")
    if not summaries:
        st.info("No complete game in this condition yet: the summary covers complete games only.")
        return
    summary = summaries[0]
    a, b = summary.seats
    table = pd.DataFrame(
        {
            "metric": [_METRIC_NAMES[m] for m in METRICS],
            f"A · {a.name}": [_fmt(a.estimates[m], m) for m in METRICS],
            f"B · {b.name}": [_fmt(b.estimates[m], m) for m in METRICS],
            "n (A, B)": [f"{a.estimates[m].n}, {b.estimates[m].n}" for m in METRICS],
        }
    )
    st.table(table.set_index("metric"))
    games = f"complete game{'s' if summary.games != 1 else ''}: {summary.games_label}"
    spread = (
        f"{REPEATED_NOTE} The figures are that game's"
        if summary.repeated
        else "mean ± half-width of the 95% Student-t interval over replicates (bounds clipped to [0, 100%] for rates)"
    )
    st.caption(
        f"{games}; {spread}; — where undefined. "
        "Rates on the players' choices (before noise, fallback moves left out) unless marked as played. "
        f"{FORGIVENESS_NOTE} Collapsed games: A {a.collapsed}, B {b.collapsed}."
    )
    _profile(profile, summary)
    with st.expander("SQL behind these numbers"):
        st.code(
            "select * from player_metrics\n"
            f"where run_id = {_literal(selection.run.run_id)} and condition = {_literal(selection.condition.condition)}"
            "\n  and status = 'complete'",
            language="sql",
        )


def _profile(profile: dict[str, dict[str, float | None]], summary: ConditionSummary) -> None:
    """The behaviour profile of both seats in the condition, as the scorecard of a suite shows it: — where a
    dimension had no chance to apply (no opponent defection to forgive, say), which a 0 would misstate."""
    if not profile:
        return
    names = {seat.player: seat.name for seat in summary.seats}
    st.markdown("**Behaviour profile** · Fontana, Pierri & Aiello (2025)")
    st.table(
        pd.DataFrame(
            {
                "dimension": list(PROFILE_DIMENSIONS),
                **{
                    f"{seat.upper()} · {names[seat]}": [components.num(dims[d], 3) for d in PROFILE_DIMENSIONS]
                    for seat, dims in profile.items()
                },
            }
        ).set_index("dimension")
    )
    st.caption(
        "Each dimension's mean over the condition's complete games that gave it a chance to apply; — where no game "
        'did (an opponent that never defected leaves nothing to forgive or retaliate against). "forgiving" is the '
        "profile's own measure, not the forgiveness rate above."
    )


def _memory_one(profiles: list[MemoryOneProfile], selection: Selection) -> None:
    """Each player's memory-one profile in the condition (P(C) in round 1 and after each outcome, with its 95%
    interval over games) and the zero-determinant test's verdict, as ``pdbench report`` prints them."""
    if not profiles:
        return
    st.markdown("**Memory-one profile** · P(C) after each outcome of the previous round (own move first)")
    rows = [o.label for o in Outcome] + ["ZD test"]
    st.table(
        pd.DataFrame(
            {
                "": rows,
                **{p.label: [p.rates[o].fmt(1, pct=True) for o in Outcome] + [p.zd().summary()] for p in profiles},
            }
        ).set_index("")
    )
    st.caption(
        f"{NOTE} ZD test: whether a zero-determinant strategy (Press & Dyson 2012) fits within the intervals: "
        "extortionate, generous, fair (chi = 1, as Tit for Tat), equalizer, or not ZD."
    )
    with st.expander("SQL behind the memory-one profile"):
        st.code(
            f"select * from memory_one where run_id = {_literal(selection.run.run_id)}",
            language="sql",
        )


def _probes(shares: list[ProbeShare], selection: Selection) -> None:
    """The run's counterfactual probes (``pdbench probe``), as the command prints them: per model and kind of flip
    of the opponent's last move, the share of probes that changed the model's move, with its 95% interval."""
    if not shares:
        return
    st.markdown("**Counterfactual probes** · the opponent's move at t-1 flipped: did the model's move at t change?")
    st.table(
        pd.DataFrame(
            {
                "model": [s.player_name for s in shares],
                "flip": [f"{s.flip.value} ({s.flip.effect})" for s in shares],
                "probes": [s.probes for s in shares],
                "changed": [s.changed for s in shares],
                "share [95% CI]": [s.share.fmt(1, pct=True) for s in shares],
                "games": [s.share.n for s in shares],
            }
        ).set_index("model")
    )
    st.caption(PROBE_NOTE)
    with st.expander("SQL behind the probes"):
        st.code(
            f"select * from counterfactual_probes where source_run = {_literal(selection.run.run_id)}", language="sql"
        )


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _fmt(estimate: Estimate, metric: str) -> str:
    if metric in RATES:
        return estimate.fmt(1, pct=True)
    return estimate.fmt(1) if metric == "time_to_collapse" else estimate.fmt(3)

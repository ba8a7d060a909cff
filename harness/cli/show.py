"""What a command prints under a run once it has played: the per-condition report of an experiment, the
scorecard of an eval, the leaderboard and matchups of a tournament. Each returns the exit code for a
complete run (see :func:`harness.cli.play.finish`)."""

from __future__ import annotations

import json
from collections.abc import Callable

from harness.analysis.comprehension import comprehension_accuracy
from harness.analysis.memory_one import memory_one_profiles
from harness.analysis.profile_summary import behaviour_profile_by_condition
from harness.analysis.report import condition_summaries, model_answers
from harness.analysis.sfem import sfem_by_condition
from harness.cli.base import out
from harness.cli.memory_one_view import MemoryOneTable
from harness.cli.prompt_cache import prompt_cache_lines
from harness.cli.render import SfemTable, leaderboard_table, matchup_table, profile_table
from harness.cli.report_view import Comprehension, ModelAnswers, RunReport
from harness.cli.scorecard import Scorecard, scorecard_summary
from harness.config.presets.suites import SUITES
from harness.engine.runner import RunResult
from harness.states import RunStatus
from harness.store.browse import leaderboard, matchups
from harness.store.catalog import Catalog
from harness.store.run_summary import call_totals, prompt_cache_totals, seat_a_overall
from harness.util.plural import plural

Show = Callable[[Catalog, RunResult], int]


def print_report(cat: Catalog, run_id: str) -> None:
    """The per-condition table of a run and, if it has model players, how well their answers read."""
    out.print(RunReport(cat.require_run(run_id), condition_summaries(cat, run_id)))
    profiles = memory_one_profiles(cat, run_id)
    if profiles:
        out.print(MemoryOneTable(profiles, f"Memory-one profile per player, run {run_id}"))
    answers = model_answers(cat, run_id)
    if answers:
        out.print(ModelAnswers(answers))
    accuracy = comprehension_accuracy(cat, run_id)
    if accuracy:
        out.print(Comprehension(accuracy))
    print_prompt_cache(cat, run_id)


def print_prompt_cache(cat: Catalog, run_id: str) -> None:
    """A line per model whose calls reported the provider's prompt cache (nothing for any other run)."""
    for line in prompt_cache_lines(prompt_cache_totals(cat, run_id)):
        out.print(line)


def print_sfem(cat: Catalog, run_id: str) -> None:
    """SFEM per condition and seat, then per player over all its games (``pdbench report --sfem``)."""
    cat.require_run(run_id)
    out.print(SfemTable(sfem_by_condition(cat, run_id), f"Strategy frequency estimation, run {run_id}, per condition"))
    out.print(SfemTable(sfem_by_condition(cat, run_id, pooled=True), "Per player, over all its games"))


def show_report(cat: Catalog, result: RunResult) -> int:
    print_report(cat, result.run_id)
    return 0


def show_leaderboard(cat: Catalog, result: RunResult) -> int:
    """The leaderboard (Axelrod's ranking) and the matchup grid; a partial run says it is partial."""
    run_id = result.run_id
    board = leaderboard(cat, run_id)
    cells = {(r["player"], r["opponent"]): r["mean_payoff_per_round"] for r in matchups(cat, run_id)}
    # Players who have only self-play games so far are not on the leaderboard, but their matchups are shown.
    ranked = [r["player"] for r in board]
    order = ranked + sorted({p for p, _ in cells} - set(ranked))
    planned = plural(result.games_planned, "game", grouped=False)
    done = f"{result.games_done} of {planned}"
    partial = "" if result.status == RunStatus.COMPLETE else f" ({result.status}: partial, {done})"
    if board:
        out.print(leaderboard_table(board, title=f"Tournament {run_id}{partial}"))
    else:
        out.print(
            f"Tournament {run_id}{partial}: no leaderboard, since no complete game between two different players "
            f"(self-play is played and shown in the matchups, but left out of the ranking)."
        )
    out.print(matchup_table(order, cells))
    return 0


def show_scorecard(cat: Catalog, result: RunResult) -> int:
    """The model's scorecard; exit code 1 when no game completed (the reasons were printed already)."""
    run_id = result.run_id
    run_row = cat.require_run(run_id)
    summaries = condition_summaries(cat, run_id)
    totals = call_totals(cat, run_id)
    overall = seat_a_overall(cat, run_id)
    answers = model_answers(cat, run_id)
    out.print(Scorecard(run_row, summaries))
    out.print(scorecard_summary(overall, totals, answers))
    print_prompt_cache(cat, run_id)
    _checks_and_profile(cat, run_row)
    model = {s.seats[0].name for s in summaries}
    profiles = memory_one_profiles(cat, run_id, labels=_model_labels(cat, run_id))
    if profiles:
        out.print(MemoryOneTable(profiles, "Memory-one profile of the model, over all its games"))
    fits = sfem_by_condition(cat, run_id, pooled=True, players=model)
    if fits:
        out.print(SfemTable(fits, "Strategy frequency estimation of the model, over all its games"))
    out.print(f"run id: [bold]{run_id}[/bold]   results: {result.path}")
    return 0 if overall["games"] else 1


def _model_labels(cat: Catalog, run_id: str) -> list[str]:
    """The labels of the run's model seats (``player_parsing`` has a row for model seats only)."""
    return [
        str(r[0]) for r in cat.query("SELECT DISTINCT player_label FROM player_parsing WHERE run_id = ?", [run_id])[1]
    ]


def _checks_and_profile(cat: Catalog, run_row: dict[str, object]) -> None:
    """The scorecard's sections beyond the per-opponent table: comprehension-check accuracy when the run asked
    questions, and the extra sections a suite asks for (the behaviour profile of fontana2025)."""
    rid = str(run_row["run_id"])
    accuracy = comprehension_accuracy(cat, rid)
    if accuracy:
        out.print(Comprehension(accuracy))
    suite = json.loads(str(run_row["config_json"])).get("suite")
    if suite in SUITES and "behaviour_profile" in SUITES[suite].scorecard:
        columns, rows = behaviour_profile_by_condition(cat, rid)
        out.print(profile_table(columns, rows, f"Behaviour profile of the model, mean per opponent ({suite})"))


def show_for(kind: str) -> Show:
    """What to print under a run of this kind (``runs.kind``)."""
    from harness.cli.fingerprint_view import show_fingerprint

    shows: dict[str, Show] = {"eval": show_scorecard, "tournament": show_leaderboard, "fingerprint": show_fingerprint}
    return shows.get(kind, show_report)

"""The measured payoff table of a stored run, game by game (:class:`MeasuredTable`).

What counts as a run with a payoff table: a run whose complete games meet every pair of its players, self-play
included (the diagonal: the fixation of i among j needs a_ii and a_jj), as a tournament's round robin does. An
eval (one model against strategies that never meet one another) or a tournament without self-play has cells no game
fills, and is refused with the pairs it lacks. An evolution run is analysed on the games behind its table: those of
its payoff run (a population with a model: the tournament it played first); a population of classic strategies
whose every pair is deterministic (source ``played_once``) has an exact table, one game a pair, taken as it is; a
table the dynamics estimated or played as they went keeps no games, so it cannot be resampled and is refused.

Players are named by their label (``player_label``: a model at two temperatures is two players). Payoffs are per
round (each game's total over its rounds), the scale of the evolution's fitness.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from harness.analysis.evolutionary.table import MeasuredTable
from harness.errors import ConfigError, StoreError
from harness.store.catalog import Catalog

_GAMES = """
    SELECT game_id, player, player_label, payoff_total / rounds AS rate
    FROM player_games
    WHERE run_id = ? AND status = 'complete' AND rounds > 0
    ORDER BY game_id, player"""


def measured_table(results_dir: Path, run_id: str) -> MeasuredTable:
    """The payoff table of run ``run_id`` (see the module): a ConfigError that says what is missing and what to
    run instead, before any figure is computed."""
    with Catalog(results_dir, [run_id]) as cat:
        if not cat.attached:
            reason = cat.skipped[0][1] if cat.skipped else "unknown reason"
            raise StoreError(f"cannot read run {run_id!r}: {reason}.")
        kind = str(cat.require_run(run_id)["kind"])
        if kind != "evolution":
            return _from_games(cat, run_id, None, f"run {run_id} ({kind})")
    return _from_evolution(results_dir, run_id)


def _from_evolution(results_dir: Path, run_id: str) -> MeasuredTable:
    from harness.evolution import PayoffSource
    from harness.store.evolution_writer import read_evolution

    run, trajectory = read_evolution(results_dir, run_id)
    players = tuple(run.settings.players)
    if run.payoff_run:
        with Catalog(results_dir, [run.payoff_run]) as cat:
            if not cat.attached:
                raise StoreError(
                    f"evolution run {run_id!r} took its payoffs from run {run.payoff_run!r}, which is not readable in "
                    f"{results_dir}; analyse a run whose games are there"
                )
            return _from_games(
                cat, run.payoff_run, players, f"the games of run {run.payoff_run}, the payoffs of evolution {run_id}"
            )
    table = trajectory.payoffs
    if table.source != PayoffSource.played_once or not np.isfinite(table.values).all():
        raise ConfigError(
            f"evolution run {run_id!r} keeps only the mean of each cell of its payoff table (source "
            f"{table.source.value}: its games were not stored), so the table cannot be resampled game by game; play "
            f"the population as a tournament and analyse that: `pdbench tournament --players {','.join(players)} "
            "--replicates 20` then `pdbench analyze latest`"
        )
    rates = table.values / run.settings.game_horizon.expected_length()  # a fixed horizon: exact
    games = {
        (i, j): np.array([[rates[i, j], rates[j, i]]]) for i in range(len(players)) for j in range(i, len(players))
    }
    return MeasuredTable(players, games, f"evolution {run_id}: exact table of deterministic pairs, one game each")


def _from_games(cat: Catalog, run_id: str, wanted: tuple[str, ...] | None, origin: str) -> MeasuredTable:
    rows = cat.query(_GAMES, [run_id])[1]
    seats: dict[int, list[tuple[str, float]]] = {}
    for game_id, _seat, label, rate in rows:
        seats.setdefault(int(game_id), []).append((str(label), float(rate)))
    players = wanted or tuple(sorted({label for game in seats.values() for label, _ in game}))
    index = {p: i for i, p in enumerate(players)}
    found: dict[tuple[int, int], list[tuple[float, float]]] = {}
    for game in seats.values():
        if len(game) != 2 or game[0][0] not in index or game[1][0] not in index:
            continue
        (x, vx), (y, vy) = game
        i, j = index[x], index[y]
        found.setdefault((min(i, j), max(i, j)), []).append((vx, vy) if i <= j else (vy, vx))
    k = len(players)
    missing = [f"{players[i]} against {players[j]}" for i in range(k) for j in range(i, k) if (i, j) not in found]
    if k < 2 or missing:
        what = f"has no complete game of {', '.join(missing[:4])}" + (
            f" (and {len(missing) - 4} more pairs)" if len(missing) > 4 else ""
        )
        raise ConfigError(
            f"{origin} has no payoff table: an evolutionary analysis needs every pair of players to have met, "
            f"self-play included, and it {what if missing else 'has fewer than two players'}. An eval (a model against "
            "strategies that never meet each other) or a tournament without self-play is not one; play a round robin "
            f"with self-play, e.g. `pdbench tournament --players {','.join(players) or 'TFT,ALLD,mock/tft'} "
            "--replicates 20`, and analyse that run"
        )
    games = {pair: np.array(values, dtype=np.float64) for pair, values in found.items()}
    return MeasuredTable(players, games, f"{origin}: {sum(len(v) for v in games.values())} complete games")

"""Reads for browsing a results folder: its runs, a run's conditions and games, a game's rounds, calls and
curves, and a tournament's leaderboard and matchups. The dashboard shows them (:mod:`harness.ui.data`,
:mod:`harness.ui.cached`) and the CLI prints the leaderboard; the SQL lives here, once.

Each read takes a catalog of only the runs it needs (attaching one file takes milliseconds), so a
folder of hundreds of runs costs nothing until a run is selected.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from harness.game.rules import PayoffMatrix
from harness.states import GameStatus, RunStatus
from harness.store.catalog import Catalog
from harness.store.views.probes import PROBE_KIND

# Runs that play no games of their own (evolution: generations; probe: calls of recorded games).
GAMELESS_KINDS = ("evolution", PROBE_KIND)


@dataclass(frozen=True, slots=True)
class RunRow:
    """One run, as the run pickers list it."""

    run_id: str
    kind: str
    status: RunStatus
    created_at: datetime
    games_planned: int
    games_done: int
    players: list[str]

    @property
    def label(self) -> str:
        players = ", ".join(self.players[:4]) + (f" +{len(self.players) - 4}" if len(self.players) > 4 else "")
        when = self.created_at.strftime("%Y-%m-%d %H:%M")
        return f"{self.run_id} · {self.status} · {when} · {self.kind} · {players}"


@dataclass(frozen=True, slots=True)
class Folder:
    """The runs of a results folder, and the files that could not be read, with why.

    ``being_written`` names the run files a writer holds open: those in ``live`` were read from the live
    copy their writer published (with its time), the others are among ``unreadable`` (no copy came)."""

    runs: list[RunRow]
    unreadable: list[tuple[str, str]]  # (file name, reason)
    being_written: frozenset[str] = frozenset()
    live: dict[str, datetime] = field(default_factory=dict)  # file name -> time of the live copy read


def folder_signature(results_dir: Path) -> tuple[tuple[str, int, int], ...]:
    """Names, sizes and modification times of the run files: a cache key that changes with them."""
    if not results_dir.is_dir():
        return ()
    out = []
    for path in sorted(results_dir.glob("*.duckdb")):
        try:
            st = path.stat()
        except OSError:
            continue
        out.append((path.name, st.st_size, st.st_mtime_ns))
    # A run being written grows its WAL first, and readers see it through its live copies: a file per copy, whose
    # own WAL grows as the writer brings it up to date.
    live = [*results_dir.glob("*.duckdb.live/*.duckdb"), *results_dir.glob("*.duckdb.live/*.duckdb.wal")]
    for path in sorted([*results_dir.glob("*.duckdb.wal"), *live]):
        try:
            st = path.stat()
        except OSError:
            continue
        out.append((path.relative_to(results_dir).as_posix(), st.st_size, st.st_mtime_ns))
    return tuple(out)


def list_runs(results_dir: Path, kind: str | None = None) -> Folder:
    """Every readable run, newest first. A run being written is read from its live copy; one that offers
    none is listed as unreadable (and, like it, in ``being_written``). A ``running`` run no process holds is
    listed as ``crashed`` (:meth:`Catalog.shown_status`)."""
    with Catalog(results_dir) as cat:
        where, params = ("WHERE r.kind = ?", [kind]) if kind else ("", [])
        rows = cat.consistent(
            lambda c: c.records(
                f"""
            SELECT r.run_id, r.kind, r.status, r.created_at, r.games_planned,
                   (SELECT count(*) FROM games g WHERE g.run_id = r.run_id AND g.status = ?) AS games_done,
                   (SELECT list(DISTINCT p ORDER BY p) FROM (
                        SELECT player_a AS p FROM games g WHERE g.run_id = r.run_id
                        UNION SELECT player_b FROM games g WHERE g.run_id = r.run_id)) AS players
            FROM runs r {where}
            ORDER BY r.created_at DESC, r.run_id
            """,
                [GameStatus.COMPLETE.value, *params],
            )
        )
        statuses = {r["run_id"]: cat.shown_status(r["run_id"], r["status"]) for r in rows}
        unreadable = [(path.name, reason) for path, reason in cat.skipped]
        being_written = frozenset(path.name for path in cat.busy)
        live = {path.name: at for path, at in cat.live.items()}
    runs = [
        RunRow(
            r["run_id"],
            r["kind"],
            statuses[r["run_id"]],
            r["created_at"],
            r["games_planned"],
            r["games_done"],
            list(r["players"] or []),
        )
        for r in rows
    ]
    return Folder(runs, unreadable, being_written, live)


@contextmanager
def run_catalog(results_dir: Path, run_id: str) -> Iterator[Catalog]:
    """A catalog of one run (fast: one file attached)."""
    cat = Catalog(results_dir, [run_id])
    try:
        yield cat
    finally:
        cat.close()


@dataclass(frozen=True, slots=True)
class ConditionRow:
    condition: str
    player_a: str
    player_b: str
    games: int


def conditions(cat: Catalog, run_id: str) -> list[ConditionRow]:
    """The run's conditions in plan order, with their players and number of recorded games."""
    rows = cat.query(
        "SELECT condition, any_value(player_a), any_value(player_b), count(*) FROM games "
        "WHERE run_id = ? GROUP BY condition ORDER BY min(game_id)",
        [run_id],
    )[1]
    return [ConditionRow(*r) for r in rows]


@dataclass(frozen=True, slots=True)
class GameRow:
    game_id: int
    replicate: int
    status: GameStatus
    rounds_played: int
    score_a: float
    score_b: float
    error: str | None

    @property
    def label(self) -> str:
        extra = "" if self.status is GameStatus.COMPLETE else f" · {self.status}"
        return f"replicate {self.replicate} · {self.rounds_played} rounds · {self.score_a:g}–{self.score_b:g}{extra}"


def games(cat: Catalog, run_id: str, condition: str) -> list[GameRow]:
    """The condition's games, one per replicate, in replicate order. A game still playing has its rounds recorded
    so far counted (``games.rounds_played`` is written when a game ends)."""
    rows = cat.query(
        "SELECT g.game_id, g.replicate, g.status, greatest(g.rounds_played, coalesce(r.n, 0)), g.score_a, "
        "g.score_b, g.error FROM games g "
        "LEFT JOIN (SELECT game_id, count(*) AS n FROM rounds WHERE run_id = ? GROUP BY game_id) r "
        "ON r.game_id = g.game_id WHERE g.run_id = ? AND g.condition = ? ORDER BY g.replicate",
        [run_id, run_id, condition],
    )[1]
    return [GameRow(game_id, replicate, GameStatus(status), *rest) for game_id, replicate, status, *rest in rows]


@dataclass(frozen=True, slots=True)
class GameDetail:
    """One game: its rounds (played moves, payoffs, flags) and both players' metrics."""

    game: dict[str, Any]
    rounds: list[dict[str, Any]]
    metrics: dict[str, dict[str, Any]]  # 'a' / 'b' -> player_metrics row
    has_calls: bool


def game_detail(cat: Catalog, run_id: str, game_id: int) -> GameDetail:
    """The game, its rounds in order and both players' ``player_metrics`` rows."""
    game = cat.records("SELECT * FROM games WHERE run_id = ? AND game_id = ?", [run_id, game_id])
    rounds = cat.records(
        "SELECT round, action_a::VARCHAR AS action_a, action_b::VARCHAR AS action_b, "
        "intended_a::VARCHAR AS intended_a, intended_b::VARCHAR AS intended_b, payoff_a, payoff_b, "
        "flagged_a, flagged_b FROM rounds WHERE run_id = ? AND game_id = ? ORDER BY round",
        [run_id, game_id],
    )
    metrics = cat.records("SELECT * FROM player_metrics WHERE run_id = ? AND game_id = ?", [run_id, game_id])
    has_calls = bool(
        cat.query("SELECT count(*) FROM calls WHERE run_id = ? AND game_id = ?", [run_id, game_id])[1][0][0]
    )
    if not game:
        raise LookupError(f"run {run_id} has no game {game_id}")
    # A game still playing has its rounds so far (``games.rounds_played`` is written when the game ends).
    shown = {**game[0], "rounds_played": max(game[0]["rounds_played"] or 0, len(rounds))}
    return GameDetail(shown, rounds, {m["player"]: m for m in metrics}, has_calls)


def game_calls(cat: Catalog, run_id: str, game_id: int) -> list[dict[str, Any]]:
    """Every request of a game's model players (failed parses, retries and comprehension questions included), in
    order: a round's questions before its move."""
    rows = cat.records(
        "SELECT round, player, attempt, provider, model, request_json, response_text, action::VARCHAR AS action, "
        "outcome, error, duration_ms, input_tokens, output_tokens, cost_usd, cached, purpose, option_order FROM calls "
        "WHERE run_id = ? AND game_id = ? ORDER BY round, player, created_at, purpose DESC, attempt",
        [run_id, game_id],
    )
    for row in rows:
        row["messages"] = _messages(row.pop("request_json"))
    return rows


def _messages(request_json: str | None) -> list[dict[str, str]]:
    try:
        messages = json.loads(request_json or "{}").get("messages", [])
    except (TypeError, ValueError, AttributeError):
        return []
    return [
        {"role": str(m.get("role", "")), "content": str(m.get("content", ""))} for m in messages if isinstance(m, dict)
    ]


def game_curves(cat: Catalog, run_id: str, game_id: int) -> list[dict[str, Any]]:
    """Long-form rows for the charts, per round and player: the move as played, the cumulative
    cooperation rate of the player's choices and of its played moves (the ``cooperation_over_time``
    view) and the cumulative payoff."""
    return cat.records(
        """
        SELECT round, player, c.player_name, c.action::VARCHAR AS action,
               (c.action = 'C')::INTEGER AS cooperated, c.cooperation_rate AS cumulative_cooperation,
               c.cooperation_rate_played AS cumulative_cooperation_played,
               pr.payoff, SUM(pr.payoff) OVER (PARTITION BY player ORDER BY round) AS cumulative_payoff
        FROM cooperation_over_time c JOIN player_rounds pr USING (run_id, game_id, player, round)
        WHERE run_id = ? AND game_id = ?
        ORDER BY round, player
        """,
        [run_id, game_id],
    )


def leaderboard(cat: Catalog, run_id: str) -> list[dict[str, Any]]:
    """The ``tournament`` view of one run, best first."""
    return cat.records("SELECT * FROM tournament WHERE run_id = ? ORDER BY rank, player", [run_id])


def matchups(cat: Catalog, run_id: str) -> list[dict[str, Any]]:
    """The ``matchups`` view of one run: each player's mean payoff per round against each opponent."""
    return cat.records("SELECT * FROM matchups WHERE run_id = ? ORDER BY player, opponent", [run_id])


@dataclass(frozen=True, slots=True)
class PlannedPlayer:
    """A player as its run's stored config plans it, before any game is played: the label the games will
    carry (``games.player_a``/``player_b``), and for a model player its model and persona."""

    label: str
    model: str | None
    persona: str | None


def planned_players(cat: Catalog, run_ids: list[str] | None = None) -> dict[str, list[PlannedPlayer]]:
    """Each run's players from its stored config (``runs.config_json``), in plan order: known from the run's
    start, so a run that has finished no game yet is described too, and a player whose games never finished
    is still named. The label is the one a config gives a player (its ``name``, else its model or strategy);
    the persona is the prompts' (where the config puts an agent's persona)."""
    where, params = ("WHERE run_id IN (SELECT unnest(?::VARCHAR[])) ", [run_ids]) if run_ids is not None else ("", [])
    rows = cat.query(
        f"""
        WITH c AS (
            SELECT run_id, json_extract(config_json, '$.experiment.conditions[*].agent_a') AS a,
                   json_extract(config_json, '$.experiment.conditions[*].agent_b') AS b
            FROM runs {where}
        ), agents AS (
            SELECT run_id, unnest(a) AS agent, 2 * generate_subscripts(a, 1) AS pos FROM c
            UNION ALL
            SELECT run_id, unnest(b) AS agent, 2 * generate_subscripts(b, 1) + 1 AS pos FROM c
        ), players AS (  -- an evolution run names its players in its settings (models as provider/model)
            SELECT run_id, unnest(json_extract_string(config_json, '$.players[*]')) AS label,
                   generate_subscripts(json_extract_string(config_json, '$.players[*]'), 1) AS pos
            FROM runs {where}{"AND" if where else "WHERE"} kind = 'evolution'
        )
        SELECT run_id, coalesce(agent->>'name', agent->>'model', agent->>'policy') AS label, agent->>'model',
               coalesce(agent->>'$.prompts.persona', agent->>'persona'), min(pos) AS first
        FROM agents GROUP BY ALL
        UNION ALL
        SELECT run_id, label, CASE WHEN contains(label, '/') THEN label END, NULL, pos FROM players
        ORDER BY run_id, first, label
        """,
        params * 2,
    )[1]
    out: dict[str, list[PlannedPlayer]] = {}
    for run_id, label, model, persona, _ in rows:
        out.setdefault(run_id, []).append(PlannedPlayer(label, model, persona))
    return out


def payoff_matrices(cat: Catalog, run_id: str) -> list[PayoffMatrix]:
    """The payoff matrices run ``run_id`` played, from its stored config (``runs.config_json``): the run's (unless
    every condition sets its own), then each other one a condition sets, in plan order; empty for a run whose
    config names none (an evolution run keeps its table elsewhere). Read from the run, so a view never shows
    the default game for a run that played another."""
    rows = cat.query(
        """SELECT json_extract(config_json, '$.game.payoff_matrix'),
                  json_extract(config_json, '$.experiment.conditions[*].game.payoff_matrix'),
                  json_array_length(config_json, '$.experiment.conditions')
           FROM runs WHERE run_id = ?""",
        [run_id],
    )[1]
    if not rows or rows[0][0] is None:
        return []
    run, overrides, conditions = rows[0]
    overrides = list(overrides or [])
    cells = overrides if conditions and len(overrides) == conditions else [run, *overrides]
    out: list[PayoffMatrix] = []
    for cell in cells:
        matrix = PayoffMatrix.from_mapping(json.loads(cell))
        if matrix not in out:
            out.append(matrix)
    return out


@dataclass(frozen=True, slots=True)
class RunEntry:
    """One run as ``pdbench runs`` lists it. A run another process is writing, whose file cannot be read yet,
    has its id (its file's name) and status ``running``, and None for what only its file could tell."""

    run_id: str
    status: str
    kind: str | None = None
    created_at: datetime | None = None
    games_done: int | None = None
    games_planned: int | None = None
    cost_usd: float | None = None  # None: the run made no model call
    models: tuple[str, ...] = ()
    opponents: tuple[str, ...] = ()
    note: str | None = None
    rounds: int | None = None  # rounds recorded so far, those of games still playing included


@dataclass(frozen=True, slots=True)
class RunEntries:
    """The newest runs of a folder (``runs``, at most the limit asked), how many there are in all (``total``,
    those being written included), and the files that could not be read, with why."""

    runs: list[RunEntry]
    total: int
    unreadable: list[tuple[str, str]]
    unknown_kind: int = 0  # runs being written left out by a kind filter: their kind cannot be read yet


def run_entries(results_dir: Path, kind: str | None = None, limit: int | None = None) -> RunEntries:
    """The runs of ``results_dir`` (of one ``kind``), newest first, at most ``limit``: id, kind, status, when it
    was made, complete games of those planned, what its model calls cost (superseded calls of resumed games
    included: they were paid) and its players from its stored config (:func:`planned_players`), the models
    apart from the other players (an eval's model and its opponents). A run being written is read from its
    live copy; runs being written that offer none (so cannot be read yet) come first: they are running now.
    A ``running`` run whose file no process holds is ``crashed``, with what it cost so far and how to resume it.
    A file found damaged on the way is left out, and listed among the unreadable ones."""
    with Catalog(results_dir) as cat:
        total, rows, players = cat.consistent(lambda c: _entries(c, kind, limit))
        busy = sorted(cat.busy - set(cat.live), key=_modified, reverse=True)
        unreadable = [(path.name, reason) for path, reason in cat.skipped if path not in cat.busy]
        statuses = {r["run_id"]: cat.shown_status(r["run_id"], r["status"]) for r in rows}
    writing = (
        []
        if kind
        else [
            RunEntry(
                path.name.removesuffix(".duckdb"), RunStatus.RUNNING.value, note="being written by another process"
            )
            for path in busy
        ]
    )
    runs = [*writing]
    for r in rows[: None if limit is None else max(limit - len(writing), 0)]:
        planned = players.get(r["run_id"], [])
        models = tuple(p.label for p in planned if p.model is not None)
        others = tuple(p.label for p in planned if p.model is None)
        played = r["kind"] not in GAMELESS_KINDS
        status = statuses[r["run_id"]]
        note = None
        if status is RunStatus.CRASHED:
            then = f"`pdbench resume {r['run_id']}` continues it" if played else "run it again"
            note = f"its process ended without finishing it; {then}"
        runs.append(
            RunEntry(
                r["run_id"],
                status.value,
                r["kind"],
                r["created_at"],
                int(r["games_done"]) if played else None,
                int(r["games_planned"]) if played else None,
                r["cost"],
                models,
                others,
                note,
                int(r["rounds"]) if played else None,
            )
        )
    unknown = len(busy) if kind else 0
    return RunEntries(runs, total + len(writing), unreadable, unknown)


def _entries(
    cat: Catalog, kind: str | None, limit: int | None
) -> tuple[int, list[dict[str, Any]], dict[str, list[PlannedPlayer]]]:
    """How many runs (of ``kind``) the readable files hold, the newest ``limit`` of them with their complete games,
    rounds and cost, and their players. ``games.rounds_played`` is written when a game ends: a game still playing
    (in a run still running) is counted by its recorded rounds, as :func:`games` counts it."""
    where, params = ("WHERE kind = ?", [kind]) if kind else ("", [])
    total = int(cat.query(f"SELECT count(*) FROM runs {where}", params)[1][0][0])
    rows = cat.records(
        f"""
        WITH listed AS (
            SELECT run_id, kind, status, created_at, games_planned FROM runs {where}
            ORDER BY created_at DESC, run_id LIMIT ?
        ), done AS (
            SELECT run_id, count(*) AS games_done FROM games
            WHERE status = ? AND run_id IN (SELECT run_id FROM listed) GROUP BY run_id
        ), spent AS (
            SELECT run_id, sum(cost_usd) AS cost FROM (
                SELECT run_id, cost_usd FROM calls UNION ALL SELECT run_id, cost_usd FROM superseded_calls)
            WHERE run_id IN (SELECT run_id FROM listed) GROUP BY run_id
        ), playing AS (
            SELECT r.run_id, r.game_id, count(*) AS n FROM rounds r JOIN games g USING (run_id, game_id)
            WHERE r.run_id IN (SELECT run_id FROM listed WHERE status = ?) AND g.status = ?
            GROUP BY ALL
        ), played AS (
            SELECT g.run_id, sum(greatest(g.rounds_played, coalesce(p.n, 0))) AS rounds
            FROM games g LEFT JOIN playing p USING (run_id, game_id)
            WHERE g.run_id IN (SELECT run_id FROM listed) GROUP BY g.run_id
        )
        SELECT l.*, coalesce(d.games_done, 0) AS games_done, s.cost, coalesce(p.rounds, 0) AS rounds
        FROM listed l LEFT JOIN done d USING (run_id) LEFT JOIN spent s USING (run_id) LEFT JOIN played p USING (run_id)
        ORDER BY l.created_at DESC, l.run_id
        """,
        [
            *params,
            total if limit is None else limit,
            GameStatus.COMPLETE.value,
            RunStatus.RUNNING.value,
            GameStatus.RUNNING.value,
        ],
    )
    return total, rows, planned_players(cat, [r["run_id"] for r in rows])


def _modified(path: Path) -> float:
    """When a file was last written (0 if it is gone): runs being written, the latest first."""
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0

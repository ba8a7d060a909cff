"""How well each model's answers could be read: parse failures and fallback moves, as SQL views.

A parse-failure rate is a property of the model (and the prompt), not of one game, and a researcher
must see it beside the behaviour it qualifies: a model that is often unreadable plays many moves
it did not choose. Definitions are in :mod:`harness.store.views.core`. Only calls for moves count
(``calls.purpose = 'move'``), over every game of the run, complete or not (a game stopped by
``on_failure: fail`` is where unreadable answers show most). Cache hits count: the answer was
used for the move as if it had been sent. Calls that ``pdbench resume`` superseded do not.

``move_readers`` says, for every round of a model seat, what decided its move (see
:class:`harness.calls.record.Reader`), read from the round's calls: ``fallback`` for a flagged round, else
``judge`` when a judge call gave the move, ``re-ask`` when the move came from the answer to a re-ask (an
earlier move call of the round was unreadable or refused), else what read the deciding call (``parser``,
``last_line`` or ``structured``). ``player_parsing`` and ``model_parsing`` count the rounds of each reader.
"""

from __future__ import annotations

READERS = ("parser", "last_line", "structured", "judge", "re-ask", "fallback")
"""Every value of ``move_readers.reader``, in the order reports show them."""


def reader_column(reader: str) -> str:
    """The name of the count of rounds a reader decided (``re-ask`` -> ``reask_rounds``)."""
    return f"{reader.replace('-', '')}_rounds"


_COUNTED = [r for r in READERS if r != "fallback"]  # fallback rounds are counted from the rounds' flags
_COUNTS = ", ".join(f"COUNT(*) FILTER (WHERE reader = '{r}') AS {reader_column(r)}" for r in _COUNTED)
_COLUMNS = ", ".join(f"COALESCE(r.{reader_column(r)}, 0) AS {reader_column(r)}" for r in _COUNTED)
_SUMS = ", ".join(f"SUM({reader_column(r)}) AS {reader_column(r)}" for r in _COUNTED)

ANSWER_VIEWS: dict[str, str] = {
    # One row per round and model seat (a seat that sent at least one move request in its game).
    "move_readers": """
        WITH seats AS (
            SELECT DISTINCT run_id, game_id, player FROM calls WHERE purpose = 'move'
        ), decided AS (
            SELECT run_id, game_id, round, player,
                   arg_max(reader, attempt) FILTER (WHERE action IS NOT NULL AND purpose = 'move') AS read_by,
                   bool_or(action IS NOT NULL AND purpose = 'judge') AS judged,
                   bool_or(purpose = 'move' AND outcome IN ('unparseable', 'refused')) AS reasked
            FROM calls WHERE purpose IN ('move', 'judge')
            GROUP BY run_id, game_id, round, player
        )
        SELECT r.run_id, r.game_id, r.round, s.player,
               CASE WHEN CASE s.player WHEN 'a' THEN r.flagged_a ELSE r.flagged_b END THEN 'fallback'
                    WHEN d.judged THEN 'judge'
                    WHEN d.reasked AND d.read_by IS NOT NULL THEN 're-ask'
                    ELSE d.read_by END AS reader
        FROM round_rows r
        JOIN seats s ON s.run_id = r.run_id AND s.game_id = r.game_id
        LEFT JOIN decided d ON d.run_id = r.run_id AND d.game_id = r.game_id AND d.round = r.round
                           AND d.player = s.player""",
    # One row per game and model seat (a seat that sent at least one move request).
    "player_parsing": f"""
        WITH asked AS (
            SELECT run_id, game_id, player, COUNT(*) AS requests,
                   COUNT(*) FILTER (WHERE outcome IN ('ok', 'unparseable')) AS answers,
                   COUNT(*) FILTER (WHERE outcome = 'unparseable') AS unreadable
            FROM calls WHERE purpose = 'move'
            GROUP BY run_id, game_id, player
        ), played AS (
            SELECT run_id, game_id, COUNT(*) AS rounds,
                   COUNT(*) FILTER (WHERE flagged_a) AS flagged_a,
                   COUNT(*) FILTER (WHERE flagged_b) AS flagged_b
            FROM rounds GROUP BY run_id, game_id
        ), readers AS (
            SELECT run_id, game_id, player, {_COUNTS}
            FROM move_readers GROUP BY run_id, game_id, player
        )
        SELECT a.run_id, a.game_id, g.condition, g.replicate, g.status, a.player,
               CASE a.player WHEN 'a' THEN g.player_a ELSE g.player_b END AS player_name, l.player_label,
               a.requests, a.answers, a.unreadable,
               a.unreadable / NULLIF(a.answers, 0) AS parse_failure_rate,
               COALESCE(p.rounds, 0) AS rounds,
               COALESCE(CASE a.player WHEN 'a' THEN p.flagged_a ELSE p.flagged_b END, 0) AS fallback_rounds,
               CASE a.player WHEN 'a' THEN p.flagged_a ELSE p.flagged_b END / NULLIF(p.rounds, 0) AS fallback_rate,
               {_COLUMNS}
        FROM asked a
        JOIN games g ON g.run_id = a.run_id AND g.game_id = a.game_id
        LEFT JOIN played p ON p.run_id = a.run_id AND p.game_id = a.game_id
        LEFT JOIN readers r ON r.run_id = a.run_id AND r.game_id = a.game_id AND r.player = a.player
        JOIN player_labels l ON l.run_id = a.run_id AND l.game_id = a.game_id AND l.player = a.player""",
    # One row per run and model player (its label: a model under two personas is two rows), pooled over its seats
    # and games.
    "model_parsing": f"""
        SELECT run_id, any_value(player_name) AS player_name, player_label, COUNT(DISTINCT game_id) AS games,
               SUM(requests) AS requests,
               SUM(answers) AS answers,
               SUM(unreadable) AS unreadable, SUM(unreadable) / NULLIF(SUM(answers), 0) AS parse_failure_rate,
               SUM(rounds) AS rounds, SUM(fallback_rounds) AS fallback_rounds,
               SUM(fallback_rounds) / NULLIF(SUM(rounds), 0) AS fallback_rate, {_SUMS}
        FROM player_parsing
        GROUP BY run_id, player_label""",
}

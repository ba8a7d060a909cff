"""How well each model's answers could be read: parse failures and fallback moves, as SQL views.

A parse-failure rate is a property of the model (and the prompt), not of one game, and a researcher
must see it beside the behaviour it qualifies: a model that is often unreadable plays many moves
it did not choose. Definitions are in :mod:`harness.store.views.core`. Only calls for moves count
(``calls.purpose = 'move'``), over every game of the run, complete or not (a game stopped by
``on_failure: fail`` is where unreadable answers show most). Cache hits count: the answer was
used for the move as if it had been sent. Calls that ``pdbench resume`` superseded do not.
"""

from __future__ import annotations

ANSWER_VIEWS: dict[str, str] = {
    # One row per game and model seat (a seat that sent at least one move request).
    "player_parsing": """
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
        )
        SELECT a.run_id, a.game_id, g.condition, g.replicate, g.status, a.player,
               CASE a.player WHEN 'a' THEN g.player_a ELSE g.player_b END AS player_name,
               a.requests, a.answers, a.unreadable,
               a.unreadable / NULLIF(a.answers, 0) AS parse_failure_rate,
               COALESCE(p.rounds, 0) AS rounds,
               COALESCE(CASE a.player WHEN 'a' THEN p.flagged_a ELSE p.flagged_b END, 0) AS fallback_rounds,
               CASE a.player WHEN 'a' THEN p.flagged_a ELSE p.flagged_b END / NULLIF(p.rounds, 0) AS fallback_rate
        FROM asked a
        JOIN games g ON g.run_id = a.run_id AND g.game_id = a.game_id
        LEFT JOIN played p ON p.run_id = a.run_id AND p.game_id = a.game_id""",
    # One row per run and model, pooled over its seats and games.
    "model_parsing": """
        SELECT run_id, player_name, COUNT(DISTINCT game_id) AS games, SUM(requests) AS requests,
               SUM(answers) AS answers,
               SUM(unreadable) AS unreadable, SUM(unreadable) / NULLIF(SUM(answers), 0) AS parse_failure_rate,
               SUM(rounds) AS rounds, SUM(fallback_rounds) AS fallback_rounds,
               SUM(fallback_rounds) / NULLIF(SUM(rounds), 0) AS fallback_rate
        FROM player_parsing
        GROUP BY run_id, player_name""",
}

"""The comprehension-check views: each question asked of a model, its expected and parsed answers."""

from __future__ import annotations

COMPREHENSION_VIEWS: dict[str, str] = {
    "comprehension_accuracy": """
        WITH answers AS (
            SELECT c.run_id, CASE c.player WHEN 'a' THEN g.player_a ELSE g.player_b END AS player_name,
                   c.kind, c.answer, c.correct
            FROM comprehension c JOIN games g ON g.run_id = c.run_id AND g.game_id = c.game_id
        )
        SELECT run_id, player_name,
               CASE WHEN GROUPING(kind) = 1 THEN 'all' ELSE kind END AS kind,
               COUNT(*) AS questions,
               COUNT(answer) AS answered,
               COUNT(*) FILTER (WHERE correct) AS correct,
               COUNT(*) FILTER (WHERE correct) / COUNT(*) AS accuracy
        FROM answers
        GROUP BY GROUPING SETS ((run_id, player_name, kind), (run_id, player_name))""",
}

"""Counterfactual probes (``pdbench probe``) as a SQL view: did flipping the opponent's last move change the model's?

A probe run (``runs.kind = 'probe'``, its source in ``config_json -> probe.source_run``) holds no games, only calls:
for each probe, the model's request for round t of a source game rebuilt as it was sent (``calls.purpose =
'factual'``, answered from the response cache or the source's own file, never paid), and the same request with the
opponent's move at t - 1 flipped in the history it shows (``purpose = 'counterfactual'``, paid). Both are recorded
under the source game's ``game_id``, ``round`` t and the model's seat ``player``.

``counterfactual_probes`` (one row per probe run, source game, round and seat):

* ``source_run``, ``game_id``, ``round``, ``player`` (seat), ``player_name`` (the source game's name of that seat);
* ``flip``: ``C->D`` (the opponent had cooperated at t - 1 and is shown defecting) or ``D->C``; ``effect`` names what
  a change of move would show: ``retaliation`` for a C->D flip, ``forgiveness`` for a D->C flip;
* ``factual_action``, ``counterfactual_action``: the move read from the last answer of each request (NULL when it
  was unreadable: a fallback move is the harness's choice, not the model's);
* ``changed``: whether the two differ (NULL when either is NULL, so such a probe counts in no share).

The view reads the source run's ``rounds`` and ``games``, so it answers where both runs are attached (``pdbench sql``
and every reader over a results folder); a probe run's file opened alone has no source to join and shows no rows.
"""

from __future__ import annotations

PROBE_KIND = "probe"
"""``runs.kind`` of a probe run."""

FACTUAL = "factual"
COUNTERFACTUAL = "counterfactual"
"""``calls.purpose`` of a probe's two requests' move calls."""

PROBE_VIEWS: dict[str, str] = {
    "counterfactual_probes": f"""
        WITH probe_runs AS (
            SELECT run_id, json_extract_string(config_json, '$.probe.source_run') AS source_run
            FROM runs WHERE kind = '{PROBE_KIND}'
        ),
        answers AS (
            SELECT c.run_id, c.game_id, c.round, c.player,
                   arg_max(c.action, c.attempt) FILTER (WHERE c.purpose = '{FACTUAL}') AS factual_action,
                   arg_max(c.action, c.attempt) FILTER (WHERE c.purpose = '{COUNTERFACTUAL}') AS counterfactual_action,
                   COUNT(*) FILTER (WHERE c.purpose = '{FACTUAL}') AS factual_calls,
                   COUNT(*) FILTER (WHERE c.purpose = '{COUNTERFACTUAL}') AS counterfactual_calls
            FROM calls c JOIN probe_runs p USING (run_id)
            WHERE c.purpose IN ('{FACTUAL}', '{COUNTERFACTUAL}')
            GROUP BY c.run_id, c.game_id, c.round, c.player
        )
        SELECT a.run_id, p.source_run, a.game_id, a.round, a.player,
               CASE a.player WHEN 'a' THEN g.player_a ELSE g.player_b END AS player_name,
               CASE WHEN o.opponent = 'C' THEN 'C->D' ELSE 'D->C' END AS flip,
               CASE WHEN o.opponent = 'C' THEN 'retaliation' ELSE 'forgiveness' END AS effect,
               a.factual_action::VARCHAR AS factual_action,
               a.counterfactual_action::VARCHAR AS counterfactual_action,
               a.factual_action <> a.counterfactual_action AS changed
        FROM answers a
        JOIN probe_runs p USING (run_id)
        JOIN games g ON g.run_id = p.source_run AND g.game_id = a.game_id
        JOIN (
            SELECT run_id, game_id, round + 1 AS probed, action_a::VARCHAR AS moved_a, action_b::VARCHAR AS moved_b
            FROM rounds
        ) r ON r.run_id = p.source_run AND r.game_id = a.game_id AND r.probed = a.round,
        LATERAL (SELECT CASE a.player WHEN 'a' THEN r.moved_b ELSE r.moved_a END AS opponent) o
        WHERE a.factual_calls > 0 AND a.counterfactual_calls > 0
    """,
}

"""The metric views, defined once, in SQL, over ``runs``, ``games`` and ``rounds``.

Every number PDBench reports comes from these views, and users query the same views
with ``pdbench sql``, so a report and a user's own SQL can never disagree.
Definitions (per player, per game; see DESIGN.md):

* ``cooperation_rate``: share of rounds the player played C (as played, after noise).
* ``retaliation_rate``: P(D at t | opponent played D at t-1), over rounds t >= 2 whose
  previous round had an opponent defection; NULL when there is none.
* ``forgiveness_rate``: P(C at t | opponent played D at t-1); same conditioning, so
  retaliation + forgiveness = 1 where defined.
* ``exploitability_gap``: opponent's total payoff minus the player's.
* ``time_to_collapse``: first round t such that rounds t..t+k-1 all exist and the joint
  cooperation in them (both players' C count / 2k) is <= threshold; NULL if never.
  k and threshold are the run's (``runs.collapse_k``, ``runs.collapse_threshold``).
"""

from __future__ import annotations

import duckdb

VIEWS: dict[str, str] = {
    # One row per player per round, from that player's side.
    "player_rounds": """
        SELECT run_id, game_id, 'a' AS player, round, action_a AS action, action_b AS opp_action,
               payoff_a AS payoff, payoff_b AS opp_payoff
        FROM rounds
        UNION ALL
        SELECT run_id, game_id, 'b' AS player, round, action_b AS action, action_a AS opp_action,
               payoff_b AS payoff, payoff_a AS opp_payoff
        FROM rounds""",
    # First round of each game at which a k-round window of low joint cooperation starts.
    "game_collapse": """
        WITH joint AS (
            SELECT r.run_id, r.game_id, r.round,
                   (r.action_a = 'C')::INTEGER + (r.action_b = 'C')::INTEGER AS coop,
                   SUM((r.action_a = 'C')::INTEGER + (r.action_b = 'C')::INTEGER)
                       OVER (PARTITION BY r.run_id, r.game_id ORDER BY r.round) AS cum_coop
            FROM rounds r
        )
        SELECT s.run_id, s.game_id, MIN(s.round) AS time_to_collapse
        FROM joint s
        JOIN runs ru ON ru.run_id = s.run_id
        JOIN joint e ON e.run_id = s.run_id AND e.game_id = s.game_id
                    AND e.round = s.round + ru.collapse_k - 1
        WHERE (e.cum_coop - s.cum_coop + s.coop) <= ru.collapse_threshold * 2 * ru.collapse_k
        GROUP BY s.run_id, s.game_id""",
    "player_metrics": """
        WITH pr AS (
            SELECT *, LAG(opp_action) OVER (PARTITION BY run_id, game_id, player ORDER BY round)
                      AS prev_opp
            FROM player_rounds
        ), agg AS (
            SELECT run_id, game_id, player,
                   COUNT(*) AS rounds,
                   SUM(payoff) AS payoff_total,
                   SUM(opp_payoff) AS opp_payoff_total,
                   AVG((action = 'C')::DOUBLE) AS cooperation_rate,
                   COUNT(*) FILTER (WHERE prev_opp = 'D') AS provoked,
                   COUNT(*) FILTER (WHERE prev_opp = 'D' AND action = 'D') AS retaliated
            FROM pr
            GROUP BY run_id, game_id, player
        )
        SELECT agg.run_id, agg.game_id, g.condition, g.replicate, g.status, agg.player,
               CASE agg.player WHEN 'a' THEN g.player_a ELSE g.player_b END AS player_name,
               CASE agg.player WHEN 'a' THEN g.player_b ELSE g.player_a END AS opponent_name,
               agg.rounds,
               agg.payoff_total,
               agg.payoff_total / agg.rounds AS payoff_per_round,
               agg.cooperation_rate,
               agg.retaliated / NULLIF(agg.provoked, 0) AS retaliation_rate,
               (agg.provoked - agg.retaliated) / NULLIF(agg.provoked, 0) AS forgiveness_rate,
               agg.opp_payoff_total - agg.payoff_total AS exploitability_gap,
               c.time_to_collapse
        FROM agg
        JOIN games g ON g.run_id = agg.run_id AND g.game_id = agg.game_id
        LEFT JOIN game_collapse c ON c.run_id = agg.run_id AND c.game_id = agg.game_id""",
    "cooperation_over_time": """
        SELECT pr.run_id, pr.game_id, g.condition, g.replicate, pr.player,
               CASE pr.player WHEN 'a' THEN g.player_a ELSE g.player_b END AS player_name,
               pr.round, pr.action,
               AVG((pr.action = 'C')::DOUBLE) OVER (
                   PARTITION BY pr.run_id, pr.game_id, pr.player ORDER BY pr.round
                   ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS cooperation_rate
        FROM player_rounds pr
        JOIN games g ON g.run_id = pr.run_id AND g.game_id = pr.game_id""",
    # Behaviour profile in the style of the LLM-in-IPD literature, per player per game.
    "behaviour_profile": """
        WITH pr AS (
            SELECT *,
                   LAG(opp_action) OVER w AS prev_opp,
                   LAG(action) OVER w AS prev_own,
                   LAG(action, 2) OVER w AS prev2_own,
                   LAG(opp_action, 2) OVER w AS prev2_opp
            FROM player_rounds
            WINDOW w AS (PARTITION BY run_id, game_id, player ORDER BY round)
        ), firsts AS (
            SELECT run_id, game_id, player,
                   MIN(round) FILTER (WHERE action = 'D') AS first_own_d,
                   MIN(round) FILTER (WHERE opp_action = 'D') AS first_opp_d
            FROM player_rounds GROUP BY run_id, game_id, player
        ), agg AS (
            SELECT run_id, game_id, player,
                   COUNT(*) FILTER (WHERE prev_opp = 'D') AS provoked,
                   COUNT(*) FILTER (WHERE prev_opp = 'D' AND action = 'D') AS provocable,
                   COUNT(*) FILTER (WHERE prev_opp = 'C') AS unprovoked_chances,
                   COUNT(*) FILTER (WHERE prev_opp = 'C' AND action = 'D') AS troublemaking,
                   COUNT(*) FILTER (WHERE prev_own = 'D' AND prev2_opp = 'D') AS after_retaliation,
                   COUNT(*) FILTER (WHERE prev_own = 'D' AND prev2_opp = 'D' AND action = 'C')
                       AS forgave_after_retaliation,
                   COUNT(*) FILTER (WHERE prev_opp IS NOT NULL) AS with_history,
                   COUNT(*) FILTER (WHERE prev_opp IS NOT NULL AND action = prev_opp) AS emulated
            FROM pr GROUP BY run_id, game_id, player
        )
        SELECT agg.run_id, agg.game_id, agg.player,
               CASE agg.player WHEN 'a' THEN g.player_a ELSE g.player_b END AS player_name,
               CASE WHEN f.first_own_d IS NULL THEN 1.0
                    WHEN f.first_opp_d IS NOT NULL AND f.first_opp_d < f.first_own_d THEN 1.0
                    ELSE 0.0 END::DOUBLE AS niceness,
               agg.provocable / NULLIF(agg.provoked, 0) AS provocability,
               agg.forgave_after_retaliation / NULLIF(agg.after_retaliation, 0)
                   AS forgiveness_after_retaliation,
               agg.troublemaking / NULLIF(agg.unprovoked_chances, 0) AS troublemaking,
               agg.emulated / NULLIF(agg.with_history, 0) AS emulation
        FROM agg
        JOIN firsts f USING (run_id, game_id, player)
        JOIN games g ON g.run_id = agg.run_id AND g.game_id = agg.game_id""",
    # Mean result of each player against each opponent (the matchup matrix).
    "matchups": """
        SELECT run_id, player_name AS player, opponent_name AS opponent,
               COUNT(DISTINCT game_id) AS games,
               SUM(payoff_total) / SUM(rounds) AS mean_payoff_per_round,
               AVG(payoff_total) AS mean_total,
               SUM(cooperation_rate * rounds) / SUM(rounds) AS cooperation_rate
        FROM player_metrics
        WHERE status = 'complete'
        GROUP BY run_id, player_name, opponent_name""",
    # The leaderboard. A self-play game counts once for its player: each seat weighs 1/2.
    # Wins, draws and losses count games against other players only.
    "tournament": """
        WITH seats AS (
            SELECT *, CASE WHEN player_name = opponent_name THEN 0.5 ELSE 1.0 END AS w
            FROM player_metrics WHERE status = 'complete'
        ), board AS (
            SELECT run_id, player_name AS player,
                   CAST(ROUND(SUM(w)) AS INTEGER) AS games,
                   SUM(w * payoff_total) / SUM(w * rounds) AS mean_payoff_per_round,
                   SUM(w * payoff_total) / SUM(w) AS mean_total,
                   COUNT(*) FILTER (WHERE w = 1.0 AND exploitability_gap < 0) AS wins,
                   COUNT(*) FILTER (WHERE w = 1.0 AND exploitability_gap = 0) AS draws,
                   COUNT(*) FILTER (WHERE w = 1.0 AND exploitability_gap > 0) AS losses,
                   SUM(w * cooperation_rate * rounds) / SUM(w * rounds) AS cooperation_rate
            FROM seats GROUP BY run_id, player_name
        )
        SELECT run_id,
               RANK() OVER (PARTITION BY run_id ORDER BY mean_payoff_per_round DESC) AS rank,
               player, games, mean_payoff_per_round, mean_total, wins, draws, losses,
               cooperation_rate
        FROM board""",
}


def create_views(con: duckdb.DuckDBPyConnection) -> None:
    """Create (or replace) every metric view on ``con``, in dependency order."""
    for name, sql in VIEWS.items():
        con.execute(f"CREATE OR REPLACE VIEW {name} AS {sql}")

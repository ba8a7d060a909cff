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
    # Per game and player: totals and cooperation, one plain aggregate over rounds (no windows),
    # so the leaderboard and matchups stay fast on large runs.
    "player_games": """
        WITH agg AS (
            SELECT run_id, game_id, COUNT(*) AS rounds,
                   SUM(payoff_a) AS payoff_a, SUM(payoff_b) AS payoff_b,
                   COUNT(*) FILTER (WHERE action_a = 'C') AS coop_a,
                   COUNT(*) FILTER (WHERE action_b = 'C') AS coop_b
            FROM rounds GROUP BY run_id, game_id
        )
        SELECT g.run_id, g.game_id, g.condition, g.replicate, g.status, 'a' AS player,
               g.player_a AS player_name, g.player_b AS opponent_name, agg.rounds,
               agg.payoff_a AS payoff_total, agg.payoff_b AS opp_payoff_total, agg.coop_a AS cooperations
        FROM agg JOIN games g ON g.run_id = agg.run_id AND g.game_id = agg.game_id
        UNION ALL
        SELECT g.run_id, g.game_id, g.condition, g.replicate, g.status, 'b' AS player,
               g.player_b AS player_name, g.player_a AS opponent_name, agg.rounds,
               agg.payoff_b AS payoff_total, agg.payoff_a AS opp_payoff_total, agg.coop_b AS cooperations
        FROM agg JOIN games g ON g.run_id = agg.run_id AND g.game_id = agg.game_id""",
    # Per game and player: how often the opponent defected in the round before, and how often
    # the player answered with D. One window pass over rounds serves both players.
    "player_reactions": """
        WITH rc AS (
            SELECT run_id, game_id, action_a, action_b,
                   LAG(action_a) OVER w AS prev_a, LAG(action_b) OVER w AS prev_b
            FROM rounds
            WINDOW w AS (PARTITION BY run_id, game_id ORDER BY round)
        ), agg AS (
            SELECT run_id, game_id,
                   COUNT(*) FILTER (WHERE prev_b = 'D') AS provoked_a,
                   COUNT(*) FILTER (WHERE prev_b = 'D' AND action_a = 'D') AS retaliated_a,
                   COUNT(*) FILTER (WHERE prev_a = 'D') AS provoked_b,
                   COUNT(*) FILTER (WHERE prev_a = 'D' AND action_b = 'D') AS retaliated_b
            FROM rc GROUP BY run_id, game_id
        )
        SELECT run_id, game_id, 'a' AS player, provoked_a AS provoked, retaliated_a AS retaliated FROM agg
        UNION ALL
        SELECT run_id, game_id, 'b' AS player, provoked_b AS provoked, retaliated_b AS retaliated FROM agg""",
    # First round t of each game whose window t..t+k-1 is complete and has joint cooperation
    # (both players' C count / 2k) <= threshold, with k and threshold from the game's run.
    "game_collapse": """
        WITH joint AS (
            SELECT r.run_id, r.game_id, r.round, ru.collapse_k AS k, ru.collapse_threshold AS threshold,
                   (r.action_a = 'C')::INTEGER + (r.action_b = 'C')::INTEGER AS coop
            FROM rounds r JOIN runs ru ON ru.run_id = r.run_id
        ), windows AS (
            SELECT run_id, game_id, round, k, threshold,
                   SUM(coop) OVER w AS window_coop, COUNT(*) OVER w AS window_rounds
            FROM joint
            WINDOW w AS (PARTITION BY run_id, game_id ORDER BY round
                         ROWS BETWEEN CURRENT ROW AND k - 1 FOLLOWING)
        )
        SELECT run_id, game_id, MIN(round) AS time_to_collapse
        FROM windows
        WHERE window_rounds = k AND window_coop / (2.0 * k) <= threshold
        GROUP BY run_id, game_id""",
    "player_metrics": """
        SELECT pg.run_id, pg.game_id, pg.condition, pg.replicate, pg.status, pg.player,
               pg.player_name, pg.opponent_name, pg.rounds, pg.payoff_total,
               pg.payoff_total / pg.rounds AS payoff_per_round,
               pg.cooperations / pg.rounds AS cooperation_rate,
               pr.retaliated / NULLIF(pr.provoked, 0) AS retaliation_rate,
               (pr.provoked - pr.retaliated) / NULLIF(pr.provoked, 0) AS forgiveness_rate,
               pg.opp_payoff_total - pg.payoff_total AS exploitability_gap,
               c.time_to_collapse
        FROM player_games pg
        JOIN player_reactions pr ON pr.run_id = pg.run_id AND pr.game_id = pg.game_id AND pr.player = pg.player
        LEFT JOIN game_collapse c ON c.run_id = pg.run_id AND c.game_id = pg.game_id""",
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
}


def create_views(con: duckdb.DuckDBPyConnection) -> None:
    """Create (or replace) every metric view on ``con``, in dependency order: the per-game views
    here, then the tournament views built on them (:mod:`harness.analysis.leaderboard`)."""
    from harness.analysis.comprehension import COMPREHENSION_VIEWS
    from harness.analysis.leaderboard import LEADERBOARD_VIEWS

    for name, sql in {**VIEWS, **LEADERBOARD_VIEWS, **COMPREHENSION_VIEWS}.items():
        con.execute(f"CREATE OR REPLACE VIEW {name} AS {sql}")

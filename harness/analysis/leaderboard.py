"""The tournament views: the matchup matrix and the leaderboard, over ``player_games``.

They are created after the per-game views of :mod:`harness.analysis.views`, on which they stand.
"""

from __future__ import annotations

LEADERBOARD_VIEWS: dict[str, str] = {
    # Mean result of each player against each opponent (the matchup matrix).
    "matchups": """
        SELECT run_id, player_name AS player, opponent_name AS opponent,
               COUNT(DISTINCT game_id) AS games,
               AVG(payoff_total / rounds) AS mean_payoff_per_round,
               AVG(payoff_total) AS mean_total,
               AVG(cooperations / rounds) AS cooperation_rate
        FROM player_games
        WHERE status = 'complete'
        GROUP BY run_id, player_name, opponent_name""",
    # The leaderboard. Per-round figures are means over games of each game's own per-round figure
    # (as player_metrics and reports compute them), so long games do not weigh more than short ones.
    # A self-play game counts once for its player: each seat weighs 1/2.
    # Wins, draws and losses count games against other players only.
    "tournament": """
        WITH seats AS (
            SELECT *, CASE WHEN player_name = opponent_name THEN 0.5 ELSE 1.0 END AS w
            FROM player_games WHERE status = 'complete'
        ), board AS (
            SELECT run_id, player_name AS player,
                   CAST(ROUND(SUM(w)) AS INTEGER) AS games,
                   SUM(w * payoff_total / rounds) / SUM(w) AS mean_payoff_per_round,
                   SUM(w * payoff_total) / SUM(w) AS mean_total,
                   COUNT(*) FILTER (WHERE w = 1.0 AND payoff_total > opp_payoff_total) AS wins,
                   COUNT(*) FILTER (WHERE w = 1.0 AND payoff_total = opp_payoff_total) AS draws,
                   COUNT(*) FILTER (WHERE w = 1.0 AND payoff_total < opp_payoff_total) AS losses,
                   SUM(w * cooperations / rounds) / SUM(w) AS cooperation_rate
            FROM seats GROUP BY run_id, player_name
        )
        SELECT run_id,
               RANK() OVER (PARTITION BY run_id ORDER BY mean_payoff_per_round DESC) AS rank,
               player, games, mean_payoff_per_round, mean_total, wins, draws, losses,
               cooperation_rate
        FROM board""",
}

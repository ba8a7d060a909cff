"""The tournament views: the matchup matrix and the leaderboard, over ``player_games``.

They are created after the per-game views of :mod:`harness.store.views.core`, on which they stand.

The leaderboard ranks as the Axelrod library (4.x, ``axelrod.ResultSet``) ranks, so that a PDBench
tournament and an Axelrod tournament of the same strategies put them in the same order:

* Self-interactions (a player against itself) are played and stored, and shown in ``matchups``,
  but left out of every leaderboard figure: scores, games, wins, draws, losses, cooperation.
* A player's score in one repetition (``replicate``) is its mean, over its complete games against
  other players in that repetition, of each game's payoff per round (Axelrod's "normalised score":
  score per turn of each interaction, averaged over the interactions). With one game per opponent
  per repetition, as in a round robin, that is the mean over opponents.
* ``median_score_per_turn``, the ranking key, is the median of those scores over repetitions
  (numpy's ``nanmedian``: the mean of the two middle values when their count is even);
  ``mean_score_per_turn`` is their mean, shown beside it. With one repetition both are its score.
* ``wins`` are games against others with a strictly higher total payoff than the opponent's
  (Axelrod's per-repetition wins, summed over repetitions), ``draws`` equal, ``losses`` lower.
* ``cooperation_rate`` is over games against others, as Axelrod's cooperating rating leaves out
  self-interactions; it is the mean of each game's own rate (equal to Axelrod's pooled rate
  whenever games have the same length, i.e. under a fixed horizon). Like every behaviour rate it is
  on the moves the player chose (before noise, fallback moves left out); ``cooperation_rate_played``
  counts the moves as played, which is what Axelrod's rating counts under noise.
* Ranks are standard competition ranks (1, 2, 2, 4) where equal means within ``TIE_TOLERANCE``
  (so that floating-point noise in a mean never splits a tie). Players sorted by median are cut
  into tie groups wherever two neighbours differ by more than the tolerance, so a chain of
  neighbours each within it shares one rank (ties are then transitive). Axelrod's sort is stable
  instead, breaking ties by the order players were entered; PDBench gives them the same rank.

Only complete games count. A repetition an interruption cut short scores the complete games it
has, and ``replicates`` says how many repetitions gave the player a score.
"""

from __future__ import annotations

TIE_TOLERANCE = 1e-9
# The ranking in one sentence, for the leaderboard's readers (terminal table and dashboard).
RANKING_NOTE = (
    "Ranked as the Axelrod library ranks: by the median over repetitions of the score per turn against the "
    "other players (self-play left out); scores within 1e-9 share a rank and its medal."
)


def _avg(expr: str) -> str:
    """The mean of ``expr``, summed in ascending order: a float sum depends on the order of its terms,
    and rows reach an aggregate in whatever order the engine's threads deliver them, so a plain AVG
    can differ in its last bit between a run file and the catalog over all runs; summed sorted, it cannot."""
    return f"list_avg(list({expr} ORDER BY {expr}))"


LEADERBOARD_VIEWS: dict[str, str] = {
    # Mean result of each player against each opponent (the matchup matrix). Self-play cells are
    # kept (a player's row includes its games against itself, both seats): they are informative,
    # but they never enter the `tournament` view.
    "matchups": f"""
        SELECT run_id, player_name AS player, opponent_name AS opponent,
               COUNT(DISTINCT game_id) AS games,
               {_avg("payoff_total / rounds")} AS mean_payoff_per_round,
               {_avg("payoff_total")} AS mean_total,
               {_avg("chosen_cooperations / NULLIF(rounds_chosen, 0)")} AS cooperation_rate,
               {_avg("cooperations / rounds")} AS cooperation_rate_played
        FROM player_games
        WHERE status = 'complete'
        GROUP BY run_id, player_name, opponent_name""",
    # The leaderboard, ranked as Axelrod ranks (see the module docstring). Per-game figures
    # (mean_payoff_per_round, mean_total, cooperation_rate) are means over games of each game's own
    # figure, as player_metrics and reports compute them.
    "tournament": f"""
        WITH others AS (
            SELECT * FROM player_games
            WHERE status = 'complete' AND player_name <> opponent_name
        ), repetitions AS (
            SELECT run_id, player_name, replicate, {_avg("payoff_total / rounds")} AS score_per_turn
            FROM others GROUP BY run_id, player_name, replicate
        ), scores AS (
            SELECT run_id, player_name, COUNT(*) AS replicates,
                   MEDIAN(score_per_turn) AS median_score_per_turn,
                   {_avg("score_per_turn")} AS mean_score_per_turn
            FROM repetitions GROUP BY run_id, player_name
        ), board AS (
            SELECT run_id, player_name, COUNT(*) AS games,
                   {_avg("payoff_total / rounds")} AS mean_payoff_per_round,
                   {_avg("payoff_total")} AS mean_total,
                   COUNT(*) FILTER (WHERE payoff_total > opp_payoff_total) AS wins,
                   COUNT(*) FILTER (WHERE payoff_total = opp_payoff_total) AS draws,
                   COUNT(*) FILTER (WHERE payoff_total < opp_payoff_total) AS losses,
                   {_avg("chosen_cooperations / NULLIF(rounds_chosen, 0)")} AS cooperation_rate,
                   {_avg("cooperations / rounds")} AS cooperation_rate_played
            FROM others GROUP BY run_id, player_name
        ), ordered AS (
            SELECT s.*, b.games, b.mean_payoff_per_round, b.mean_total, b.wins, b.draws, b.losses,
                   b.cooperation_rate, b.cooperation_rate_played,
                   ROW_NUMBER() OVER w AS position,
                   LAG(s.median_score_per_turn) OVER w AS previous
            FROM scores s JOIN board b USING (run_id, player_name)
            WINDOW w AS (PARTITION BY s.run_id ORDER BY s.median_score_per_turn DESC, s.player_name)
        ), grouped AS (
            SELECT *,
                   SUM(CASE WHEN previous - median_score_per_turn <= {TIE_TOLERANCE} THEN 0 ELSE 1 END) OVER (
                       PARTITION BY run_id ORDER BY position ROWS UNBOUNDED PRECEDING) AS tie_group
            FROM ordered
        )
        SELECT run_id,
               CAST(MIN(position) OVER (PARTITION BY run_id, tie_group) AS INTEGER) AS rank,
               player_name AS player, median_score_per_turn, mean_score_per_turn, replicates, games,
               wins, draws, losses, cooperation_rate, cooperation_rate_played, mean_payoff_per_round, mean_total
        FROM grouped""",
}

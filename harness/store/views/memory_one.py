"""The memory-one profile of each player in each game, as a SQL view: how often it chose C after each joint outcome.

``memory_one`` (one row per run, game and seat; ``player_name`` and ``player_label`` as ``player_labels`` has them):

* ``first_n``, ``first_c``: 1 and 1 if the player chose C in round 1 (0 if D); 0 and 0 if round 1 was a fallback.
* ``n_cc``, ``c_cc`` .. ``n_dd``, ``c_dd``: over rounds t >= 2 whose move the player chose (fallback rounds left
  out), how many followed each joint outcome of round t-1, and in how many of those the player chose C. The outcome
  is written own move first, and read *as the player saw it*: its own move as played (after execution noise: a
  strategy reads its played history, a model's prompt shows it), so a noise-flipped move of the player's own counts
  as the outcome it saw, and the opponent's move as the player observed it (``player_rounds.opp_seen``: under
  observation noise the move it saw, flipped or not; otherwise the move as played). The response is the move it
  chose (intended, before noise). So under observation noise TFT's vector stays (1, 0, 1, 0).
* ``p_cc`` .. ``p_dd``, ``p_first``: the game's own ratios (NULL where the outcome never came up).

A memory-one strategy with vector (p1, p2, p3, p4) chooses C after CC, CD, DC, DD with those probabilities, so each
``c_xy / n_xy`` estimates one of them. The pooled estimate over games and its interval are
:mod:`harness.analysis.memory_one`'s (rounds within a game are not independent draws).
"""

from __future__ import annotations

OUTCOMES = ("cc", "cd", "dc", "dd")
"""The joint outcomes of the previous round, own move first, in the order the four-vector lists them."""

_COUNTS = ",\n".join(
    f"COUNT(*) FILTER (WHERE prev_own = '{o[0].upper()}' AND prev_opp = '{o[1].upper()}' AND choice IS NOT NULL)"
    f" AS n_{o},\n"
    f"COUNT(*) FILTER (WHERE prev_own = '{o[0].upper()}' AND prev_opp = '{o[1].upper()}' AND choice = 'C') AS c_{o}"
    for o in OUTCOMES
)

MEMORY_ONE_VIEWS: dict[str, str] = {
    "memory_one": f"""
        WITH steps AS (
            SELECT run_id, game_id, player, round, choice,
                   LAG(action) OVER w AS prev_own, LAG(opp_seen) OVER w AS prev_opp
            FROM player_rounds
            WINDOW w AS (PARTITION BY run_id, game_id, player ORDER BY round)
        ), counts AS (
            SELECT run_id, game_id, player,
                   COUNT(*) FILTER (WHERE round = 1 AND choice IS NOT NULL) AS first_n,
                   COUNT(*) FILTER (WHERE round = 1 AND choice = 'C') AS first_c,
                   {_COUNTS}
            FROM steps GROUP BY run_id, game_id, player
        )
        SELECT c.run_id, c.game_id, c.player, l.player_name, l.player_label, c.first_n, c.first_c,
               {", ".join(f"c.n_{o}, c.c_{o}" for o in OUTCOMES)},
               c.first_c / NULLIF(c.first_n, 0) AS p_first,
               {", ".join(f"c.c_{o} / NULLIF(c.n_{o}, 0) AS p_{o}" for o in OUTCOMES)}
        FROM counts c
        JOIN player_labels l ON l.run_id = c.run_id AND l.game_id = c.game_id AND l.player = c.player""",
}

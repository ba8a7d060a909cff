"""The behaviour profile of Fontana, Pierri & Aiello (ICWSM 2025) and the per-game strategy fit, as SQL views.

The definitions are written out in :mod:`harness.store.views.core`; this module holds their SQL.
The paper's code walks each game's history once with a little state; here every measure is a
count over rounds, so one window pass per game serves all of them:

* each round's *response* is the player's chosen move (``own``: intended, NULL in a fallback
  round) and, for the ``*_played`` variants, its played move (``own_p``);
* the forgiving measure's grudge is held before round r exactly when the opponent played D in
  some earlier round at or after the player's last C before r (the state machine's
  "holding after i = opp_i = D or (holding after i-1 and main_i is not C)", unrolled). A
  penalty, counted in the paper at the opponent's C, is counted here at the player's D in the
  round after it, which holds the same grudge.
"""

from __future__ import annotations

# The per-round ingredients of every measure, both variants (chosen: ``own``; played: ``own_p``).
_STEPS = """
    SELECT run_id, game_id, player, round, choice AS own, action AS own_p, opp_action AS opp,
           LAG(opp_action) OVER w AS prev_opp,
           LAG(action) OVER w AS prev_own_p,
           LAG(action, 2) OVER w AS prev2_own_p,
           MAX(round) FILTER (WHERE opp_action = 'D') OVER before AS last_opp_d,
           MAX(round) FILTER (WHERE choice = 'C') OVER before AS last_c,
           MAX(round) FILTER (WHERE action = 'C') OVER before AS last_c_p
    FROM player_rounds
    WINDOW w AS (PARTITION BY run_id, game_id, player ORDER BY round),
           before AS (PARTITION BY run_id, game_id, player ORDER BY round
                      ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)"""

# Counts of one variant over a game, from ``steps`` with the response column ``{own}``, the
# grudge flag ``{hold}`` and the suffix ``{sfx}`` for the column names.
_COUNTS = """
           MIN(round) FILTER (WHERE {own} = 'D') AS first_d{sfx},
           MIN(round) FILTER (WHERE {own} = 'C' AND opp = 'D') AS first_c_vs_d{sfx},
           COUNT(*) FILTER (WHERE {own} = 'C' AND {hold}) AS forgiven{sfx},
           COUNT(*) FILTER (WHERE prev_opp = 'C' AND {hold} AND {own} = 'D') AS penalties{sfx},
           COUNT(*) FILTER (WHERE opp = 'D' AND NOT ({hold} AND {own} IS DISTINCT FROM 'C'))
               AS opp_defections{sfx},
           COUNT({own}) FILTER (WHERE prev_opp = 'D' AND (prev2_own_p IS NULL OR prev2_own_p = 'C'))
               AS provocations{sfx},
           COUNT(*) FILTER (WHERE prev_opp = 'D' AND (prev2_own_p IS NULL OR prev2_own_p = 'C')
                            AND {own} = 'D') AS reactions{sfx},
           COUNT({own}) FILTER (WHERE prev_opp IS NULL OR prev_opp = 'C') AS occasions{sfx},
           COUNT(*) FILTER (WHERE (prev_opp IS NULL OR prev_opp = 'C') AND {own} = 'D') AS uncalled{sfx},
           COUNT({own}) FILTER (WHERE prev_opp IS NOT NULL) AS emulative_chances{sfx},
           COUNT(*) FILTER (WHERE prev_opp IS NOT NULL AND {own} = prev_opp) AS copies{sfx}"""

# The five measures of one variant (counts suffixed ``{sfx}``) and their denominators, named with
# the suffix ``{out}``; ``{null}`` is true where the player has no response at all (measures NULL).
_MEASURES = """
           CASE WHEN {null} THEN NULL
                WHEN first_d{sfx} IS NULL OR first_c_vs_d{sfx} < first_d{sfx} THEN 1.0::DOUBLE
                ELSE 0.0::DOUBLE END AS nice{out},
           CASE WHEN {null} THEN NULL
                ELSE COALESCE(forgiven{sfx} / NULLIF(opp_defections{sfx} + penalties{sfx}, 0), 0.0) END
               AS forgiving{out},
           CASE WHEN {null} THEN NULL
                ELSE COALESCE(reactions{sfx} / NULLIF(provocations{sfx}, 0), 0.0) END AS retaliatory{out},
           CASE WHEN {null} THEN NULL
                ELSE COALESCE(uncalled{sfx} / NULLIF(occasions{sfx}, 0), 0.0) END AS troublemaking{out},
           CASE WHEN {null} THEN NULL
                ELSE COALESCE(copies{sfx} / NULLIF(emulative_chances{sfx}, 0), 0.0) END AS emulative{out},
           opp_defections{sfx} + penalties{sfx} AS forgiving_chances{out},
           provocations{sfx} AS retaliatory_chances{out},
           occasions{sfx} AS troublemaking_chances{out},
           emulative_chances{sfx} AS emulative_chances{out}"""

_HOLD = "(last_opp_d IS NOT NULL AND last_opp_d >= COALESCE({last_c}, 0))"

_PROFILE = f"""
    WITH steps AS ({_STEPS}
    ), counts AS (
        SELECT run_id, game_id, player, COUNT(*) AS rounds, COUNT(own) AS rounds_chosen,
               {_COUNTS.format(own="own", hold=_HOLD.format(last_c="last_c"), sfx="")},
               {_COUNTS.format(own="own_p", hold=_HOLD.format(last_c="last_c_p"), sfx="_p")}
        FROM steps GROUP BY run_id, game_id, player
    )
    SELECT c.run_id, c.game_id, g.condition, g.replicate, g.status, c.player,
           CASE c.player WHEN 'a' THEN g.player_a ELSE g.player_b END AS player_name,
           CASE c.player WHEN 'a' THEN g.player_b ELSE g.player_a END AS opponent_name,
           c.rounds, c.rounds_chosen,
           {_MEASURES.format(null="c.rounds_chosen = 0", sfx="", out="")},
           {_MEASURES.format(null="FALSE", sfx="_p", out="_played")}
    FROM counts c JOIN games g ON g.run_id = c.run_id AND g.game_id = c.game_id"""

# Strategy names in the order ``best_fit`` lists tied strategies.
FIT_ORDER = ("ALLC", "ALLD", "TFT", "STFT", "GRIM", "WSLS", "RAND")
TIE = 1e-9

# What each classic strategy would have played at each round, given the played history.
_WOULD = {
    "ALLC": "'C'",
    "ALLD": "'D'",
    "TFT": "COALESCE(prev_opp::VARCHAR, 'C')",
    "STFT": "COALESCE(prev_opp::VARCHAR, 'D')",
    "GRIM": "CASE WHEN last_opp_d IS NULL THEN 'C' ELSE 'D' END",
    "WSLS": "CASE WHEN prev_own_p IS NULL OR prev_own_p = prev_opp THEN 'C' ELSE 'D' END",
}

_SHARES = ",\n           ".join(
    f"COUNT(*) FILTER (WHERE own::VARCHAR = {would}) / NULLIF(COUNT(own), 0) AS {name.lower()}"
    for name, would in _WOULD.items()
)
_BEST = ", ".join(f"CASE WHEN {name.lower()} >= top - {TIE} THEN '{name}' END" for name in FIT_ORDER)

_FIT = f"""
    WITH steps AS ({_STEPS}
    ), shares AS (
        SELECT run_id, game_id, player, COUNT(own) AS moves,
               {_SHARES},
               CASE WHEN COUNT(own) > 0 THEN 0.5::DOUBLE END AS rand
        FROM steps GROUP BY run_id, game_id, player
    ), tops AS (
        SELECT *, GREATEST({", ".join(n.lower() for n in FIT_ORDER)}) AS top FROM shares
    )
    SELECT t.run_id, t.game_id, g.condition, g.replicate, g.status, t.player,
           CASE t.player WHEN 'a' THEN g.player_a ELSE g.player_b END AS player_name,
           CASE t.player WHEN 'a' THEN g.player_b ELSE g.player_a END AS opponent_name,
           t.moves, {", ".join(f"t.{n.lower()}" for n in FIT_ORDER)},
           CASE WHEN t.moves > 0 THEN concat_ws('/', {_BEST}) END AS best_fit
    FROM tops t JOIN games g ON g.run_id = t.run_id AND g.game_id = t.game_id"""

_ATTRIBUTION_SHARES = ",\n           ".join(
    f"SUM(CASE WHEN list_contains(fits, '{name}') THEN 1.0 / len(fits) ELSE 0.0 END) / COUNT(*) AS {name.lower()}"
    for name in FIT_ORDER
)

_ATTRIBUTION = f"""
    WITH fits AS (
        SELECT run_id, condition, player, player_name, string_split(best_fit, '/') AS fits
        FROM per_game_strategy_fit WHERE status = 'complete' AND best_fit IS NOT NULL
    )
    SELECT run_id, condition, player, player_name, COUNT(*) AS games,
           {_ATTRIBUTION_SHARES}
    FROM fits GROUP BY run_id, condition, player, player_name"""

PROFILE_VIEWS: dict[str, str] = {
    "behaviour_profile": _PROFILE,
    "per_game_strategy_fit": _FIT,
    "per_game_best_fit_shares": _ATTRIBUTION,
}

"""The metric views, defined once, in SQL, over ``runs``, ``games``, ``rounds`` and ``calls``.

Every number PDBench reports comes from these views, and users query the same views with
``pdbench sql``, so a report and a user's own SQL can never disagree. Definitions (per player,
per game; docs/results.md lists the views) follow.

Which moves are measured. Payoffs and scores use the moves as played (after execution noise).
Rates that describe a player's behaviour use the move the player *chose* (``rounds.intended_*``,
before noise), conditioned on the opponent's move *as the player saw it* (``rounds.observed_a``:
B's move as A saw it, ``observed_b``: A's as B saw it; the played move unless observation noise
flipped what the player saw), and leave out fallback rounds (``rounds.flagged_*``: the harness chose
the move after unreadable answers, not the model). Under execution or observation noise, TFT's
retaliation is then exactly 1: its noise-flipped moves are not its choices, and it answers the
defections it saw. The same rates on the played moves, conditioned on the opponent's move as played,
with no round left out, are kept as ``*_played``: mistakes (execution) and misperception
(observation) are told apart by comparing the two.
A player with no chosen move in a game (every round a fallback) has NULL behaviour rates there.

``player_metrics``:

* ``rounds``, ``rounds_chosen`` (rounds whose move the player chose), ``fallback_rounds``.
* ``cooperation_rate``: share of the chosen rounds in which the player chose C.
* ``retaliation_rate``: P(chose D at t | the player saw the opponent play D at t-1), over rounds t >= 2
  with an opponent defection seen at t-1 and a chosen move at t (``provocations`` counts them); NULL when
  there is none.
* ``forgiveness_rate``: P(chose C at t | the player saw the opponent play D at t-1); same rounds, so retaliation
  + forgiveness = 1 where defined.
* ``*_played``: the three rates on moves as played (the condition: the opponent's move as played), every round counted
  (``provocations_played`` is the denominator of the last two).
* ``exploitability_gap``: opponent's total payoff minus the player's.
* ``time_to_collapse``: first round t such that rounds t..t+k-1 all exist and the joint
  cooperation in them (both players' played C count / 2k) is <= threshold; NULL if never.
  k and threshold are the run's (``runs.collapse_k``, ``runs.collapse_threshold``).

``cooperation_over_time`` (per round): ``cooperation_rate`` is the cumulative share of C among the
player's chosen moves so far (NULL until its first chosen move); ``cooperation_rate_played`` the
cumulative share of C among its played moves.

``behaviour_profile``: the five dimensions of Fontana, Pierri & Aiello, "Nicer Than Humans: How do
Large Language Models Behave in the Prisoner's Dilemma?" (ICWSM 2025, arXiv:2406.13605), exactly
as their published code computes them. With ``main`` the player, ``opp`` the opponent and rounds
i = 0..n-1:

* ``nice``: 1 if the player is never the first to defect. Scanning the rounds, the first round
  where the player defects gives 0, the first where the opponent defects while the player
  cooperates gives 1, whichever comes first; 1 if neither happens. A simultaneous first
  defection is not nice.
* ``forgiving`` = forgiven / (opponent_defections + penalties), 0 when that sum is 0. The player
  holds a grudge from an opponent defection until its next C. Per round i, in this order:
  (a) the player plays C while holding a grudge: one ``forgiven``, the grudge ends;
  (b) i < n-1, the opponent plays C while the grudge is held and the player plays D at i+1:
  one ``penalty``; (c) the opponent plays D while no grudge is held: one
  ``opponent_defection``, a grudge starts. (A C that ends a grudge in a round where the opponent
  defects is one forgiven and one new opponent defection.)
* ``retaliatory`` = reactions / provocations, 0 without provocations. A provocation is an
  unprovoked opponent defection at i <= n-2 (i = 0, or the player cooperated at i-1); a
  reaction is the player defecting at i+1 after one.
* ``troublemaking`` = uncalled / occasions. Occasions are round 0 and every round i+1 that follows
  an opponent C at i; uncalled defections are the player's D in them.
* ``emulative`` = copies / (n-1), 0 when n <= 1: the share of rounds 1..n-1 in which the player
  repeats the opponent's previous move.

The player's move that each measure tests (the response) is its chosen move, and a fallback
round's own move is neither C nor D: it is in no numerator or denominator that tests the player's
move at that round, and does not end a grudge. The conditions (the opponent's moves, and
"unprovoked": the player's move at i-1, which the opponent saw) use moves as played, also under observation
noise (the paper's definitions read one log shared by both players; ``retaliation_rate`` and the memory-one
profile are the measures conditioned on what each player saw). The
denominators are ``forgiving_chances`` (opponent_defections + penalties), ``retaliatory_chances``,
``troublemaking_chances`` and ``emulative_chances``; where one is 0 the measure is 0, as in the
paper's code (troublemaking can lack an occasion only when round 0 is a fallback: 0 too). The
measures are NULL only where the player chose no move in the game. Without noise and fallbacks
these are the paper's numbers; ``*_played`` (with ``*_chances_played``) are the paper's code
applied to the played log, nothing left out.

``per_game_strategy_fit`` (per game and player; each game's own best fit, not the pooled SFEM of
:mod:`harness.analysis.sfem`, which reads its shares × moves): for each
classic strategy, the share of the player's chosen moves that the strategy would have made in
the same history as played (also under observation noise): ALLC always C; ALLD always D; TFT C first, then
the opponent's previous move; STFT D first, then the opponent's previous move; GRIM C until the opponent has defected in
any earlier round, then D; WSLS C first, then C if both players played the same move in the
previous round, else D; RAND its expected agreement, 0.5. ``best_fit`` is the strategy with the
highest share (ties within 1e-9 joined by '/', in the order ALLC, ALLD, TFT, STFT, GRIM, WSLS,
RAND). ``per_game_best_fit_shares`` (per run, condition and seat, complete games) gives the share of
games of which each strategy is the best fit, a tie of k strategies giving each 1/k: a count of per-game
best fits, which credits a random player's games to deterministic strategies (never to RAND alone).

``player_parsing`` / ``model_parsing``: per model seat and game / per model and run, the move
requests sent, the answers received, the unreadable ones (``parse_failure_rate`` = unreadable /
answers) and the fallback rounds (``fallback_rate`` = fallback rounds / rounds). Only calls for
moves count (``calls.purpose = 'move'``); strategies have no row.
"""

from __future__ import annotations

import duckdb

# How game_moves holds a game (one row a game of classic strategies): a letter a round, 'A' + a code whose
# bits say which moves were D: 1 A's move as played, 2 B's as played, 4 A's as chosen, 8 B's as chosen.
ROUND_CODE_BITS = {"action_a": 1, "action_b": 2, "intended_a": 4, "intended_b": 8}
# How game_moves.observed holds what each player saw of the other's move (NULL without observation noise: as
# played): a letter a round, 'A' + a code whose bits say which observation was D: 1 B's move as A saw it,
# 2 A's move as B saw it.
OBSERVED_CODE_BITS = {"observed_a": 1, "observed_b": 2}


def _round_codes() -> str:
    """The 16 letters as rows: the four moves each stands for, and the payoff cell of the moves as played
    (0: both C, 1: A C and B D, 2: A D and B C, 3: both D)."""
    rows = []
    for code in range(16):
        moves = ", ".join(f"'{'D' if code & bit else 'C'}'::move" for bit in ROUND_CODE_BITS.values())
        rows.append(f"('{chr(ord('A') + code)}', {moves}, {2 * (code & 1) + (code >> 1 & 1)})")
    return ", ".join(rows)


def _observed(column: str, played: str) -> str:
    """SQL for ``column`` (``observed_a`` or ``observed_b``) of an unfolded game_moves round: the move as
    ``played`` when the game stored no observations (NULL), else read from its letter (OBSERVED_CODE_BITS)."""
    bit = OBSERVED_CODE_BITS[column]
    saw_d = ", ".join(f"'{chr(ord('A') + code)}'" for code in range(4) if code & bit)
    return (
        f"CASE WHEN m.seen_letters IS NULL THEN {played} "
        f"WHEN m.seen_letters[m.i] IN ({saw_d}) THEN 'D' ELSE 'C' END::move"
    )


def _payoff(seat: str) -> str:
    cells = " ".join(f"WHEN {i} THEN m.payoff_{cell}_{seat}" for i, cell in enumerate(("cc", "cd", "dc")))
    return f"CASE k.cell {cells} ELSE m.payoff_dd_{seat} END"


def _letter_counts(moves: str) -> str:
    """SQL columns ``n_A`` .. ``n_P``: how many rounds of a game_moves row (``moves``) have each letter."""
    return ", ".join(
        f"length({moves}) - length(replace({moves}, '{letter}', '')) AS n_{letter}"
        for letter in (chr(ord("A") + code) for code in range(16))
    )


def _rounds_with(*, cell: int | None = None, chose_c: str | None = None) -> str:
    """SQL summing the letter counts of :func:`_letter_counts` over a class of rounds: those whose moves as
    played fall in payoff ``cell`` (as :func:`_round_codes` numbers them), or those in which the move
    ``chose_c`` names (``intended_a`` or ``intended_b``) was C."""
    letters = []
    for code in range(16):
        played = 2 * (code & 1) + (code >> 1 & 1)
        if (cell is not None and played == cell) or (chose_c is not None and not code & ROUND_CODE_BITS[chose_c]):
            letters.append(f"n_{chr(ord('A') + code)}")
    return " + ".join(letters)


VIEWS: dict[str, str] = {
    # Every round of every game, one row each, as users query it: the rounds of model games (and of every
    # game of a file written before schema 4) are stored a row each in round_rows; the games of classic
    # strategies a row a game in game_moves, which this unfolds (a letter a round, see ROUND_CODE_BITS).
    # A strategy's move is always its own choice, never a fallback. The letters are unfolded by splitting
    # the string once (a list, numbered by its subscripts), not by ``substr(moves, i, 1)`` for each round:
    # DuckDB finds the i-th character of a string by walking it from the start, so that cost grew with the
    # square of a game's length (one 20,000-round game took 2 s, a tournament of 168 such games ten minutes).
    # ``observed_a`` is B's move as A saw it, ``observed_b`` A's as B saw it: the move as played where there was
    # no observation noise (NULL stored, in every older file too).
    "rounds": f"""
        SELECT run_id, game_id, round, action_a, action_b, intended_a, intended_b, payoff_a, payoff_b,
               flagged_a, flagged_b, coalesce(observed_a, action_b) AS observed_a,
               coalesce(observed_b, action_a) AS observed_b
        FROM round_rows
        UNION ALL
        SELECT m.run_id, m.game_id, m.i::INTEGER AS round, k.action_a, k.action_b, k.intended_a, k.intended_b,
               {_payoff("a")} AS payoff_a, {_payoff("b")} AS payoff_b, FALSE AS flagged_a, FALSE AS flagged_b,
               {_observed("observed_a", "k.action_b")} AS observed_a,
               {_observed("observed_b", "k.action_a")} AS observed_b
        FROM (
            SELECT g.*, generate_subscripts(g.letters, 1) AS i, unnest(g.letters) AS letter
            FROM (SELECT *, string_split(moves, '') AS letters, string_split(observed, '') AS seen_letters
                  FROM game_moves) g
        ) m
        JOIN (VALUES {_round_codes()}) k(code, action_a, action_b, intended_a, intended_b, cell)
          ON k.code = m.letter""",
    # One row per player per round, from that player's side. ``choice`` is the move the player chose
    # (intended, before noise), NULL in a fallback round: the behaviour measures read it.
    # ``opp_seen`` is the opponent's move as this player saw it (``opp_action`` without observation noise).
    "player_rounds": """
        SELECT run_id, game_id, 'a' AS player, round, action_a AS action, action_b AS opp_action,
               intended_a AS intended, flagged_a AS flagged,
               CASE WHEN flagged_a THEN NULL ELSE intended_a END AS choice,
               payoff_a AS payoff, payoff_b AS opp_payoff, observed_a AS opp_seen
        FROM rounds
        UNION ALL
        SELECT run_id, game_id, 'b' AS player, round, action_b AS action, action_a AS opp_action,
               intended_b AS intended, flagged_b AS flagged,
               CASE WHEN flagged_b THEN NULL ELSE intended_b END AS choice,
               payoff_b AS payoff, payoff_a AS opp_payoff, observed_b AS opp_seen
        FROM rounds""",
    # Per game and player: totals and cooperation, one plain aggregate over the stored rows (no windows),
    # so the leaderboard and matchups stay fast on large runs: a game stored a row a round is summed row by
    # row; a game stored a row a game is counted letter by letter in its row, without unfolding it (the same
    # values: each payoff total is a count of rounds times the payoff of their cell). ``cooperations``
    # counts played C; ``chosen_cooperations`` the chosen C among the ``rounds_chosen`` (not fallback) rounds.
    # Per game and seat: the player's label, its name plus what tells it from other seats of the same name in the
    # run (see the module docstring).
    "player_labels": """
        WITH seats AS (
            SELECT run_id, game_id, 'a' AS player, player_a AS name, params_a AS params FROM games
            UNION ALL
            SELECT run_id, game_id, 'b' AS player, player_b AS name, params_b AS params FROM games
        ), parts AS (
            SELECT run_id, game_id, player, name,
                   coalesce(json_extract_string(params, '$.persona'),
                            json_extract_string(params, '$.prompts.persona')) AS persona,
                   json_extract_string(params, '$.temperature') AS temperature,
                   concat_ws('/', json_extract_string(params, '$.prompts.labels.cooperate'),
                             json_extract_string(params, '$.prompts.labels.defect')) AS labels,
                   nullif(concat_ws(' ', json_extract_string(params, '$.prompts.layout'),
                                    json_extract_string(params, '$.prompts.answer_format'),
                                    json_extract_string(params, '$.prompts.template_dir')), '') AS prompt
            FROM seats
        ), spread AS (
            SELECT run_id, name,
                   count(DISTINCT coalesce(temperature, '-')) > 1 AS by_temperature,
                   count(DISTINCT coalesce(labels, '-')) > 1 AS by_labels,
                   count(DISTINCT coalesce(prompt, '-')) > 1 AS by_prompt
            FROM parts GROUP BY run_id, name
        ), extras AS (
            SELECT p.run_id, p.game_id, p.player, p.name,
                   concat_ws(', ', p.persona,
                             CASE WHEN s.by_temperature THEN 'temperature ' || coalesce(p.temperature, 'default') END,
                             CASE WHEN s.by_labels THEN 'labels ' || coalesce(p.labels, 'default') END,
                             CASE WHEN s.by_prompt THEN 'prompt ' || coalesce(p.prompt, 'default') END) AS extra
            FROM parts p JOIN spread s ON s.run_id = p.run_id AND s.name = p.name
        )
        SELECT run_id, game_id, player, name AS player_name,
               CASE WHEN extra = '' THEN name ELSE name || ' (' || extra || ')' END AS player_label
        FROM extras""",
    "player_games": f"""
        WITH agg AS (
            SELECT run_id, game_id, COUNT(*) AS rounds,
                   SUM(payoff_a) AS payoff_a, SUM(payoff_b) AS payoff_b,
                   COUNT(*) FILTER (WHERE action_a = 'C') AS coop_a,
                   COUNT(*) FILTER (WHERE action_b = 'C') AS coop_b,
                   COUNT(*) FILTER (WHERE NOT flagged_a) AS chosen_a,
                   COUNT(*) FILTER (WHERE NOT flagged_b) AS chosen_b,
                   COUNT(*) FILTER (WHERE NOT flagged_a AND intended_a = 'C') AS chosen_coop_a,
                   COUNT(*) FILTER (WHERE NOT flagged_b AND intended_b = 'C') AS chosen_coop_b
            FROM round_rows GROUP BY run_id, game_id
            UNION ALL
            SELECT run_id, game_id, rounds,
                   cc * payoff_cc_a + cd * payoff_cd_a + dc * payoff_dc_a + dd * payoff_dd_a AS payoff_a,
                   cc * payoff_cc_b + cd * payoff_cd_b + dc * payoff_dc_b + dd * payoff_dd_b AS payoff_b,
                   cc + cd AS coop_a, cc + dc AS coop_b, rounds AS chosen_a, rounds AS chosen_b,
                   chosen_coop_a, chosen_coop_b
            FROM (
                SELECT run_id, game_id, rounds, payoff_cc_a, payoff_cc_b, payoff_cd_a, payoff_cd_b, payoff_dc_a,
                       payoff_dc_b, payoff_dd_a, payoff_dd_b,
                       {_rounds_with(cell=0)} AS cc, {_rounds_with(cell=1)} AS cd,
                       {_rounds_with(cell=2)} AS dc, {_rounds_with(cell=3)} AS dd,
                       {_rounds_with(chose_c="intended_a")} AS chosen_coop_a,
                       {_rounds_with(chose_c="intended_b")} AS chosen_coop_b
                FROM (
                    SELECT m.*, length(m.moves) AS rounds, {_letter_counts("m.moves")}
                    FROM game_moves m WHERE length(m.moves) > 0
                )
            )
        ), labelled AS (  -- each game with both seats' labels, read once for both branches below
            SELECT g.*, l.label_a, l.label_b
            FROM games g JOIN (
                SELECT run_id, game_id, any_value(player_label) FILTER (WHERE player = 'a') AS label_a,
                       any_value(player_label) FILTER (WHERE player = 'b') AS label_b
                FROM player_labels GROUP BY run_id, game_id
            ) l ON l.run_id = g.run_id AND l.game_id = g.game_id
        )
        SELECT g.run_id, g.game_id, g.condition, g.replicate, g.status, 'a' AS player,
               g.player_a AS player_name, g.player_b AS opponent_name, agg.rounds,
               agg.payoff_a AS payoff_total, agg.payoff_b AS opp_payoff_total, agg.coop_a AS cooperations,
               agg.chosen_a AS rounds_chosen, agg.chosen_coop_a AS chosen_cooperations,
               g.label_a AS player_label, g.label_b AS opponent_label
        FROM agg JOIN labelled g ON g.run_id = agg.run_id AND g.game_id = agg.game_id
        UNION ALL
        SELECT g.run_id, g.game_id, g.condition, g.replicate, g.status, 'b' AS player,
               g.player_b AS player_name, g.player_a AS opponent_name, agg.rounds,
               agg.payoff_b AS payoff_total, agg.payoff_a AS opp_payoff_total, agg.coop_b AS cooperations,
               agg.chosen_b AS rounds_chosen, agg.chosen_coop_b AS chosen_cooperations,
               g.label_b AS player_label, g.label_a AS opponent_label
        FROM agg JOIN labelled g ON g.run_id = agg.run_id AND g.game_id = agg.game_id""",
    # Per game and player: the rounds after an opponent defection (``provoked``) and the player's D
    # in them, on chosen moves (fallback rounds left out) after a defection *as the player saw it*
    # (observation noise), and on played moves after a defection as played. One window pass over
    # rounds serves both players.
    "player_reactions": """
        WITH rc AS (
            SELECT run_id, game_id, action_a, action_b, flagged_a, flagged_b,
                   intended_a, intended_b,
                   LAG(action_a) OVER w AS prev_a, LAG(action_b) OVER w AS prev_b,
                   LAG(observed_a) OVER w AS seen_by_a, LAG(observed_b) OVER w AS seen_by_b
            FROM rounds
            WINDOW w AS (PARTITION BY run_id, game_id ORDER BY round)
        ), agg AS (
            SELECT run_id, game_id,
                   COUNT(*) FILTER (WHERE seen_by_a = 'D' AND NOT flagged_a) AS provoked_a,
                   COUNT(*) FILTER (WHERE seen_by_a = 'D' AND NOT flagged_a AND intended_a = 'D') AS retaliated_a,
                   COUNT(*) FILTER (WHERE seen_by_b = 'D' AND NOT flagged_b) AS provoked_b,
                   COUNT(*) FILTER (WHERE seen_by_b = 'D' AND NOT flagged_b AND intended_b = 'D') AS retaliated_b,
                   COUNT(*) FILTER (WHERE prev_b = 'D') AS provoked_played_a,
                   COUNT(*) FILTER (WHERE prev_b = 'D' AND action_a = 'D') AS retaliated_played_a,
                   COUNT(*) FILTER (WHERE prev_a = 'D') AS provoked_played_b,
                   COUNT(*) FILTER (WHERE prev_a = 'D' AND action_b = 'D') AS retaliated_played_b
            FROM rc GROUP BY run_id, game_id
        )
        SELECT run_id, game_id, 'a' AS player, provoked_a AS provoked, retaliated_a AS retaliated,
               provoked_played_a AS provoked_played, retaliated_played_a AS retaliated_played FROM agg
        UNION ALL
        SELECT run_id, game_id, 'b' AS player, provoked_b AS provoked, retaliated_b AS retaliated,
               provoked_played_b AS provoked_played, retaliated_played_b AS retaliated_played FROM agg""",
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
               pg.player_name, pg.opponent_name, pg.rounds, pg.rounds_chosen,
               pg.rounds - pg.rounds_chosen AS fallback_rounds,
               pg.payoff_total, pg.payoff_total / pg.rounds AS payoff_per_round,
               pg.chosen_cooperations / NULLIF(pg.rounds_chosen, 0) AS cooperation_rate,
               pr.retaliated / NULLIF(pr.provoked, 0) AS retaliation_rate,
               (pr.provoked - pr.retaliated) / NULLIF(pr.provoked, 0) AS forgiveness_rate,
               pr.provoked AS provocations,
               pg.opp_payoff_total - pg.payoff_total AS exploitability_gap,
               c.time_to_collapse,
               pg.cooperations / pg.rounds AS cooperation_rate_played,
               pr.retaliated_played / NULLIF(pr.provoked_played, 0) AS retaliation_rate_played,
               (pr.provoked_played - pr.retaliated_played) / NULLIF(pr.provoked_played, 0)
                   AS forgiveness_rate_played,
               pr.provoked_played AS provocations_played, pg.player_label, pg.opponent_label
        FROM player_games pg
        JOIN player_reactions pr ON pr.run_id = pg.run_id AND pr.game_id = pg.game_id AND pr.player = pg.player
        LEFT JOIN game_collapse c ON c.run_id = pg.run_id AND c.game_id = pg.game_id""",
    "cooperation_over_time": """
        SELECT pr.run_id, pr.game_id, g.condition, g.replicate, pr.player,
               CASE pr.player WHEN 'a' THEN g.player_a ELSE g.player_b END AS player_name,
               pr.round, pr.action, pr.intended, pr.flagged,
               (COUNT(*) FILTER (WHERE pr.choice = 'C') OVER upto)
                   / NULLIF(COUNT(pr.choice) OVER upto, 0) AS cooperation_rate,
               AVG((pr.action = 'C')::DOUBLE) OVER upto AS cooperation_rate_played
        FROM player_rounds pr
        JOIN games g ON g.run_id = pr.run_id AND g.game_id = pr.game_id
        WINDOW upto AS (PARTITION BY pr.run_id, pr.game_id, pr.player ORDER BY pr.round
                        ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)""",
}


RETIRED_VIEWS = ("strategy_attribution", "strategy_fit")
"""Views of older files, dropped where the views are made again (a migration): renamed ``per_game_best_fit_shares``
and ``per_game_strategy_fit``, since they are each game's own best fit, not the SFEM estimate."""


def create_views(con: duckdb.DuckDBPyConnection) -> None:
    """Create (or replace) every metric view on ``con``, in dependency order: the per-game views
    here, the behaviour profile and strategy fit (:mod:`harness.store.views.profile`), the memory-one profile
    (:mod:`harness.store.views.memory_one`), the model
    answer views (:mod:`harness.store.views.answers`), the comprehension-check
    views (:mod:`harness.store.views.comprehension`), the tournament views built on them
    (:mod:`harness.store.views.leaderboard`), the evolution views (:mod:`harness.store.views.evolution`), and the
    counterfactual probes (:mod:`harness.store.views.probes`).

    Each view is bound when a query first reads it, not when it is created (DuckDB's ``DEFER_BINDING``): binding
    all of them up front cost about 0.1 s on every open of a results file, and it is done again at each
    query anyway. A view's columns are still known to ``DESCRIBE`` and ``information_schema``, which bind it."""
    from harness.store.views.answers import ANSWER_VIEWS
    from harness.store.views.comprehension import COMPREHENSION_VIEWS
    from harness.store.views.evolution import EVOLUTION_VIEWS
    from harness.store.views.leaderboard import LEADERBOARD_VIEWS
    from harness.store.views.memory_one import MEMORY_ONE_VIEWS
    from harness.store.views.probes import PROBE_VIEWS
    from harness.store.views.profile import PROFILE_VIEWS

    for name in RETIRED_VIEWS:
        con.execute(f"DROP VIEW IF EXISTS {name}")
    for name, sql in {
        **VIEWS,
        **PROFILE_VIEWS,
        **MEMORY_ONE_VIEWS,
        **ANSWER_VIEWS,
        **COMPREHENSION_VIEWS,
        **LEADERBOARD_VIEWS,
        **EVOLUTION_VIEWS,
        **PROBE_VIEWS,
    }.items():
        con.execute(f"CREATE OR REPLACE VIEW {name} WITH (DEFER_BINDING) AS {sql}")

"""Turn a results file's compact games into a row a round, so a test can edit single rounds.

Games of classic strategies are stored a row a game (``game_moves``) and read through the ``rounds`` view; a
model's game is stored a row a round (``round_rows``). Tests that hand-make a round a strategy cannot play (a
fallback, an odd payoff) write the run with strategies, then store it the way a model's run is stored: the
``rounds`` view answers the same before and after, and the rows can then be updated.
"""

from __future__ import annotations

import duckdb


def unfold_rounds(con: duckdb.DuckDBPyConnection) -> None:
    """Store every round of ``con``'s file as a row of ``round_rows`` and no game in ``game_moves``."""
    con.execute("CREATE TEMP TABLE unfolded AS SELECT * FROM rounds")
    con.execute("DELETE FROM game_moves")
    con.execute("DELETE FROM round_rows")
    con.execute("INSERT INTO round_rows SELECT * FROM unfolded")
    con.execute("DROP TABLE unfolded")

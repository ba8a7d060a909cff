"""The results tables (a public interface: users write SQL against these names) and their version.

Change a table only with a bump of ``SCHEMA_VERSION`` and a migration in ``MIGRATIONS``
that brings an older file up to date; the catalog refuses files from a newer PDBench.

A results file is set up in one transaction (:func:`create_schema`), so a process killed while setting
it up leaves an empty file, never a half-made one; :func:`file_problem` tells such a file, a damaged
one and a foreign one apart, each with what to do.
"""

from __future__ import annotations

import duckdb

from harness.errors import StoreError

SCHEMA_VERSION = 3

TABLES: dict[str, str] = {
    # A move is 'C' or 'D' and nothing else; an ENUM is also a byte per move on disk and fast to insert.
    "move": "CREATE TYPE IF NOT EXISTS move AS ENUM ('C', 'D')",
    "pdbench_meta": """
        CREATE TABLE IF NOT EXISTS pdbench_meta (
            key VARCHAR PRIMARY KEY,
            value VARCHAR NOT NULL
        )""",
    "runs": """
        CREATE TABLE IF NOT EXISTS runs (
            run_id VARCHAR PRIMARY KEY,
            kind VARCHAR NOT NULL,               -- experiment | tournament | eval | evolution
            created_at TIMESTAMP NOT NULL,       -- UTC
            finished_at TIMESTAMP,               -- UTC; NULL while running
            status VARCHAR NOT NULL,             -- running | complete | interrupted | failed
            config_json JSON NOT NULL,           -- the resolved config: refs expanded, defaults filled
            seed BIGINT NOT NULL,
            pdbench_version VARCHAR NOT NULL,
            schema_version INTEGER NOT NULL,
            games_planned INTEGER NOT NULL,
            collapse_k INTEGER NOT NULL,
            collapse_threshold DOUBLE NOT NULL,
            error VARCHAR
        )""",
    "games": """
        CREATE TABLE IF NOT EXISTS games (
            run_id VARCHAR NOT NULL,
            game_id INTEGER NOT NULL,
            condition VARCHAR NOT NULL,
            replicate INTEGER NOT NULL,
            player_a VARCHAR NOT NULL,
            player_b VARCHAR NOT NULL,
            params_a JSON,
            params_b JSON,
            horizon VARCHAR NOT NULL,            -- fixed | geometric
            planned_rounds INTEGER NOT NULL,     -- for geometric games: the drawn length
            stop_prob DOUBLE,
            noise DOUBLE NOT NULL,
            seed BIGINT NOT NULL,
            status VARCHAR NOT NULL,             -- complete | interrupted | failed
            rounds_played INTEGER NOT NULL,
            score_a DOUBLE NOT NULL,
            score_b DOUBLE NOT NULL,
            error VARCHAR,
            failure VARCHAR,                     -- retryable | authentication | permanent: why a failed game failed
            PRIMARY KEY (run_id, game_id)
        )""",
    "rounds": """
        CREATE TABLE IF NOT EXISTS rounds (
            run_id VARCHAR NOT NULL,
            game_id INTEGER NOT NULL,
            round INTEGER NOT NULL,              -- 1-based
            action_a move NOT NULL,              -- C | D, as played (after noise)
            action_b move NOT NULL,
            intended_a move NOT NULL,            -- C | D, as chosen (before noise)
            intended_b move NOT NULL,
            payoff_a DOUBLE NOT NULL,
            payoff_b DOUBLE NOT NULL,
            flagged_a BOOLEAN NOT NULL DEFAULT FALSE,  -- the move was a fallback, not the player's choice
            flagged_b BOOLEAN NOT NULL DEFAULT FALSE
        )""",
    "calls": """
        CREATE TABLE IF NOT EXISTS calls (
            run_id VARCHAR NOT NULL,
            game_id INTEGER NOT NULL,
            round INTEGER NOT NULL,
            player VARCHAR NOT NULL,             -- a | b
            attempt INTEGER NOT NULL,
            provider VARCHAR NOT NULL,
            model VARCHAR NOT NULL,
            request_json JSON NOT NULL,
            response_text VARCHAR,
            action move,
            outcome VARCHAR NOT NULL,
            error VARCHAR,
            duration_ms DOUBLE,
            input_tokens INTEGER,
            output_tokens INTEGER,
            cost_usd DOUBLE,
            cached BOOLEAN NOT NULL DEFAULT FALSE,
            created_at TIMESTAMP,
            purpose VARCHAR NOT NULL DEFAULT 'move',  -- move | comprehension (schema 2)
            option_order VARCHAR                 -- CD | DC: the order the options were shown in (schema 2)
        )""",
    # Calls of games that a resume replayed from the start: no longer part of any round, but they
    # were sent (and perhaps paid for), so they are kept for cost and audit.
    "superseded_calls": """
        CREATE TABLE IF NOT EXISTS superseded_calls (
            run_id VARCHAR NOT NULL,
            game_id INTEGER NOT NULL,
            round INTEGER NOT NULL,
            player VARCHAR NOT NULL,
            attempt INTEGER NOT NULL,
            provider VARCHAR NOT NULL,
            model VARCHAR NOT NULL,
            request_json JSON NOT NULL,
            response_text VARCHAR,
            action move,
            outcome VARCHAR NOT NULL,
            error VARCHAR,
            duration_ms DOUBLE,
            input_tokens INTEGER,
            output_tokens INTEGER,
            cost_usd DOUBLE,
            cached BOOLEAN NOT NULL DEFAULT FALSE,
            created_at TIMESTAMP,
            superseded_at TIMESTAMP,
            purpose VARCHAR NOT NULL DEFAULT 'move',
            option_order VARCHAR
        )""",
    # The answers of comprehension checks (schema 2): one row per question asked, with its call in ``calls``.
    "comprehension": """
        CREATE TABLE IF NOT EXISTS comprehension (
            run_id VARCHAR NOT NULL,
            game_id INTEGER NOT NULL,
            round INTEGER NOT NULL,              -- asked before the player's move in this round
            player VARCHAR NOT NULL,             -- a | b
            question VARCHAR NOT NULL,           -- payoff_CC, payoff_CD, payoff_DC, payoff_DD, horizon, last_move
            kind VARCHAR NOT NULL,               -- payoff | horizon | last_move
            expected VARCHAR NOT NULL,           -- the right answer: "8,0" (your points, theirs), "10", "0.95", C | D
            answer VARCHAR,                      -- the answer read, in the same form; NULL if unreadable
            correct BOOLEAN NOT NULL,            -- an unreadable answer is not correct
            attempt INTEGER NOT NULL             -- the answering call: calls.attempt with purpose 'comprehension'
        )""",
    # Evolution runs (schema 3): the population after every generation (row 0: the initial one), the
    # generations at which one player took over, and the payoff table the dynamics read.
    "population": """
        CREATE TABLE IF NOT EXISTS population (
            run_id VARCHAR NOT NULL,
            generation INTEGER NOT NULL,         -- 0: the initial population; a Moran process counts steps
            player VARCHAR NOT NULL,             -- the player's canonical label (GTFT(generous_prob=0.3), mock/tft)
            count INTEGER,                       -- individuals; NULL under replicator dynamics (no individuals)
            share DOUBLE,                        -- replicator only (otherwise NULL: see population_shares)
            PRIMARY KEY (run_id, generation, player)
        )""",
    "fixation": """
        CREATE TABLE IF NOT EXISTS fixation (
            run_id VARCHAR NOT NULL,
            generation INTEGER NOT NULL,         -- a generation at which every individual played player
            player VARCHAR NOT NULL,             -- (with mutation the population may leave and fix again)
            PRIMARY KEY (run_id, generation)
        )""",
    "payoff_table": """
        CREATE TABLE IF NOT EXISTS payoff_table (
            run_id VARCHAR NOT NULL,
            player VARCHAR NOT NULL,             -- row player
            opponent VARCHAR NOT NULL,           -- column player (player = opponent: two individuals of one type)
            payoff DOUBLE,                       -- mean match payoff of player against opponent; NULL: unplayed
            matches INTEGER NOT NULL,            -- the matches the mean is over
            source VARCHAR NOT NULL,             -- played_once | per_generation | estimated | supplied
            source_run VARCHAR,                  -- for supplied tables from games played through the engine: that run
            PRIMARY KEY (run_id, player, opponent)
        )""",
}

# MIGRATIONS[v] upgrades a file from schema version v to v + 1; the metric views are recreated
# after the last step (see migrate), so a migration only changes tables.
MIGRATIONS: dict[int, list[str]] = {
    # 2: calls say what they were for (a move, or a comprehension question) and in which order the two
    # options were shown; rows written before were all moves shown in the fixed order. The answers of
    # comprehension checks get a table of their own.
    1: [
        "ALTER TABLE calls ADD COLUMN purpose VARCHAR NOT NULL DEFAULT 'move'",
        "ALTER TABLE calls ADD COLUMN option_order VARCHAR",
        "ALTER TABLE superseded_calls ADD COLUMN purpose VARCHAR NOT NULL DEFAULT 'move'",
        "ALTER TABLE superseded_calls ADD COLUMN option_order VARCHAR",
        # Why a failed game failed, which decides whether resume replays it. Older files kept only the
        # reason's text; the call path wrote it in these forms, so the kind is read back from it.
        "ALTER TABLE games ADD COLUMN failure VARCHAR",
        """UPDATE games SET failure = CASE
            WHEN error LIKE '%HTTP 401%' OR error LIKE '%HTTP 403%' THEN 'authentication'
            WHEN error LIKE '%(gave up after %' OR error LIKE '%: timeout%' THEN 'retryable'
            ELSE 'permanent' END
           WHERE status = 'failed'""",
        # Comprehension checks did not exist before: the table starts empty.
        """CREATE TABLE comprehension (
            run_id VARCHAR NOT NULL,
            game_id INTEGER NOT NULL,
            round INTEGER NOT NULL,              -- asked before the player's move in this round
            player VARCHAR NOT NULL,             -- a | b
            question VARCHAR NOT NULL,           -- payoff_CC, payoff_CD, payoff_DC, payoff_DD, horizon, last_move
            kind VARCHAR NOT NULL,               -- payoff | horizon | last_move
            expected VARCHAR NOT NULL,           -- the right answer: "8,0" (your points, theirs), "10", "0.95", C | D
            answer VARCHAR,                      -- the answer read, in the same form; NULL if unreadable
            correct BOOLEAN NOT NULL,            -- an unreadable answer is not correct
            attempt INTEGER NOT NULL             -- the answering call: calls.attempt with purpose 'comprehension'
        )""",
    ],
    # 3: evolution runs (pdbench evolve). Older files hold none: the three tables start empty.
    2: [
        """CREATE TABLE population (
            run_id VARCHAR NOT NULL,
            generation INTEGER NOT NULL,
            player VARCHAR NOT NULL,
            count INTEGER,
            share DOUBLE,
            PRIMARY KEY (run_id, generation, player)
        )""",
        """CREATE TABLE fixation (
            run_id VARCHAR NOT NULL,
            generation INTEGER NOT NULL,
            player VARCHAR NOT NULL,
            PRIMARY KEY (run_id, generation)
        )""",
        """CREATE TABLE payoff_table (
            run_id VARCHAR NOT NULL,
            player VARCHAR NOT NULL,
            opponent VARCHAR NOT NULL,
            payoff DOUBLE,
            matches INTEGER NOT NULL,
            source VARCHAR NOT NULL,
            source_run VARCHAR,
            PRIMARY KEY (run_id, player, opponent)
        )""",
    ],
}

DATA_TABLES = ("runs", "games", "rounds", "calls", "superseded_calls", "comprehension", "population", "fixation",
               "payoff_table")  # fmt: skip
# The schema version that added a data table after the first (older files gain it when migrated).
ADDED_IN = {"comprehension": 2, "population": 3, "fixation": 3, "payoff_table": 3}


def data_tables(version: int) -> list[str]:
    """The data tables a results file of schema ``version`` has."""
    return [t for t in DATA_TABLES if ADDED_IN.get(t, 1) <= version]


def create_schema(con: duckdb.DuckDBPyConnection) -> None:
    """The tables, and the metric views inside the file too, so a run file opened on its own
    (``duckdb results/<run_id>.duckdb``) answers the same queries as ``pdbench sql``."""
    from harness.store.views.core import create_views

    # One transaction: a kill while setting up leaves an empty file (see file_problem), not a file with
    # some tables and no schema version.
    con.execute("BEGIN TRANSACTION")
    try:
        for ddl in TABLES.values():
            con.execute(ddl)
        create_views(con)
        con.execute("INSERT OR REPLACE INTO pdbench_meta VALUES ('schema_version', ?)", [str(SCHEMA_VERSION)])
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


def file_schema_version(con: duckdb.DuckDBPyConnection, catalog: str | None = None) -> int | None:
    """The schema version a results file was written with, or None if it has none (see :func:`file_problem`).
    A version that is not a whole number is a StoreError: the file was edited or damaged."""
    prefix = f'"{catalog}".' if catalog else ""
    try:
        row = con.execute(f"SELECT value FROM {prefix}pdbench_meta WHERE key = 'schema_version'").fetchone()
    except duckdb.CatalogException:
        return None
    if row is None:
        return None
    value = str(row[0])
    if not (value.isascii() and value.isdigit() and len(value) < 10):
        raise StoreError(f"its schema version {value[:40]!r} is not a version number (was it edited?)")
    return int(value)


def file_problem(con: duckdb.DuckDBPyConnection, catalog: str | None = None) -> str:
    """Why a file with no schema version is not readable results, and what to do: it is empty or half set
    up (a run killed while its file was being made, by this PDBench or an older one that did not set
    files up in one transaction), or it is some other DuckDB database."""
    tables = {
        r[0]
        for r in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = coalesce(?, current_database())",
            [catalog],
        ).fetchall()
    }
    if not tables or tables <= set(TABLES):
        return (
            "it holds no run: it was created, but the process stopped while setting it up, before the run began "
            "(nothing was played); delete it, or start the run again with --overwrite"
        )
    return "it is not a PDBench results file (it has no pdbench_meta table); move it out of the results folder"


def missing_run(con: duckdb.DuckDBPyConnection, path: object, run_id: str) -> str:
    """Why a results file set up for ``run_id`` holds no such run, and what to do."""
    others = [r[0] for r in con.execute("SELECT run_id FROM runs ORDER BY run_id LIMIT 3").fetchall()]
    if not others:
        return (
            f"{path} holds no run: it was set up, but the process stopped before run {run_id!r} began (nothing "
            "was played); start the run again with --overwrite"
        )
    return f"{path} holds run {', '.join(map(repr, others))}, not {run_id!r} (was it renamed?); resume it by its id"


def verify_readable(con: duckdb.DuckDBPyConnection, path: str) -> None:
    """Read every row of every table, so that a damaged file (a block whose checksum does not match) is
    refused before a resume changes anything in it. Damage in a block no query reads (an index, free
    space) only shows when it is written; :func:`is_damage` recognises it then."""
    database = con.execute("SELECT current_database()").fetchone()
    failure = unreadable(con, str(database[0]) if database else "main")
    if failure is not None:
        raise StoreError(damaged(path, failure)) from None


def unreadable(con: duckdb.DuckDBPyConnection, database: str) -> duckdb.Error | None:
    """The error met reading every row of every table of ``database`` (attached to ``con``), if any: how a
    reader finds which of its files a failing query met damage in (a checksum that does not match)."""
    try:
        tables = [r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() WHERE database_name = ? "
                                            "ORDER BY table_name", [database]).fetchall()]  # fmt: skip
        for table in tables:
            con.execute(f'SELECT count(*), max(hash(t)) FROM "{database}".main."{table}" AS t').fetchall()
    except duckdb.InterruptException:
        raise  # stopped (Ctrl-C, a time limit): says nothing about the file
    except duckdb.Error as exc:
        return exc
    return None


def is_damage(exc: BaseException) -> bool:
    """Whether a DuckDB error says the file itself is damaged (as opposed to a mistake in a query)."""
    text = str(exc)
    return isinstance(exc, duckdb.FatalException) or "Corrupt database file" in text or "Data Corruption" in text


def damaged(path: str, exc: BaseException) -> str:
    """The message for a results file DuckDB cannot read back."""
    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return (
        f"the results file {path} is damaged and cannot be read ({reason}). Restore it from a backup if you "
        "have one, or run the experiment again under a new run id (answers already paid for come from the "
        "response cache)."
    )


def migrate(con: duckdb.DuckDBPyConnection, path: str) -> bool:
    """Bring a writable results file up to ``SCHEMA_VERSION``, or explain why it cannot be.

    Every step and the recreated metric views go in one transaction, so a file is either wholly
    upgraded or left as it was (a kill in the middle leaves the older version, upgraded next time).
    Returns whether anything changed.
    """
    from harness.store.views.core import create_views

    try:
        version = file_schema_version(con)
        problem = file_problem(con) if version is None else None
    except StoreError as exc:
        raise StoreError(f"{path} cannot be used: {exc}; move it out of the results folder.") from None
    except duckdb.Error as exc:
        raise StoreError(damaged(path, exc)) from None
    if version is None:
        raise StoreError(f"{path}: {problem}.")
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"{path} was written by a newer PDBench (schema {version}, this one reads "
            f"up to {SCHEMA_VERSION}); upgrade PDBench to open it."
        )
    verify_readable(con, path)
    if version == SCHEMA_VERSION:
        return False
    missing = [v for v in range(version, SCHEMA_VERSION) if v not in MIGRATIONS]
    if missing:
        raise StoreError(
            f"{path} was written by an older PDBench (schema {version}, this one reads {SCHEMA_VERSION}) "
            "and no upgrade exists for it; re-run its experiment with this PDBench."
        )
    con.execute("BEGIN TRANSACTION")
    try:
        for step in range(version, SCHEMA_VERSION):
            for stmt in MIGRATIONS[step]:
                con.execute(stmt)
        create_views(con)
        con.execute("UPDATE pdbench_meta SET value = ? WHERE key = 'schema_version'", [str(SCHEMA_VERSION)])
        con.execute("INSERT OR REPLACE INTO pdbench_meta VALUES ('migrated_from', ?)", [str(version)])
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return True

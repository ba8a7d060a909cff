"""The results tables (a public interface: users write SQL against these names) and their version.

The schema is the ordered list of migrations (``MIGRATIONS``): a new file is every one applied, an older
file the ones it lacks. Change a table only by adding a migration (``SCHEMA_VERSION`` is their number);
the catalog refuses files from a newer PDBench.

A results file is set up in one transaction (:func:`create_schema`), so a process killed while setting
it up leaves an empty file, never a half-made one; :func:`file_problem` tells such a file, a damaged
one and a foreign one apart, each with what to do.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import duckdb

from harness.errors import StoreError
from harness.store.transaction import transaction

# A move is 'C' or 'D' and nothing else; an ENUM is also a byte per move on disk and fast to insert.
_MOVE = "ENUM ('C', 'D')"

# The tables as schema 1 made them; later migrations add to them (see MIGRATIONS).
_V1_CALL_COLUMNS = """
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
            created_at TIMESTAMP"""


@dataclass(frozen=True, slots=True)
class Migration:
    """One step of the schema, from the version before it to its own (the first step makes an empty file
    version 1). ``why`` says what changed and what an older file's rows become."""

    why: str
    statements: tuple[str, ...]


# The schema's one source: a new file is every step applied in order, an older file the steps it lacks
# (MIGRATIONS[v] takes a file from version v to v + 1). The metric views are made again after the last
# step (see harness.store.views), so a step only changes types and tables. Never edit a published step:
# add one.
MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        "1: runs, their games, every round of a game as a row, and the model calls behind the moves",
        (
            f"CREATE TYPE move AS {_MOVE}",
            """CREATE TABLE pdbench_meta (
                key VARCHAR PRIMARY KEY,
                value VARCHAR NOT NULL
            )""",
            """CREATE TABLE runs (
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
            """CREATE TABLE games (
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
                PRIMARY KEY (run_id, game_id)
            )""",
            """CREATE TABLE rounds (
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
            f"CREATE TABLE calls ({_V1_CALL_COLUMNS}\n)",
            # Calls of games that a resume replayed from the start: no longer part of any round, but they
            # were sent (and perhaps paid for), so they are kept for cost and audit.
            f"CREATE TABLE superseded_calls ({_V1_CALL_COLUMNS},\n            superseded_at TIMESTAMP\n)",
        ),
    ),
    Migration(
        "2: calls say what they were for (a move, or a comprehension question) and in which order the two options "
        "were shown; rows written before were all moves shown in the fixed order. Why a failed game failed. The "
        "answers of comprehension checks get a table of their own (empty in older files).",
        (
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
            """CREATE TABLE comprehension (
                run_id VARCHAR NOT NULL,
                game_id INTEGER NOT NULL,
                round INTEGER NOT NULL,              -- asked before the player's move in this round
                player VARCHAR NOT NULL,             -- a | b
                question VARCHAR NOT NULL,           -- payoff_CC, payoff_CD, payoff_DC, payoff_DD, horizon, last_move
                kind VARCHAR NOT NULL,               -- payoff | horizon | last_move
                expected VARCHAR NOT NULL,           -- the right answer: "8,0" (own, theirs), "10", "0.95", C | D
                answer VARCHAR,                      -- the answer read, in the same form; NULL if unreadable
                correct BOOLEAN NOT NULL,            -- an unreadable answer is not correct
                attempt INTEGER NOT NULL             -- the answering call: calls.attempt with purpose 'comprehension'
            )""",
        ),
    ),
    Migration(
        "3: evolution runs (pdbench evolve): the population after every generation (row 0: the initial one), the "
        "generations at which one player took over, and the payoff table the dynamics read. Older files hold none.",
        (
            """CREATE TABLE population (
                run_id VARCHAR NOT NULL,
                generation INTEGER NOT NULL,         -- 0: the initial population; a Moran process counts steps
                player VARCHAR NOT NULL,             -- the player's canonical label (GTFT(generous_prob=0.3), mock/tft)
                count INTEGER,                       -- individuals; NULL under replicator dynamics (no individuals)
                share DOUBLE,                        -- replicator only (otherwise NULL: see population_shares)
                PRIMARY KEY (run_id, generation, player)
            )""",
            """CREATE TABLE fixation (
                run_id VARCHAR NOT NULL,
                generation INTEGER NOT NULL,         -- a generation at which every individual played player
                player VARCHAR NOT NULL,             -- (with mutation the population may leave and fix again)
                PRIMARY KEY (run_id, generation)
            )""",
            """CREATE TABLE payoff_table (
                run_id VARCHAR NOT NULL,
                player VARCHAR NOT NULL,             -- row player
                opponent VARCHAR NOT NULL,           -- column player (player = opponent: two individuals of one type)
                payoff DOUBLE,                       -- mean match payoff of player against opponent; NULL: unplayed
                matches INTEGER NOT NULL,            -- the matches the mean is over
                source VARCHAR NOT NULL,             -- played_once | per_generation | estimated | supplied
                source_run VARCHAR,                  -- for supplied tables from games played through the engine
                PRIMARY KEY (run_id, player, opponent)
            )""",
        ),
    ),
    Migration(
        "4: games of classic strategies are stored at their size, one row a game (game_moves) instead of one a "
        "round; rounds is a view over both forms (harness.store.views.core), with the same columns and values, so "
        "queries do not change. Model games, and every game of an older file, keep a row a round (round_rows).",
        (
            "ALTER TABLE rounds RENAME TO round_rows",
            """CREATE TABLE game_moves (
                run_id VARCHAR NOT NULL,
                game_id INTEGER NOT NULL,
                moves VARCHAR NOT NULL,              -- a letter a round: both players' moves (see ROUND_CODES)
                payoff_cc_a DOUBLE NOT NULL,         -- the game's payoffs: A's and B's when both played C, ...
                payoff_cc_b DOUBLE NOT NULL,
                payoff_cd_a DOUBLE NOT NULL,         -- ... when A played C and B played D, ...
                payoff_cd_b DOUBLE NOT NULL,
                payoff_dc_a DOUBLE NOT NULL,
                payoff_dc_b DOUBLE NOT NULL,
                payoff_dd_a DOUBLE NOT NULL,
                payoff_dd_b DOUBLE NOT NULL
            )""",
        ),
    ),
    Migration(
        "5: calls say how the reply was asked for (answer_format: free, json, label or structured) and what read "
        "their move (reader: parser, structured or judge); a judge's calls have purpose 'judge'. In older files "
        "every move read was read by the free-text parser, and the format was not recorded (NULL).",
        (
            "ALTER TABLE calls ADD COLUMN answer_format VARCHAR",
            "ALTER TABLE calls ADD COLUMN reader VARCHAR",
            "ALTER TABLE superseded_calls ADD COLUMN answer_format VARCHAR",
            "ALTER TABLE superseded_calls ADD COLUMN reader VARCHAR",
            "UPDATE calls SET reader = 'parser' WHERE purpose = 'move' AND action IS NOT NULL",
            "UPDATE superseded_calls SET reader = 'parser' WHERE purpose = 'move' AND action IS NOT NULL",
        ),
    ),
    Migration(
        "6: evolution runs under the squared_share dynamics store what each phase's update read: per phase and "
        "player, its agents' points and rounds summed over all their matches (the pooled score is points / "
        "rounds), so a reader can recompute every update. Older files hold no such run, so the table is empty.",
        (
            """CREATE TABLE phase_scores (
                run_id VARCHAR NOT NULL,
                generation INTEGER NOT NULL,         -- the population row (population.generation) the phase was
                                                     -- played on; the last phase has no update after it
                player VARCHAR NOT NULL,             -- a player present in that population
                points DOUBLE NOT NULL,              -- its agents' payoffs, summed over all their matches of the phase
                rounds INTEGER NOT NULL,             -- those matches' rounds, summed (two of its agents: twice)
                matches INTEGER NOT NULL,            -- its agents' matches (each agent meets the N - 1 others once)
                PRIMARY KEY (run_id, generation, player)
            )""",
        ),
    ),
    Migration(
        "7: calls record the input tokens the provider read from its prompt cache (cached_input_tokens) and wrote "
        "to it (cache_write_tokens), both among input_tokens, and the prompt layout the request was built with "
        "(prompt_layout), and the service tier it was bought at (service_tier: standard or flex; NULL when nothing "
        "was bought: a response-cache hit, a mock answer). Older rows are NULL in all four: the provider's cache "
        "was not recorded, the layout was the one layout there was, and every paid call was standard.",
        (
            "ALTER TABLE calls ADD COLUMN cached_input_tokens INTEGER",
            "ALTER TABLE calls ADD COLUMN cache_write_tokens INTEGER",
            "ALTER TABLE calls ADD COLUMN prompt_layout VARCHAR",
            "ALTER TABLE calls ADD COLUMN service_tier VARCHAR",
            "ALTER TABLE superseded_calls ADD COLUMN cached_input_tokens INTEGER",
            "ALTER TABLE superseded_calls ADD COLUMN cache_write_tokens INTEGER",
            "ALTER TABLE superseded_calls ADD COLUMN prompt_layout VARCHAR",
            "ALTER TABLE superseded_calls ADD COLUMN service_tier VARCHAR",
        ),
    ),
    Migration(
        "8: observation noise (noise: {execution: p, observation: q}): games record their observation noise "
        "(observation_noise; games.noise stays the execution noise), and each round what each player saw of the "
        "other's move: round_rows.observed_a (B's move as A saw it) and observed_b (A's as B saw it), game_moves."
        "observed (a letter a round, 'A' + 1 if A saw D + 2 if B saw D). Older files had no observation noise: "
        "their games get observation_noise 0 and their rounds NULL, read as observed = played (the rounds view).",
        (
            "ALTER TABLE games ADD COLUMN observation_noise DOUBLE DEFAULT 0",
            "ALTER TABLE round_rows ADD COLUMN observed_a move",
            "ALTER TABLE round_rows ADD COLUMN observed_b move",
            "ALTER TABLE game_moves ADD COLUMN observed VARCHAR",
        ),
    ),
)

SCHEMA_VERSION = len(MIGRATIONS)


_CREATE = re.compile(r"CREATE TABLE (\w+)")
_RENAME = re.compile(r"ALTER TABLE (\w+) RENAME TO (\w+)")
_DROP = re.compile(r"DROP TABLE (?:IF EXISTS )?(\w+)")


@functools.cache
def data_tables(version: int = SCHEMA_VERSION) -> tuple[str, ...]:
    """The data tables of a results file of schema ``version`` (all but ``pdbench_meta``), in the order they
    were made, read from the migrations' statements (the tables each creates, renames and drops), so that the
    migrations stay the one place that says. Read rather than applied to a database: every catalog open asks,
    and a database made for it cost ~0.05 s in each process (``tests/unit/test_schema_migrations.py`` checks
    the two agree for every version)."""
    tables: list[str] = []
    for step in MIGRATIONS[:version]:
        for statement in step.statements:
            if created := _CREATE.match(statement):
                tables.append(created[1])
            elif renamed := _RENAME.match(statement):
                tables[tables.index(renamed[1])] = renamed[2]
            elif dropped := _DROP.match(statement):
                tables.remove(dropped[1])
    return tuple(name for name in tables if name != "pdbench_meta")


def declare_move(con: duckdb.DuckDBPyConnection) -> None:
    """The ``move`` type in ``con``'s own database (a catalog's, over attached run files), for the views."""
    con.execute(f"CREATE TYPE IF NOT EXISTS move AS {_MOVE}")


def empty_tables(con: duckdb.DuckDBPyConnection, schema: str) -> None:
    """The data tables of the current schema, empty, in a new ``schema`` of ``con``'s database (whose
    ``move`` type :func:`declare_move` made): what a catalog of an empty folder reads."""
    con.execute(f"CREATE SCHEMA {schema}")
    con.execute(f"USE {schema}")
    try:
        for step in MIGRATIONS:
            for statement in step.statements:
                if not statement.startswith("CREATE TYPE"):
                    con.execute(statement)
    finally:
        con.execute("USE main")


def _apply(con: duckdb.DuckDBPyConnection, version: int, target: int) -> None:
    """The statements of the migrations from ``version`` up to ``target``."""
    for step in MIGRATIONS[version:target]:
        for statement in step.statements:
            con.execute(statement)


def create_schema(con: duckdb.DuckDBPyConnection) -> None:
    """Every migration in order, and the metric views inside the file too, so a run file opened on its own
    (``duckdb results/<run_id>.duckdb``) answers the same queries as ``pdbench sql``."""
    from harness.store.views.core import create_views

    # One transaction: a kill while setting up leaves an empty file (see file_problem), not a file with
    # some tables and no schema version.
    with transaction(con):
        _apply(con, 0, SCHEMA_VERSION)
        create_views(con)
        con.execute("INSERT INTO pdbench_meta VALUES ('schema_version', ?)", [str(SCHEMA_VERSION)])


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
    if not tables or tables <= {"pdbench_meta"}.union(*map(data_tables, range(1, SCHEMA_VERSION + 1))):
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
        tables = [
            r[0]
            for r in con.execute(
                "SELECT table_name FROM duckdb_tables() WHERE database_name = ? ORDER BY table_name", [database]
            ).fetchall()
        ]
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
    if version < 1:  # no PDBench wrote one: there is no migration from it
        raise StoreError(
            f"{path} was written by an older PDBench (schema {version}, this one reads {SCHEMA_VERSION}) "
            "and no upgrade exists for it; re-run its experiment with this PDBench."
        )
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"{path} was written by a newer PDBench (schema {version}, this one reads "
            f"up to {SCHEMA_VERSION}); upgrade PDBench to open it."
        )
    verify_readable(con, path)
    if version == SCHEMA_VERSION:
        return False
    with transaction(con):
        _apply(con, version, SCHEMA_VERSION)
        create_views(con)
        con.execute("UPDATE pdbench_meta SET value = ? WHERE key = 'schema_version'", [str(SCHEMA_VERSION)])
        con.execute("INSERT OR REPLACE INTO pdbench_meta VALUES ('migrated_from', ?)", [str(version)])
    return True

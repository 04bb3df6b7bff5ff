"""The on-disk layout: one append-only log table whose row id is the revision (as kine).

Each write appends a row: ``created=1`` for a create, ``deleted=1`` for a delete (a tombstone
that keeps the last value), otherwise an update whose ``old_value`` holds the previous value so
watch events can carry it even after compaction removed the previous row. ``prev_revision``
is the key's previous row id (the tombstone's, for a re-create); the unique index on
``(name, prev_revision)`` makes two writes from the same predecessor collide even if the
in-memory compare-and-swap were wrong. ``expires`` (version 2) is the wall-clock time (Unix
seconds) at which the row's value expires, for writes with a time to live; NULL otherwise.

``kubedra_schema`` holds the layout version; :func:`migrate` brings older files forward and
refuses files written by a newer kubedra.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

SCHEMA_VERSION = 2

COMPACT_KEY = "compact_revision"

_V1 = (
    """CREATE TABLE log (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        created INTEGER NOT NULL,
        deleted INTEGER NOT NULL,
        create_revision INTEGER NOT NULL,
        prev_revision INTEGER NOT NULL,
        value BLOB NOT NULL,
        old_value BLOB
    )""",
    "CREATE INDEX log_name_id ON log (name, id)",
    "CREATE UNIQUE INDEX log_name_prev ON log (name, prev_revision)",
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID",
    f"INSERT INTO meta (key, value) VALUES ('{COMPACT_KEY}', 0)",
)



def _create_v1(conn: sqlite3.Connection) -> None:
    for stmt in _V1:
        conn.execute(stmt)


def _add_expires(conn: sqlite3.Connection) -> None:
    conn.execute("ALTER TABLE log ADD COLUMN expires REAL")


# MIGRATIONS[n] turns a version-n file into version n+1. Version 0 is an empty file.
MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {0: _create_v1, 1: _add_expires}


class SchemaError(Exception):
    """The file was written by a newer kubedra (or is not a kubedra store)."""


PRAGMAS = (
    "PRAGMA journal_mode = WAL",
    # FULL: the WAL is fsynced at every commit, so an acknowledged write survives a crash.
    "PRAGMA synchronous = FULL",
    "PRAGMA busy_timeout = 30000",
    "PRAGMA cache_size = -65536",
)
"""Every connection's settings (the committer process's too)."""


def connect(path: str, *, readonly: bool = False) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit) with durable WAL settings."""
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        mode = conn.execute(PRAGMAS[0]).fetchone()[0]
        if str(mode).lower() != "wal":
            raise SchemaError(f"{path}: cannot switch to WAL journal mode (got {mode})")
        for pragma in PRAGMAS[1:]:
            conn.execute(pragma)
        if readonly:
            conn.execute("PRAGMA query_only = ON")
    except BaseException:
        conn.close()
        raise
    return conn


def migrate(conn: sqlite3.Connection) -> None:
    """Create or upgrade the schema in one transaction."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute("CREATE TABLE IF NOT EXISTS kubedra_schema (version INTEGER NOT NULL)")
        row = conn.execute("SELECT version FROM kubedra_schema").fetchone()
        version = 0 if row is None else int(row[0])
        if version > SCHEMA_VERSION:
            raise SchemaError(
                f"store schema version {version} is newer than supported {SCHEMA_VERSION}"
            )
        while version < SCHEMA_VERSION:
            MIGRATIONS[version](conn)
            version += 1
        conn.execute("DELETE FROM kubedra_schema")
        conn.execute("INSERT INTO kubedra_schema (version) VALUES (?)", (version,))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise

"""Read queries over the log, each inside one read snapshot.

Every function takes a connection and runs in a reader thread. Reads at an old revision check
the compacted revision inside the same snapshot, so a concurrent compaction can never hand
back a half-compacted answer.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from kubedra.storage.broadcast import HistoryPage
from kubedra.storage.contract import (
    CompactedError,
    EventType,
    KeyValue,
    ListResult,
    WatchEvent,
)
from kubedra.storage.keys import prefix_end
from kubedra.storage.sqlite.schema import COMPACT_KEY

Row = tuple[Any, ...]

_EVENT_COLUMNS = "id, name, created, deleted, create_revision, prev_revision, value, old_value"

# The newest row of each key as of a revision: a seek on (name, id) per candidate row.
_LATEST = (
    "FROM log AS k WHERE {range} AND k.id <= :rev AND k.deleted = 0"
    " AND k.id = (SELECT MAX(j.id) FROM log AS j WHERE j.name = k.name AND j.id <= :rev)"
)


def _compacted(conn: sqlite3.Connection) -> int:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (COMPACT_KEY,)).fetchone()
    return int(row[0])


def _range(prefix: str, after: str | None, params: dict[str, object]) -> str:
    """SQL for ``name`` within the prefix (and after ``after``), filling ``params``."""
    clauses = []
    if after is not None and after >= prefix:
        clauses.append("k.name > :after")
        params["after"] = after
    else:
        clauses.append("k.name >= :start")
        params["start"] = prefix
    end = prefix_end(prefix)
    if end is not None:
        clauses.append("k.name < :end")
        params["end"] = end
    return " AND ".join(clauses)


def event_of(row: Row) -> WatchEvent:
    """The watch event a log row stands for (tombstones keep the last value in ``value``)."""
    rev, name, created, deleted, create_rev, prev_rev, value, old_value = row
    kv = KeyValue(name, value, create_rev, rev)
    if created:
        return WatchEvent(EventType.ADDED, kv, None, rev)
    if deleted:
        return WatchEvent(EventType.DELETED, kv, KeyValue(name, value, create_rev, prev_rev), rev)
    prev = KeyValue(name, old_value, create_rev, prev_rev)
    return WatchEvent(EventType.MODIFIED, kv, prev, rev)


def _begin(conn: sqlite3.Connection) -> int:
    conn.execute("BEGIN")
    return _compacted(conn)


def get_at(conn: sqlite3.Connection, key: str, revision: int) -> KeyValue | None:
    compacted = _begin(conn)
    try:
        if revision < compacted:
            raise CompactedError(revision, compacted)
        row = conn.execute(
            "SELECT id, create_revision, value, deleted FROM log"
            " WHERE name = ? AND id <= ? ORDER BY id DESC LIMIT 1",
            (key, revision),
        ).fetchone()
    finally:
        conn.execute("COMMIT")
    if row is None or row[3]:
        return None
    return KeyValue(key, row[2], row[1], row[0])


def list_at(
    conn: sqlite3.Connection, prefix: str, revision: int, limit: int, start_after: str | None
) -> ListResult:
    params: dict[str, object] = {"rev": revision}
    where = _LATEST.format(range=_range(prefix, start_after, params))
    sql = f"SELECT k.name, k.value, k.create_revision, k.id {where} ORDER BY k.name"
    if limit > 0:
        sql += " LIMIT :limit"
        params["limit"] = limit + 1
    compacted = _begin(conn)
    try:
        if revision < compacted:
            raise CompactedError(revision, compacted)
        rows = conn.execute(sql, params).fetchall()
        more = 0 < limit < len(rows)
        remaining = 0
        if more:
            del rows[limit:]
            params = {"rev": revision}
            where = _LATEST.format(range=_range(prefix, rows[-1][0], params))
            remaining = int(conn.execute(f"SELECT COUNT(*) {where}", params).fetchone()[0])
    finally:
        conn.execute("COMMIT")
    items = [KeyValue(name, value, create_rev, rev) for name, value, create_rev, rev in rows]
    return ListResult(items=items, revision=revision, more=more, remaining=remaining)


def history_after(conn: sqlite3.Connection, prefix: str, after: int, page: int) -> HistoryPage:
    """Up to ``page`` events under ``prefix`` after ``after``, for a watch's replay."""
    params: dict[str, object] = {"after_rev": after, "page": page}
    where = _range(prefix, None, params)
    compacted = _begin(conn)
    try:
        if after + 1 < compacted:
            raise CompactedError(after + 1, compacted)
        rows = conn.execute(
            f"SELECT {_EVENT_COLUMNS} FROM log AS k WHERE k.id > :after_rev AND {where}"
            " ORDER BY k.id LIMIT :page",
            params,
        ).fetchall()
        done = len(rows) < page
        covered = rows[-1][0] if rows else after
        if done:
            newest = conn.execute("SELECT MAX(id) FROM log").fetchone()[0]
            covered = max(covered, int(newest or 0))
    finally:
        conn.execute("COMMIT")
    return [event_of(row) for row in rows], covered, done


@dataclass(slots=True)
class Loaded:
    """What an opened store starts from."""

    latest: dict[str, KeyValue]
    """The latest live value of every key."""
    tombstones: dict[str, int]
    """The tombstone's row id of every deleted key still in the log."""
    expiring: list[tuple[float, str, int]]
    """(expires, key, mod revision) of the live values that expire."""
    revision: int
    compacted: int


def load_state(conn: sqlite3.Connection) -> Loaded:
    """One scan of each key's newest row."""
    compacted = _begin(conn)
    try:
        newest = int(conn.execute("SELECT MAX(id) FROM log").fetchone()[0] or 0)
        rows = conn.execute(
            "SELECT k.name, k.deleted, k.value, k.create_revision, k.id, k.expires FROM log AS k"
            " JOIN (SELECT MAX(id) AS id FROM log GROUP BY name) AS m ON k.id = m.id"
        ).fetchall()
    finally:
        conn.execute("COMMIT")
    latest = {name: KeyValue(name, value, cr, rev)
              for name, deleted, value, cr, rev, _ in rows if not deleted}
    tombstones = {name: rev for name, deleted, _, _, rev, _ in rows if deleted}
    expiring = [(float(expires), name, rev)
                for name, deleted, _, _, rev, expires in rows
                if not deleted and expires is not None]
    return Loaded(latest, tombstones, expiring, max(newest, compacted), compacted)

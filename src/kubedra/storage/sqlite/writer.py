"""The single writer: a thread that group-commits queued writes, durably, in order.

The event loop queues requests; the writer takes every request already waiting (up to a
batch size), checks each against the latest state (the in-memory cache plus the batch's own
earlier writes), appends the rows in one transaction, commits (fsync), then publishes the new
state and hands the outcomes and the watch events to the loop in one callback. Revisions are
assigned here, so they are gap-free and in commit order by construction. Compaction runs in
bounded chunks between write batches so it never stalls writers for long.
"""

from __future__ import annotations

import functools
import logging
import queue
import sqlite3
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from kubedra.storage.contract import (
    ConflictError,
    EventType,
    KeyExistsError,
    KeyValue,
    NotFoundError,
    StoreClosedError,
    StoreError,
    WatchEvent,
)
from kubedra.storage.sqlite.schema import COMPACT_KEY
from kubedra.storage.sqlite.state import State

log = logging.getLogger(__name__)

_INSERT = (
    "INSERT INTO log (id, name, created, deleted, create_revision, prev_revision, value,"
    " old_value) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)


@dataclass(slots=True)
class Write:
    """create (``expected`` None, ``value`` set), update (both set) or delete (no value)."""

    kind: Literal["create", "update", "delete"]
    key: str
    value: bytes | None
    expected: int | None
    token: Any


@dataclass(slots=True)
class Compact:
    """Compact to revision ``target``, in chunks queued behind waiting writes."""

    target: int
    token: Any


@dataclass(slots=True)
class Stop:
    """Finish: fail what is still queued, then acknowledge ``token`` and end the thread."""

    token: Any


Request = Write | Compact | Stop
Outcome = tuple[Any, object]
"""(token, result or exception) — the loop resolves the token's future with it."""
Deliver = Callable[[list[Outcome], list[WatchEvent]], None]


@dataclass(slots=True)
class _Batch:
    rows: list[tuple[Any, ...]] = field(default_factory=list)
    outcomes: list[Outcome] = field(default_factory=list)
    events: list[WatchEvent] = field(default_factory=list)
    overlay: dict[str, KeyValue | None] = field(default_factory=dict)
    last_row: dict[str, int] = field(default_factory=dict)


class Writer(threading.Thread):
    """The thread that owns the write connection (see the module docstring)."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        state: State,
        deliver: Deliver,
        *,
        tombstones: dict[str, int],
        max_batch: int,
        compact_chunk: int,
    ) -> None:
        super().__init__(name="kubedra-sqlite-writer", daemon=True)
        self.requests: queue.SimpleQueue[Request] = queue.SimpleQueue()
        self._conn = conn
        self._state = state
        # The tombstone's row id of every deleted key still in the log (compaction removes a
        # tombstone together with the key's older rows): a re-create's prev_revision, known
        # without reading the log for each create.
        self._tombstones = tombstones
        self._deliver = deliver
        self._max_batch = max_batch
        self._compact_chunk = compact_chunk

    def run(self) -> None:
        try:
            self._loop()
        finally:
            self._conn.close()

    def _loop(self) -> None:
        while True:
            first = self.requests.get()
            writes: list[Write] = []
            nxt: Request | None = first
            while isinstance(nxt, Write):
                writes.append(nxt)
                if len(writes) >= self._max_batch:
                    nxt = None
                    break
                try:
                    nxt = self.requests.get_nowait()
                except queue.Empty:
                    nxt = None
            if writes:
                self._guard(writes, functools.partial(self._commit_writes, writes))
            if isinstance(nxt, Compact):
                self._guard([nxt], functools.partial(self._compact_step, nxt))
            elif isinstance(nxt, Stop):
                self._finish(nxt)
                return

    def _finish(self, stop: Stop) -> None:
        """Fail whatever is still queued (a requeued compaction), then acknowledge the stop."""
        outcomes: list[Outcome] = []
        while True:
            try:
                outcomes.append((self.requests.get_nowait().token, StoreClosedError()))
            except queue.Empty:
                break
        outcomes.append((stop.token, None))
        self._deliver(outcomes, [])

    def _guard(self, requests: Sequence[Write | Compact], step: Callable[[], None]) -> None:
        """Run a step; if SQLite fails, roll back and fail the step's requests."""
        try:
            step()
        except Exception as exc:  # disk full, I/O error: nothing of the batch was committed
            log.exception("store write failed")
            if self._conn.in_transaction:
                self._conn.execute("ROLLBACK")
            error = StoreError(f"store write failed: {exc}")
            self._deliver([(r.token, error) for r in requests], [])

    # -- writes ----------------------------------------------------------------------------

    def _commit_writes(self, writes: list[Write]) -> None:
        batch = _Batch()
        revision = self._state.revision
        for write in writes:
            outcome = self._apply(write, batch, revision + 1)
            if isinstance(outcome, KeyValue):
                revision += 1
            batch.outcomes.append((write.token, outcome))
        if batch.rows:  # one transaction, one fsync, for the whole batch
            self._conn.execute("BEGIN IMMEDIATE")
            self._conn.executemany(_INSERT, batch.rows)
            self._conn.execute("COMMIT")
        tombstones = self._tombstones
        for key, kv in batch.overlay.items():
            if kv is None:
                tombstones[key] = batch.last_row[key]
            else:
                tombstones.pop(key, None)
        with self._state.lock:
            self._state.apply(batch.overlay, revision)
        self._deliver(batch.outcomes, batch.events)

    def _current(self, key: str, batch: _Batch) -> KeyValue | None:
        if key in batch.overlay:
            return batch.overlay[key]
        return self._state.latest.get(key)

    def _apply(self, write: Write, batch: _Batch, rev: int) -> object:
        """Check one write against the latest state; queue its row. Returns KeyValue or error."""
        key = write.key
        current = self._current(key, batch)
        if write.kind == "create":
            if current is not None:
                return KeyExistsError(key)
            assert write.value is not None
            prev = self._last_row(key, batch)
            kv = KeyValue(key, write.value, rev, rev)
            batch.rows.append((rev, key, 1, 0, rev, prev, write.value, None))
            batch.events.append(WatchEvent(EventType.ADDED, kv, None, rev))
            result = kv
        elif current is None:
            return NotFoundError(key)
        elif write.expected is not None and write.expected != current.mod_revision:
            return ConflictError(key, current)
        elif write.kind == "update":
            assert write.value is not None
            kv = KeyValue(key, write.value, current.create_revision, rev)
            batch.rows.append(
                (rev, key, 0, 0, current.create_revision, current.mod_revision, write.value,
                 current.value)
            )
            batch.events.append(WatchEvent(EventType.MODIFIED, kv, current, rev))
            result = kv
        else:
            cr = current.create_revision
            result = KeyValue(key, current.value, cr, rev)
            batch.rows.append((rev, key, 0, 1, cr, current.mod_revision, current.value, None))
            batch.events.append(WatchEvent(EventType.DELETED, result, current, rev))
            kv = None
        batch.overlay[key] = kv
        batch.last_row[key] = rev
        return result

    def _last_row(self, key: str, batch: _Batch) -> int:
        """The id of the newest row of a key that is not live (its tombstone), or 0."""
        last = batch.last_row.get(key)
        return self._tombstones.get(key, 0) if last is None else last

    # -- compaction ------------------------------------------------------------------------

    def _compact_step(self, request: Compact) -> None:
        """Compact one chunk towards the target; requeue the rest behind waiting writes.

        Compacting to R removes, among rows older than R, tombstones and every row some
        row at or before R replaced. Each chunk commits with its own compacted revision, so
        readers always see a consistent boundary.
        """
        state = self._state
        start = state.compacted
        end = min(request.target, start + self._compact_chunk)
        if end > start:
            conn = self._conn
            conn.execute("BEGIN IMMEDIATE")
            conn.execute(
                "DELETE FROM log WHERE id IN (SELECT prev_revision FROM log"
                " WHERE id > ? AND id <= ? AND prev_revision > 0)",
                (start, end),
            )
            conn.execute(
                "DELETE FROM log WHERE id >= ? AND id < ? AND deleted = 1", (start, end)
            )
            conn.execute("UPDATE meta SET value = ? WHERE key = ?", (end, COMPACT_KEY))
            conn.execute("COMMIT")
            if self._tombstones:
                self._tombstones = {k: t for k, t in self._tombstones.items() if t >= end}
            with state.lock:
                state.compacted = end
        if end < request.target:
            self.requests.put(request)
        else:
            self._deliver([(request.token, None)], [])

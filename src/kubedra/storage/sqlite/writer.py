"""The single writer: group-commits queued writes, durably, in order.

Requests queue on the event loop. While no commit is in flight, the writer takes every write
already waiting (up to a batch size), checks each against the latest state (the in-memory
cache plus the batch's own earlier writes), and sends the batch's rows to the committer
process as one INSERT: one implicit transaction, one fsync. When the commit is acknowledged
it publishes the new state and hands the outcomes and the watch events on. Revisions are
assigned here, so they are gap-free and in commit order by construction. Compaction runs in
bounded chunks between write batches so it never stalls writers for long.

If the committer process dies, the writer starts another and asks the log whether the batch
in flight landed: an acknowledged write is never lost, and none is written twice.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
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
from kubedra.storage.sqlite.committer import Committer, Statements
from kubedra.storage.sqlite.schema import COMPACT_KEY
from kubedra.storage.sqlite.state import State

log = logging.getLogger(__name__)

_COLUMNS = ("INSERT INTO log (id, name, created, deleted, create_revision, prev_revision, value,"
            " old_value, expires) VALUES ")
_ROW = "(?, ?, ?, ?, ?, ?, ?, ?, ?)"


@functools.lru_cache(maxsize=64)
def _insert(rows: int) -> str:
    """One INSERT of ``rows`` rows: a batch is one statement, so one step in the committer."""
    return _COLUMNS + ",".join([_ROW] * rows)


@dataclass(slots=True)
class Write:
    """create (``expected`` None, ``value`` set), update (both set) or delete (no value);
    ``expires``: when the written value expires (Unix seconds), if it does."""

    kind: Literal["create", "update", "delete"]
    key: str
    value: bytes | None
    expected: int | None
    token: Any
    expires: float | None = None


@dataclass(slots=True)
class Compact:
    """Compact to revision ``target``, in chunks queued behind waiting writes."""

    target: int
    token: Any


@dataclass(slots=True)
class Stop:
    """Finish: fail what is still queued, then acknowledge ``token``."""

    token: Any


Request = Write | Compact | Stop
Outcome = tuple[Any, object]
"""(token, result or exception) — the store resolves the token's future with it."""
Deliver = Callable[[list[Outcome], list[WatchEvent]], None]


@dataclass(slots=True)
class _Batch:
    rows: list[tuple[Any, ...]] = field(default_factory=list)
    outcomes: list[Outcome] = field(default_factory=list)
    events: list[WatchEvent] = field(default_factory=list)
    overlay: dict[str, KeyValue | None] = field(default_factory=dict)
    last_row: dict[str, int] = field(default_factory=dict)
    revision: int = 0


@dataclass(slots=True)
class _InFlight:
    """What the committer was asked to do, and what to do when it is done."""

    statements: Statements
    done: Callable[[], None]
    failed: Callable[[str], None]
    first_revision: int = 0
    """For a batch of writes: its first row id (whether it landed, after a crash)."""


class Writer:
    """The store's writes on the event loop, committed by a :class:`Committer` process."""

    def __init__(
        self,
        start: Callable[[], Awaitable[Committer]],
        committer: Committer,
        state: State,
        deliver: Deliver,
        *,
        tombstones: dict[str, int],
        max_batch: int,
        compact_chunk: int,
    ) -> None:
        self._start = start  # how ``committer`` was started: again, when it is lost
        self._committer: Committer | None = committer
        committer.on_exit = self._lost
        self._state = state
        # The tombstone's row id of every deleted key still in the log (compaction removes a
        # tombstone together with the key's older rows): a re-create's prev_revision, known
        # without reading the log for each create.
        self._tombstones = tombstones
        self._deliver = deliver
        self._max_batch = max_batch
        self._compact_chunk = compact_chunk
        self._jobs: deque[Request] = deque()
        self._in_flight: _InFlight | None = None
        self._scheduled = False
        self._broken: str | None = None
        self._restarting: asyncio.Task[None] | None = None

    def put(self, request: Request) -> None:
        """Queue a request; the writes queued in the same turn of the loop share a commit."""
        if self._broken is not None:
            if isinstance(request, Stop):
                self._finish(request)
            else:
                self._deliver([(request.token, StoreError(self._broken))], [])
            return
        self._jobs.append(request)
        if not self._scheduled and self._in_flight is None:
            self._scheduled = True
            asyncio.get_running_loop().call_soon(self._next)

    async def close(self) -> None:
        """End the committer process (after :class:`Stop` was acknowledged)."""
        if self._restarting is not None:
            self._restarting.cancel()
        committer, self._committer = self._committer, None
        if committer is not None:
            await committer.stop()

    # -- the queue -------------------------------------------------------------------------

    def _next(self) -> None:
        """Start the next job, or deliver what needs no commit, until one is in flight."""
        self._scheduled = False
        jobs = self._jobs
        while jobs and self._in_flight is None and self._committer is not None:
            head = jobs[0]
            if isinstance(head, Write):
                writes: list[Write] = []
                while jobs and len(writes) < self._max_batch:
                    nxt = jobs[0]
                    if not isinstance(nxt, Write):
                        break
                    writes.append(nxt)
                    jobs.popleft()
                self._write(writes)
            elif isinstance(head, Compact):
                jobs.popleft()
                self._compact_step(head)
            else:
                jobs.popleft()
                self._finish(head)

    def _send(self, job: _InFlight) -> None:
        assert self._committer is not None
        self._in_flight = job
        self._committer.send(job.statements, self._replied)

    def _replied(self, error: str | None, _rows: list[Any]) -> None:
        job, self._in_flight = self._in_flight, None
        assert job is not None
        if error is None:
            job.done()
        else:
            log.error("store write failed: %s", error)
            job.failed(error)
        self._next()

    def _finish(self, stop: Stop) -> None:
        """Fail whatever is still queued (a requeued compaction), then acknowledge the stop."""
        outcomes: list[Outcome] = [(r.token, StoreClosedError()) for r in self._jobs]
        self._jobs.clear()
        outcomes.append((stop.token, None))
        self._deliver(outcomes, [])

    # -- writes ----------------------------------------------------------------------------

    def _write(self, writes: list[Write]) -> None:
        batch = _Batch()
        revision = self._state.revision
        for write in writes:
            outcome = self._apply(write, batch, revision + 1)
            if isinstance(outcome, KeyValue):
                revision += 1
            batch.outcomes.append((write.token, outcome))
        batch.revision = revision
        if not batch.rows:  # nothing to commit: every write was refused
            self._deliver(batch.outcomes, [])
            return
        rows = batch.rows
        sql = _insert(len(rows))
        params = [value for row in rows for value in row]
        self._send(_InFlight([(sql, params)], lambda: self._committed(batch),
                             lambda error: self._refused(writes, error),
                             first_revision=rows[0][0]))

    def _committed(self, batch: _Batch) -> None:
        tombstones = self._tombstones
        for key, kv in batch.overlay.items():
            if kv is None:
                tombstones[key] = batch.last_row[key]
            else:
                tombstones.pop(key, None)
        self._state.apply(batch.overlay, batch.revision)
        self._deliver(batch.outcomes, batch.events)

    def _refused(self, requests: Sequence[Write | Compact], error: str) -> None:
        """Nothing of the request was committed: fail it, change nothing."""
        failure = StoreError(f"store write failed: {error}")
        self._deliver([(r.token, failure) for r in requests], [])

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
            batch.rows.append((rev, key, 1, 0, rev, prev, write.value, None, write.expires))
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
                 current.value, write.expires)
            )
            batch.events.append(WatchEvent(EventType.MODIFIED, kv, current, rev))
            result = kv
        else:
            cr = current.create_revision
            result = KeyValue(key, current.value, cr, rev)
            batch.rows.append(
                (rev, key, 0, 1, cr, current.mod_revision, current.value, None, None))
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
        start = self._state.compacted
        end = min(request.target, start + self._compact_chunk)
        if end <= start:
            self._compacted(request, end)
            return
        statements: Statements = [
            ("BEGIN IMMEDIATE", ()),
            ("DELETE FROM log WHERE id IN (SELECT prev_revision FROM log"
             " WHERE id > ? AND id <= ? AND prev_revision > 0)", (start, end)),
            ("DELETE FROM log WHERE id >= ? AND id < ? AND deleted = 1", (start, end)),
            ("UPDATE meta SET value = ? WHERE key = ?", (end, COMPACT_KEY)),
            ("COMMIT", ()),
        ]
        self._send(_InFlight(statements, lambda: self._compacted(request, end),
                             lambda error: self._refused([request], error)))

    def _compacted(self, request: Compact, end: int) -> None:
        if end > self._state.compacted:
            if self._tombstones:
                self._tombstones = {k: t for k, t in self._tombstones.items() if t >= end}
            self._state.compacted = end
        if end < request.target:
            self._jobs.append(request)
        else:
            self._deliver([(request.token, None)], [])

    # -- a lost committer ------------------------------------------------------------------

    def _lost(self, code: int | None) -> None:
        log.error("the store's writer process exited (code %s); starting another", code)
        self._committer = None
        self._restarting = asyncio.get_running_loop().create_task(self._restart())

    async def _restart(self) -> None:
        """A new committer; the job in flight is redone unless the log shows it landed (a
        batch of writes is one transaction: its first row is there or none of it is)."""
        job = self._in_flight
        try:
            committer = await self._start()
            landed = False
            if job is not None and job.first_revision:
                rows = await committer.request([("SELECT MAX(id) FROM log", ())])
                landed = (rows[0][0] or 0) >= job.first_revision
        except Exception as err:  # whatever stops a restart fails the writes
            self._give_up(f"the store's writer cannot be restarted: {err}")
            return
        finally:
            self._restarting = None
        committer.on_exit = self._lost
        self._committer = committer
        if job is None:
            self._next()
        elif landed:
            self._in_flight = None
            job.done()
            self._next()
        else:
            self._send(job)

    def _give_up(self, reason: str) -> None:
        """Fail the job in flight and everything queued; later writes fail at once."""
        log.error("%s", reason)
        self._broken = reason
        job, self._in_flight = self._in_flight, None
        if job is not None:
            job.failed(reason)
        failure = StoreError(reason)  # a stop is acknowledged: there is nothing left to end
        self._deliver([(r.token, None if isinstance(r, Stop) else failure) for r in self._jobs],
                      [])
        self._jobs.clear()

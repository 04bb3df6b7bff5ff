"""SQLiteStore: the embedded, durable, revisioned store (the default backend).

Point reads at the current revision are answered from the in-memory latest-value cache on the
event loop; reads at old revisions, lists and watch replays run in a small pool of reader
threads; writes go to the single writer thread (group commit). Nothing here blocks the loop
on disk I/O.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import sqlite3
import threading
from collections.abc import AsyncGenerator, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import IO, Any, TypeVar

from kubedra.storage.broadcast import Broadcaster, HistoryPage
from kubedra.storage.compactor import compact_periodically
from kubedra.storage.contract import (
    CompactedError,
    FutureRevisionError,
    KeyValue,
    ListResult,
    Store,
    StoreClosedError,
    StoreError,
    WatchEvent,
)
from kubedra.storage.sqlite import reads, schema
from kubedra.storage.sqlite.state import State
from kubedra.storage.sqlite.writer import Compact, Outcome, Request, Stop, Write, Writer

T = TypeVar("T")

_HISTORY_PAGE = 1000


class _Readers:
    """Reader threads, each with its own connection (SQLite connections are per thread)."""

    def __init__(self, path: str, threads: int) -> None:
        self._path = path
        self._local = threading.local()
        self._conns: list[sqlite3.Connection] = []
        self._conns_lock = threading.Lock()
        self._pool = ThreadPoolExecutor(threads, thread_name_prefix="kubedra-sqlite-read")

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = schema.connect(self._path, readonly=True)
            self._local.conn = conn
            with self._conns_lock:
                self._conns.append(conn)
        return conn

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        def call() -> T:
            return fn(self._conn(), *args)

        return await asyncio.get_running_loop().run_in_executor(self._pool, call)

    def close(self) -> None:
        self._pool.shutdown(wait=True)
        with self._conns_lock:
            for conn in self._conns:
                conn.close()
            self._conns.clear()


def _lock_file(path: str) -> IO[bytes]:
    """Hold an exclusive lock so a second process cannot become a second writer."""
    handle = open(f"{path}.lock", "wb")  # noqa: SIM115 - held until close()
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise StoreError(f"{path} is already open in another process") from None
    return handle


class SQLiteStore(Store):
    """Open with :meth:`open`; close with :meth:`close`."""

    def __init__(
        self,
        *,
        loop: asyncio.AbstractEventLoop,
        lock: IO[bytes],
        state: State,
        tombstones: dict[str, int],
        readers: _Readers,
        max_batch: int,
        compact_chunk: int,
        watch_buffer: int,
        writer_conn: sqlite3.Connection,
    ) -> None:
        self._loop = loop
        self._lock = lock
        self._state = state
        self._readers = readers
        self._broadcaster = Broadcaster(watch_buffer)
        self._closed = False
        self._compactor: asyncio.Task[None] | None = None
        self._writer = Writer(
            writer_conn,
            state,
            self._deliver,
            tombstones=tombstones,
            max_batch=max_batch,
            compact_chunk=compact_chunk,
        )
        self._writer.start()

    @classmethod
    async def open(
        cls,
        path: str | os.PathLike[str],
        *,
        compact_interval: float = 300.0,
        retain: int = 1000,
        max_batch: int = 1000,
        compact_chunk: int = 10_000,
        watch_buffer: int = 20_000,
        read_threads: int = 2,
    ) -> SQLiteStore:
        """Open (creating or migrating) the store at ``path``.

        Every ``compact_interval`` seconds (0: never) history older than the newest ``retain``
        revisions is compacted. ``watch_buffer`` bounds the undelivered events per watcher.
        ``max_batch`` caps the writes group-committed in one transaction. The store belongs to
        the running event loop.
        """
        if compact_interval < 0 or retain < 0:
            raise ValueError("compact_interval and retain must not be negative")
        if min(max_batch, compact_chunk, watch_buffer, read_threads) < 1:
            raise ValueError("max_batch, compact_chunk, watch_buffer, read_threads must be >= 1")
        file = os.fspath(path)

        def prepare() -> tuple[IO[bytes], sqlite3.Connection, State, dict[str, int]]:
            lock = _lock_file(file)
            try:
                conn = schema.connect(file)
                try:
                    schema.migrate(conn)
                    latest, tombstones, revision, compacted = reads.load_state(conn)
                except BaseException:
                    conn.close()
                    raise
            except BaseException:
                lock.close()
                raise
            return lock, conn, State(latest, revision, compacted), tombstones

        lock, conn, state, tombstones = await asyncio.to_thread(prepare)
        store = cls(
            loop=asyncio.get_running_loop(),
            lock=lock,
            state=state,
            tombstones=tombstones,
            readers=_Readers(file, read_threads),
            max_batch=max_batch,
            compact_chunk=compact_chunk,
            watch_buffer=watch_buffer,
            writer_conn=conn,
        )
        if compact_interval > 0:
            store._compactor = asyncio.create_task(
                compact_periodically(store, compact_interval, retain)
            )
        return store

    # -- plumbing --------------------------------------------------------------------------

    def _deliver(self, outcomes: list[Outcome], events: list[WatchEvent]) -> None:
        """Called by the writer thread after each commit; hops to the loop."""
        with contextlib.suppress(RuntimeError):  # the loop is gone; nobody is waiting
            self._loop.call_soon_threadsafe(self._on_commit, outcomes, events)

    def _on_commit(self, outcomes: list[Outcome], events: list[WatchEvent]) -> None:
        for future, result in outcomes:
            if future.done():
                continue
            if isinstance(result, BaseException):
                future.set_exception(result)
            else:
                future.set_result(result)
        self._broadcaster.publish(events)

    async def _submit(self, make: Callable[[asyncio.Future[Any]], Request]) -> Any:
        self._check_open()
        future: asyncio.Future[Any] = self._loop.create_future()
        self._writer.requests.put(make(future))
        return await future

    def _check_open(self) -> None:
        if self._closed:
            raise StoreClosedError()

    def _bounds(self, revision: int) -> int:
        """Check a read revision against the current and compacted ones; returns current."""
        if revision < 0:
            raise ValueError(f"revision must not be negative: {revision}")
        state = self._state
        with state.lock:
            current, compacted = state.revision, state.compacted
        if revision > current:
            raise FutureRevisionError(revision, current)
        if revision < compacted:
            raise CompactedError(revision, compacted)
        return current

    # -- reads -----------------------------------------------------------------------------

    async def get(self, key: str, *, revision: int | None = None) -> KeyValue | None:
        self._check_open()
        state = self._state
        if revision is None:
            with state.lock:
                return state.latest.get(key)
        if self._bounds(revision) == revision:
            with state.lock:
                if state.revision == revision:  # no write landed meanwhile: the cache is it
                    return state.latest.get(key)
        return await self._readers.run(reads.get_at, key, revision)

    async def list(
        self,
        prefix: str,
        *,
        revision: int | None = None,
        limit: int = 0,
        start_after: str | None = None,
    ) -> ListResult:
        self._check_open()
        state = self._state
        if revision is None:
            with state.lock:
                return state.range(prefix, start_after, limit)
        if self._bounds(revision) == revision:
            with state.lock:
                if state.revision == revision:
                    return state.range(prefix, start_after, limit)
        return await self._readers.run(reads.list_at, prefix, revision, limit, start_after)

    async def current_revision(self) -> int:
        return self._state.revision

    async def compacted_revision(self) -> int:
        return self._state.compacted

    # -- writes ----------------------------------------------------------------------------

    async def create(self, key: str, value: bytes) -> KeyValue:
        result: KeyValue = await self._submit(
            lambda f: Write("create", key, bytes(value), None, f)
        )
        return result

    async def update(self, key: str, value: bytes, expected_revision: int) -> KeyValue:
        result: KeyValue = await self._submit(
            lambda f: Write("update", key, bytes(value), expected_revision, f)
        )
        return result

    async def delete(self, key: str, expected_revision: int | None = None) -> KeyValue:
        result: KeyValue = await self._submit(
            lambda f: Write("delete", key, None, expected_revision, f)
        )
        return result

    async def compact(self, revision: int) -> None:
        self._check_open()
        state = self._state
        if revision > state.revision:
            raise FutureRevisionError(revision, state.revision)
        if revision <= state.compacted:
            return
        await self._submit(lambda f: Compact(revision, f))

    # -- watch -----------------------------------------------------------------------------

    def watch(self, prefix: str, after_revision: int) -> AsyncGenerator[WatchEvent, None]:
        self._check_open()
        return self._broadcaster.stream(prefix, after_revision, self._history)

    async def _history(self, prefix: str, after: int) -> HistoryPage:
        state = self._state
        with state.lock:
            current, compacted = state.revision, state.compacted
        if after + 1 < compacted:
            raise CompactedError(after + 1, compacted)
        if after >= current:
            return [], after, True
        return await self._readers.run(reads.history_after, prefix, after, _HISTORY_PAGE)

    # -- lifecycle -------------------------------------------------------------------------

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._compactor is not None:
            self._compactor.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._compactor
        self._broadcaster.close()
        stopped: asyncio.Future[Any] = self._loop.create_future()
        self._writer.requests.put(Stop(stopped))
        await stopped
        await asyncio.to_thread(self._writer.join)
        await asyncio.to_thread(self._readers.close)
        self._lock.close()

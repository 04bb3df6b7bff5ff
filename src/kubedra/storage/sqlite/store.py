"""SQLiteStore: the embedded, durable, revisioned store (the default backend).

Point reads at the current revision are answered from the in-memory latest-value cache on the
event loop; reads at old revisions, lists and watch replays run in a small pool of reader
threads; writes go to the single writer (group commit), whose commits run in the committer
process. Nothing here blocks the loop on disk I/O.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import sqlite3
import threading
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
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
from kubedra.storage.sqlite.committer import Committer
from kubedra.storage.sqlite.expiry import Expiry
from kubedra.storage.sqlite.state import State
from kubedra.storage.sqlite.writer import Compact, Outcome, Request, Stop, Write, Writer
from kubedra.tasks import cancel_and_wait

T = TypeVar("T")

_SETUP = [(pragma, ()) for pragma in schema.PRAGMAS]

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


_FILE_MODE = 0o600
_FILES = ("", "-wal", "-shm", ".lock")
"""The database, its WAL and shared-memory index, and its lock: they hold every object."""


def _private_files(path: str) -> None:
    """Make the store's files owner-only. SQLite creates the WAL and SHM with the mode of the
    database file, so a new store's file is created 0600 first; older stores' are
    tightened."""
    os.close(os.open(path, os.O_RDWR | os.O_CREAT, _FILE_MODE))
    for suffix in _FILES:
        with contextlib.suppress(FileNotFoundError):
            if os.stat(path + suffix).st_mode & 0o777 != _FILE_MODE:
                os.chmod(path + suffix, _FILE_MODE)


_LOCK_WAIT = 2.0
"""How long an open waits for the file's lock: the committer process of a writer that just
died holds it until it has finished the commit it was given."""


def _lock_file(path: str, wait: float) -> IO[bytes]:
    """Hold an exclusive lock so a second process cannot become a second writer (the
    committer process holds it too, for as long as it lives)."""
    handle = os.fdopen(os.open(f"{path}.lock", os.O_WRONLY | os.O_CREAT, _FILE_MODE), "wb")
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return handle
        except BlockingIOError:
            if time.monotonic() >= deadline:
                handle.close()
                raise StoreError(f"{path} is already open in another process") from None
            time.sleep(0.01)


class SQLiteStore(Store):
    """Open with :meth:`open`; close with :meth:`close`."""

    def __init__(
        self,
        *,
        start_committer: Callable[[], Awaitable[Committer]],
        loop: asyncio.AbstractEventLoop,
        lock: IO[bytes],
        state: State,
        tombstones: dict[str, int],
        expiring: list[tuple[float, str, int]],
        readers: _Readers,
        max_batch: int,
        compact_chunk: int,
        watch_buffer: int,
        committer: Committer,
    ) -> None:
        self._loop = loop
        self._lock = lock
        self._state = state
        self._readers = readers
        self._broadcaster = Broadcaster(watch_buffer)
        self._closed = False
        self._compactor: asyncio.Task[None] | None = None
        self._expiry = Expiry(expiring, lambda key: self._state.latest.get(key), self.delete)
        self._expirer = asyncio.create_task(self._expiry.run(), name="sqlite-expiry")
        self._writer = Writer(
            start_committer,
            committer,
            state,
            self._on_commit,
            tombstones=tombstones,
            max_batch=max_batch,
            compact_chunk=compact_chunk,
        )

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
        lock_wait: float = _LOCK_WAIT,
    ) -> SQLiteStore:
        """Open (creating or migrating) the store at ``path``.

        Every ``compact_interval`` seconds (0: never) history older than the newest ``retain``
        revisions is compacted. ``watch_buffer`` bounds the undelivered events per watcher.
        ``max_batch`` caps the writes group-committed in one transaction. ``lock_wait`` is how
        long to wait for another writer to let go of the file. The store belongs to the
        running event loop.
        """
        if compact_interval < 0 or retain < 0:
            raise ValueError("compact_interval and retain must not be negative")
        if min(max_batch, compact_chunk, watch_buffer, read_threads) < 1:
            raise ValueError("max_batch, compact_chunk, watch_buffer, read_threads must be >= 1")
        file = os.fspath(path)

        def prepare() -> tuple[IO[bytes], reads.Loaded]:
            lock = _lock_file(file, lock_wait)
            try:
                _private_files(file)
                conn = schema.connect(file)
                try:
                    schema.migrate(conn)
                    loaded = reads.load_state(conn)
                finally:
                    conn.close()
            except BaseException:
                lock.close()
                raise
            return lock, loaded

        lock, loaded = await asyncio.to_thread(prepare)

        def start_committer() -> Awaitable[Committer]:
            return Committer.start(file, _SETUP, keep=lock)

        try:
            committer = await start_committer()
        except BaseException:
            lock.close()
            raise
        store = cls(
            start_committer=start_committer,
            loop=asyncio.get_running_loop(),
            lock=lock,
            state=State(loaded.latest, loaded.revision, loaded.compacted),
            tombstones=loaded.tombstones,
            expiring=loaded.expiring,
            readers=_Readers(file, read_threads),
            max_batch=max_batch,
            compact_chunk=compact_chunk,
            watch_buffer=watch_buffer,
            committer=committer,
        )
        if compact_interval > 0:
            store._compactor = asyncio.create_task(
                compact_periodically(store, compact_interval, retain)
            )
        return store

    # -- plumbing --------------------------------------------------------------------------

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
        self._writer.put(make(future))
        return await future

    def _check_open(self) -> None:
        if self._closed:
            raise StoreClosedError()

    def _bounds(self, revision: int) -> int:
        """Check a read revision against the current and compacted ones; returns current."""
        if revision < 0:
            raise ValueError(f"revision must not be negative: {revision}")
        state = self._state
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
            return state.latest.get(key)
        # the revision asked is the current one: the cache is it
        if self._bounds(revision) == revision:
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
        if revision is None or self._bounds(revision) == revision:
            return state.range(prefix, start_after, limit)
        return await self._readers.run(reads.list_at, prefix, revision, limit, start_after)

    async def current_revision(self) -> int:
        return self._state.revision

    async def compacted_revision(self) -> int:
        return self._state.compacted

    # -- writes ----------------------------------------------------------------------------

    async def create(self, key: str, value: bytes, *, ttl: int = 0) -> KeyValue:
        expires = time.time() + ttl if ttl > 0 else None
        result: KeyValue = await self._submit(
            lambda f: Write("create", key, bytes(value), None, f, expires)
        )
        self._expires(expires, result)
        return result

    async def update(
        self, key: str, value: bytes, expected_revision: int, *, ttl: int = 0
    ) -> KeyValue:
        expires = time.time() + ttl if ttl > 0 else None
        result: KeyValue = await self._submit(
            lambda f: Write("update", key, bytes(value), expected_revision, f, expires)
        )
        self._expires(expires, result)
        return result

    def _expires(self, expires: float | None, written: KeyValue) -> None:
        if expires is not None:
            self._expiry.add(expires, written.key, written.mod_revision)

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
        await cancel_and_wait(self._expirer)
        if self._compactor is not None:
            await cancel_and_wait(self._compactor)
        self._broadcaster.close()
        stopped: asyncio.Future[Any] = self._loop.create_future()
        self._writer.put(Stop(stopped))
        await stopped
        await self._writer.close()
        await asyncio.to_thread(self._readers.close)
        self._lock.close()

"""Expiring keys of the SQLite store (writes with a time to live, as etcd's leases): a heap
of (expires, key, mod revision), and a task that deletes each key when its time comes unless
a later write replaced that value. The deletes are ordinary compare-and-swap deletes, so they
get revisions and watchers see DELETED events, as etcd's lease revocations."""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import logging
import time
from collections.abc import Awaitable, Callable, Iterable

from kubedra.storage.contract import (
    ConflictError,
    KeyValue,
    NotFoundError,
    StoreClosedError,
)

log = logging.getLogger(__name__)

RETRY = 1.0
"""Seconds before a failed expiry delete is tried again."""

Entry = tuple[float, str, int]


class Expiry:
    """Feed with :meth:`add` after each committed write with a time to live; :meth:`run` in a
    task (it logs and retries what fails; it ends when the store closes)."""

    def __init__(self, entries: Iterable[Entry], current: Callable[[str], KeyValue | None],
                 delete: Callable[[str, int], Awaitable[KeyValue]]) -> None:
        self._heap = list(entries)
        heapq.heapify(self._heap)
        self._current = current
        self._delete = delete
        self._wake = asyncio.Event()

    def add(self, expires: float, key: str, revision: int) -> None:
        # compared by value: compiled, a tuple is boxed anew each time it is read
        sooner = not self._heap or expires < self._heap[0][0]
        heapq.heappush(self._heap, (expires, key, revision))
        if sooner:  # than what the task waits for
            self._wake.set()

    async def run(self) -> None:
        while True:
            try:
                await self._expire_due()
            except StoreClosedError:
                return
            except Exception:  # never die silently: say so, then go on
                log.exception("expiring keys failed; retrying in %.0f s", RETRY)
                await asyncio.sleep(RETRY)
                continue
            self._wake.clear()
            wait = self._heap[0][0] - time.time() if self._heap else None
            if wait is None or wait > 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), wait)

    def _due(self, now: float) -> list[tuple[str, int]]:
        """Pop the entries whose time has come and whose value is still the live one."""
        heap, out = self._heap, []
        while heap and heap[0][0] <= now:
            _, key, revision = heapq.heappop(heap)
            live = self._current(key)
            if live is not None and live.mod_revision == revision:
                out.append((key, revision))
        return out

    async def _expire_due(self) -> None:
        """Delete what is due, all in one go (the writer commits them as one batch)."""
        due = self._due(time.time())
        if not due:
            return
        results = await asyncio.gather(*(self._delete(key, rev) for key, rev in due),
                                       return_exceptions=True)
        for (key, revision), result in zip(due, results, strict=True):
            if isinstance(result, StoreClosedError):
                raise result
            if isinstance(result, ConflictError | NotFoundError):
                continue  # replaced or deleted meanwhile: not ours to expire any more
            if isinstance(result, Exception):
                log.error("deleting expired key %s failed: %s; retrying in %.0f s",
                          key, result, RETRY)
                heapq.heappush(self._heap, (time.time() + RETRY, key, revision))

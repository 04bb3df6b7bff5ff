"""A keyed work queue as client-go's: a key is queued at most once, is never processed by two
workers at the same time, and a failed key is retried with exponential backoff."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)


class WorkQueue:
    def __init__(self, *, base_delay: float = 0.005, max_delay: float = 30.0) -> None:
        self._queue: asyncio.Queue[str] = asyncio.Queue()
        self._queued: set[str] = set()
        self._processing: set[str] = set()
        self._dirty_while_processing: set[str] = set()
        self._failures: dict[str, int] = {}
        self._base_delay = base_delay
        self._max_delay = max_delay

    def add(self, key: str) -> None:
        if key in self._processing:
            self._dirty_while_processing.add(key)
            return
        if key not in self._queued:
            self._queued.add(key)
            self._queue.put_nowait(key)

    def add_after(self, key: str, delay: float) -> None:
        asyncio.get_running_loop().call_later(delay, self.add, key)

    def retry(self, key: str) -> None:
        n = self._failures.get(key, 0)
        self._failures[key] = n + 1
        self.add_after(key, min(self._base_delay * (2**n), self._max_delay))

    def forget(self, key: str) -> None:
        self._failures.pop(key, None)

    def __len__(self) -> int:
        return len(self._queued)

    async def _get(self) -> str:
        key = await self._queue.get()
        self._queued.discard(key)
        self._processing.add(key)
        return key

    def _done(self, key: str) -> None:
        self._processing.discard(key)
        if key in self._dirty_while_processing:
            self._dirty_while_processing.discard(key)
            self.add(key)

    async def run_workers(self, sync: Callable[[str], Awaitable[None]], workers: int) -> None:
        """Process keys forever with ``workers`` concurrent tasks; ``sync`` raising retries."""

        async def worker() -> None:
            while True:
                key = await self._get()
                try:
                    await sync(key)
                    self.forget(key)
                except asyncio.CancelledError:
                    raise
                except Exception as e:
                    log.info("sync %s failed, retrying: %s", key, e)
                    self.retry(key)
                finally:
                    self._done(key)

        tasks = [asyncio.create_task(worker()) for _ in range(workers)]
        try:
            await asyncio.gather(*tasks)
        finally:
            for t in tasks:
                t.cancel()
            for t in tasks:
                with contextlib.suppress(asyncio.CancelledError):
                    await t

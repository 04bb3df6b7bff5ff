"""A keyed work queue as client-go's: a key is queued at most once, is never processed by two
workers at the same time, and a failed key is retried with exponential backoff. It reports
client-go's work-queue metrics under its ``name``, and each sync's duration."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

from kubedra.client.metrics import QueueMetrics, queue_metrics
from kubedra.tasks import cancel_and_wait

log = logging.getLogger(__name__)


class WorkQueue:
    def __init__(self, name: str, *, base_delay: float = 0.005, max_delay: float = 30.0,
                 metrics: QueueMetrics | None = None) -> None:
        self.name = name
        self._queue: asyncio.Queue[str] = asyncio.Queue()
        self._queued: dict[str, float] = {}  # key -> when it was added
        self._processing: dict[str, float] = {}  # key -> when its sync started
        self._dirty_while_processing: set[str] = set()
        self._failures: dict[str, int] = {}
        self._base_delay = base_delay
        self._max_delay = max_delay
        m = metrics or queue_metrics()
        self._depth = m.depth.labels(name)
        self._adds = m.adds.labels(name)
        self._retries = m.retries.labels(name)
        self._queue_duration = m.queue_duration.labels(name)
        self._work_duration = m.work_duration.labels(name)
        self._sync_ok = m.sync_duration.labels(name, "success")
        self._sync_error = m.sync_duration.labels(name, "error")
        m.unfinished_work.labels(name).set_function(self._unfinished_seconds)
        m.longest_running.labels(name).set_function(self._longest_running_seconds)

    def add(self, key: str) -> None:
        self._adds.inc()
        if key in self._processing:
            self._dirty_while_processing.add(key)
            return
        if key not in self._queued:
            self._queued[key] = time.monotonic()
            self._depth.inc()
            self._queue.put_nowait(key)

    def add_after(self, key: str, delay: float) -> None:
        if delay <= 0:
            self.add(key)
        else:
            asyncio.get_running_loop().call_later(delay, self.add, key)

    def retry(self, key: str) -> None:
        n = self._failures.get(key, 0)
        self._failures[key] = n + 1
        self._retries.inc()
        self.add_after(key, min(self._base_delay * (2**n), self._max_delay))

    def forget(self, key: str) -> None:
        self._failures.pop(key, None)

    def __len__(self) -> int:
        return len(self._queued)

    def _unfinished_seconds(self) -> float:
        now = time.monotonic()
        return sum(now - t for t in list(self._processing.values()))

    def _longest_running_seconds(self) -> float:
        started = list(self._processing.values())
        return time.monotonic() - min(started) if started else 0.0

    async def _get(self) -> str:
        key = await self._queue.get()
        now = time.monotonic()
        self._queue_duration.observe(now - self._queued.pop(key, now))
        self._depth.dec()
        self._processing[key] = now
        return key

    def _done(self, key: str) -> None:
        started = self._processing.pop(key, None)
        if started is not None:
            self._work_duration.observe(time.monotonic() - started)
        if key in self._dirty_while_processing:
            self._dirty_while_processing.discard(key)
            self.add(key)

    async def run_workers(self, sync: Callable[[str], Awaitable[None]], workers: int) -> None:
        """Process keys forever with ``workers`` concurrent tasks; ``sync`` raising retries."""

        async def worker() -> None:
            while True:
                key = await self._get()
                start = time.perf_counter()
                try:
                    await sync(key)
                    self._sync_ok.observe(time.perf_counter() - start)
                    self.forget(key)
                except asyncio.CancelledError:
                    raise
                except Exception as e:
                    self._sync_error.observe(time.perf_counter() - start)
                    log.info("%s: sync %s failed, retrying: %s", self.name, key, e)
                    self.retry(key)
                finally:
                    self._done(key)

        tasks = [asyncio.create_task(worker()) for _ in range(workers)]
        try:
            await asyncio.gather(*tasks)
        finally:
            await cancel_and_wait(*tasks)

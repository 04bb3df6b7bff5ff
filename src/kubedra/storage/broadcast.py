"""Fan committed events out to watchers, and splice history replay onto the live feed.

Backends that commit in-process (SQLite) publish each committed batch here, in revision order,
on the event loop. A watcher subscribes *before* it reads history, so every event newer than
the history snapshot is already in its buffer; events the snapshot covered are dropped by
revision, which gives exactly-once, in-order delivery without polling. Buffers are bounded:
a watcher that falls too far behind gets :class:`WatchOverflowError` instead of using
unbounded memory.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence

from kubedra.storage.contract import WatchEvent, WatchOverflowError

HistoryPage = tuple[list[WatchEvent], int, bool]
"""Events after a revision, the revision the page covers up to, and whether history is done."""

HistoryReader = Callable[[str, int], Awaitable[HistoryPage]]


class _Watcher:
    __slots__ = ("buffer", "closed", "error", "prefix", "wakeup")

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.buffer: deque[WatchEvent] = deque()
        self.wakeup = asyncio.Event()
        self.error: BaseException | None = None
        self.closed = False


class Broadcaster:
    """Watchers of one store; all methods run on the store's event loop."""

    def __init__(self, max_pending: int) -> None:
        self._max_pending = max_pending
        self._by_prefix: dict[str, set[_Watcher]] = {}
        self._closed = False

    def publish(self, events: Sequence[WatchEvent]) -> None:
        """Append committed events (in revision order) to every matching watcher."""
        if not events:
            return
        for prefix, group in list(self._by_prefix.items()):
            matched = (
                events if not prefix else [e for e in events if e.kv.key.startswith(prefix)]
            )
            if not matched:
                continue
            for watcher in list(group):
                pending = len(watcher.buffer) + len(matched)
                if pending > self._max_pending:
                    watcher.buffer.clear()
                    watcher.error = WatchOverflowError(pending)
                    self._drop(watcher)
                else:
                    watcher.buffer.extend(matched)
                watcher.wakeup.set()

    def close(self) -> None:
        """End every watch (their iterations finish normally)."""
        self._closed = True
        for group in self._by_prefix.values():
            for watcher in group:
                watcher.closed = True
                watcher.wakeup.set()
        self._by_prefix.clear()

    def _drop(self, watcher: _Watcher) -> None:
        group = self._by_prefix.get(watcher.prefix)
        if group is not None:
            group.discard(watcher)
            if not group:
                del self._by_prefix[watcher.prefix]

    async def stream(
        self, prefix: str, after_revision: int, history: HistoryReader
    ) -> AsyncGenerator[WatchEvent, None]:
        """Replay ``history`` after ``after_revision``, then follow the live feed."""
        if self._closed:
            return
        watcher = _Watcher(prefix)
        self._by_prefix.setdefault(prefix, set()).add(watcher)
        try:
            last = after_revision
            done = False
            while not done:
                events, covered, done = await history(prefix, last)
                for event in events:
                    yield event
                last = max(last, covered)
                if watcher.error is not None:
                    raise watcher.error
            buffer = watcher.buffer
            while True:
                while buffer:
                    event = buffer.popleft()
                    if event.revision > last:
                        last = event.revision
                        yield event
                if watcher.error is not None:
                    raise watcher.error
                if watcher.closed:
                    return
                watcher.wakeup.clear()
                await watcher.wakeup.wait()
        finally:
            self._drop(watcher)

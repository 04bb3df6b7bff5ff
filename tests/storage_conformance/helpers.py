"""Small helpers shared by the conformance tests."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from kubedra.storage.contract import EventType, WatchEvent

TIMEOUT = 10.0


async def take(events: AsyncIterator[WatchEvent], n: int) -> list[WatchEvent]:
    """The next ``n`` events (fails instead of hanging if they do not come)."""

    async def collect() -> list[WatchEvent]:
        out: list[WatchEvent] = []
        while len(out) < n:
            out.append(await anext(events))
        return out

    return await asyncio.wait_for(collect(), TIMEOUT)


async def assert_quiet(events: AsyncIterator[WatchEvent], wait: float = 0.2) -> None:
    """No further event arrives within ``wait`` seconds."""
    try:
        event = await asyncio.wait_for(anext(events), wait)
    except TimeoutError:
        return
    raise AssertionError(f"unexpected event {event}")


def summary(events: list[WatchEvent]) -> list[tuple[EventType, str, bytes, int]]:
    return [(e.type, e.kv.key, e.kv.value, e.revision) for e in events]

"""Small helpers shared by the conformance tests."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from kubedra.storage.contract import EventType, Store, WatchEvent

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


def numbered_key(i: int) -> str:
    """``/p/0007``: keys that list in creation order."""
    return f"/p/{i:04d}"


async def create_numbered(store: Store, n: int) -> None:
    """Create ``numbered_key(0..n-1)``, each holding ``b"0"`` (revisions 1..n on a new store)."""
    for i in range(n):
        await store.create(numbered_key(i), b"0")


async def update_numbered(store: Store, n: int) -> None:
    """Set each of ``numbered_key(0..n-1)`` to ``b"1"`` in key order, one write at a time."""
    for i in range(n):
        kv = await store.get(numbered_key(i))
        assert kv is not None
        await store.update(numbered_key(i), b"1", kv.mod_revision)


def summary(events: list[WatchEvent]) -> list[tuple[EventType, str, bytes, int]]:
    return [(e.type, e.kv.key, e.kv.value, e.revision) for e in events]

"""Time to live: a key written with ``ttl`` is deleted by the store once ``ttl`` seconds have
passed since that write (never earlier), as an ordinary delete a watch sees; a later write
replaces the expiry (a write without ``ttl`` keeps the key for good). etcd raises leases
shorter than its minimum (2 s with default timings), so the tests use 3 s."""

from __future__ import annotations

import asyncio
import time

from kubedra.storage.contract import EventType, Store
from tests.storage_conformance.helpers import take

TTL = 3
LATE = 12.0
"""How late an expiry may come on a loaded machine (etcd checks leases every 500 ms)."""


async def _gone(store: Store, key: str, since: float) -> float:
    """Seconds from ``since`` until ``key`` is gone (fails after ``TTL + LATE``)."""
    while await store.get(key) is not None:
        assert time.monotonic() - since < TTL + LATE, f"{key} did not expire"
        await asyncio.sleep(0.1)
    return time.monotonic() - since


async def test_expired_key_is_deleted_and_watchers_see_it(store: Store) -> None:
    start = await store.current_revision()
    events = store.watch("/ttl/", start)
    try:
        first = asyncio.ensure_future(take(events, 3))
        await asyncio.sleep(0.05)
        written = time.monotonic()
        kv = await store.create("/ttl/event", b"v1", ttl=TTL)
        keep = await store.create("/ttl/kept", b"k")
        assert await _gone(store, "/ttl/event", written) >= TTL - 0.5  # never early
        added, _, deleted = await first
    finally:
        await events.aclose()
    assert added.kv == kv
    assert deleted.type is EventType.DELETED and deleted.kv.key == "/ttl/event"
    assert deleted.kv.value == b"v1" and deleted.prev == kv
    assert deleted.revision > keep.mod_revision
    assert await store.get("/ttl/kept") == keep
    assert [i.key for i in (await store.list("/ttl/")).items] == ["/ttl/kept"]


async def test_update_with_ttl_restarts_the_clock(store: Store) -> None:
    kv = await store.create("/ttl/a", b"1", ttl=TTL)
    await asyncio.sleep(TTL / 2)
    renewed = time.monotonic()
    await store.update("/ttl/a", b"2", kv.mod_revision, ttl=TTL)
    assert await _gone(store, "/ttl/a", renewed) >= TTL - 0.5


async def test_update_without_ttl_keeps_the_key(store: Store) -> None:
    kv = await store.create("/ttl/b", b"1", ttl=TTL)
    kept = await store.update("/ttl/b", b"2", kv.mod_revision)
    # a key with an expiry, written alongside, shows when the first one would have gone
    written = time.monotonic()
    await store.create("/ttl/probe", b"p", ttl=TTL)
    await _gone(store, "/ttl/probe", written)
    await asyncio.sleep(1.0)
    assert await store.get("/ttl/b") == kept

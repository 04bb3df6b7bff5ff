"""Watch: ordered events with previous values, replay from old revisions, no gaps or repeats."""

from __future__ import annotations

import asyncio
import contextlib

from kubedra.storage.contract import EventType, Store
from tests.storage_conformance.helpers import (
    assert_quiet,
    create_numbered,
    summary,
    take,
    update_numbered,
)

ADDED, MODIFIED, DELETED = EventType.ADDED, EventType.MODIFIED, EventType.DELETED


async def test_live_events_carry_values_and_previous_values(store: Store) -> None:
    start = await store.current_revision()
    events = store.watch("/p/", start)
    try:
        # The watch is registered on first iteration; later writes must all show up.
        first = asyncio.ensure_future(take(events, 3))
        await asyncio.sleep(0.05)
        a1 = await store.create("/p/a", b"v1")
        a2 = await store.update("/p/a", b"v2", a1.mod_revision)
        gone = await store.delete("/p/a")
        added, modified, deleted = await first
    finally:
        await events.aclose()
    assert (added.type, added.kv, added.prev, added.revision) == (ADDED, a1, None, start + 1)
    assert (modified.type, modified.kv, modified.prev) == (MODIFIED, a2, a1)
    assert modified.revision == a2.mod_revision
    assert deleted.type == DELETED
    assert deleted.kv == gone and deleted.kv.value == b"v2"
    assert deleted.prev == a2
    assert deleted.revision == gone.mod_revision


async def test_replay_from_old_revision_then_live(store: Store) -> None:
    base = await store.current_revision()
    a = await store.create("/p/a", b"a1")
    await store.create("/q/x", b"other prefix")
    b = await store.create("/p/b", b"b1")
    await store.update("/p/a", b"a2", a.mod_revision)
    await store.delete("/p/b", b.mod_revision)
    events = store.watch("/p/", a.mod_revision)  # missed everything after the first write
    try:
        missed = await take(events, 3)
        assert summary(missed) == [
            (ADDED, "/p/b", b"b1", base + 3),
            (MODIFIED, "/p/a", b"a2", base + 4),
            (DELETED, "/p/b", b"b1", base + 5),
        ]
        await store.create("/q/y", b"")
        await store.create("/p/c", b"c1")
        live = await take(events, 1)
        assert summary(live) == [(ADDED, "/p/c", b"c1", base + 7)]
        await assert_quiet(events)
    finally:
        await events.aclose()


async def test_watch_from_the_start_replays_all_history(store: Store) -> None:
    base = await store.current_revision()
    kv = await store.create("/a", b"1")
    await store.update("/a", b"2", kv.mod_revision)
    events = store.watch("", base)
    try:
        assert [e.revision for e in await take(events, 2)] == [base + 1, base + 2]
        await assert_quiet(events)
    finally:
        await events.aclose()


async def test_watch_from_future_revision_starts_there(store: Store) -> None:
    base = (await store.create("/a", b"1")).mod_revision - 1
    events = store.watch("/", base + 3)
    try:
        pending = asyncio.ensure_future(take(events, 1))
        await asyncio.sleep(0.05)
        for i in range(4):
            await store.create(f"/k{i}", b"")
        assert [e.revision for e in await pending] == [base + 4]
    finally:
        await events.aclose()


async def test_replay_and_live_writes_race_without_gaps_or_repeats(store: Store) -> None:
    base = await store.current_revision()
    await create_numbered(store, 300)
    total = 300 + 300
    task = asyncio.create_task(update_numbered(store, 300))
    starts = (0, 100, 299, 450)
    watches = [store.watch("/p/", base + start) for start in starts]
    try:
        got = await asyncio.gather(
            *(take(w, total - start) for w, start in zip(watches, starts, strict=True))
        )
        await task
        for start, events in zip(starts, got, strict=True):
            assert [e.revision for e in events] == list(range(base + start + 1, base + total + 1))
    finally:
        for w in watches:
            await w.aclose()


async def test_many_watchers_see_the_same_ordered_stream(store: Store) -> None:
    base = await store.current_revision()
    watches = [store.watch("/", base) for _ in range(20)]
    pending = [asyncio.ensure_future(take(w, 200)) for w in watches]
    try:
        await asyncio.sleep(0.05)
        await asyncio.gather(*(store.create(f"/k/{i}", str(i).encode()) for i in range(200)))
        streams = await asyncio.gather(*pending)
        expected = summary(streams[0])
        assert [e[3] for e in expected] == list(range(base + 1, base + 201))
        assert all(summary(s) == expected for s in streams)
    finally:
        for w in watches:
            await w.aclose()


async def test_prefix_filters_events(store: Store) -> None:
    base = await store.current_revision()
    events = store.watch("/r/pods/", base)
    try:
        await store.create("/r/podsx/a", b"")
        await store.create("/r/nodes/a", b"")
        await store.create("/r/pods/a", b"")
        assert summary(await take(events, 1)) == [(ADDED, "/r/pods/a", b"", base + 3)]
        await assert_quiet(events)
    finally:
        await events.aclose()


async def test_closing_one_watch_leaves_others_running(store: Store) -> None:
    base = await store.current_revision()
    one = store.watch("/", base)
    two = store.watch("/", base)
    await store.create("/a", b"")
    assert len(await take(one, 1)) == 1
    await one.aclose()
    await store.create("/b", b"")
    try:
        assert [e.kv.key for e in await take(two, 2)] == ["/a", "/b"]
    finally:
        await two.aclose()


async def test_close_ends_watches(store: Store) -> None:
    events = store.watch("/", await store.current_revision())
    await store.create("/a", b"")
    assert len(await take(events, 1)) == 1
    waiting = asyncio.ensure_future(anext(events))
    await asyncio.sleep(0.05)
    await store.close()
    with contextlib.suppress(StopAsyncIteration):
        extra = await asyncio.wait_for(waiting, 5)
        raise AssertionError(f"event after close: {extra}")

"""Compaction: old reads and watches fail cleanly, everything at or after the boundary works."""

from __future__ import annotations

import pytest

from kubedra.storage.contract import CompactedError, EventType, FutureRevisionError, Store
from tests.storage_conformance.helpers import summary, take


async def history(store: Store) -> int:
    """Revisions base+1..base+8 (base is returned): /a created, updated twice; /b created and
    deleted; /c, /d created, /d deleted."""
    base = await store.current_revision()
    a = await store.create("/a", b"a1")  # 1
    b = await store.create("/b", b"b1")  # 2
    a = await store.update("/a", b"a2", a.mod_revision)  # 3
    await store.delete("/b", b.mod_revision)  # 4
    await store.create("/c", b"c1")  # 5
    a = await store.update("/a", b"a3", a.mod_revision)  # 6
    await store.create("/d", b"d1")  # 7
    await store.delete("/d")  # 8
    return base


async def test_reads_before_compacted_revision_fail(store: Store) -> None:
    base = await history(store)
    await store.compact(base + 5)
    assert await store.compacted_revision() == base + 5
    with pytest.raises(CompactedError) as info:
        await store.get("/a", revision=base + 4)
    assert (info.value.revision, info.value.compacted) == (base + 4, base + 5)
    with pytest.raises(CompactedError):
        await store.list("/", revision=base + 2)


async def test_reads_at_and_after_compacted_revision_are_exact(store: Store) -> None:
    base = await history(store)
    before = {rev: await store.list("/", revision=rev) for rev in range(base + 5, base + 9)}
    await store.compact(base + 5)
    for rev, listed in before.items():
        assert (await store.list("/", revision=rev)).items == listed.items
    a5 = await store.get("/a", revision=base + 5)
    assert a5 is not None and (a5.value, a5.mod_revision) == (b"a2", base + 3)
    assert await store.get("/b", revision=base + 5) is None
    d7 = await store.get("/d", revision=base + 7)
    assert d7 is not None and d7.value == b"d1"
    now = await store.get("/a")
    assert now is not None and now.value == b"a3" and now.create_revision == base + 1


async def test_watch_from_compacted_revision_fails_cleanly(store: Store) -> None:
    base = await history(store)
    await store.compact(base + 5)
    events = store.watch("/", base + 2)
    with pytest.raises(CompactedError) as info:
        await take(events, 1)
    assert info.value.compacted == base + 5
    await events.aclose()


async def test_watch_right_at_the_boundary_replays_from_it(store: Store) -> None:
    base = await history(store)
    await store.compact(base + 4)  # the tombstone at 4 is the boundary event
    events = store.watch("/", base + 3)
    try:
        got = await take(events, 5)
    finally:
        await events.aclose()
    assert summary(got) == [
        (EventType.DELETED, "/b", b"b1", base + 4),
        (EventType.ADDED, "/c", b"c1", base + 5),
        (EventType.MODIFIED, "/a", b"a3", base + 6),
        (EventType.ADDED, "/d", b"d1", base + 7),
        (EventType.DELETED, "/d", b"d1", base + 8),
    ]
    assert got[0].prev is not None and got[0].prev.mod_revision == base + 2
    assert got[2].prev is not None and got[2].prev.value == b"a2"


async def test_compaction_keeps_writes_working(store: Store) -> None:
    base = await history(store)
    await store.compact(base + 8)
    await store.create("/b", b"b2")  # re-create a key whose history is gone
    a = await store.get("/a")
    assert a is not None
    await store.update("/a", b"a4", a.mod_revision)
    listed = await store.list("/")
    assert [(kv.key, kv.value) for kv in listed.items] == [
        ("/a", b"a4"),
        ("/b", b"b2"),
        ("/c", b"c1"),
    ]
    assert listed.revision == base + 10


async def test_compact_is_monotonic_and_bounded(store: Store) -> None:
    base = await history(store)
    await store.compact(base + 6)
    await store.compact(base + 3)  # already compacted further: nothing to do
    assert await store.compacted_revision() == base + 6
    with pytest.raises(FutureRevisionError):
        await store.compact(base + 9)


async def test_pages_of_a_compacted_revision_fail(store: Store) -> None:
    for i in range(10):
        await store.create(f"/p/{i}", b"")
    page = await store.list("/p/", limit=4)
    for i in range(3):
        await store.delete(f"/p/{i}")
    await store.compact(await store.current_revision())
    with pytest.raises(CompactedError):
        await store.list("/p/", revision=page.revision, limit=4, start_after=page.items[-1].key)

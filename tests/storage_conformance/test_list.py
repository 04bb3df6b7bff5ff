"""Range listing by prefix: order, deletes, old revisions, consistent pagination."""

from __future__ import annotations

import asyncio

import pytest

from kubedra.storage.contract import FutureRevisionError, ListResult, Store
from tests.storage_conformance.helpers import create_numbered, update_numbered


def keys(result: ListResult) -> list[str]:
    return [kv.key for kv in result.items]


async def test_list_returns_live_keys_under_prefix_in_key_order(store: Store) -> None:
    for key in ["/r/pods/b", "/r/pods/a", "/r/pods/c", "/r/podsx/a", "/r/pod", "/r/nodes/a"]:
        await store.create(key, key.encode())
    await store.delete("/r/pods/c")
    result = await store.list("/r/pods/")
    assert keys(result) == ["/r/pods/a", "/r/pods/b"]
    assert [kv.value for kv in result.items] == [b"/r/pods/a", b"/r/pods/b"]
    assert result.revision == await store.current_revision()
    assert not result.more and result.remaining == 0


async def test_list_items_carry_revisions(store: Store) -> None:
    a = await store.create("/p/a", b"1")
    a = await store.update("/p/a", b"2", a.mod_revision)
    result = await store.list("/p/")
    assert result.items == [a]


async def test_list_everything_with_empty_prefix(store: Store) -> None:
    await store.create("/x", b"")
    await store.create("/a", b"")
    assert keys(await store.list("")) == ["/a", "/x"]


async def test_list_non_ascii_keys_sort_by_code_point(store: Store) -> None:
    for key in ["/u/\u00e9", "/u/z", "/u/\U0001f600", "/u/a"]:
        await store.create(key, b"")
    await store.create("/u\U0010ffff", b"")
    assert keys(await store.list("/u/")) == ["/u/a", "/u/z", "/u/\u00e9", "/u/\U0001f600"]


async def test_list_at_old_revision(store: Store) -> None:
    a = await store.create("/p/a", b"a1")
    b = await store.create("/p/b", b"b1")
    then = await store.current_revision()
    await store.update("/p/a", b"a2", a.mod_revision)
    await store.delete("/p/b")
    await store.create("/p/c", b"c1")
    old = await store.list("/p/", revision=then)
    assert old.items == [a, b] and old.revision == then
    now = await store.list("/p/")
    assert keys(now) == ["/p/a", "/p/c"]


async def test_list_at_future_revision_fails(store: Store) -> None:
    now = (await store.create("/p/a", b"")).mod_revision
    with pytest.raises(FutureRevisionError):
        await store.list("/p/", revision=now + 1)


async def test_pagination_is_consistent_at_one_revision(store: Store) -> None:
    for i in range(25):
        await store.create(f"/p/{i:03d}", b"v0")
    first = await store.list("/p/", limit=10)
    assert keys(first) == [f"/p/{i:03d}" for i in range(10)]
    assert first.more and first.remaining == 15
    # The world changes between pages: none of it may leak into the listing.
    await store.delete("/p/015")
    await store.create("/p/0125", b"new")
    kv = await store.get("/p/020")
    assert kv is not None
    await store.update("/p/020", b"v1", kv.mod_revision)
    pages = [first]
    while pages[-1].more:
        pages.append(
            await store.list(
                "/p/", revision=first.revision, limit=10, start_after=pages[-1].items[-1].key
            )
        )
    assert [len(p.items) for p in pages] == [10, 10, 5]
    assert [p.remaining for p in pages] == [15, 5, 0]
    assert all(p.revision == first.revision for p in pages)
    listed = [kv for p in pages for kv in p.items]
    assert [kv.key for kv in listed] == [f"/p/{i:03d}" for i in range(25)]
    assert all(kv.value == b"v0" for kv in listed)


async def test_limit_equal_to_size_has_no_more(store: Store) -> None:
    for i in range(5):
        await store.create(f"/p/{i}", b"")
    page = await store.list("/p/", limit=5)
    assert len(page.items) == 5 and not page.more


async def test_start_after_outside_prefix(store: Store) -> None:
    for key in ["/p/a", "/p/b"]:
        await store.create(key, b"")
    assert keys(await store.list("/p/", start_after="/a")) == ["/p/a", "/p/b"]
    assert keys(await store.list("/p/", start_after="/p/a")) == ["/p/b"]
    assert keys(await store.list("/p/", start_after="/q")) == []


async def test_list_during_concurrent_writes_sees_a_snapshot(store: Store) -> None:
    base = await store.current_revision()
    await create_numbered(store, 200)
    writer = asyncio.create_task(update_numbered(store, 200))
    try:
        for _ in range(10):
            result = await store.list("/p/")
            assert len(result.items) == 200
            # Key i was updated at revision base + 201 + i: the listing shows exactly those
            # updates at or before its own revision.
            for i, kv in enumerate(result.items):
                updated = base + 201 + i <= result.revision
                assert kv.value == (b"1" if updated else b"0")
                assert kv.mod_revision == base + (201 + i if updated else i + 1)
    finally:
        await writer

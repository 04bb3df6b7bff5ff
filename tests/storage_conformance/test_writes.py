"""Create, update, delete and get: revisions, compare-and-swap, races."""

from __future__ import annotations

import asyncio

import pytest

from kubedra.storage.contract import (
    ConflictError,
    FutureRevisionError,
    KeyExistsError,
    KeyValue,
    NotFoundError,
    Store,
    StoreClosedError,
)


async def test_new_store_is_empty(store: Store) -> None:
    assert await store.compacted_revision() <= await store.current_revision()
    assert await store.get("/a") is None
    assert (await store.list("")).items == []


async def test_each_write_takes_the_next_revision(store: Store) -> None:
    base = await store.current_revision()
    a = await store.create("/a", b"1")
    b = await store.create("/b", b"2")
    a2 = await store.update("/a", b"3", a.mod_revision)
    gone = await store.delete("/b")
    revisions = [a.mod_revision, b.mod_revision, a2.mod_revision, gone.mod_revision]
    assert revisions == [base + 1, base + 2, base + 3, base + 4]
    assert await store.current_revision() == base + 4


async def test_create_then_get(store: Store) -> None:
    kv = await store.create("/registry/pods/ns/a", b"v1")
    assert kv == KeyValue("/registry/pods/ns/a", b"v1", kv.mod_revision, kv.mod_revision)
    assert await store.get("/registry/pods/ns/a") == kv


async def test_create_existing_key_fails_and_writes_nothing(store: Store) -> None:
    await store.create("/a", b"v1")
    rev = await store.current_revision()
    with pytest.raises(KeyExistsError) as info:
        await store.create("/a", b"v2")
    assert info.value.key == "/a"
    assert await store.current_revision() == rev
    got = await store.get("/a")
    assert got is not None and got.value == b"v1"


async def test_update_with_matching_revision(store: Store) -> None:
    kv = await store.create("/a", b"v1")
    new = await store.update("/a", b"v2", kv.mod_revision)
    assert new.value == b"v2"
    assert new.create_revision == kv.create_revision
    assert new.mod_revision > kv.mod_revision
    assert await store.get("/a") == new


async def test_update_with_stale_revision_conflicts_with_current_value(store: Store) -> None:
    kv = await store.create("/a", b"v1")
    new = await store.update("/a", b"v2", kv.mod_revision)
    rev = await store.current_revision()
    with pytest.raises(ConflictError) as info:
        await store.update("/a", b"v3", kv.mod_revision)
    assert info.value.key == "/a"
    assert info.value.current == new
    assert await store.current_revision() == rev


async def test_update_missing_key_is_not_found(store: Store) -> None:
    with pytest.raises(NotFoundError):
        await store.update("/nope", b"v", 1)
    kv = await store.create("/a", b"v1")
    await store.delete("/a")
    with pytest.raises(NotFoundError):
        await store.update("/a", b"v2", kv.mod_revision)


async def test_delete_returns_last_value_at_deletion_revision(store: Store) -> None:
    kv = await store.create("/a", b"v1")
    kv = await store.update("/a", b"v2", kv.mod_revision)
    gone = await store.delete("/a", kv.mod_revision)
    assert gone.key == "/a" and gone.value == b"v2"
    assert gone.create_revision == kv.create_revision
    assert gone.mod_revision == kv.mod_revision + 1
    assert await store.get("/a") is None


async def test_delete_with_stale_revision_conflicts(store: Store) -> None:
    kv = await store.create("/a", b"v1")
    new = await store.update("/a", b"v2", kv.mod_revision)
    with pytest.raises(ConflictError) as info:
        await store.delete("/a", kv.mod_revision)
    assert info.value.current == new
    assert await store.get("/a") == new


async def test_delete_missing_key_is_not_found(store: Store) -> None:
    with pytest.raises(NotFoundError):
        await store.delete("/nope")
    with pytest.raises(NotFoundError):
        await store.delete("/nope", 1)


async def test_recreate_after_delete_starts_a_new_life(store: Store) -> None:
    first = await store.create("/a", b"v1")
    await store.delete("/a")
    again = await store.create("/a", b"v2")
    assert again.create_revision == again.mod_revision > first.create_revision
    assert await store.get("/a") == again


async def test_concurrent_creators_exactly_one_wins(store: Store) -> None:
    results = await asyncio.gather(
        *(store.create("/race", str(i).encode()) for i in range(20)), return_exceptions=True
    )
    winners = [r for r in results if isinstance(r, KeyValue)]
    losers = [r for r in results if isinstance(r, KeyExistsError)]
    assert len(winners) == 1 and len(losers) == 19
    assert await store.get("/race") == winners[0]
    assert await store.current_revision() == winners[0].mod_revision


async def test_concurrent_cas_updates_exactly_one_wins(store: Store) -> None:
    kv = await store.create("/a", b"v0")
    results = await asyncio.gather(
        *(store.update("/a", str(i).encode(), kv.mod_revision) for i in range(20)),
        return_exceptions=True,
    )
    winners = [r for r in results if isinstance(r, KeyValue)]
    conflicts = [r for r in results if isinstance(r, ConflictError)]
    assert len(winners) == 1 and len(conflicts) == 19
    assert all(c.current == winners[0] for c in conflicts)


async def test_concurrent_read_modify_write_loses_no_increment(store: Store) -> None:
    await store.create("/counter", b"0")

    async def bump() -> None:
        while True:
            kv = await store.get("/counter")
            assert kv is not None
            try:
                await store.update("/counter", str(int(kv.value) + 1).encode(), kv.mod_revision)
                return
            except ConflictError:
                continue

    await asyncio.gather(*(bump() for _ in range(30)))
    kv = await store.get("/counter")
    assert kv is not None and kv.value == b"30"


async def test_get_at_old_revisions(store: Store) -> None:
    v1 = await store.create("/a", b"v1")
    await store.create("/other", b"x")
    v2 = await store.update("/a", b"v2", v1.mod_revision)
    gone = await store.delete("/a")
    v3 = await store.create("/a", b"v3")
    assert await store.get("/a", revision=v1.mod_revision) == v1
    assert await store.get("/a", revision=v1.mod_revision + 1) == v1
    assert await store.get("/a", revision=v2.mod_revision) == v2
    assert await store.get("/a", revision=gone.mod_revision) is None
    assert await store.get("/a", revision=v3.mod_revision) == v3
    assert await store.get("/other", revision=v1.mod_revision) is None


async def test_get_at_future_revision_fails(store: Store) -> None:
    now = (await store.create("/a", b"v1")).mod_revision
    with pytest.raises(FutureRevisionError) as info:
        await store.get("/a", revision=now + 4)
    assert (info.value.revision, info.value.current) == (now + 4, now)


async def test_values_are_opaque_bytes(store: Store) -> None:
    blob = bytes(range(256)) * 40
    kv = await store.create("/bin", blob)
    assert (await store.get("/bin")) == kv
    assert (await store.get("/bin", revision=kv.mod_revision)) == kv


async def test_closed_store_refuses_operations(store: Store) -> None:
    await store.close()
    with pytest.raises(StoreClosedError):
        await store.get("/a")
    with pytest.raises(StoreClosedError):
        await store.create("/a", b"v")
    with pytest.raises(StoreClosedError):
        await store.list("/")


async def test_concurrent_writes_get_unique_contiguous_revisions(store: Store) -> None:
    base = await store.current_revision()
    created = await asyncio.gather(*(store.create(f"/k/{i}", b"") for i in range(100)))
    updated = await asyncio.gather(
        *(store.update(kv.key, b"x", kv.mod_revision) for kv in created)
    )
    revisions = sorted(kv.mod_revision for kv in [*created, *updated])
    assert revisions == list(range(base + 1, base + 201))
    assert await store.current_revision() == base + 200

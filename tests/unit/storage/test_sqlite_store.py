"""SQLite-specific behaviour: persistence, schema, locking, compaction, overflow, failures."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubedra.storage.contract import (
    CompactedError,
    StoreClosedError,
    StoreError,
    WatchEvent,
    WatchOverflowError,
)
from kubedra.storage.sqlite import SQLiteStore, reads, schema


def rows(path: Path, columns: str = "id, name, deleted") -> list[tuple[Any, ...]]:
    """The log's rows in id order, read from the file (what is durable, not the cache)."""
    conn = sqlite3.connect(path)
    try:
        return conn.execute(f"SELECT {columns} FROM log ORDER BY id").fetchall()
    finally:
        conn.close()


async def test_state_survives_reopen(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = await SQLiteStore.open(path, compact_interval=0)
    a = await store.create("/a", b"1")
    await store.update("/a", b"2", a.mod_revision)
    await store.create("/b", b"x")
    await store.delete("/b")
    await store.create("/c", b"3")
    await store.compact(3)
    await store.close()

    store = await SQLiteStore.open(path, compact_interval=0)
    try:
        assert await store.current_revision() == 5
        assert await store.compacted_revision() == 3
        got = await store.get("/a")
        assert got is not None and (got.value, got.create_revision, got.mod_revision) == (
            b"2",
            1,
            2,
        )
        assert await store.get("/b") is None
        assert [kv.key for kv in (await store.list("/")).items] == ["/a", "/c"]
        with pytest.raises(CompactedError):
            await store.get("/a", revision=2)
        nxt = await store.create("/b", b"again")
        assert nxt.mod_revision == 6
    finally:
        await store.close()


async def test_durable_settings(tmp_path: Path) -> None:
    conn = schema.connect(str(tmp_path / "s.db"))
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    finally:
        conn.close()


async def test_schema_version_is_recorded_and_newer_files_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = await SQLiteStore.open(path, compact_interval=0)
    await store.close()
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT version FROM kubedra_schema").fetchall() == [
        (schema.SCHEMA_VERSION,)
    ]
    conn.execute("UPDATE kubedra_schema SET version = version + 1")
    conn.commit()
    conn.close()
    with pytest.raises(schema.SchemaError, match="newer than supported"):
        await SQLiteStore.open(path, compact_interval=0)
    # A failed open releases the file lock.
    conn = sqlite3.connect(path)
    conn.execute("UPDATE kubedra_schema SET version = version - 1")
    conn.commit()
    conn.close()
    store = await SQLiteStore.open(path, compact_interval=0)
    await store.close()


async def test_only_one_open_store_per_file(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = await SQLiteStore.open(path, compact_interval=0)
    with pytest.raises(StoreError, match="already open"):
        await SQLiteStore.open(path, compact_interval=0, lock_wait=0.1)
    await store.close()
    again = await SQLiteStore.open(path, compact_interval=0)
    await again.close()


async def test_compaction_removes_superseded_rows_and_tombstones(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = await SQLiteStore.open(path, compact_interval=0)
    try:
        a = await store.create("/a", b"1")  # 1
        a = await store.update("/a", b"2", a.mod_revision)  # 2
        await store.create("/b", b"1")  # 3
        await store.delete("/b")  # 4
        await store.update("/a", b"3", a.mod_revision)  # 5
        await store.compact(4)
        assert rows(path) == [(2, "/a", 0), (4, "/b", 1), (5, "/a", 0)]
        await store.compact(5)
        assert rows(path) == [(5, "/a", 0)]
    finally:
        await store.close()


async def test_chunked_compaction_interleaves_with_writes(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = await SQLiteStore.open(path, compact_interval=0, compact_chunk=7)
    try:
        kv = await store.create("/a", b"0")
        for i in range(200):
            kv = await store.update("/a", str(i).encode(), kv.mod_revision)
        compaction = asyncio.ensure_future(store.compact(201))
        created = await asyncio.gather(*(store.create(f"/k/{i}", b"") for i in range(50)))
        await compaction
        assert await store.compacted_revision() == 201
        assert sorted(kv.mod_revision for kv in created) == list(range(202, 252))
        assert len(rows(path)) == 51
    finally:
        await store.close()


async def test_periodic_compaction_keeps_the_retained_window(tmp_path: Path) -> None:
    store = await SQLiteStore.open(tmp_path / "s.db", compact_interval=0.02, retain=10)
    try:
        kv = await store.create("/a", b"0")
        for i in range(40):
            kv = await store.update("/a", str(i).encode(), kv.mod_revision)
        for _ in range(200):
            if await store.compacted_revision() == 31:
                break
            await asyncio.sleep(0.01)
        assert await store.compacted_revision() == 31
        assert (await store.get("/a", revision=31)) is not None
        with pytest.raises(CompactedError):
            await store.get("/a", revision=30)
    finally:
        await store.close()


async def test_slow_watcher_gets_overflow_error(tmp_path: Path) -> None:
    store = await SQLiteStore.open(tmp_path / "s.db", compact_interval=0, watch_buffer=10)
    try:
        slow = store.watch("/", 0)
        first = await asyncio.wait_for(anext_after(slow, store), 5)
        assert first.kv.key == "/k/first"
        for i in range(20):
            await store.create(f"/k/{i}", b"")
        with pytest.raises(WatchOverflowError) as info:
            for _ in range(30):
                await asyncio.wait_for(anext(slow), 5)
        assert info.value.pending == 11
        await slow.aclose()
        # The store is unaffected and new watches work.
        fresh = store.watch("/", await store.current_revision())
        pending = asyncio.ensure_future(anext(fresh))
        await asyncio.sleep(0.02)
        await store.create("/k/after", b"")
        assert (await asyncio.wait_for(pending, 5)).kv.key == "/k/after"
        await fresh.aclose()
    finally:
        await store.close()


async def anext_after(events: AsyncIterator[WatchEvent], store: SQLiteStore) -> WatchEvent:
    """Start a watch, then write one key so it reaches the live phase."""
    pending = asyncio.ensure_future(anext(events))
    await asyncio.sleep(0.02)
    await store.create("/k/first", b"")
    return await pending


async def test_failed_commit_fails_the_batch_and_keeps_state(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = await SQLiteStore.open(path, compact_interval=0)
    try:
        await store.create("/ok", b"")
        conn = sqlite3.connect(path)
        conn.execute(
            "CREATE TRIGGER boom BEFORE INSERT ON log WHEN NEW.name = '/boom'"
            " BEGIN SELECT RAISE(ABORT, 'disk on fire'); END"
        )
        conn.commit()
        conn.close()
        events = store.watch("/", 1)
        results = await asyncio.gather(
            store.create("/x", b""), store.create("/boom", b""), return_exceptions=True
        )
        assert all(isinstance(r, StoreError) for r in results)
        assert "disk on fire" in str(results[1])
        assert await store.current_revision() == 1
        assert await store.get("/x") is None
        kv = await store.create("/y", b"")
        assert kv.mod_revision == 2
        event = await asyncio.wait_for(anext(events), 5)
        assert (event.kv.key, event.revision) == ("/y", 2)
        await events.aclose()
    finally:
        await store.close()


async def test_cache_agrees_with_the_log(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = await SQLiteStore.open(path, compact_interval=0)
    try:
        for i in range(50):
            await store.create(f"/k/{i % 7}/{i}", str(i).encode())
        for i in range(0, 50, 3):
            kv = await store.get(f"/k/{i % 7}/{i}")
            assert kv is not None
            await store.update(kv.key, b"u", kv.mod_revision)
        for i in range(0, 50, 5):
            await store.delete(f"/k/{i % 7}/{i}")
        current = await store.current_revision()
        conn = schema.connect(str(path), readonly=True)
        try:
            for i in range(50):
                key = f"/k/{i % 7}/{i}"
                assert await store.get(key) == reads.get_at(conn, key, current)
            loaded = reads.load_state(conn)
            for prefix in ["", "/k/", "/k/3/", "/k/9/", "/j"]:
                for start_after in [None, "/k/3/", "/k/3/10", "/a", "/z"]:
                    for limit in [0, 1, 3, 100]:
                        args = (prefix, current, limit, start_after)
                        assert await store.list(
                            prefix, limit=limit, start_after=start_after
                        ) == reads.list_at(conn, *args), args
        finally:
            conn.close()
        assert loaded.revision == current
        assert sorted(loaded.latest.values(), key=lambda kv: kv.key) == (
            await store.list("/")).items
    finally:
        await store.close()


async def test_close_during_chunked_compaction_does_not_hang(tmp_path: Path) -> None:
    store = await SQLiteStore.open(tmp_path / "s.db", compact_interval=0, compact_chunk=1)
    kv = await store.create("/a", b"0")
    for i in range(300):
        kv = await store.update("/a", str(i).encode(), kv.mod_revision)
    compaction = asyncio.ensure_future(store.compact(300))
    await asyncio.sleep(0)
    await asyncio.wait_for(store.close(), 10)
    outcome = await asyncio.wait_for(asyncio.gather(compaction, return_exceptions=True), 10)
    assert isinstance(outcome[0], StoreClosedError), outcome  # the rest was dropped


async def test_compaction_during_replay_stops_the_watch_cleanly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("kubedra.storage.sqlite.store._HISTORY_PAGE", 5)
    store = await SQLiteStore.open(tmp_path / "s.db", compact_interval=0)
    try:
        kv = await store.create("/a", b"0")
        for i in range(40):
            kv = await store.update("/a", str(i).encode(), kv.mod_revision)
        events = store.watch("/", 0)
        first = [await anext(events) for _ in range(5)]  # exactly one history page
        assert [e.revision for e in first] == [1, 2, 3, 4, 5]
        await store.compact(30)
        with pytest.raises(CompactedError) as info:
            await anext(events)
        assert (info.value.revision, info.value.compacted) == (6, 30)
        await events.aclose()
        # Replays that stay ahead of the boundary are unaffected.
        events = store.watch("/", 29)
        assert [(await anext(events)).revision for _ in range(12)] == list(range(30, 42))
        await events.aclose()
    finally:
        await store.close()


def _newest_rows(path: Path) -> dict[str, tuple[int, int]]:
    """key -> (id, deleted) of its newest row, read from the log."""
    conn = sqlite3.connect(path)
    try:
        found = conn.execute("SELECT name, MAX(id), deleted FROM log GROUP BY name").fetchall()
        return {name: (rev, deleted) for name, rev, deleted in found}
    finally:
        conn.close()


_OPS = st.lists(st.tuples(st.sampled_from(["create", "delete", "compact", "reopen"]),
                          st.sampled_from(["/a", "/b", "/c/d"]), st.integers(0, 6)),
                max_size=40)


@settings(max_examples=100, deadline=None)  # each reopening starts a committer process
@given(ops=_OPS)
def test_a_re_create_follows_the_tombstone_the_log_holds(tmp_path_factory: pytest.TempPathFactory,
                                                          ops: list[tuple[str, str, int]]) -> None:
    """The writer knows each deleted key's tombstone without reading the log: after any
    creates, deletes, (chunked) compactions and reopenings, its map is what the log says,
    and a re-create's prev_revision is the tombstone still in the log (0 once compacted)."""
    path = tmp_path_factory.mktemp("tomb") / "s.db"

    async def run() -> None:
        store = await SQLiteStore.open(path, compact_interval=0, compact_chunk=3)
        try:
            for op, key, back in ops:
                if op == "reopen":
                    await store.close()
                    store = await SQLiteStore.open(path, compact_interval=0, compact_chunk=3)
                elif op == "compact":
                    current = await store.current_revision()
                    await store.compact(max(await store.compacted_revision(), current - back))
                elif await store.get(key) is not None:
                    if op == "delete":
                        await store.delete(key)
                else:
                    before = _newest_rows(path).get(key, (0, 1))[0]
                    kv = await store.create(key, b"v")
                    conn = sqlite3.connect(path)
                    prev = conn.execute("SELECT prev_revision FROM log WHERE id = ?",
                                        (kv.mod_revision,)).fetchone()[0]
                    conn.close()
                    assert prev == before
                newest = _newest_rows(path)
                assert store._writer._tombstones == {
                    k: rev for k, (rev, deleted) in newest.items() if deleted}
        finally:
            await store.close()

    asyncio.run(run())

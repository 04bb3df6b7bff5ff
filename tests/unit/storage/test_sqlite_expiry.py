"""SQLite's time to live: expiries are on disk (a store reopened before a key's time still
deletes it, one reopened after deletes it at once), a version-1 file gains the column, and
the expiry task logs a failed delete and tries again instead of dying."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from pathlib import Path

import pytest

from kubedra.storage.contract import KeyValue, StoreError
from kubedra.storage.sqlite import SQLiteStore, schema
from kubedra.storage.sqlite.expiry import Expiry


async def _wait_gone(store: SQLiteStore, key: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while await store.get(key) is not None:
        assert time.monotonic() < deadline, f"{key} did not expire"
        await asyncio.sleep(0.05)


async def test_expiry_survives_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = await SQLiteStore.open(path, compact_interval=0)
    await store.create("/e/soon", b"x", ttl=1)
    await store.create("/e/later", b"y", ttl=2)
    await store.create("/e/never", b"z")
    await store.close()
    await asyncio.sleep(1.2)  # /e/soon is overdue while no store is open
    store = await SQLiteStore.open(path, compact_interval=0)
    try:
        await _wait_gone(store, "/e/soon", timeout=1.0)
        assert await store.get("/e/later") is not None
        await _wait_gone(store, "/e/later")
        assert await store.get("/e/never") is not None
    finally:
        await store.close()


async def test_version_1_file_is_migrated(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE kubedra_schema (version INTEGER NOT NULL)")
    conn.execute("INSERT INTO kubedra_schema VALUES (1)")
    schema.MIGRATIONS[0](conn)
    conn.execute("INSERT INTO log VALUES (1, '/old', 1, 0, 1, 0, x'01', NULL)")
    conn.commit()
    conn.close()
    store = await SQLiteStore.open(path, compact_interval=0)
    try:
        assert await store.get("/old") == KeyValue("/old", b"\x01", 1, 1)
        await store.create("/new", b"n", ttl=1)
        await _wait_gone(store, "/new")
        assert await store.get("/old") is not None
    finally:
        await store.close()


async def test_a_failed_expiry_is_logged_and_retried(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("kubedra.storage.sqlite.expiry.RETRY", 0.1)
    live = {"/k": KeyValue("/k", b"v", 1, 1)}
    attempts: list[str] = []

    async def delete(key: str, revision: int) -> KeyValue:
        attempts.append(key)
        if len(attempts) == 1:
            raise StoreError("disk full")
        return live.pop(key)

    expiry = Expiry([(time.time() + 0.1, "/k", 1)], live.get, delete)
    task = asyncio.create_task(expiry.run())
    try:
        with caplog.at_level(logging.ERROR):
            deadline = time.monotonic() + 5
            while live:
                assert time.monotonic() < deadline and not task.done()
                await asyncio.sleep(0.02)
    finally:
        task.cancel()
    assert attempts == ["/k", "/k"]
    assert "deleting expired key /k failed: disk full" in caplog.text


async def test_expiry_task_survives_an_unexpected_error(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("kubedra.storage.sqlite.expiry.RETRY", 0.1)
    calls = []

    def current(key: str) -> KeyValue | None:
        calls.append(key)
        if len(calls) == 1:
            raise RuntimeError("bug")
        return None  # replaced meanwhile: nothing to delete

    async def delete(key: str, revision: int) -> KeyValue:
        raise AssertionError("not called")

    expiry = Expiry([(time.time(), "/a", 1)], current, delete)
    task = asyncio.create_task(expiry.run())
    try:
        with caplog.at_level(logging.ERROR):
            await asyncio.sleep(0.05)
            expiry.add(time.time(), "/b", 2)
            deadline = time.monotonic() + 5
            while calls != ["/a", "/b"]:
                assert time.monotonic() < deadline and not task.done(), calls
                await asyncio.sleep(0.02)
    finally:
        task.cancel()
    assert "expiring keys failed" in caplog.text

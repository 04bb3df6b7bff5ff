"""The SQLite store's committer process: a real child process that may die at any moment.

Killing it loses no acknowledged write and writes none twice (the writer asks the log whether
the batch in flight landed); a committer that cannot be started again fails writes at once
instead of hanging; the committer lets go of the file's lock only when it has exited.
"""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from kubedra.storage.contract import StoreError
from kubedra.storage.sqlite import SQLiteStore
from kubedra.storage.sqlite.committer import Committer
from tests.unit.storage.test_sqlite_store import rows


def committer_pid(store: SQLiteStore) -> int:
    committer = store._writer._committer
    assert committer is not None and committer._transport is not None
    pid = committer._transport.get_pid()
    assert isinstance(pid, int)
    return pid


def log_rows(path: Path) -> list[tuple[Any, ...]]:
    return rows(path, "id, name, value")


@pytest.mark.parametrize("delay", [0.0, 0.0001, 0.001, 0.01])
async def test_killed_committer_loses_and_repeats_nothing(tmp_path: Path, delay: float) -> None:
    path = tmp_path / "s.db"
    store = await SQLiteStore.open(path, compact_interval=0)
    try:
        first = await store.create("/before", b"0")
        writes = [asyncio.ensure_future(store.create(f"/k/{i}", str(i).encode()))
                  for i in range(20)]
        await asyncio.sleep(delay)  # the kill lands before, during or after a commit
        os.kill(committer_pid(store), signal.SIGKILL)
        done = await asyncio.wait_for(asyncio.gather(*writes), 20)
        after = await store.create("/after", b"1")
        revisions = [first.mod_revision, *(kv.mod_revision for kv in done), after.mod_revision]
        assert revisions == list(range(1, 23))
        assert log_rows(path) == [
            (1, "/before", b"0"), *((kv.mod_revision, kv.key, kv.value) for kv in done),
            (22, "/after", b"1")]
        assert (await store.list("/k/")).items == sorted(done, key=lambda kv: kv.key)
    finally:
        await store.close()


async def test_a_commit_whose_answer_was_lost_is_not_written_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The committer dies after committing, before its answer is read: the write landed,
    and the new committer must not write it a second time."""
    path = tmp_path / "s.db"
    store = await SQLiteStore.open(path, compact_interval=0)
    try:
        await store.create("/a", b"0")
        answered = Committer.replied
        lost: list[int] = []

        def die_instead(self: Committer, reply: tuple[object, ...]) -> None:
            if lost:
                answered(self, reply)
                return
            lost.append(committer_pid(store))
            os.kill(lost[0], signal.SIGKILL)

        monkeypatch.setattr(Committer, "replied", die_instead)
        kv = await asyncio.wait_for(store.create("/b", b"1"), 20)
        assert lost and committer_pid(store) != lost[0]
        assert kv.mod_revision == 2
        assert log_rows(path) == [(1, "/a", b"0"), (2, "/b", b"1")]
        assert (await store.create("/c", b"2")).mod_revision == 3
    finally:
        await store.close()


async def test_a_committer_that_cannot_start_again_fails_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = await SQLiteStore.open(tmp_path / "s.db", compact_interval=0)
    try:
        await store.create("/a", b"0")

        async def refuse(*_args: object, **_kwargs: object) -> Committer:
            raise StoreError("no more processes")

        monkeypatch.setattr(Committer, "start", refuse)
        os.kill(committer_pid(store), signal.SIGKILL)
        with pytest.raises(StoreError, match="cannot be restarted: no more processes"):
            await asyncio.wait_for(store.create("/b", b"1"), 10)
        with pytest.raises(StoreError, match="cannot be restarted"):
            await asyncio.wait_for(store.create("/c", b"2"), 10)
        assert (await store.get("/a")) is not None  # reads still answer
        assert await store.current_revision() == 1
    finally:
        await asyncio.wait_for(store.close(), 10)


async def test_the_lock_is_held_until_the_committer_has_exited(tmp_path: Path) -> None:
    """A writer whose server died keeps the file until its committer is gone: a new
    store waits for that instead of loading a state a late commit would contradict."""
    path = tmp_path / "s.db"
    store = await SQLiteStore.open(path, compact_interval=0)
    await store.create("/a", b"0")
    pid = committer_pid(store)
    os.kill(pid, signal.SIGSTOP)  # as if still busy with a commit
    try:
        store._lock.close()  # the server's own hold on the lock is gone, as when it died
        with pytest.raises(StoreError, match="already open"):
            await SQLiteStore.open(path, compact_interval=0, lock_wait=0.2)
    finally:
        os.kill(pid, signal.SIGCONT)
    await store.close()
    again = await SQLiteStore.open(path, compact_interval=0, lock_wait=0.2)
    assert (await again.get("/a")) is not None
    await again.close()

"""Crash safety: SIGKILL a writing child process at random points; no acknowledged write is lost.

Each round starts ``crash_child.py`` (a real process) on the same database, reads the writes it
acknowledges, kills it with SIGKILL, then checks the file: ``PRAGMA integrity_check`` is ok,
every acknowledged write is there at its revision (or, once compacted away, the key's current
state follows from it), revisions are gap-free and keep increasing across crashes. Every other
round the child also compacts continuously, so kills land inside compactions too.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

import pytest

from kubedra.storage.sqlite import SQLiteStore

CHILD = Path(__file__).with_name("crash_child.py")
ROUNDS = 24
TIME_BUDGET = 50.0


@dataclass(frozen=True)
class Ack:
    op: str
    revision: int
    key: str
    value: str


def run_and_kill(db: Path, run: int, rng: random.Random) -> list[Ack]:
    proc = subprocess.Popen(
        [sys.executable, str(CHILD), str(db), str(run), str(run % 2)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    lines: list[str] = []
    if rng.random() < 0.15:
        time.sleep(rng.uniform(0.0, 0.3))  # possibly before the store is even open
    else:
        wanted = rng.randint(1, 300)
        while len(lines) < wanted:
            line = proc.stdout.readline()
            if not line:
                raise AssertionError(f"child died: {proc.stderr.read()}")
            lines.append(line)
        time.sleep(rng.uniform(0.0, 0.01))
    os.kill(proc.pid, signal.SIGKILL)
    lines.extend(proc.stdout.readlines())  # printed before the kill: acknowledged too
    proc.wait()
    proc.stdout.close()
    proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    acks = []
    for line in lines:
        if line.endswith("\n"):
            op, rev, key, value = line.split()
            acks.append(Ack(op, int(rev), key, value))
    return acks


def final_states(acks: list[Ack]) -> dict[str, set[str | None]]:
    """The values each key may hold now, given its acknowledged writes (see crash_child)."""
    last: dict[str, Ack] = {}
    for ack in acks:
        last[ack.key] = ack
    allowed: dict[str, set[str | None]] = {}
    for key, ack in last.items():
        stem = ack.value.rsplit("-", 1)[0] if ack.op != "delete" else ""
        deletable = int(key.rsplit("/", 1)[1]) % 3 == 0
        if ack.op == "delete":
            allowed[key] = {None}
        elif ack.op == "update":
            allowed[key] = {ack.value} | ({None} if deletable else set())
        else:
            allowed[key] = {ack.value, f"{stem}-v2"} | ({None} if deletable else set())
    return allowed


async def verify(db: Path, acks: list[Ack]) -> tuple[int, int]:
    store = await SQLiteStore.open(db, compact_interval=0)
    try:
        current = await store.current_revision()
        compacted = await store.compacted_revision()
        for ack in acks:
            if ack.revision < compacted:
                continue
            kv = await store.get(ack.key, revision=ack.revision)
            if ack.op == "delete":
                assert kv is None, ack
            else:
                assert kv is not None and kv.value == ack.value.encode(), ack
                assert kv.mod_revision == ack.revision, ack
        for key, allowed in final_states(acks).items():
            kv = await store.get(key)
            assert (None if kv is None else kv.value.decode()) in allowed, (key, kv, allowed)
        return current, compacted
    finally:
        await store.close()


def check_file(db: Path) -> None:
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        # One snapshot: the killed child's committer may still be finishing its last commit.
        conn.execute("BEGIN")
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "meta" not in tables:  # killed while opening: schema creation is all or nothing
            assert "log" not in tables and "kubedra_schema" not in tables, tables
            return
        (compacted,) = conn.execute("SELECT value FROM meta").fetchone()
        ids = [r[0] for r in conn.execute(
            "SELECT id FROM log WHERE id >= ? ORDER BY id", (compacted,))]
        if ids:  # gap-free from the compacted revision on
            assert ids[-1] - max(compacted, 1) + 1 == len(ids), gaps(conn, compacted, ids)
    finally:
        conn.close()


def gaps(conn: sqlite3.Connection, compacted: int, ids: list[int]) -> str:
    """Where the log has holes above the compacted revision, with the rows on either side:
    whether the missing ids were never written (a jump between two runs' keys) or removed
    (holes among one run's keys)."""
    holes = [(a, b) for a, b in pairwise([max(compacted, 1) - 1, *ids]) if b - a > 1]
    lines = [f"compacted {compacted}, {len(ids)} rows up to {ids[-1]}; holes:"]
    for a, b in holes[:10]:
        rows = conn.execute("SELECT id, name, created, deleted FROM log WHERE id IN (?, ?)",
                            (a, b)).fetchall()
        lines.append(f"  {a + 1}..{b - 1} between {rows}")
    return "\n".join(lines)


@pytest.mark.timeout(120)
def test_acknowledged_writes_survive_sigkill(tmp_path: Path) -> None:
    db = tmp_path / "crash.db"
    rng = random.Random(20261129)
    deadline = time.monotonic() + TIME_BUDGET
    previous = 0
    rounds = 0
    total_acks = 0
    compactions: set[int] = set()
    while rounds < ROUNDS and time.monotonic() < deadline:
        acks = run_and_kill(db, rounds, rng)
        revisions = [a.revision for a in acks]
        assert revisions == sorted(set(revisions)), "acknowledged out of order"
        assert all(r > previous for r in revisions), "revision reused after a crash"
        check_file(db)
        current, compacted = asyncio.run(verify(db, acks))
        assert current >= max(revisions, default=previous)
        previous = current
        rounds += 1
        total_acks += len(acks)
        compactions.add(compacted)
    assert rounds >= 20, f"only {rounds} kill rounds fitted in the time budget"
    assert total_acks > 1000
    assert len(compactions) > 3, "kills never landed after compactions"

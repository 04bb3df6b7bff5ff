"""Child process for the crash test: write forever, print every acknowledged write.

Usage: ``crash_child.py DB RUN COMPACT``. Several concurrent writers (so writes are
group-committed) create, update and delete keys under ``/run<RUN>/``; after each
acknowledgement one line ``<op> <revision> <key> <value>`` goes to stdout, flushed, before
anything else happens. With COMPACT=1 the store also compacts every few milliseconds.
"""

from __future__ import annotations

import asyncio
import sys

from kubedra.storage.sqlite import SQLiteStore

WRITERS = 8


async def writer(store: SQLiteStore, run: str, wid: int) -> None:
    out = sys.stdout
    i = 0
    while True:
        key = f"/run{run}/w{wid}/{i}"
        value = f"{run}-{wid}-{i}-v1"
        kv = await store.create(key, value.encode())
        out.write(f"create {kv.mod_revision} {key} {value}\n")
        out.flush()
        value = f"{run}-{wid}-{i}-v2"
        kv = await store.update(key, value.encode(), kv.mod_revision)
        out.write(f"update {kv.mod_revision} {key} {value}\n")
        out.flush()
        if i % 3 == 0:
            gone = await store.delete(key, kv.mod_revision)
            out.write(f"delete {gone.mod_revision} {key} -\n")
            out.flush()
        i += 1


async def main(path: str, run: str, compact: bool) -> None:
    if compact:
        store = await SQLiteStore.open(path, compact_interval=0.005, retain=50, compact_chunk=20)
    else:
        store = await SQLiteStore.open(path, compact_interval=0)
    await asyncio.gather(*(writer(store, run, w) for w in range(WRITERS)))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3] == "1"))

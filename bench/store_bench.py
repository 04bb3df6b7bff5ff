"""Benchmark the stores: writes, point gets, prefix lists, watch fan-out, per backend.

Creates and updates run with many requests in flight (as an API server under load does). On
SQLite the writer group-commits them: each transaction is durable (``synchronous=FULL``) and
every write is acknowledged only after its commit. On etcd (a fresh single member of the
bundled etcd on 127.0.0.1, data under /tmp) each write is one transaction, acknowledged once
committed by raft (fsync). Each repetition uses a fresh store; the summary reports medians,
one line per backend (``--backend sqlite,etcd`` puts them side by side).

    .venv/bin/python -m bench.store_bench [--backend sqlite,etcd] [--repeat 3] [--json FILE]
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import statistics
import tempfile
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from pathlib import Path

from bench._common import arg_parser, backends_option, write_json
from kubedra.cli.localcluster import local_etcd
from kubedra.storage.contract import KeyValue, Store, WatchEvent
from kubedra.storage.etcd import EtcdConfig, EtcdStore
from kubedra.storage.sqlite import SQLiteStore

VALUE = b"x" * 1000  # about the size of a small Kubernetes object as JSON


async def _in_flight(count: int, concurrency: int, op: Callable[[int], Awaitable[None]]) -> float:
    """Run ``op(i)`` for i in range(count) with ``concurrency`` requests in flight; seconds."""
    next_index = 0

    async def worker() -> None:
        nonlocal next_index
        while next_index < count:
            i = next_index
            next_index += 1
            await op(i)

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return time.perf_counter() - start


async def _fan_out(store: Store, watchers: int, events: int, concurrency: int) -> float:
    """Events per second delivered in total to ``watchers`` watches of one prefix."""
    base = await store.current_revision()
    streams = [store.watch("/fan/", base) for _ in range(watchers)]

    async def drain(stream: AsyncGenerator[WatchEvent, None]) -> None:
        seen = 0
        async for _event in stream:
            seen += 1
            if seen == events:
                return

    readers = [asyncio.ensure_future(drain(s)) for s in streams]
    await asyncio.sleep(0.05)  # let every watch reach its live phase
    start = time.perf_counter()

    await _in_flight(events, concurrency, _creator(store, "/fan/"))
    await asyncio.gather(*readers)
    elapsed = time.perf_counter() - start
    for s in streams:
        await s.aclose()
    return watchers * events / elapsed


@contextlib.asynccontextmanager
async def _fresh_store(backend: str) -> AsyncIterator[Store]:
    with tempfile.TemporaryDirectory(prefix="store-bench-", dir="/tmp") as tmp:
        async with contextlib.AsyncExitStack() as stack:
            store: Store
            if backend == "etcd":
                urls = await stack.enter_async_context(local_etcd(Path(tmp) / "etcd"))
                store = await EtcdStore.open(EtcdConfig.parse(urls), compact_interval=0)
            else:
                store = await SQLiteStore.open(Path(tmp) / "bench.db", compact_interval=0)
            stack.push_async_callback(store.close)
            yield store


async def _one_run(
    backend: str, size: int, list_size: int, watchers: int, concurrency: int
) -> dict[str, float]:
    async with _fresh_store(backend) as store:
        created: dict[int, KeyValue] = {}

        async def create(i: int) -> None:
            created[i] = await store.create(f"/bench/{i:07d}", VALUE)

        t_create = await _in_flight(size, concurrency, create)

        async def update(i: int) -> None:
            kv = created[i]
            await store.update(kv.key, VALUE, kv.mod_revision)

        t_update = await _in_flight(size, concurrency, update)

        seq = max(size // 20, 10)
        start = time.perf_counter()
        for i in range(seq):
            await store.create(f"/seq/{i:07d}", VALUE)
        t_seq = time.perf_counter() - start

        rng = random.Random(1)
        keys = [f"/bench/{rng.randrange(size):07d}" for _ in range(size * 5)]
        start = time.perf_counter()
        for key in keys:
            if await store.get(key) is None:
                raise AssertionError(f"missing {key}")
        t_get = time.perf_counter() - start

        await _in_flight(list_size, concurrency, _creator(store, "/list/"))
        start = time.perf_counter()
        listed = await store.list("/list/")
        t_list = time.perf_counter() - start
        if len(listed.items) != list_size:
            raise AssertionError(f"listed {len(listed.items)} of {list_size}")
        # One more write makes that revision history: the same list now reads the log.
        await store.create("/list-bump", VALUE)
        start = time.perf_counter()
        old = await store.list("/list/", revision=listed.revision)
        t_list_old = time.perf_counter() - start
        if old.items != listed.items:
            raise AssertionError("list at the old revision differs")
        start = time.perf_counter()
        for key in keys[: size // 4]:
            await store.get(key, revision=listed.revision)
        t_get_old = time.perf_counter() - start

        fan = await _fan_out(store, watchers, max(size // 4, 10), concurrency)
    return {
        "creates_per_s": size / t_create,
        "updates_per_s": size / t_update,
        "sequential_creates_per_s": seq / t_seq,
        "gets_per_s": len(keys) / t_get,
        "gets_at_old_revision_per_s": (size // 4) / t_get_old,
        "list_ms": t_list * 1000,
        "list_at_old_revision_ms": t_list_old * 1000,
        "watch_events_per_s": fan,
    }


def _creator(store: Store, prefix: str) -> Callable[[int], Awaitable[None]]:
    async def create(i: int) -> None:
        await store.create(f"{prefix}{i:07d}", VALUE)

    return create


def main(argv: list[str] | None = None) -> int:
    parser = arg_parser(__doc__.splitlines()[0], smoke_help="tiny sizes (< 5 s)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--size", type=int, default=20_000, help="objects created/updated")
    parser.add_argument("--list-size", type=int, default=10_000)
    parser.add_argument("--watchers", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=256, help="writes in flight")
    backends_option(parser)
    args = parser.parse_args(argv)
    if args.smoke:
        args.repeat, args.size, args.list_size, args.watchers = 1, 200, 200, 10
        args.backend = ["sqlite", "etcd"]
    results = {}
    for backend in args.backend:
        runs = [
            asyncio.run(
                _one_run(backend, args.size, args.list_size, args.watchers, args.concurrency)
            )
            for _ in range(args.repeat)
        ]
        medians = {name: statistics.median(r[name] for r in runs) for name in runs[0]}
        results[backend] = {"medians": medians, "runs": runs}
        print(
            f"store bench {backend:>6} (median of {args.repeat}, {args.size} objects,"
            f" {args.concurrency} in flight): creates {medians['creates_per_s']:,.0f}/s,"
            f" updates {medians['updates_per_s']:,.0f}/s,"
            f" sequential creates {medians['sequential_creates_per_s']:,.0f}/s,"
            f" gets {medians['gets_per_s']:,.0f}/s"
            f" (at an old revision {medians['gets_at_old_revision_per_s']:,.0f}/s),"
            f" list {args.list_size:,} objects {medians['list_ms']:.1f} ms"
            f" (at an old revision {medians['list_at_old_revision_ms']:.1f} ms),"
            f" watch fan-out to {args.watchers} watchers"
            f" {medians['watch_events_per_s']:,.0f} events/s"
        )
    write_json(args.json, {"backends": results, "args": vars(args)})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

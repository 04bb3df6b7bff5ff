"""API server throughput and latency over HTTP against a ``kubedra apiserver`` subprocess.

Phases (concurrent aiohttp clients): CREATE, GET, UPDATE (PUT with resourceVersion), LIST of
all objects, then watch fan-out: W watchers each receive every event of a burst of updates.
Prints one summary line; ``--json FILE`` writes every figure.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import yaml


def _lease(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"holderIdentity": "bench"}}


def _slice(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name}, "nodeName": "n1", "driverName": "gpu.example.com",
            "namedResources": {"instances": [{"name": "gpu-0"}]}}


KINDS: dict[str, tuple[str, Callable[[str], dict[str, Any]]]] = {
    "leases": ("/apis/coordination.k8s.io/v1/namespaces/default/leases", _lease),
    "resourceslices": ("/apis/resource.k8s.io/v1alpha2/resourceslices", _slice),
}


def _pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000.0


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of the server process (all threads), from /proc."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Phase:
    """Latencies and rate of one phase, plus the server CPU it used: on a shared machine
    ``cpu_capacity`` (requests per server CPU-second) is the load-independent figure."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.latencies: list[float] = []
        self.errors = 0
        self.elapsed = 0.0
        self.cpu = 0.0

    def summary(self) -> dict[str, Any]:
        n = len(self.latencies)
        return {
            "requests": n, "errors": self.errors,
            "rate": round(n / self.elapsed, 1) if self.elapsed else 0.0,
            "p50_ms": round(_pct(self.latencies, 0.50), 2),
            "p99_ms": round(_pct(self.latencies, 0.99), 2),
            "server_cpu_s": round(self.cpu, 2),
            "cpu_capacity": round(n / self.cpu, 1) if self.cpu else None,
        }


async def _run(
    phase: Phase, concurrency: int, jobs: list[Any], one: Callable[[Any], Awaitable[bool]],
    pid: int,
) -> None:
    queue: asyncio.Queue[Any] = asyncio.Queue()
    for j in jobs:
        queue.put_nowait(j)

    async def worker() -> None:
        while not queue.empty():
            job = queue.get_nowait()
            t0 = time.perf_counter()
            ok = await one(job)
            phase.latencies.append(time.perf_counter() - t0)
            if not ok:
                phase.errors += 1

    cpu0 = _cpu_seconds(pid)
    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    phase.elapsed = time.perf_counter() - start
    phase.cpu = _cpu_seconds(pid) - cpu0


async def _bench(url: str, pid: int, args: argparse.Namespace) -> dict[str, Any]:
    path, make = KINDS[args.kind]
    names = [f"b{i:05d}" for i in range(args.objects)]
    out: dict[str, Any] = {"kind": args.kind, "objects": args.objects,
                           "concurrency": args.concurrency}
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(url, connector=connector) as http:
        objs: dict[str, dict[str, Any]] = {}

        async def create(name: str) -> bool:
            async with http.post(path, json=make(name)) as r:
                body = await r.json()
                objs[name] = body
                return r.status == 201

        async def get(name: str) -> bool:
            async with http.get(f"{path}/{name}") as r:
                await r.read()
                return r.status == 200

        async def update(name: str) -> bool:
            obj = objs[name]
            obj["metadata"]["labels"] = {"round": str(time.perf_counter_ns())}
            async with http.put(f"{path}/{name}", json=obj) as r:
                objs[name] = await r.json()
                return r.status == 200

        async def list_all(_: int) -> bool:
            async with http.get(path) as r:
                body = await r.json()
                return r.status == 200 and len(body["items"]) == args.objects

        phases = (
            ("create", names, create),
            ("get", [names[i % len(names)] for i in range(args.gets)], get),
            ("update", names, update),
            ("list", list(range(args.lists)), list_all),
        )
        for pname, jobs, fn in phases:
            phase = Phase(pname)
            await _run(phase, args.concurrency, jobs, fn, pid)
            out[pname] = phase.summary()
        out["watch"] = await _watch_fanout(http, path, names, objs, args)
    return out


async def _watch_fanout(
    http: aiohttp.ClientSession, path: str, names: list[str], objs: dict[str, Any],
    args: argparse.Namespace,
) -> dict[str, Any]:
    async with http.get(path, params={"limit": "1"}) as r:
        rv = (await r.json())["metadata"]["resourceVersion"]
    expected = args.watch_events
    received = [0] * args.watchers
    done = asyncio.Event()
    finished = [0]

    async def watcher(i: int) -> None:
        async with http.get(path, params={"watch": "true", "resourceVersion": rv,
                                          "timeoutSeconds": "60"}) as r:
            async for _line in r.content:
                received[i] += 1
                if received[i] >= expected:
                    finished[0] += 1
                    if finished[0] == args.watchers:
                        done.set()
                    return

    tasks = [asyncio.create_task(watcher(i)) for i in range(args.watchers)]
    await asyncio.sleep(0.5)
    start = time.perf_counter()
    for k in range(expected):
        name = names[k % len(names)]
        obj = objs[name]
        obj["metadata"]["labels"] = {"w": str(k)}
        async with http.put(f"{path}/{name}", json=obj) as r:
            objs[name] = await r.json()
    try:
        await asyncio.wait_for(done.wait(), timeout=60)
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    elapsed = time.perf_counter() - start
    total = sum(received)
    return {"watchers": args.watchers, "events": total,
            "events_per_s": round(total / elapsed, 1)}


def _start_server(data: Path) -> tuple[subprocess.Popen[bytes], str]:
    kubeconfig = data / "kubeconfig"
    proc = subprocess.Popen(
        [sys.executable, "-c", "from kubedra.cli.main import main; main()", "apiserver",
         "--data-dir", str(data), "--port", "0", "--kubeconfig", str(kubeconfig),
         "--max-requests-inflight", "1000"],
        stdout=subprocess.DEVNULL, stderr=(data / "log").open("wb"),
    )
    deadline = time.monotonic() + 30
    while not kubeconfig.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError("apiserver did not start: " + (data / "log").read_text())
        time.sleep(0.05)
    doc = yaml.safe_load(kubeconfig.read_text())
    return proc, str(doc["clusters"][0]["cluster"]["server"])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--smoke", action="store_true", help="tiny sizes (a few seconds)")
    p.add_argument("--json", type=Path, help="write the figures here")
    p.add_argument("--kind", choices=sorted(KINDS), default="leases")
    p.add_argument("--objects", type=int, default=1000)
    p.add_argument("--gets", type=int, default=10_000)
    p.add_argument("--lists", type=int, default=50)
    p.add_argument("--concurrency", type=int, default=50)
    p.add_argument("--watchers", type=int, default=100)
    p.add_argument("--watch-events", type=int, default=200)
    args = p.parse_args(argv)
    if args.smoke:
        args.objects, args.gets, args.lists = 40, 200, 3
        args.concurrency, args.watchers, args.watch_events = 8, 5, 10
    with tempfile.TemporaryDirectory(prefix="kubedra-bench-") as tmp:
        proc, url = _start_server(Path(tmp))
        try:
            result = asyncio.run(_bench(url, proc.pid, args))
        finally:
            proc.terminate()
            proc.wait(10)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    ok = all(result[k]["errors"] == 0 for k in ("create", "get", "update", "list"))
    mutating_p99 = max(result["create"]["p99_ms"], result["update"]["p99_ms"])
    print(
        f"apiserver_bench kind={args.kind} c={args.concurrency}: "
        f"create {result['create']['rate']}/s get {result['get']['rate']}/s "
        f"update {result['update']['rate']}/s list({args.objects}) {result['list']['rate']}/s "
        f"p99 mutating {mutating_p99}ms get p50/p99 {result['get']['p50_ms']}/"
        f"{result['get']['p99_ms']}ms watch {result['watch']['events_per_s']} ev/s to "
        f"{args.watchers} watchers; per server CPU-second: create "
        f"{result['create']['cpu_capacity']} get {result['get']['cpu_capacity']} update "
        f"{result['update']['cpu_capacity']}" + ("" if ok else " ERRORS"),
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

"""API server throughput and latency over HTTPS (plain HTTP with ``--no-tls``) against a
``kubedra apiserver`` subprocess, as its administrator.

Phases: CREATE, GET, UPDATE (PUT with resourceVersion), LIST of all objects, then watch
fan-out: W watchers each receive every event of a burst of updates. Each media type of
``--media`` (JSON and Kubernetes' protobuf by default, side by side) runs every phase on a
server of its own: bodies sent in it, answers and watch streams asked for in it (the watch
load, 10 updaters, writes JSON).

How it measures: the server is the ``kubedra apiserver`` command (one process, its own SQLite
store in a temporary directory). The load comes from ``--client-procs`` other processes, each
running ``concurrency / client-procs`` workers over keep-alive HTTP/1.1 connections (one per
worker; a worker sends its next request when the previous answer arrived, so latency includes
queueing in the server). The request clients are a minimal HTTP/1.1 implementation over
asyncio streams with the bodies encoded beforehand: a full client library costs about as much
CPU per request as the server, and on a machine with few cores that would measure the client.
Watchers use aiohttp. A phase's rate is its requests over the time from the common start to
the last answer; p50/p99 are over every request of the phase. ``server_cpu_s`` and
``client_cpu_s`` are the CPU time the server (all threads) and the clients used in the phase;
``cpu_capacity`` (requests per server CPU-second) does not depend on other load on the
machine; the watch phase's ``cpu_capacity`` counts events delivered. The whole run repeats
``--repeat`` times (a fresh server each time, the media alternating: the host's drift falls on
each) and the summary line shows the medians; ``--json FILE`` writes every run and the
medians. ``--callgrind`` runs the server under valgrind's callgrind and adds each phase's
``instructions_per_op``: a count that, unlike CPU time, does not move with the host's load,
so two media or two trees compare to a percent in one run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import aiohttp
import msgspec

from bench._common import Callgrind, cpu_seconds, percentile, sample
from kubedra.client import kubeconfig as kubeconfig_file
from kubedra.client.kubeconfig import ClientConfig
from kubedra.proto import kube


def _lease(name: str) -> dict[str, Any]:
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": name}, "spec": {"holderIdentity": "bench"}}


def _slice(name: str) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceSlice",
            "metadata": {"name": name}, "nodeName": "n1", "driverName": "gpu.example.com",
            "namedResources": {"instances": [{"name": "gpu-0"}]}}


KINDS: dict[str, tuple[str, Callable[[str], dict[str, Any]]]] = {
    "leases": ("/apis/coordination.k8s.io/v1/namespaces/default/leases", _lease),
    "resourceslices": ("/apis/resource.k8s.io/v1alpha2/resourceslices", _slice),
}


class Media:
    """A media type's bodies and answers (named, so client processes look it up)."""

    def __init__(self, content_type: str, encode: Callable[[Any], bytes],
                 decode: Callable[[bytes], Any]) -> None:
        self.content_type = content_type
        self.encode = encode
        self.decode = decode


MEDIA = {
    "json": Media("application/json", msgspec.json.encode, msgspec.json.decode),
    "protobuf": Media(kube.MEDIA_TYPE, kube.encode, kube.decode),
}


def _frames(buffer: bytearray, media: str) -> int:
    """Complete watch events at the front of ``buffer``, removed from it: JSON lines, or
    protobuf's length-prefixed frames (counted, not decoded, as the lines are)."""
    count = 0
    if media == "json":
        end = buffer.rfind(b"\n")
        count = buffer.count(b"\n", 0, end + 1)
        del buffer[:end + 1]
        return count
    at = 0
    while at + 4 <= len(buffer):
        size = int.from_bytes(buffer[at:at + 4], "big")
        if at + 4 + size > len(buffer):
            break
        at += 4 + size
        count += 1
    del buffer[:at]
    return count


def _pct(values: list[float], q: float) -> float:
    return percentile(sorted(values), q) * 1000.0


class Phase:
    """Latencies and rate of one phase, plus the server CPU it used: on a shared machine
    ``cpu_capacity`` (requests per server CPU-second) is the load-independent figure."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.latencies: list[float] = []
        self.errors = 0
        self.elapsed = 0.0
        self.cpu = 0.0
        self.client_cpu = 0.0

    def summary(self) -> dict[str, Any]:
        n = len(self.latencies)
        return {
            "requests": n, "errors": self.errors,
            "rate": round(n / self.elapsed, 1) if self.elapsed else 0.0,
            "p50_ms": round(_pct(self.latencies, 0.50), 2),
            "p99_ms": round(_pct(self.latencies, 0.99), 2),
            "server_cpu_s": round(self.cpu, 2),
            "client_cpu_s": round(self.client_cpu, 2),
            "cpu_capacity": round(n / self.cpu, 1) if self.cpu else None,
        }


Job = tuple[str, str, bytes | None]  # method, path, body in the phase's media type


class _Http:
    """One keep-alive HTTP/1.1 connection: just enough protocol for the bench's requests
    (answers with Content-Length or chunked bodies)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 host: str, token: str | None, content_type: str) -> None:
        self.reader = reader
        self.writer = writer
        self.host = host
        self.auth = f"Authorization: Bearer {token}\r\n" if token else ""
        self.content_type = content_type

    @classmethod
    async def open(cls, config: ClientConfig, content_type: str) -> _Http:
        """A connection as the kubeconfig's user (over TLS unless the server is http),
        sending and accepting ``content_type``."""
        host, _, port = config.server.split("://", 1)[1].rstrip("/").rpartition(":")
        tls = config.ssl_context()
        reader, writer = await asyncio.open_connection(
            host, int(port), ssl=tls if isinstance(tls, ssl.SSLContext) else None)
        return cls(reader, writer, f"{host}:{port}", config.token, content_type)

    async def request(self, method: str, path: str, body: bytes | None) -> tuple[int, bytes]:
        head = (f"{method} {path} HTTP/1.1\r\nHost: {self.host}\r\nUser-Agent: bench\r\n"
                f"Accept: {self.content_type}\r\n" + self.auth)
        if body is not None:
            head += f"Content-Type: {self.content_type}\r\nContent-Length: {len(body)}\r\n"
        self.writer.write(head.encode() + b"\r\n" + (body or b""))
        header = await self.reader.readuntil(b"\r\n\r\n")
        status = int(header[9:12])
        length, chunked = 0, False
        for line in header.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value)
            elif name == b"transfer-encoding":
                chunked = b"chunked" in value.lower()
        if not chunked:
            return status, await self.reader.readexactly(length)
        parts: list[bytes] = []
        while True:
            size = int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16)
            parts.append(await self.reader.readexactly(size + 2))
            if size == 0:
                return status, b"".join(p[:-2] for p in parts)

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(OSError):
            await self.writer.wait_closed()


def session(config: ClientConfig, **kwargs: Any) -> aiohttp.ClientSession:
    """An aiohttp session as the kubeconfig's user (its token, or its certificate)."""
    headers = {"Authorization": f"Bearer {config.token}"} if config.token else {}
    return aiohttp.ClientSession(
        config.server, headers=headers,
        connector=aiohttp.TCPConnector(limit=0, ssl=config.ssl_context()), **kwargs)


async def _client(kubeconfig: Path, jobs: list[Job], concurrency: int, start_at: float,
                  media: str) -> tuple[list[float], int, float, list[Any], float]:
    """One client process: run ``jobs`` with ``concurrency`` workers from ``start_at``."""
    latencies: list[float] = []
    bodies: list[Any] = [None] * len(jobs)
    errors = 0
    queue: asyncio.Queue[int] = asyncio.Queue()
    for i in range(len(jobs)):
        queue.put_nowait(i)
    config = kubeconfig_file.load(kubeconfig)
    wire = MEDIA[media]
    conns = [await _Http.open(config, wire.content_type) for _ in range(concurrency)]
    for conn in conns:  # every connection is open and used once before the clock starts
        await conn.request("GET", "/readyz", None)
    await asyncio.sleep(max(0.0, start_at - time.time()))
    cpu1 = time.process_time()

    async def worker(conn: _Http) -> None:
        nonlocal errors
        while not queue.empty():
            i = queue.get_nowait()
            method, path, body = jobs[i]
            t0 = time.perf_counter()
            status, data = await conn.request(method, path, body)
            latencies.append(time.perf_counter() - t0)
            if status >= 300:
                errors += 1
            if method != "GET" or path.count("/") > 6:
                bodies[i] = wire.decode(data)

    start = time.perf_counter()
    await asyncio.gather(*(worker(c) for c in conns))
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu1
    for conn in conns:
        await conn.close()
    return latencies, errors, elapsed, bodies, cpu


def _client_process(kubeconfig: Path, jobs: list[Job], concurrency: int, start_at: float,
                    media: str) -> tuple[list[float], int, float, list[Any], float]:
    return asyncio.run(_client(kubeconfig, jobs, concurrency, start_at, media))


def _phase(name: str, kubeconfig: Path, pid: int, jobs: list[Job], args: argparse.Namespace,
           pool: ProcessPoolExecutor, media: str) -> tuple[Phase, list[Any]]:
    """Split ``jobs`` over the client processes; the phase spans the slowest of them."""
    procs = max(1, args.client_procs)
    parts = [jobs[k::procs] for k in range(procs)]
    per_proc = max(1, args.concurrency // procs)
    phase = Phase(name)
    start_at = time.time() + 0.5
    if args.callgrind:
        Callgrind.zero(pid)
    cpu0 = cpu_seconds(pid)
    futures = [pool.submit(_client_process, kubeconfig, part, per_proc, start_at, media)
               for part in parts]
    bodies: list[Any] = [None] * len(jobs)
    for k, fut in enumerate(futures):
        lat, errs, elapsed, got, client_cpu = fut.result()
        phase.client_cpu += client_cpu
        phase.latencies += lat
        phase.errors += errs
        phase.elapsed = max(phase.elapsed, elapsed)
        bodies[k::procs] = got
    phase.cpu = cpu_seconds(pid) - cpu0
    if args.callgrind:
        Callgrind.dump(pid)
    return phase, bodies


def _bench(kubeconfig: Path, pid: int, args: argparse.Namespace, media: str
           ) -> dict[str, Any]:
    path, make = KINDS[args.kind]
    encode = MEDIA[media].encode
    names = [f"b{i:05d}" for i in range(args.objects)]
    out: dict[str, Any] = {"kind": args.kind, "media": media, "objects": args.objects,
                           "concurrency": args.concurrency, "client_procs": args.client_procs}
    asyncio.run(_warm_up(kubeconfig, path, make, media))
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max(1, args.client_procs), mp_context=ctx) as pool:
        phase, created = _phase("create", kubeconfig, pid,
                                [("POST", path, encode(make(n))) for n in names], args, pool,
                                media)
        out["create"] = phase.summary()
        gets: list[Job] = [("GET", f"{path}/{names[i % len(names)]}", None)
                           for i in range(args.gets)]
        out["get"] = _phase("get", kubeconfig, pid, gets, args, pool, media)[0].summary()
        updates: list[Job] = []
        for obj in created:
            obj["metadata"]["labels"] = {"round": "1"}
            updates.append(("PUT", f"{path}/{obj['metadata']['name']}", encode(obj)))
        out["update"] = _phase("update", kubeconfig, pid, updates, args, pool,
                               media)[0].summary()
        lists: list[Job] = [("GET", path, None)] * args.lists
        out["list"] = _phase("list", kubeconfig, pid, lists, args, pool, media)[0].summary()
        out["watch"] = _watch_fanout(kubeconfig, pid, path, names, args, pool, media)
    return out


async def _streams_open(kubeconfig: Path, count: int) -> None:
    """Wait until the server serves ``count`` watch streams (its ``/metrics``): opening them,
    TLS handshakes included, is not the watch phase's work."""
    deadline = time.monotonic() + 300
    async with session(kubeconfig_file.load(kubeconfig)) as http:
        while time.monotonic() < deadline:
            async with http.get("/metrics") as r:
                text = await r.text()
            if (sample(text, "apiserver_registered_watchers") or 0) >= count:
                await asyncio.sleep(0.5)  # their subscriptions, after the request is served
                return
            await asyncio.sleep(0.1)
    raise RuntimeError(f"{count} watch streams did not open")


async def _warm_up(kubeconfig: Path, path: str, make: Callable[[str], dict[str, Any]],
                   media: str) -> None:
    """An object created, read, updated and deleted in the phase's media, and in JSON (the
    watch phase's updates), before anything is measured: what a server builds on the first
    request of a kind and media (field tables, encoding plans) is not the phases' work."""
    config = kubeconfig_file.load(kubeconfig)
    for label in dict.fromkeys(("json", media)):
        wire = MEDIA[label]
        conn = await _Http.open(config, wire.content_type)
        name = f"warm-up-{label}"
        try:
            status, data = await conn.request("POST", path, wire.encode(make(name)))
            obj = wire.decode(data)
            obj["metadata"]["labels"] = {"warm": "up"}
            for method, body in (("GET", None), ("PUT", wire.encode(obj)), ("DELETE", None)):
                if status < 300:
                    status, data = await conn.request(method, f"{path}/{name}", body)
            if status >= 300:
                raise RuntimeError(f"warm-up in {wire.content_type}: {status} {data[:200]!r}")
        finally:
            await conn.close()


async def _watchers(kubeconfig: Path, path: str, rv: str, count: int, expected: int,
                    media: str) -> tuple[int, float]:
    """``count`` watch streams in one process: events received and when the last arrived."""
    received = [0] * count
    last = [0.0]

    async def watcher(http: aiohttp.ClientSession, i: int) -> None:
        buffer = bytearray()
        async with http.get(path, params={"watch": "true", "resourceVersion": rv,
                                          "timeoutSeconds": "60"},
                            headers={"Accept": MEDIA[media].content_type}) as r:
            async for chunk in r.content.iter_any():
                buffer += chunk
                received[i] += _frames(buffer, media)
                last[0] = time.time()
                if received[i] >= expected:
                    return

    async with session(kubeconfig_file.load(kubeconfig)) as http:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(
                asyncio.gather(*(watcher(http, i) for i in range(count))), timeout=60)
    return sum(received), last[0]


def _watchers_process(kubeconfig: Path, path: str, rv: str, count: int, expected: int,
                      media: str) -> tuple[int, float]:
    return asyncio.run(_watchers(kubeconfig, path, rv, count, expected, media))


def _watch_fanout(kubeconfig: Path, pid: int, path: str, names: list[str],
                  args: argparse.Namespace, pool: ProcessPoolExecutor,
                  media: str) -> dict[str, Any]:
    """Watchers in the client processes; updates from this one, 10 at a time, in JSON (the
    server's CPU per event delivered then differs by the watch streams' media only) or with
    ``--watch-writes media`` in the phase's (as a cluster of Go components writes: the
    answer to a protobuf update and its watch event share one encoding). Counted under
    callgrind, one at a time: each event is then one write to each watcher, not a batch
    whose size depends on timing, and the count repeats."""

    async def listed() -> tuple[str, dict[str, Any]]:
        """The objects as JSON gives them (the updates' bodies are then the same bytes
        whatever the watch streams' media), and the list's resourceVersion."""
        async with session(kubeconfig_file.load(kubeconfig)) as http, http.get(path) as r:
            body = await r.json()
        return (str(body["metadata"]["resourceVersion"]),
                {o["metadata"]["name"]: o for o in body["items"]})

    rv, objs = asyncio.run(listed())
    procs = max(1, args.client_procs)
    futures = [pool.submit(_watchers_process, kubeconfig, path, rv,
                           len(range(k, args.watchers, procs)), args.watch_events, media)
               for k in range(procs)]
    asyncio.run(_streams_open(kubeconfig, args.watchers))

    wire = MEDIA[media if args.watch_writes == "media" else "json"]

    async def updates() -> float:
        config = kubeconfig_file.load(kubeconfig)
        conns = [await _Http.open(config, wire.content_type)
                 for _ in range(1 if args.callgrind else 10)]
        start = time.time()
        queue = list(range(args.watch_events))

        async def worker(conn: _Http) -> None:
            while queue:
                k = queue.pop(0)
                obj = objs[names[k % len(names)]]
                obj["metadata"]["labels"] = {"w": str(k)}
                obj["metadata"].pop("resourceVersion", None)
                status, data = await conn.request(
                    "PUT", f"{path}/{obj['metadata']['name']}", wire.encode(obj))
                if status >= 300:
                    raise RuntimeError(f"update: {status} {data[:200]!r}")
        try:
            await asyncio.gather(*(worker(conn) for conn in conns))
        finally:
            for conn in conns:
                await conn.close()
        return start

    if args.callgrind:
        Callgrind.zero(pid)
    cpu0 = cpu_seconds(pid)
    start = asyncio.run(updates())
    results = [f.result() for f in futures]
    cpu = cpu_seconds(pid) - cpu0
    if args.callgrind:
        Callgrind.dump(pid)
    total = sum(n for n, _ in results)
    elapsed = max(t for _, t in results) - start
    return {"watchers": args.watchers, "events": total,
            "expected": args.watchers * args.watch_events,
            "events_per_s": round(total / elapsed, 1) if elapsed > 0 else 0.0,
            "server_cpu_s": round(cpu, 3),
            "cpu_capacity": round(total / cpu, 1) if cpu > 0 else 0.0}


_USER_TOKEN = "bench-user"


def start_server(data: Path, tls: bool, rbac_user: bool = False, audit_log: bool = False,
                 flags: tuple[str, ...] = (), prefix: Sequence[str] = (),
                 timeout: float = 30) -> tuple[subprocess.Popen[bytes], Path]:
    """The server (with ``flags`` added, run under ``prefix``, a profiler say) and its
    administrator's kubeconfig (client certificate over HTTPS, a token over plain HTTP)."""
    kubeconfig = data / "kubeconfig"
    auth: list[str] = []
    if rbac_user:  # the load comes from a user RBAC authorizes (not system:masters)
        (data / "tokens.csv").write_text(f"{_USER_TOKEN},bench,bench,\n")
        auth = ["--token-auth-file", str(data / "tokens.csv")]
    audit = ["--audit-log-path", str(data / "audit.log")] if audit_log else []
    proc = subprocess.Popen(
        [*prefix, sys.executable, "-c", "from kubedra.cli.main import main; main()", "apiserver",
         "--data-dir", str(data), "--port", "0", "--kubeconfig", str(kubeconfig),
         "--max-requests-inflight", "1000", "--max-mutating-requests-inflight", "1000",
         *auth, *audit, *(() if tls else ("--no-tls",)), *flags],
        stdout=subprocess.DEVNULL, stderr=(data / "log").open("wb"),
    )
    deadline = time.monotonic() + timeout
    while not kubeconfig.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError("apiserver did not start: " + (data / "log").read_text())
        time.sleep(0.05)
    return proc, kubeconfig


# the phases in the order they run, each one count of --callgrind
_PHASES = ("create", "get", "update", "list", "watch")


def _run_once(args: argparse.Namespace, media: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="kubedra-bench-") as tmp:
        counter = Callgrind(Path(tmp)) if args.callgrind else None
        # 1.30: the release of the reference figures, and of the v1alpha2 slices it writes
        proc, kubeconfig = start_server(Path(tmp), not args.no_tls, args.rbac_user,
                                         args.audit_log, flags=("--emulated-version", "1.30"),
                                         prefix=counter.prefix if counter else (),
                                         timeout=300 if counter else 30)
        try:
            if args.rbac_user:
                kubeconfig = asyncio.run(_grant(kubeconfig, KINDS[args.kind][0]))
            out = _bench(kubeconfig, proc.pid, args, media)
        finally:
            proc.terminate()
            proc.wait(60 if counter else 10)
        if counter:
            for name, count in zip(_PHASES, counter.counts(), strict=True):
                done = out[name]["events" if name == "watch" else "requests"]
                out[name]["instructions_per_op"] = count // max(1, done)
            if args.callgrind_out:
                counter.keep(Path(args.callgrind_out), [f"{media}-{name}" for name in _PHASES])
        return out


async def _grant(admin: Path, path: str) -> Path:
    """A ClusterRole over the bench's resource bound to the bench user, written as admin;
    returns the bench user's kubeconfig once the server's RBAC index lets the user in."""
    group, plural = ("" if path.startswith("/api/") else path.split("/")[2]), path.split("/")[-1]
    rbac = "/apis/rbac.authorization.k8s.io/v1"
    role = {"metadata": {"name": "bench"}, "rules": [
        {"apiGroups": [group], "resources": [plural], "verbs": ["*"]}]}
    binding = {"metadata": {"name": "bench"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                           "name": "bench"},
               "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                             "name": "bench"}]}
    config = kubeconfig_file.load(admin)
    async with session(config) as http:
        for kind, body in (("clusterroles", role), ("clusterrolebindings", binding)):
            async with http.post(f"{rbac}/{kind}", json=body) as r:
                assert r.status == 201, await r.text()
    user = admin.with_name("bench.kubeconfig")
    kubeconfig_file.write(user, config.server, kubeconfig_file.Credentials(token=_USER_TOKEN),
                          ca_pem=config.ca_data)
    async with session(kubeconfig_file.load(user)) as http:
        for _ in range(100):
            async with http.get(path, params={"limit": "1"}) as r:
                if r.status == 200:
                    return user
            await asyncio.sleep(0.05)
    raise RuntimeError("the bench user was never authorized")


def _median(runs: list[Any]) -> Any:
    """Field-wise median of runs with the same shape (numbers, to 0.01 where two middle
    ones are averaged; other values from run 1)."""
    first = runs[0]
    if isinstance(first, dict):
        return {k: _median([r[k] for r in runs]) for k in first}
    if isinstance(first, int | float) and not isinstance(first, bool):
        return round(statistics.median(runs), 2)
    return first


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--smoke", action="store_true", help="tiny sizes (a few seconds)")
    p.add_argument("--json", type=Path, help="write the figures here")
    p.add_argument("--kind", choices=sorted(KINDS), default="leases")
    p.add_argument("--objects", type=int, default=1000)
    p.add_argument("--gets", type=int, default=10_000)
    p.add_argument("--lists", type=int, default=50)
    p.add_argument("--concurrency", type=int, default=50)
    p.add_argument("--watchers", type=int, default=100)
    p.add_argument("--watch-events", type=int, default=200)
    p.add_argument("--client-procs", type=int, default=2,
                   help="client processes sharing the load")
    p.add_argument("--no-tls", action="store_true",
                   help="plain HTTP with a token instead of HTTPS with a client certificate")
    p.add_argument("--rbac-user", action="store_true",
                   help="send the load as a user RBAC authorizes instead of an administrator")
    p.add_argument("--audit-log", action="store_true",
                   help="serve with --audit-log-path (to compare its cost)")
    p.add_argument("--repeat", type=int, default=3,
                   help="whole runs, each with a fresh server; the summary shows medians")
    p.add_argument("--callgrind", action="store_true",
                   help="run the server under callgrind and count its instructions per "
                        "request (per event delivered for the watch phase)")
    p.add_argument("--watch-writes", choices=("json", "media"), default="json",
                   help="the media of the watch phase's updates: JSON whatever the streams' "
                        "(default), or the phase's")
    p.add_argument("--callgrind-out", metavar="DIR",
                   help="with --callgrind, keep each phase's profile there as "
                        "<media>-<phase>.callgrind (the last round's)")
    p.add_argument("--media", default="json,protobuf",
                   help="media types to compare, comma-separated (json, protobuf; protobuf "
                        "only for a kind with a message)")
    args = p.parse_args(argv)
    if args.smoke:
        args.objects, args.gets, args.lists = 40, 200, 3
        args.concurrency, args.watchers, args.watch_events = 8, 5, 10
        args.client_procs, args.repeat = 1, 1
    medias = [m for m in args.media.split(",") if m]
    if unknown := set(medias) - set(MEDIA):
        p.error(f"--media: unknown {', '.join(sorted(unknown))}")
    if "protobuf" in medias and kube.message_for(*_type_meta(args.kind)) is None:
        print(f"apiserver_bench: {args.kind} has no protobuf form; JSON only", file=sys.stderr)
        medias = [m for m in medias if m != "protobuf"]
    results: dict[str, list[dict[str, Any]]] = {media: [] for media in medias}
    for round_ in range(max(1, args.repeat)):  # the media alternate, so drift hits each
        for media in medias[::-1] if round_ % 2 else medias:
            results[media].append(_run_once(args, media))
    if args.json:
        args.json.write_text(json.dumps(
            {media: {"median": _median(runs), "runs": runs}
             for media, runs in results.items()}, indent=2))
    ok = True
    for media, runs in results.items():
        ok = _summary(args, media, runs) and ok
    return 0 if ok else 1


def _type_meta(kind: str) -> tuple[str, str]:
    obj = KINDS[kind][1]("x")
    return obj["apiVersion"], obj["kind"]


def _summary(args: argparse.Namespace, media: str, runs: list[dict[str, Any]]) -> bool:
    """One line of medians for a media type; whether every request succeeded."""
    result = _median(runs)
    ok = all(r[k]["errors"] == 0 for r in runs for k in ("create", "get", "update", "list"))
    mutating_p99 = max(result["create"]["p99_ms"], result["update"]["p99_ms"])
    print(
        f"apiserver_bench kind={args.kind} {media:>8} {'http' if args.no_tls else 'https'} "
        f"c={args.concurrency} medians of {len(runs)}: "
        f"create {result['create']['rate']}/s get {result['get']['rate']}/s "
        f"update {result['update']['rate']}/s list({args.objects}) {result['list']['rate']}/s "
        f"p99 create/update {result['create']['p99_ms']}/{result['update']['p99_ms']}ms "
        f"(mutating {mutating_p99}ms) get p50/p99 {result['get']['p50_ms']}/"
        f"{result['get']['p99_ms']}ms watch {result['watch']['events_per_s']} ev/s to "
        f"{args.watchers} watchers; per server CPU-second: create "
        f"{result['create']['cpu_capacity']} get {result['get']['cpu_capacity']} update "
        f"{result['update']['cpu_capacity']} watch events {result['watch']['cpu_capacity']}"
        + ("; instructions per op: " + " ".join(
            f"{name} {result[name]['instructions_per_op']:,}" for name in _PHASES)
           if "instructions_per_op" in result["create"] else "")
        + ("" if ok else " ERRORS"),
    )
    return ok


if __name__ == "__main__":
    raise SystemExit(main())

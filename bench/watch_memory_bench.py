"""The API server's memory under create/delete cycles of large objects: a client that can
write must not be able to run the server out of memory through its watch cache.

Against a ``kubedra apiserver`` subprocess (HTTPS, its own SQLite store, ``--watch-cache-bytes``
as given), ``--clients`` concurrent clients each create and delete their own
ResourceClaimParameters until ``--cycles`` cycles are done: first objects carrying a 100 KB
annotation, then as many carrying a 100 KB ``vendorParameters``. Reported: the server's
resident memory (``VmRSS``) after a warm-up cycle, after each set and at its peak
(``VmHWM``), the watch-cache window from ``/metrics``, and whether the growth stays within
the window's byte bound + 200 MiB.

    python -m bench.watch_memory_bench                  # 10,000 cycles of each kind
    python -m bench.watch_memory_bench --cycles 2000 --watch-cache-bytes 64Mi
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

from bench._common import arg_parser, sample, write_json
from bench.apiserver_bench import session, start_server
from kubedra.api.quantity import Quantity
from kubedra.client import kubeconfig

PATH = "/apis/resource.k8s.io/v1alpha2/namespaces/default/resourceclaimparameters"
BLOB = "x" * 100_000
SLACK_MIB = 200
_REQUEST = {"driverName": "gpu.example.com", "requests": [{"namedResources": {"selector": "true"}}]}
_TYPE = {"apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClaimParameters"}


def _body(name: str, where: str) -> dict[str, Any]:
    if where == "annotation":
        return {**_TYPE, "metadata": {"name": name, "annotations": {"example.com/blob": BLOB}},
                "driverRequests": [_REQUEST]}
    return {**_TYPE, "metadata": {"name": name},
            "driverRequests": [{**_REQUEST, "vendorParameters": {"blob": BLOB}}]}


def _status_mib(pid: int, field: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return round(int(line.split()[1]) / 1024, 1)
    raise RuntimeError(f"no {field} for process {pid}")


async def _cycles(http: aiohttp.ClientSession, where: str, cycles: int, clients: int) -> None:
    async def client(i: int) -> None:
        name = f"p{i}"
        for _ in range(i, cycles, clients):
            async with http.post(PATH, json=_body(name, where)) as resp:
                if resp.status != 201:
                    raise RuntimeError(f"create: {resp.status} {await resp.text()}")
            async with http.delete(f"{PATH}/{name}") as resp:
                if resp.status != 200:
                    raise RuntimeError(f"delete: {resp.status} {await resp.text()}")

    await asyncio.gather(*(client(i) for i in range(clients)))


async def _window_bytes(http: aiohttp.ClientSession) -> float:
    async with http.get("/metrics") as resp:
        text = await resp.text()
    window = sample(text, "apiserver_watch_cache_window_bytes")
    if window is None:
        raise RuntimeError("/metrics has no apiserver_watch_cache_window_bytes")
    return window


async def _run(kubeconfig_path: Path, pid: int, cycles: int, clients: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    async with session(kubeconfig.load(kubeconfig_path)) as http:
        await _cycles(http, "annotation", clients, clients)  # warm-up: one cycle each
        out["rss_start_mib"] = _status_mib(pid, "VmRSS")
        for where in ("annotation", "vendorParameters"):
            start = time.perf_counter()
            await _cycles(http, where, cycles, clients)
            out[f"{where}_cycles_per_s"] = round(cycles / (time.perf_counter() - start), 1)
            out[f"rss_after_{where}_mib"] = _status_mib(pid, "VmRSS")
        out["rss_peak_mib"] = _status_mib(pid, "VmHWM")
        out["window_mib"] = round(await _window_bytes(http) / (1 << 20), 1)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = arg_parser(__doc__)
    parser.add_argument("--cycles", type=int, default=10_000, help="cycles of each kind")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--watch-cache-bytes", default="256Mi")
    args = parser.parse_args(argv)
    if args.smoke:
        args.cycles, args.clients, args.watch_cache_bytes = 20, 2, "4Mi"
    bound_mib = (Quantity.parse(args.watch_cache_bytes).as_int64() or 0) / (1 << 20)
    with tempfile.TemporaryDirectory(prefix="kubedra-bench-") as tmp:
        proc, kc = start_server(Path(tmp), tls=True,  # 1.30: the release of its objects
                                flags=("--watch-cache-bytes", args.watch_cache_bytes,
                                       "--emulated-version", "1.30"))
        try:
            result = asyncio.run(_run(kc, proc.pid, args.cycles, args.clients))
        finally:
            proc.terminate()
            proc.wait(10)
    grown = max(result["rss_after_annotation_mib"], result["rss_after_vendorParameters_mib"],
                result["rss_peak_mib"]) - result["rss_start_mib"]
    result.update(cycles=args.cycles, clients=args.clients, bound_mib=bound_mib,
                  grown_mib=round(grown, 1), within=grown <= bound_mib + SLACK_MIB)
    write_json(args.json, result)
    print(f"watch_memory_bench: {args.cycles} cycles each of 100 KB annotation and 100 KB "
          f"vendorParameters, {args.clients} clients, --watch-cache-bytes "
          f"{args.watch_cache_bytes}: RSS {result['rss_start_mib']} MiB at start, "
          f"{result['rss_after_annotation_mib']} after the annotations, "
          f"{result['rss_after_vendorParameters_mib']} after the vendorParameters, peak "
          f"{result['rss_peak_mib']}; grown {result['grown_mib']} MiB "
          f"({'within' if result['within'] else 'BEYOND'} the bound {bound_mib:.0f} + "
          f"{SLACK_MIB} MiB); window {result['window_mib']} MiB; "
          f"{result['annotation_cycles_per_s']} / {result['vendorParameters_cycles_per_s']} "
          "cycles/s")
    return 0 if result["within"] else 1


if __name__ == "__main__":
    raise SystemExit(main())

"""Driver SDK latency over real unix sockets, client and example driver in one process.

* prepare round trip (``NodePrepareResources`` -> response, CDI spec file written) for batches
  of 1 and 32 claims with structured handles: p50 and p99 per call;
* ``publish()`` -> the new list read from an open ``NodeListAndWatchResources`` stream for 8,
  128 and 1,024 instances with five attributes each: median of 5.

Targets on the 2-core CI machine: prepare p50 < 2 ms for one claim; 1,024 instances < 50 ms.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import grpc

from bench._common import arg_parser, median_us, write_json
from kubedra.driver.example import build, generated_instances
from kubedra.proto.generated import dra_v1alpha3_pb2 as dra_pb2
from kubedra.proto.generated import dra_v1alpha3_pb2_grpc as dra_grpc

DRIVER = "gpu.example.com"


def _claim(uid: str, instance: str) -> Any:
    claim = dra_pb2.Claim(namespace="default", uid=uid, name=f"claim-{uid}")
    handle = claim.structured_resource_handle.add()
    handle.vendorClaimParameters.raw = b'{"a":"b"}'
    handle.nodeName = "worker"
    result = handle.results.add()
    result.vendorRequestParameters.raw = b'{"request_foo":"bar"}'
    result.allocationResultModel.namedResources.name = instance
    return claim


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def _prepare_latency(node: Any, batch: int, rounds: int) -> dict[str, float]:
    times = []
    for r in range(rounds):
        claims = [_claim(f"r{r}-{i}", f"instance-{i:02d}") for i in range(batch)]
        start = time.perf_counter()
        response = await node.NodePrepareResources(
            dra_pb2.NodePrepareResourcesRequest(claims=claims), timeout=30
        )
        times.append(time.perf_counter() - start)
        if any(a.error for a in response.claims.values()) or len(response.claims) != batch:
            raise SystemExit(f"prepare failed: {response}")
        await node.NodeUnprepareResources(
            dra_pb2.NodeUnprepareResourcesRequest(claims=claims), timeout=30
        )
    return {"p50_us": median_us(times), "p99_us": _percentile(times, 0.99) * 1e6}


async def _delivery_latency(driver: Any, node: Any, count: int, repeats: int) -> float:
    lists = [generated_instances(count), generated_instances(count)[::-1]]
    stream = node.NodeListAndWatchResources(dra_pb2.NodeListAndWatchResourcesRequest())
    await stream.read()
    times = []
    for r in range(repeats):
        start = time.perf_counter()
        driver.publish(lists[r % 2])
        message = await stream.read()
        times.append(time.perf_counter() - start)
        if len(message.resources[0].namedResources.instances) != count:
            raise SystemExit("delivered the wrong list")
    stream.cancel()
    return median_us(times)


async def run(batches: list[int], rounds: int, sizes: list[int], repeats: int) -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(dir="/tmp", prefix="drvbench-"))
    try:
        driver, _ = build(DRIVER, root, root / "cdi", "worker", generated_instances(max(batches)))
        async with driver, grpc.aio.insecure_channel(f"unix:{driver.dra_socket}") as channel:
            node = dra_grpc.NodeStub(channel)
            await _prepare_latency(node, 1, 3)  # warm up
            prepare = {b: await _prepare_latency(node, b, rounds) for b in batches}
            delivery = {n: await _delivery_latency(driver, node, n, repeats) for n in sizes}
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return {"prepare": prepare, "delivery_us": delivery}


def main(argv: list[str] | None = None) -> int:
    parser = arg_parser(__doc__)
    parser.add_argument("--rounds", type=int, default=200, help="prepare calls per batch size")
    args = parser.parse_args(argv)
    batches, sizes, rounds, repeats = [1, 32], [8, 128, 1024], args.rounds, 5
    if args.smoke:
        batches, sizes, rounds, repeats = [1, 4], [8, 128], 5, 2
    r = asyncio.run(run(batches, rounds, sizes, repeats))
    prep = ", ".join(
        f"batch {b}: p50 {v['p50_us'] / 1000:.2f} ms p99 {v['p99_us'] / 1000:.2f} ms"
        for b, v in r["prepare"].items()
    )
    deliver = ", ".join(f"{n}: {us / 1000:.2f} ms" for n, us in r["delivery_us"].items())
    print(f"driver: prepare {prep}; publish->stream {deliver} (medians)")
    write_json(args.json, r)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

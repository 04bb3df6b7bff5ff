"""The node agent's latencies against a real API server process.

* ``publish``: a driver publishes a changed instance list -> the updated ResourceSlice is seen
  through the API (watch), for 8, 128 and 1,024 instances; median of the repeats.
* ``running``: a pod bound to the node (its claim already allocated and reserved) -> the pod's
  status says Running, prepare through the example driver included; p50/p99 over 200 pods.
* ``up``: ``kubedra up --nodes 100`` -> all 100 Nodes Ready.

Targets: publish(128) < 100 ms, running p50 < 100 ms, 100 nodes Ready < 60 s.

    python -m bench.node_bench [--sizes 8,128,1024] [--pods 200] [--up-nodes 100]
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench._common import arg_parser, write_json
from kubedra.api import codec, kinds
from kubedra.api.core import Node, Pod
from kubedra.api.resource.v1alpha2 import (
    NamedResourcesAttribute,
    NamedResourcesInstance,
    ResourceClaim,
    ResourceSlice,
)
from kubedra.cli.localcluster import LocalCluster
from kubedra.client import kubeconfig
from kubedra.client.informer import Informer
from kubedra.client.rest import Client
from kubedra.driver import Driver
from kubedra.driver.example import ExampleDriver, instance_names
from kubedra.kubelet.agent import NodeAgent
from kubedra.kubelet.node import NodeConfig

DRIVER = "bench.example.com"
NODE = "bench-node"
NS = "default"


def _kind(name: str) -> kinds.Kind:
    kind = kinds.lookup(name)
    assert kind is not None
    return kind


def _instances(count: int, tag: str) -> list[NamedResourcesInstance]:
    return [NamedResourcesInstance(name=n, attributes=[
        NamedResourcesAttribute(name="tag", string=tag)]) for n in instance_names(count)]


async def _until(ok: Callable[[], bool], changed: asyncio.Event, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not ok():
        changed.clear()
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("benchmark condition not reached")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(changed.wait(), remaining)


def _informer(client: Client, model: Any, changed: asyncio.Event, **kw: Any) -> Informer[Any]:
    informer: Informer[Any] = Informer(client, model, **kw)
    informer.add_handler(on_add=lambda _o: changed.set(),
                         on_update=lambda _o, _n: changed.set(),
                         on_delete=lambda _o: changed.set())
    informer.start()
    return informer


async def bench_node(base: Path, sizes: list[int], repeats: int, pods: int) -> dict[str, Any]:
    cluster = LocalCluster(base / "cluster", schedulers=0, controller_manager=False)
    root = base / NODE
    out: dict[str, Any] = {"publish_ms": {}}
    async with cluster, Client(kubeconfig.load(cluster.kubeconfig_path)) as client:
        example = ExampleDriver(DRIVER, root / "cdi", NODE)
        capacity = max(max(sizes), pods)
        example.set_instances(instance_names(capacity))
        driver = Driver(DRIVER, prepare=example.prepare, unprepare=example.unprepare,
                        root_dir=root, instances=_instances(sizes[0], "start"))
        agent = NodeAgent(client, NodeConfig(name=NODE, pods=str(pods + 10)), root)
        changed = asyncio.Event()
        slices = _informer(client, ResourceSlice, changed, field_selector=f"nodeName={NODE}")
        await driver.start()
        running = asyncio.create_task(agent.run())
        try:
            await agent.ready.wait()
            for size in sizes:
                times = []
                for r in range(repeats):
                    tag = f"{size}-{r}"

                    def published(tag: str = tag, size: int = size) -> bool:
                        items = slices.list()
                        return len(items) == 1 and items[0].named_resources is not None and len(
                            items[0].named_resources.instances) == size and all(
                            (i.attributes or [])[0].string == tag
                            for i in items[0].named_resources.instances)
                    fresh = _instances(size, tag)
                    start = time.perf_counter()
                    driver.publish(fresh)
                    await _until(published, changed)
                    times.append(time.perf_counter() - start)
                out["publish_ms"][str(size)] = round(statistics.median(times) * 1e3, 2)
            driver.publish(_instances(capacity, "pods"))
            await _until(lambda: any(len(s.named_resources.instances) == capacity
                                     for s in slices.list() if s.named_resources), changed)
            out["running_ms"] = await _bench_running(client, pods)
        finally:
            running.cancel()
            await asyncio.gather(running, return_exceptions=True)
            await slices.stop()
            await driver.stop()
    return out


async def _bench_running(client: Client, count: int) -> dict[str, float]:
    """Each pod: create it unbound, allocate and reserve its claim, then bind and time until
    the agent reports Running."""
    changed = asyncio.Event()
    pods = _informer(client, Pod, changed, namespace=NS)
    await pods.wait_synced()
    latencies = []
    try:
        for i in range(count):
            name = f"bench-{i}"
            claim = await client.create_raw(_kind("resourceclaims"), {
                "apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClaim",
                "metadata": {"name": name, "namespace": NS},
                "spec": {"resourceClassName": "bench"}}, NS)
            pod = await client.create_raw(_kind("pods"), {
                "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS},
                "spec": {"schedulerName": "none", "containers": [
                    {"name": "c", "image": "pause", "resources": {"claims": [{"name": "r"}]}}],
                    "resourceClaims": [{"name": "r", "source": {"resourceClaimName": name}}]}},
                NS)
            claim["status"] = {"driverName": DRIVER, "allocation": {"resourceHandles": [{
                "driverName": DRIVER, "structuredData": {"nodeName": NODE, "results": [
                    {"namedResources": {"name": instance_names(count)[i]}}]}}]},
                "reservedFor": [{"resource": "pods", "name": name,
                                 "uid": pod["metadata"]["uid"]}]}
            await _put_status(client, claim)
            start = time.perf_counter()
            await client.bind(NS, name, NODE)

            def is_running(name: str = name) -> bool:
                p = pods.get(name, NS)
                return p is not None and p.status.phase == "Running"
            await _until(is_running, changed)
            latencies.append(time.perf_counter() - start)
    finally:
        await pods.stop()
    ordered = sorted(latencies)
    return {"p50": round(statistics.median(ordered) * 1e3, 2),
            "p99": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1e3, 2)}


async def _put_status(client: Client, claim: dict[str, Any]) -> None:
    await client.update_status(codec.decode(codec.encode(claim), ResourceClaim))


async def bench_up(base: Path, nodes: int) -> float:
    """Seconds from starting ``kubedra up --nodes N`` to N Ready Nodes."""
    data = base / "up"
    start = time.perf_counter()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", "from kubedra.cli.main import main; main()", "up",
        "--data-dir", str(data), "--port", "0", "--nodes", str(nodes),
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL)
    try:
        while not (data / "kubeconfig").exists():
            await asyncio.sleep(0.05)
        async with Client(kubeconfig.load(data / "kubeconfig")) as client:
            while True:
                try:
                    items = (await client.list(Node)).items
                except OSError:
                    items = []
                ready = sum(1 for n in items if any(c.type == "Ready" and c.status == "True"
                                                    for c in n.status.conditions or ()))
                if ready >= nodes:
                    return time.perf_counter() - start
                if time.perf_counter() - start > 300:
                    raise TimeoutError(f"only {ready}/{nodes} nodes Ready")
                await asyncio.sleep(0.2)
    finally:
        proc.send_signal(signal.SIGINT)
        await asyncio.wait_for(proc.wait(), 60)


def main(argv: list[str] | None = None) -> int:
    parser = arg_parser(__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", default="8,128,1024")
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--pods", type=int, default=200)
    parser.add_argument("--up-nodes", type=int, default=100)
    args = parser.parse_args(argv)
    if args.smoke:
        args.sizes, args.repeats, args.pods, args.up_nodes = "8", 2, 3, 1
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="node-bench-") as tmp:
        result = asyncio.run(bench_node(Path(tmp), sizes, args.repeats, args.pods))
        result["up_seconds"] = round(asyncio.run(bench_up(Path(tmp), args.up_nodes)), 2)
    result["up_nodes"] = args.up_nodes
    print(f"node_bench: publish ms {result['publish_ms']}, bound->Running "
          f"p50 {result['running_ms']['p50']} ms p99 {result['running_ms']['p99']} ms "
          f"({args.pods} pods), up --nodes {args.up_nodes} Ready in {result['up_seconds']} s")
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

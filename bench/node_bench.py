"""The node agent's latencies against a real API server process, on either release.

* ``publish``: a driver publishes a changed instance list (1.30: through the node agent's
  ResourceSlice) or device list (1.34: ``publish_resources``, the driver's own ResourceSlice
  controller) -> the final slices are seen through the API (watch), for 8, 128 and 1,024;
  median of the repeats.
* ``running``: a pod bound to the node (its claim already allocated and reserved) -> the pod's
  status says Running, prepare through the example driver included; p50/p99 over 200 pods.
  On 1.34 each pod's claim comes from a ResourceClaimTemplate (the controller manager's claim
  controller creates it) and is allocated as the 1.34 scheduler writes it.
* ``up``: ``kubedra up --nodes 100`` -> all 100 Nodes Ready and (1.34) every node's
  ResourceSlices published, complete at their pool's newest generation.

Targets: publish(128) < 100 ms, running p50 < 100 ms, 100 nodes Ready < 60 s.

    python -m bench.node_bench [--emulated-version 1.34] [--sizes 8,128,1024] [--pods 200]
                               [--up-nodes 100]
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

from bench._common import arg_parser, percentile, write_json
from kubedra.api import codec, kinds
from kubedra.api.core import Node, Pod
from kubedra.api.release import R1_30, R1_34, Release, parse_release
from kubedra.api.resource import v1
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
from kubedra.driver.example import ExampleDriver, device_names, instance_names, publish_devices
from kubedra.kubelet.agent import NodeAgent
from kubedra.kubelet.node import NodeConfig

DRIVER = "bench.example.com"
NODE = "bench-node"
NS = "default"
UP_DEVICES = 8
"""Devices (instances) each node of ``up --nodes`` publishes."""


def _kind(name: str, release: Release = R1_30) -> kinds.Kind:
    kind = kinds.lookup(name, release)
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


async def _bind_until_running(client: Client, pods: Informer[Any], changed: asyncio.Event,
                              name: str) -> float:
    """Bind the pod to the agent's node; seconds until the agent reports it Running."""
    start = time.perf_counter()
    await client.bind(NS, name, NODE)

    def is_running() -> bool:
        p = pods.get(name, NS)
        return p is not None and p.status.phase == "Running"
    await _until(is_running, changed)
    return time.perf_counter() - start


def _informer(client: Client, model: Any, changed: asyncio.Event, **kw: Any) -> Informer[Any]:
    informer: Informer[Any] = Informer(client, model, **kw)
    informer.add_handler(on_add=lambda _o: changed.set(),
                         on_update=lambda _o, _n: changed.set(),
                         on_delete=lambda _o: changed.set())
    informer.start()
    return informer


async def bench_node(base: Path, sizes: list[int], repeats: int, pods: int) -> dict[str, Any]:
    cluster = LocalCluster(base / "cluster", schedulers=0, controller_manager=False,
                           emulated_version=R1_30.name)
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
            latencies.append(await _bind_until_running(client, pods, changed, name))
    finally:
        await pods.stop()
    return _p50_p99(latencies)


def _p50_p99(seconds: list[float]) -> dict[str, float]:
    ordered = sorted(seconds)
    return {"p50": round(statistics.median(ordered) * 1e3, 2),
            "p99": round(percentile(ordered, 0.99) * 1e3, 2)}


async def _put_status(client: Client, claim: dict[str, Any]) -> None:
    await client.update_status(codec.decode(codec.encode(claim), ResourceClaim))


# --- 1.34: the driver publishes its own slices; claims from a template -----------------------

def _devices(count: int, tag: str) -> list[v1.Device]:
    return [v1.Device(name=n, attributes={"tag": v1.DeviceAttribute(string=tag)})
            for n in device_names(count)]


def pool_devices(slices: list[v1.ResourceSlice]) -> list[v1.Device] | None:
    """The devices of one pool's slices once the API shows it final: every slice of one
    generation and as many as its ``resourceSliceCount`` (nothing obsolete left, nothing
    missing); ``None`` while it is being written."""
    if not slices:
        return None
    pool = slices[0].spec.pool
    if len(slices) != pool.resource_slice_count or any(
            s.spec.pool.generation != pool.generation for s in slices):
        return None
    return [d for s in slices for d in s.spec.devices]


def _tagged(slices: Informer[v1.ResourceSlice], size: int, tag: str) -> bool:
    devices = pool_devices(slices.list())
    return devices is not None and len(devices) == size and all(
        (d.attributes or {})["tag"].string == tag for d in devices)


async def bench_node_1_34(base: Path, sizes: list[int], repeats: int,
                          pods: int) -> dict[str, Any]:
    """The 1.34 node: ``kubedra kubelet``'s agent and the example driver in this process,
    against a 1.34 API server and controller manager (no scheduler: the bench allocates)."""
    cluster = LocalCluster(base / "cluster", schedulers=0, emulated_version=R1_34.name)
    root = base / NODE
    out: dict[str, Any] = {"publish_ms": {}}
    async with cluster, Client(kubeconfig.load(cluster.kubeconfig_path)) as client:
        example = ExampleDriver(DRIVER, root / "cdi", NODE)
        driver = Driver(DRIVER, prepare_claims=example.prepare_claims,
                        unprepare_claims=example.unprepare_claims, client=client,
                        node_name=NODE, root_dir=root)
        agent = NodeAgent(client, NodeConfig(name=NODE, pods=str(pods + 10)), root,
                          release=R1_34)
        changed = asyncio.Event()
        slices = _informer(client, v1.ResourceSlice, changed,
                           field_selector=f"{v1.RESOURCE_SLICE_SELECTOR_NODE_NAME}={NODE}")
        running = asyncio.create_task(agent.run())
        try:
            await agent.ready.wait()
            await driver.start()
            await driver.wait_registered(30)
            for size in sizes:
                times = []
                for r in range(repeats):
                    tag = f"{size}-{r}"
                    start = time.perf_counter()
                    publish_devices(driver, example, _devices(size, tag))
                    await _until(lambda size=size, tag=tag: _tagged(slices, size, tag), changed)
                    times.append(time.perf_counter() - start)
                out["publish_ms"][str(size)] = round(statistics.median(times) * 1e3, 2)
            capacity = max(max(sizes), pods)
            publish_devices(driver, example, _devices(capacity, "pods"))
            await _until(lambda: _tagged(slices, capacity, "pods"), changed)
            out["running_ms"] = await _bench_running_1_34(client, pods)
        finally:
            running.cancel()
            await asyncio.gather(running, return_exceptions=True)
            await slices.stop()
            await driver.stop()
    return out


async def _bench_running_1_34(client: Client, count: int) -> dict[str, float]:
    """Each pod names the template ``gpu``: once the claim controller made its claim, the
    claim is allocated and reserved as the 1.34 scheduler writes it (the finalizer by an
    update, then the status), then the pod is bound and timed until the agent reports
    Running."""
    await client.create_raw(_kind("deviceclasses", R1_34), {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": DRIVER},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}})
    await client.create_raw(_kind("resourceclaimtemplates", R1_34), {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
        "metadata": {"name": "gpu", "namespace": NS},
        "spec": {"spec": {"devices": {"requests": [
            {"name": "gpu", "exactly": {"deviceClassName": DRIVER}}]}}}}, NS)
    changed = asyncio.Event()
    pods = _informer(client, Pod, changed, namespace=NS)
    await pods.wait_synced()
    devices = device_names(count)
    latencies = []
    try:
        for i in range(count):
            name = f"bench-{i}"
            await client.create_raw(_kind("pods", R1_34), {
                "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS},
                "spec": {"schedulerName": "none", "containers": [
                    {"name": "c", "image": "pause", "resources": {"claims": [{"name": "gpu"}]}}],
                    "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu"}]}},
                NS)

            def claim_name(name: str = name) -> str | None:
                pod = pods.get(name, NS)
                statuses = pod.status.resource_claim_statuses if pod is not None else None
                return statuses[0].resource_claim_name if statuses else None
            await _until(lambda: claim_name() is not None, changed)
            claim = await client.get(v1.ResourceClaim, claim_name() or "", NS)
            claim.metadata.finalizers = [*(claim.metadata.finalizers or ()), v1.FINALIZER]
            body: dict[str, Any] = codec.to_builtins(await client.update(claim))
            pod = pods.get(name, NS)
            assert pod is not None
            body["status"] = {
                "allocation": {"devices": {"results": [{
                    "request": "gpu", "driver": DRIVER, "pool": NODE, "device": devices[i]}]}},
                "reservedFor": [{"resource": "pods", "name": name, "uid": pod.metadata.uid}]}
            await client.update_status(codec.decode(body, v1.ResourceClaim))
            latencies.append(await _bind_until_running(client, pods, changed, name))
    finally:
        await pods.stop()
    return _p50_p99(latencies)


async def bench_up(base: Path, nodes: int, release: Release) -> float:
    """Seconds from starting ``kubedra up --nodes N`` to N Ready Nodes and, on 1.34, every
    node's ResourceSlices published (each node's pool final, with all its devices): upstream's
    readiness of a DRA node, whose driver publishes once the kubelet runs it."""
    data = base / f"up-{release.name}"
    start = time.perf_counter()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", "from kubedra.cli.main import main; main()", "up",
        "--data-dir", str(data), "--port", "0", "--nodes", str(nodes),
        "--instances", str(UP_DEVICES), "--emulated-version", release.name,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL)
    try:
        while not (data / "kubeconfig").exists():
            await asyncio.sleep(0.05)
        async with Client(kubeconfig.load(data / "kubeconfig")) as client:
            while True:
                try:
                    ready = await _ready_nodes(client, release)
                except OSError:
                    ready = 0
                if ready >= nodes:
                    return time.perf_counter() - start
                if time.perf_counter() - start > 300:
                    raise TimeoutError(f"only {ready}/{nodes} nodes ready")
                await asyncio.sleep(0.2)
    finally:
        proc.send_signal(signal.SIGINT)
        await asyncio.wait_for(proc.wait(), 60)


async def _ready_nodes(client: Client, release: Release) -> int:
    """Nodes whose Ready condition is True and (1.34) whose driver's pool is published."""
    ready = {n.metadata.name for n in (await client.list(Node)).items
             if any(c.type == "Ready" and c.status == "True" for c in n.status.conditions or ())}
    if release is R1_30:
        return len(ready)
    by_node: dict[str, list[v1.ResourceSlice]] = {}
    for s in (await client.list(v1.ResourceSlice)).items:
        by_node.setdefault(s.spec.node_name or "", []).append(s)
    return sum(1 for node in ready
               if len(pool_devices(by_node.get(node or "", [])) or ()) == UP_DEVICES)


def main(argv: list[str] | None = None) -> int:
    parser = arg_parser(__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--emulated-version", default=R1_30.name,
                        help="the release the cluster emulates: 1.30 or 1.34")
    parser.add_argument("--sizes", default="8,128,1024")
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--pods", type=int, default=200)
    parser.add_argument("--up-nodes", type=int, default=100)
    args = parser.parse_args(argv)
    if args.smoke:
        args.sizes, args.repeats, args.pods, args.up_nodes = "8", 2, 3, 1
    releases = [R1_30, R1_34] if args.smoke else [parse_release(args.emulated_version)]
    sizes = [int(s) for s in args.sizes.split(",")]
    results = {}  # by release
    for release in releases:
        run = bench_node if release is R1_30 else bench_node_1_34
        with tempfile.TemporaryDirectory(prefix="node-bench-") as tmp:
            result = asyncio.run(run(Path(tmp), sizes, args.repeats, args.pods))
            result["up_seconds"] = round(asyncio.run(
                bench_up(Path(tmp), args.up_nodes, release)), 2)
        result["up_nodes"] = args.up_nodes
        print(f"node_bench {release.name}: publish ms {result['publish_ms']}, bound->Running "
              f"p50 {result['running_ms']['p50']} ms p99 {result['running_ms']['p99']} ms "
              f"({args.pods} pods), up --nodes {args.up_nodes} ready in "
              f"{result['up_seconds']} s")
        results[release.name] = result
    write_json(args.json, results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""scheduler_perf's DRA workloads over HTTP against real processes (API server + scheduler +
controller manager from ``kubedra.cli.localcluster``).

Nodes ``scheduler-perf-dra-*`` each get a ResourceSlice of ``instances`` instances of driver
``test-driver.cdi.k8s.io``; a structured ResourceClass, claim parameters and a claim template
per namespace. With ``--emulated-version 1.34`` the same workloads run on
``resource.k8s.io/v1`` (upstream's 1.34 configs ``SchedulingWithResourceClaimTemplate`` and
``SteadyStateClusterResourceClaimTemplate``): a DeviceClass, each node's pool published as a
driver does (one slice of ``instances`` devices, owned by the Node) and v1 claim templates;
``match_empty_500nodes`` (5 requests per claim under a ``matchAttribute`` constraint) exists
only there. Two kinds of workload, as upstream's configs:

* ``SchedulingWithResourceClaimTemplateStructured`` (``fast``, ``*pods_*nodes``): ``init``
  pods are created and scheduled, then ``measure`` pods; the window runs from the first
  measured create to the last bind.
* ``SteadyStateClusterResourceClaimTemplate`` (``empty_/half_/full_500nodes`` and variants):
  ``init_claims`` standalone claims are allocated first (upstream's allocResourceClaims), then
  10 pods are kept pending for ``duration`` seconds: each bound pod is deleted and replaced.

The result is upstream's ``SchedulingThroughput``: pods bound per second sampled every second
of the window (Average = pods / window, Perc50/90/99 of the samples). Each run also reports
CPU milliseconds per pod of every process (robust to a loaded machine, unlike wall time),
requests per pod by verb and resource (from the API server's metrics), the load average and a
calibration loop's CPU time. Each run uses a fresh cluster; the summary gives the median of
the runs' averages, per store backend (``--backend sqlite,etcd``).

    python -m bench.scheduler_perf --workload 5000pods_500nodes --runs 3
    python -m bench.scheduler_perf --workload half_500nodes [--profile DIR]
    python -m bench.scheduler_perf --workload match_empty_500nodes --emulated-version 1.34
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import itertools
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import uvloop

from bench._common import backends_option, calibration_ms, cpu_seconds, percentile
from kubedra.api import kinds
from kubedra.api.core import Node, Pod
from kubedra.api.release import R1_30, R1_34, Release, parse_release
from kubedra.api.resource import v1
from kubedra.api.resourceclaim import V1ALPHA2_CLAIMS, ClaimAPI, ResourceClaim, claim_api
from kubedra.cli.contenttype import DEFAULT as DEFAULT_CONTENT_TYPE
from kubedra.cli.fakenodes import create_fake_nodes
from kubedra.cli.localcluster import LocalCluster
from kubedra.client import kubeconfig
from kubedra.client.informer import Informer
from kubedra.client.rest import Client
from kubedra.proto import kube
from kubedra.testing import WITHOUT_NODE_LIFECYCLE

DRIVER = "test-driver.cdi.k8s.io"
NODE_PREFIX = "scheduler-perf-dra-"
CEL_SELECTOR = ('attributes.string["model"] == "a100" && '
                'attributes.quantity["memory"].isGreaterThan(quantity("32Gi")) && '
                'attributes.version["driver-version"].compareTo(semver("535.0.0")) >= 0')
"""A real selector over typed attributes, true for every instance of ``--attributes``."""
DEVICE_SELECTOR = (f'device.attributes["{DRIVER}"].model == "A100" && '
                   f'device.capacity["{DRIVER}"].memory.isGreaterThan(quantity("512Mi")) && '
                   f'device.attributes["{DRIVER}"].driverVersion.compareTo(semver("1.0.0")) >= 0')
"""The same for the devices of :func:`device_slice` (``resource.k8s.io/v1``)."""
STEADY_PENDING = 10


@dataclasses.dataclass(frozen=True)
class Workload:
    nodes: int
    instances: int
    init: int = 0
    """Pods scheduled before measuring (template workloads)."""
    measure: int = 0
    """Measured pods (template workloads)."""
    init_claims: int = 0
    """Standalone claims allocated before measuring (steady state)."""
    duration: float = 0.0
    """Seconds of the measured window (steady state); 0 for a template workload."""
    cel: bool = False
    """The measured pods' requests select with a real CEL expression (:data:`CEL_SELECTOR`,
    :data:`DEVICE_SELECTOR`)."""
    requests: int = 1
    """Requests per claim of the measured pods."""
    match: bool = False
    """The claim's requests must agree on an attribute (``matchAttribute``; 1.34 only)."""

    @property
    def steady(self) -> bool:
        return self.duration > 0


_HALF = Workload(500, 10, init_claims=2500, duration=10.0)
WORKLOADS = {
    "fast": Workload(1, 10, 0, 10),
    "2000pods_100nodes": Workload(100, 20, 1000, 1000),
    "2000pods_200nodes": Workload(200, 10, 1000, 1000),
    "5000pods_500nodes": Workload(500, 10, 2500, 2500),
    "steady_fast": Workload(1, 10, init_claims=5, duration=2.0),
    "empty_500nodes": dataclasses.replace(_HALF, init_claims=0),
    "half_500nodes": _HALF,
    "full_500nodes": dataclasses.replace(_HALF, init_claims=4990),
    "half_500nodes_cel": dataclasses.replace(_HALF, cel=True),
    "half_500nodes_2requests": dataclasses.replace(_HALF, requests=2),
    "selector_empty_500nodes": dataclasses.replace(_HALF, init_claims=0, cel=True),
    "match_empty_500nodes": dataclasses.replace(_HALF, init_claims=0, requests=5, match=True),
}


def _kind(name: str) -> kinds.Kind:
    kind = kinds.lookup(name, R1_30)
    assert kind is not None
    return kind


async def create_resource_class(client: Client) -> None:
    await client.create_raw(_kind("resourceclasses"), {
        "apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClass",
        "metadata": {"name": "test-class"}, "driverName": DRIVER, "structuredParameters": True})


async def create_namespace(client: Client, name: str) -> None:
    await client.create_raw(_kind("namespaces"), {
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})


async def create_dra_objects(client: Client, namespace: str, selector: str = "true",
                             requests: int = 1) -> None:
    await client.create_raw(_kind("resourceclaimparameters"), {
        "apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClaimParameters",
        "metadata": {"name": "test-claim-parameters", "namespace": namespace},
        "driverRequests": [{"driverName": DRIVER,
                            "requests": [{"namedResources": {"selector": selector}}] * requests}],
    }, namespace)
    await client.create_raw(_kind("resourceclaimtemplates"), {
        "apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClaimTemplate",
        "metadata": {"name": "test-claim-template", "namespace": namespace},
        "spec": {"spec": claim_spec()},
    }, namespace)


def claim_spec() -> dict[str, Any]:
    return {"resourceClassName": "test-class",
            "parametersRef": {"apiGroup": "resource.k8s.io", "kind": "ResourceClaimParameters",
                              "name": "test-claim-parameters"}}


def pod_body(namespace: str, i: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": f"pod-{i}", "namespace": namespace},
        "spec": {
            "containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.9",
                            "resources": {"claims": [{"name": "resource"}]}}],
            "resourceClaims": [{"name": "resource",
                                "source": {"resourceClaimTemplateName": "test-claim-template"}}],
        },
    }


def on_node(node: str) -> dict[str, Any]:
    """A node selector for ``node`` alone (an allocation's)."""
    return {"nodeSelectorTerms": [{"matchExpressions": [{
        "key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}]}


def allocated_claim(name: str, node: str, instance: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """A standalone claim and the status that allocates it ``instance`` of ``node``."""
    return ({"apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClaim",
             "metadata": {"name": name, "finalizers": [V1ALPHA2_CLAIMS.finalizer]},
             "spec": claim_spec()},
            {"driverName": DRIVER, "allocation": {
                "resourceHandles": [{"driverName": DRIVER, "structuredData": {
                    "nodeName": node, "results": [{"namedResources": {"name": instance}}]}}],
                "availableOnNodes": on_node(node)}})


# --- the same objects in resource.k8s.io/v1 (1.34) ---------------------------------------------

def device_class() -> dict[str, Any]:
    """Upstream's ``templates/deviceclass.yaml``: the driver's devices."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
            "metadata": {"name": "test-class"},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}}


def device_slice(node: Node, devices: int) -> dict[str, Any]:
    """The node's pool as a driver publishes it (``kubeletplugin``'s slice controller: one
    slice named after the node and driver, owned by the Node); the devices are upstream's
    ``createResourceDriver`` ones (typed attributes, a memory capacity)."""
    name, uid = node.metadata.name or "", node.metadata.uid or ""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"generateName": f"{name}-{DRIVER}-", "ownerReferences": [{
                "apiVersion": "v1", "kind": "Node", "name": name, "uid": uid,
                "controller": True}]},
            "spec": {"driver": DRIVER, "nodeName": name,
                     "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": f"instance-{i}", "attributes": {
                         "model": {"string": "A100"}, "family": {"string": "GPU"},
                         "driverVersion": {"version": "1.2.3"},
                         "dra.example.com/numa": {"int": i}},
                         "capacity": {"memory": {"value": "1Gi"}}}
                         for i in range(devices)]}}


def device_claim_spec(w: Workload | None = None) -> dict[str, Any]:
    """``w``'s requests (one plain one without): each exactly one device of the class,
    with :data:`DEVICE_SELECTOR` and a ``matchAttribute`` on the model as ``w`` says."""
    w = w or Workload(0, 0)
    exactly: dict[str, Any] = {"deviceClassName": "test-class"}
    if w.cel:
        exactly["selectors"] = [{"cel": {"expression": DEVICE_SELECTOR}}]
    devices: dict[str, Any] = {"requests": [{"name": f"req-{i}", "exactly": exactly}
                                            for i in range(w.requests)]}
    if w.match:
        devices["constraints"] = [{"matchAttribute": f"{DRIVER}/model"}]
    return {"devices": devices}


def device_pod_body(namespace: str, i: int) -> dict[str, Any]:
    body = pod_body(namespace, i)
    body["spec"]["resourceClaims"] = [{"name": "resource",
                                       "resourceClaimTemplateName": "test-claim-template"}]
    return body


def allocated_device_claim(name: str, node: str, instance: str
                           ) -> tuple[dict[str, Any], dict[str, Any]]:
    return ({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": name, "finalizers": [v1.FINALIZER]},
             "spec": device_claim_spec()},
            {"allocation": {"devices": {"results": [{
                "request": "req-0", "driver": DRIVER, "pool": node, "device": instance}]},
                "nodeSelector": on_node(node)}})


@dataclasses.dataclass(frozen=True)
class Era:
    """What the workloads create in one release's DRA API."""

    release: Release

    @property
    def claims(self) -> ClaimAPI:
        return claim_api(self.release)

    def kind(self, name: str) -> kinds.Kind:
        kind = kinds.lookup(name, self.release)
        assert kind is not None
        return kind

    async def publish(self, client: Client, w: Workload) -> None:
        """The nodes, their slices and the class."""
        if self.release == R1_30:
            await create_fake_nodes(client, w.nodes, w.instances, DRIVER, prefix=NODE_PREFIX,
                                    attributes=w.cel)
            await create_resource_class(client)
            return
        await create_fake_nodes(client, w.nodes, w.instances, DRIVER, prefix=NODE_PREFIX,
                                slices=None)
        await client.create_raw(self.kind("deviceclasses"), device_class())
        nodes = (await client.list(Node)).items
        gate = asyncio.Semaphore(16)

        async def one(node: Node) -> None:
            async with gate:
                await client.create_raw(self.kind("resourceslices"),
                                        device_slice(node, w.instances))

        await asyncio.gather(*(one(n) for n in nodes))

    async def template(self, client: Client, namespace: str, w: Workload | None = None
                       ) -> None:
        """The namespace's claim template for ``w``'s measured pods (a plain one without)."""
        if self.release == R1_30:
            await create_dra_objects(client, namespace, CEL_SELECTOR if w and w.cel else "true",
                                     w.requests if w else 1)
            return
        await client.create_raw(self.kind("resourceclaimtemplates"), {
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "test-claim-template", "namespace": namespace},
            "spec": {"spec": device_claim_spec(w)}}, namespace)

    def pod(self, namespace: str, i: int) -> dict[str, Any]:
        return (pod_body if self.release == R1_30 else device_pod_body)(namespace, i)

    async def create_pods(self, client: Client, namespace: str, count: int,
                          concurrency: int = 32) -> None:
        gate = asyncio.Semaphore(concurrency)
        pod_kind = _kind("pods")

        async def one(i: int) -> None:
            async with gate:
                await client.create_raw(pod_kind, self.pod(namespace, i), namespace)

        await asyncio.gather(*(one(i) for i in range(count)))

    async def allocate_claims(self, client: Client, namespace: str, count: int,
                              instances: int, concurrency: int = 8) -> None:
        """Upstream's allocResourceClaims: ``count`` standalone claims, each allocated one
        instance, filling the nodes in order (created with the finalizer, then the
        status). A v1 claim's admission compiles CEL on the API server's one admission
        thread, which lets 16 wait (more get 429): 8 at a time."""
        gate = asyncio.Semaphore(concurrency)
        kind = self.kind("resourceclaims")
        build = allocated_claim if self.release == R1_30 else allocated_device_claim

        async def one(i: int) -> None:
            node, instance = f"{NODE_PREFIX}{i // instances}", f"instance-{i % instances}"
            body, status = build(f"claim-{i}", node, instance)
            body["metadata"]["namespace"] = namespace
            async with gate:
                await client.create_raw(kind, body, namespace)
                await client.patch(self.claims.claim, f"claim-{i}", {"status": status},
                                   namespace=namespace, subresource="status")

        await asyncio.gather(*(one(i) for i in range(count)))


# --- what a run measures ---------------------------------------------------------------------

async def request_counts(client: Client) -> dict[str, float]:
    """``verb resource`` -> requests served so far, and ``verb resource seconds`` -> the
    server-side time they took in all, from the API server's metrics."""
    data = await client._request("GET", "/metrics")
    counts: dict[str, float] = {}
    for line in data.decode().splitlines():
        total = line.startswith("apiserver_request_total{")
        if not total and not line.startswith("apiserver_request_duration_seconds_sum{"):
            continue
        labels, _, value = line.partition("} ")
        fields = dict(kv.split("=", 1) for kv in labels.split("{", 1)[1].split(","))
        key = f"{fields['verb'].strip(chr(34))} {fields['resource'].strip(chr(34))}"
        key = key if total else f"{key} seconds"
        counts[key] = counts.get(key, 0.0) + float(value)
    return counts


def throughput(binds: list[float], start: float, end: float) -> dict[str, float]:
    """Upstream's SchedulingThroughput: Average over the window, percentiles of the pods
    bound in each whole second of it."""
    seconds = max(1, math.floor(end - start))
    samples = [0] * seconds
    for t in binds:
        if start <= t < start + seconds:
            samples[int(t - start)] += 1
    samples.sort()

    def perc(p: int) -> float:
        return float(samples[max(0, math.ceil(len(samples) * p / 100) - 1)])

    window = end - start
    return {"Average": len(binds) / window if window > 0 else float("inf"),
            "Perc50": perc(50), "Perc90": perc(90), "Perc99": perc(99)}


def _py_spy() -> str:
    """py-spy from this interpreter's environment (``pip install py-spy``), else PATH's."""
    beside = Path(sys.executable).parent / "py-spy"
    return str(beside) if beside.exists() else "py-spy"


class Measurement:
    """CPU per process, requests and (optionally) py-spy profiles over the measured window."""

    def __init__(self, cluster: LocalCluster, client: Client, profile: Path | None) -> None:
        self.client = client
        self.pids = {c.name: c.process.pid for c in cluster.components if c.process is not None}
        self.pids["bench"] = os.getpid()
        self.profile = profile
        self._spies: list[subprocess.Popen[bytes]] = []

    def _cpu_now(self) -> dict[str, float]:
        """Each component's CPU seconds with its child processes; the bench's own alone
        (the components are its children)."""
        return {name: cpu_seconds(pid, children=name != "bench")
                for name, pid in self.pids.items()}

    async def __aenter__(self) -> Measurement:
        if self.profile is not None:
            self.profile.mkdir(parents=True, exist_ok=True)
            self._spies = [subprocess.Popen(
                [_py_spy(), "record", "--pid", str(pid), "--rate", "50", "--gil",
                 "--nonblocking", "--format", "raw", "-o", str(self.profile / f"{name}.txt")],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                for name, pid in self.pids.items()]
        self.calibration = calibration_ms()
        self.load = os.getloadavg()[0]
        self._requests = await request_counts(self.client)
        self._cpu = self._cpu_now()
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.cpu = {name: cpu - self._cpu[name] for name, cpu in self._cpu_now().items()}
        after = await request_counts(self.client)
        served = {k: v - self._requests.get(k, 0.0) for k, v in sorted(after.items())
                  if v > self._requests.get(k, 0.0)}
        self.requests = {k: v for k, v in served.items() if not k.endswith(" seconds")}
        self.latency_ms = {k: round(served.get(f"{k} seconds", 0.0) * 1000 / v, 2)
                           for k, v in self.requests.items()}
        self.calibration = (self.calibration + calibration_ms()) / 2
        for spy in self._spies:
            spy.send_signal(2)
            spy.wait()

    def per_pod(self, pods: int) -> dict[str, Any]:
        n = max(pods, 1)
        return {"load_average": self.load, "calibration_ms": round(self.calibration, 1),
                "cpu_ms_per_pod": {k: round(v * 1000 / n, 3) for k, v in self.cpu.items()},
                "requests_per_pod": {k: round(v / n, 3) for k, v in self.requests.items()},
                "server_ms_per_request": self.latency_ms}


# --- the workloads ---------------------------------------------------------------------------


class Stages:
    """Where a measured pod waits (``--stages``): when the bench's watches first see each
    step of its way, from its creation to its binding, each step written by another
    component. The gaps show which hop holds pods up (a component's concurrency, the API
    server's queue), which CPU per pod cannot."""

    STEPS = ("created", "claim created", "claim in pod status", "claim finalizer",
             "claim allocated", "bound")

    def __init__(self, client: Client, claims: ClaimAPI) -> None:
        self.seen: dict[str, dict[str, float]] = {}
        self.finalizer = claims.finalizer
        self.claims: Informer[ResourceClaim] = Informer(client, claims.claim)
        self.claims.add_handler(on_add=self._claim, on_update=lambda _o, n: self._claim(n))

    def _mark(self, pod: str, step: str) -> None:
        self.seen.setdefault(pod, {}).setdefault(step, time.monotonic())

    def pod(self, pod: Pod) -> None:
        if pod.metadata.namespace != "test":
            return
        name = pod.metadata.name or ""
        self._mark(name, "created")
        if pod.status.resource_claim_statuses:
            self._mark(name, "claim in pod status")
        if pod.spec.node_name:
            self._mark(name, "bound")

    def _claim(self, claim: ResourceClaim) -> None:
        owners = claim.metadata.owner_references or []
        if claim.metadata.namespace != "test" or not owners:
            return
        pod = owners[0].name
        self._mark(pod, "claim created")
        if self.finalizer in (claim.metadata.finalizers or ()):
            self._mark(pod, "claim finalizer")
        if claim.status.allocation is not None:
            self._mark(pod, "claim allocated")

    def summary(self) -> dict[str, dict[str, float]]:
        """Milliseconds from each step to the next (mean, p50, p90) over the pods seen
        through all of them, and from creation to binding."""
        complete = [t for t in self.seen.values() if all(s in t for s in self.STEPS)]
        gaps = {f"{a} -> {b}": [(t[b] - t[a]) * 1000 for t in complete]
                for a, b in itertools.pairwise(self.STEPS)}
        gaps["created -> bound"] = [(t["bound"] - t["created"]) * 1000 for t in complete]
        out: dict[str, dict[str, float]] = {}
        for name, ms in gaps.items():
            ms.sort()
            if ms:
                out[name] = {"mean": round(statistics.fmean(ms), 1),
                             "p50": round(percentile(ms, 0.5), 1),
                             "p90": round(percentile(ms, 0.9), 1)}
        return out


class Bound:
    """Pods seen bound (by namespace) and when, from a pod informer."""

    def __init__(self) -> None:
        self.names: dict[str, set[str]] = {"init": set(), "test": set()}
        self.times: list[float] = []
        self.on_bind: Callable[[Pod], None] | None = None

    def seen(self, pod: Pod) -> None:
        ns = pod.metadata.namespace or ""
        name = pod.metadata.name or ""
        if pod.spec.node_name and ns in self.names and name not in self.names[ns]:
            self.names[ns].add(name)
            if ns == "test":
                self.times.append(time.monotonic())
                if self.on_bind is not None:
                    self.on_bind(pod)

    async def wait(self, ns: str, n: int, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while len(self.names[ns]) < n:
            if time.monotonic() > deadline:
                raise TimeoutError(f"only {len(self.names[ns])}/{n} pods bound in {ns}")
            await asyncio.sleep(0.02)


async def steady_state(client: Client, era: Era, bound: Bound, duration: float
                       ) -> tuple[float, float]:
    """Keep :data:`STEADY_PENDING` pods pending: every bound pod is deleted and replaced
    (both requests at once), for ``duration`` seconds. Returns the window (start, end)."""
    pods = _kind("pods")
    next_index = STEADY_PENDING
    work: set[asyncio.Task[None]] = set()
    running = True

    async def replace(pod: Pod) -> None:
        nonlocal next_index
        delete = client.delete(Pod, pod.metadata.name or "", "test", grace_period_seconds=0)
        if not running:
            await delete
            return
        next_index += 1
        await asyncio.gather(delete, client.create_raw(pods, era.pod("test", next_index),
                                                       "test"))

    def on_bind(pod: Pod) -> None:
        task = asyncio.create_task(replace(pod))
        work.add(task)
        task.add_done_callback(work.discard)

    bound.on_bind = on_bind
    start = time.monotonic()
    await era.create_pods(client, "test", STEADY_PENDING)
    await asyncio.sleep(duration)
    running = False
    end = time.monotonic()
    bound.on_bind = None
    await asyncio.gather(*list(work))
    return start, end


async def run_once(workload: str, workdir: Path, timeout: float, backend: str = "sqlite",
                   profile: Path | None = None, stages: bool = False,
                   release: Release = R1_30, content_type: str = DEFAULT_CONTENT_TYPE
                   ) -> dict[str, Any]:
    w, era = WORKLOADS[workload], Era(release)
    # HTTPS and per-component identities as `kubedra up`; no audit log (upstream's
    # scheduler_perf runs without one)
    cluster = LocalCluster(workdir, etcd_members=1 if backend == "etcd" else 0, audit_log=False,
                           controller_manager_args=WITHOUT_NODE_LIFECYCLE,
                           emulated_version=release.name, content_type=content_type)
    async with cluster, Client(kubeconfig.load(cluster.kubeconfig_path)) as client:
        await era.publish(client, w)
        await create_namespace(client, "init")
        await create_namespace(client, "test")
        await era.template(client, "init")
        await era.template(client, "test", w)
        bound = Bound()
        pods = Informer(client, Pod)
        pods.add_handler(on_add=bound.seen, on_update=lambda _o, n: bound.seen(n))
        steps = Stages(client, era.claims) if stages else None
        if steps is not None:
            pods.add_handler(on_add=steps.pod, on_update=lambda _o, n: steps.pod(n))
            steps.claims.start()
            await steps.claims.wait_synced()
        pods.start()
        await pods.wait_synced()
        if w.steady:
            await era.allocate_claims(client, "init", w.init_claims, w.instances)
        else:
            await era.create_pods(client, "init", w.init)
            await bound.wait("init", w.init, timeout)
        async with Measurement(cluster, client, profile) as measured:
            if w.steady:
                start, end = await steady_state(client, era, bound, w.duration)
                binds = [t for t in bound.times if t < end]
            else:
                start = time.monotonic()
                await era.create_pods(client, "test", w.measure)
                await bound.wait("test", w.measure, timeout)
                binds, end = bound.times, bound.times[-1]
        await pods.stop()
        if steps is not None:
            await steps.claims.stop()
    result = {"measured_pods": len(binds), "seconds": end - start,
              "throughput": throughput(binds, start, end), **measured.per_pod(len(binds))}
    if steps is not None:
        result["stages_ms"] = steps.summary()
    return result


def _line(r: dict[str, Any]) -> str:
    t = r["throughput"]
    line = (f"{t['Average']:.1f} pods/s (Perc50 {t['Perc50']:.0f}, Perc90 {t['Perc90']:.0f}, "
            f"Perc99 {t['Perc99']:.0f}), {r['measured_pods']} pods, load {r['load_average']:.2f}, "
            f"calibration {r['calibration_ms']} ms, CPU ms/pod {r['cpu_ms_per_pod']}, "
            f"requests/pod {r['requests_per_pod']}, "
            f"server ms/request {r['server_ms_per_request']}")
    for gap, ms in r.get("stages_ms", {}).items():
        line += f"\n    {gap:>42}: mean {ms['mean']} ms, p50 {ms['p50']}, p90 {ms['p90']}"
    return line


def run(workload: str, runs: int, backends: list[str], *, timeout: float = 600.0,
        profile: Path | None = None, stages: bool = False,
        release: Release = R1_30, content_type: str = DEFAULT_CONTENT_TYPE) -> dict[str, Any]:
    """Run ``workload`` ``runs`` times per backend on ``release``'s DRA API; print each run
    and the median."""
    name = workload if release == R1_30 else f"{workload}@{release.name}"
    if content_type != DEFAULT_CONTENT_TYPE:
        name += " (protobuf)"
    summary: dict[str, Any] = {"workload": name, "backends": {}}
    for backend in backends:
        results = []
        for i in range(runs):
            where = profile / f"{workload}-{release.name}-{backend}-{i}" if profile else None
            with tempfile.TemporaryDirectory(prefix="kubedra-perf-") as tmp, \
                    asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
                results.append(runner.run(run_once(workload, Path(tmp), timeout, backend,
                                                   where, stages, release, content_type)))
            print(f"  {name} run {i + 1}: {_line(results[-1])}", flush=True)
        rates = [r["throughput"]["Average"] for r in results]
        median = statistics.median(rates)
        summary["backends"][backend] = {"runs": results, "median_pods_per_second": median}
        print(f"scheduler_perf {name} on {backend:>6}: median "
              f"{median:.1f} pods/s over {runs} run(s) ({', '.join(f'{r:.1f}' for r in rates)})",
              flush=True)
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", choices=sorted(WORKLOADS), default="2000pods_100nodes")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--smoke", action="store_true",
                        help="the 'fast' workload, one run (on 1.30, then on 1.34, unless "
                             "--emulated-version names one)")
    parser.add_argument("--emulated-version", type=parse_release, default=None,
                        help="the release whose DRA API the workload uses: 1.30 "
                             "(resource.k8s.io/v1alpha2, the default) or 1.34 (v1)")
    parser.add_argument("--json", dest="json_path")
    parser.add_argument("--profile", type=Path, default=None,
                        help="write py-spy raw profiles of every process (measured window)")
    parser.add_argument("--stages", action="store_true",
                        help="also time each step of a measured pod's way, creation to "
                             "binding, from one more claim watch (always on with --smoke)")
    parser.add_argument("--kube-api-content-type", dest="content_type",
                        choices=[DEFAULT_CONTENT_TYPE, kube.MEDIA_TYPE],
                        default=DEFAULT_CONTENT_TYPE,
                        help="the scheduler's and controller manager's flag of that name")
    backends_option(parser)
    args = parser.parse_args(argv)
    workload, runs = ("fast", 1) if args.smoke else (args.workload, args.runs)
    releases = ([args.emulated_version] if args.emulated_version else
                [R1_30, R1_34] if args.smoke else [R1_30])
    if R1_30 in releases and WORKLOADS[workload].match:
        parser.error(f"{workload} needs --emulated-version 1.34 (matchAttribute is "
                     "resource.k8s.io/v1's)")
    summaries = [run(workload, runs, args.backend, timeout=args.timeout, profile=args.profile,
                     stages=args.stages or args.smoke, release=r,
                     content_type=args.content_type) for r in releases]
    if args.json_path:
        Path(args.json_path).write_text(json.dumps(
            summaries[0] if len(summaries) == 1 else summaries, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""scheduler_perf's DRA workloads over HTTP against real processes (API server + scheduler +
controller manager from ``kubedra.cli.localcluster``).

Nodes ``scheduler-perf-dra-*`` each get a ResourceSlice of ``instances`` instances of driver
``test-driver.cdi.k8s.io``; a structured ResourceClass, claim parameters and a claim template
per namespace. Two kinds of workload, as upstream's configs:

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
from kubedra.api.core import Pod
from kubedra.api.resource.v1alpha2 import FINALIZER, ResourceClaim
from kubedra.cli.fakenodes import create_fake_nodes
from kubedra.cli.localcluster import LocalCluster
from kubedra.client import kubeconfig
from kubedra.client.informer import Informer
from kubedra.client.rest import Client
from kubedra.testing import WITHOUT_NODE_LIFECYCLE

DRIVER = "test-driver.cdi.k8s.io"
NODE_PREFIX = "scheduler-perf-dra-"
CEL_SELECTOR = ('attributes.string["model"] == "a100" && '
                'attributes.quantity["memory"].isGreaterThan(quantity("32Gi")) && '
                'attributes.version["driver-version"].compareTo(semver("535.0.0")) >= 0')
"""A real selector over typed attributes, true for every instance of ``--attributes``."""
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
    selector: str = "true"
    requests: int = 1
    """Requests per claim of the measured pods."""

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
    "half_500nodes_cel": dataclasses.replace(_HALF, selector=CEL_SELECTOR),
    "half_500nodes_2requests": dataclasses.replace(_HALF, requests=2),
}


def _kind(name: str) -> kinds.Kind:
    kind = kinds.lookup(name)
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


async def create_pods(client: Client, namespace: str, count: int,
                      concurrency: int = 32) -> None:
    gate = asyncio.Semaphore(concurrency)
    pod_kind = _kind("pods")

    async def one(i: int) -> None:
        async with gate:
            await client.create_raw(pod_kind, pod_body(namespace, i), namespace)

    await asyncio.gather(*(one(i) for i in range(count)))


async def allocate_claims(client: Client, namespace: str, count: int, instances: int,
                          concurrency: int = 32) -> None:
    """Upstream's allocResourceClaims: ``count`` standalone claims, each allocated one
    instance, filling the nodes in order (created with the finalizer, then the status)."""
    gate = asyncio.Semaphore(concurrency)
    claims = _kind("resourceclaims")

    async def one(i: int) -> None:
        node, instance = f"{NODE_PREFIX}{i // instances}", f"instance-{i % instances}"
        async with gate:
            await client.create_raw(claims, {
                "apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClaim",
                "metadata": {"name": f"claim-{i}", "namespace": namespace,
                             "finalizers": [FINALIZER]},
                "spec": claim_spec()}, namespace)
            status = {"driverName": DRIVER, "allocation": {
                "resourceHandles": [{"driverName": DRIVER, "structuredData": {
                    "nodeName": node, "results": [{"namedResources": {"name": instance}}]}}],
                "availableOnNodes": {"nodeSelectorTerms": [{"matchExpressions": [{
                    "key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}]}}}
            await client.patch(ResourceClaim, f"claim-{i}", {"status": status},
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

    def __init__(self, client: Client) -> None:
        self.seen: dict[str, dict[str, float]] = {}
        self.claims = Informer(client, ResourceClaim)
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
        if FINALIZER in (claim.metadata.finalizers or ()):
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


async def steady_state(client: Client, bound: Bound, duration: float) -> tuple[float, float]:
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
        await asyncio.gather(delete, client.create_raw(pods, pod_body("test", next_index),
                                                       "test"))

    def on_bind(pod: Pod) -> None:
        task = asyncio.create_task(replace(pod))
        work.add(task)
        task.add_done_callback(work.discard)

    bound.on_bind = on_bind
    start = time.monotonic()
    await create_pods(client, "test", STEADY_PENDING)
    await asyncio.sleep(duration)
    running = False
    end = time.monotonic()
    bound.on_bind = None
    await asyncio.gather(*list(work))
    return start, end


async def run_once(workload: str, workdir: Path, timeout: float, backend: str = "sqlite",
                   profile: Path | None = None, stages: bool = False) -> dict[str, Any]:
    w = WORKLOADS[workload]
    # HTTPS and per-component identities as `kubedra up`; no audit log (upstream's
    # scheduler_perf runs without one)
    cluster = LocalCluster(workdir, etcd_members=1 if backend == "etcd" else 0, audit_log=False,
                           controller_manager_args=WITHOUT_NODE_LIFECYCLE)
    async with cluster, Client(kubeconfig.load(cluster.kubeconfig_path)) as client:
        await create_fake_nodes(client, w.nodes, w.instances, DRIVER, prefix=NODE_PREFIX,
                                attributes=w.selector != "true")
        await create_resource_class(client)
        await create_namespace(client, "init")
        await create_namespace(client, "test")
        await create_dra_objects(client, "init")
        await create_dra_objects(client, "test", w.selector, w.requests)
        bound = Bound()
        pods = Informer(client, Pod)
        pods.add_handler(on_add=bound.seen, on_update=lambda _o, n: bound.seen(n))
        steps = Stages(client) if stages else None
        if steps is not None:
            pods.add_handler(on_add=steps.pod, on_update=lambda _o, n: steps.pod(n))
            steps.claims.start()
            await steps.claims.wait_synced()
        pods.start()
        await pods.wait_synced()
        if w.steady:
            await allocate_claims(client, "init", w.init_claims, w.instances)
        else:
            await create_pods(client, "init", w.init)
            await bound.wait("init", w.init, timeout)
        async with Measurement(cluster, client, profile) as measured:
            if w.steady:
                start, end = await steady_state(client, bound, w.duration)
                binds = [t for t in bound.times if t < end]
            else:
                start = time.monotonic()
                await create_pods(client, "test", w.measure)
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
        profile: Path | None = None, stages: bool = False) -> dict[str, Any]:
    """Run ``workload`` ``runs`` times per backend; print each run and the median."""
    summary: dict[str, Any] = {"workload": workload, "backends": {}}
    for backend in backends:
        results = []
        for i in range(runs):
            where = profile / f"{workload}-{backend}-{i}" if profile else None
            with tempfile.TemporaryDirectory(prefix="kubedra-perf-") as tmp, \
                    asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
                results.append(runner.run(run_once(workload, Path(tmp), timeout, backend,
                                                   where, stages)))
            print(f"  {workload} run {i + 1}: {_line(results[-1])}", flush=True)
        rates = [r["throughput"]["Average"] for r in results]
        median = statistics.median(rates)
        summary["backends"][backend] = {"runs": results, "median_pods_per_second": median}
        print(f"scheduler_perf {workload} on {backend:>6}: median "
              f"{median:.1f} pods/s over {runs} run(s) ({', '.join(f'{r:.1f}' for r in rates)})",
              flush=True)
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", choices=sorted(WORKLOADS), default="2000pods_100nodes")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--smoke", action="store_true", help="the 'fast' workload, one run")
    parser.add_argument("--json", dest="json_path")
    parser.add_argument("--profile", type=Path, default=None,
                        help="write py-spy raw profiles of every process (measured window)")
    parser.add_argument("--stages", action="store_true",
                        help="also time each step of a measured pod's way, creation to "
                             "binding, from one more claim watch (always on with --smoke)")
    backends_option(parser)
    args = parser.parse_args(argv)
    workload, runs = ("fast", 1) if args.smoke else (args.workload, args.runs)
    summary = run(workload, runs, args.backend, timeout=args.timeout, profile=args.profile,
                  stages=args.stages or args.smoke)
    if args.json_path:
        Path(args.json_path).write_text(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

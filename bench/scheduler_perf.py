"""scheduler_perf's SchedulingWithResourceClaimTemplateStructured, over HTTP against real
processes (API server + scheduler + controller manager from ``kubedra.cli.localcluster``).

Nodes ``scheduler-perf-dra-*`` each get a ResourceSlice of ``instances`` instances of driver
``test-driver.cdi.k8s.io``; a structured ResourceClass, claim parameters (one request, selector
``true``) and a claim template; then ``init`` pods are created and scheduled, then ``measure``
pods, whose throughput (pods bound per second, from the first create to the last bind) is the
result. Each run uses a fresh cluster; the summary reports the median of the runs, per store
backend: ``--backend sqlite,etcd`` runs the API server on its SQLite file and then on a local
single-member etcd, and prints both side by side.

    python -m bench.scheduler_perf --workload 5000pods_500nodes --runs 3 [--backend sqlite,etcd]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench._common import backends_option
from kubedra.api import kinds
from kubedra.api.core import Pod
from kubedra.cli.fakenodes import create_fake_nodes
from kubedra.cli.localcluster import LocalCluster
from kubedra.client import kubeconfig
from kubedra.client.informer import Informer
from kubedra.client.rest import Client

DRIVER = "test-driver.cdi.k8s.io"
WORKLOADS = {
    "fast": dict(nodes=1, instances=10, init=0, measure=10),
    "2000pods_100nodes": dict(nodes=100, instances=20, init=1000, measure=1000),
    "2000pods_200nodes": dict(nodes=200, instances=10, init=1000, measure=1000),
    "5000pods_500nodes": dict(nodes=500, instances=10, init=2500, measure=2500),
}


def _kind(name: str) -> kinds.Kind:
    kind = kinds.lookup(name)
    assert kind is not None
    return kind


async def create_dra_objects(client: Client, namespace: str) -> None:
    await client.create_raw(_kind("resourceclaimparameters"), {
        "apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClaimParameters",
        "metadata": {"name": "test-claim-parameters", "namespace": namespace},
        "driverRequests": [{"driverName": DRIVER,
                            "requests": [{"namedResources": {"selector": "true"}}]}],
    }, namespace)
    await client.create_raw(_kind("resourceclaimtemplates"), {
        "apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClaimTemplate",
        "metadata": {"name": "test-claim-template", "namespace": namespace},
        "spec": {"spec": {"resourceClassName": "test-class",
                          "parametersRef": {"apiGroup": "resource.k8s.io",
                                            "kind": "ResourceClaimParameters",
                                            "name": "test-claim-parameters"}}},
    }, namespace)


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


_TICK = os.sysconf("SC_CLK_TCK")


def _py_spy() -> str:
    """py-spy from this interpreter's environment (``pip install py-spy``), else PATH's."""
    beside = Path(sys.executable).parent / "py-spy"
    return str(beside) if beside.exists() else "py-spy"


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


def calibration_ms() -> float:
    """CPU milliseconds of a fixed pure-Python loop: the machine's speed right now (a
    loaded machine's shared caches slow every process), to put CPU figures of runs taken
    under different load side by side."""
    start = time.process_time()
    table: dict[str, list[int]] = {}
    for i in range(200_000):
        table[str(i)] = [i, i * 2]
    return (time.process_time() - start) * 1000


def cluster_pids(cluster: LocalCluster) -> dict[str, int]:
    pids = {c.name: c.process.pid for c in cluster.components if c.process is not None}
    pids["bench"] = os.getpid()
    return pids


async def request_counts(client: Client) -> dict[str, float]:
    """``verb resource`` -> requests served so far, from the API server's metrics."""
    data = await client._request("GET", "/metrics")
    counts: dict[str, float] = {}
    for line in data.decode().splitlines():
        if line.startswith("apiserver_request_total{"):
            labels, _, value = line.partition("} ")
            fields = dict(kv.split("=", 1) for kv in labels.split("{", 1)[1].split(","))
            key = f"{fields['verb'].strip(chr(34))} {fields['resource'].strip(chr(34))}"
            counts[key] = counts.get(key, 0.0) + float(value)
    return counts


async def run_once(workload: str, workdir: Path, timeout: float,
                   backend: str = "sqlite", profile: Path | None = None) -> dict[str, Any]:
    w = WORKLOADS[workload]
    cluster = LocalCluster(workdir, etcd_members=1 if backend == "etcd" else 0)
    async with cluster, Client(kubeconfig.load(cluster.kubeconfig_path)) as client:
        await create_fake_nodes(client, w["nodes"], w["instances"], DRIVER,
                                prefix="scheduler-perf-dra-")
        await client.create_raw(_kind("resourceclasses"), {
            "apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClass",
            "metadata": {"name": "test-class"}, "driverName": DRIVER,
            "structuredParameters": True})
        for ns in ("init", "test"):
            await client.create_raw(_kind("namespaces"), {
                "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
            await create_dra_objects(client, ns)
        bound: dict[str, set[str]] = {"init": set(), "test": set()}
        last_bind = [0.0]

        def seen(pod: Pod) -> None:
            ns = pod.metadata.namespace or ""
            if pod.spec.node_name and ns in bound and pod.metadata.name not in bound[ns]:
                bound[ns].add(pod.metadata.name or "")
                last_bind[0] = time.monotonic()

        pods = Informer(client, Pod)
        pods.add_handler(on_add=seen, on_update=lambda _o, n: seen(n))
        pods.start()
        await pods.wait_synced()

        async def wait_bound(ns: str, n: int) -> None:
            deadline = time.monotonic() + timeout
            while len(bound[ns]) < n:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"only {len(bound[ns])}/{n} pods bound in {ns}")
                await asyncio.sleep(0.02)

        await create_pods(client, "init", w["init"])
        await wait_bound("init", w["init"])
        pids = cluster_pids(cluster)
        spies = [subprocess.Popen([_py_spy(), "record", "--pid", str(pid), "--rate", "50",
                                   "--gil", "--nonblocking", "--format", "raw",
                                   "-o", str(profile / f"{name}.txt")],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                 for name, pid in pids.items()] if profile else []
        calibration = calibration_ms()
        requests_before = await request_counts(client)
        cpu_before = {name: cpu_seconds(pid) for name, pid in pids.items()}
        load_before = os.getloadavg()[0]
        start = time.monotonic()
        await create_pods(client, "test", w["measure"])
        await wait_bound("test", w["measure"])
        elapsed = last_bind[0] - start
        cpu = {name: cpu_seconds(pid) - cpu_before[name] for name, pid in pids.items()}
        calibration = (calibration + calibration_ms()) / 2
        requests_after = await request_counts(client)
        for spy in spies:
            spy.send_signal(2)
            spy.wait()
        await pods.stop()
    n = w["measure"]
    requests = {k: round((v - requests_before.get(k, 0.0)) / n, 3)
                for k, v in sorted(requests_after.items()) if v > requests_before.get(k, 0.0)}
    return {"measured_pods": n, "seconds": elapsed,
            "pods_per_second": n / elapsed if elapsed > 0 else float("inf"),
            "load_average": load_before, "calibration_ms": round(calibration, 1),
            "cpu_ms_per_pod": {k: round(v * 1000 / n, 3) for k, v in cpu.items()},
            "requests_per_pod": requests}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", choices=sorted(WORKLOADS), default="2000pods_100nodes")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--smoke", action="store_true", help="the 'fast' workload, one run")
    parser.add_argument("--json", dest="json_path")
    parser.add_argument("--profile", type=Path, default=None,
                        help="py-spy raw profiles of every process during the measured phase")
    backends_option(parser)
    args = parser.parse_args(argv)
    workload, runs = ("fast", 1) if args.smoke else (args.workload, args.runs)
    summary: dict[str, Any] = {"workload": workload, "backends": {}}
    for backend in args.backend:
        results = []
        for i in range(runs):
            profile = args.profile / f"{backend}-{i}" if args.profile else None
            if profile:
                profile.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryDirectory(prefix="kubedra-perf-") as tmp:
                results.append(asyncio.run(run_once(workload, Path(tmp), args.timeout,
                                                    backend, profile)))
            r = results[-1]
            print(f"  run {i + 1}: {r['pods_per_second']:.1f} pods/s, "
                  f"load {r['load_average']:.2f}, calibration {r['calibration_ms']} ms, CPU ms/pod {r['cpu_ms_per_pod']}")
        rates = [r["pods_per_second"] for r in results]
        median = statistics.median(rates)
        summary["backends"][backend] = {"runs": results, "median_pods_per_second": median}
        print(f"scheduler_perf {workload} on {backend:>6}: median {median:.1f} pods/s "
              f"over {runs} run(s) ({', '.join(f'{r:.1f}' for r in rates)})")
    if args.json_path:
        Path(args.json_path).write_text(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""scheduler_perf's SchedulingWithResourceClaimTemplateStructured, over HTTP against real
processes (API server + scheduler + controller manager from ``kubedra.cli.localcluster``).

Nodes ``scheduler-perf-dra-*`` each get a ResourceSlice of ``instances`` instances of driver
``test-driver.cdi.k8s.io``; a structured ResourceClass, claim parameters (one request, selector
``true``) and a claim template; then ``init`` pods are created and scheduled, then ``measure``
pods, whose throughput (pods bound per second, from the first create to the last bind) is the
result. Each run uses a fresh cluster; the summary reports the median of the runs.

    python -m bench.scheduler_perf --workload 5000pods_500nodes --runs 3
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

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


async def run_once(workload: str, workdir: Path, timeout: float) -> dict[str, Any]:
    w = WORKLOADS[workload]
    cluster = LocalCluster(workdir)
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
        start = time.monotonic()
        await create_pods(client, "test", w["measure"])
        await wait_bound("test", w["measure"])
        elapsed = last_bind[0] - start
        await pods.stop()
    return {"measured_pods": w["measure"], "seconds": elapsed,
            "pods_per_second": w["measure"] / elapsed if elapsed > 0 else float("inf")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", choices=sorted(WORKLOADS), default="2000pods_100nodes")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--smoke", action="store_true", help="the 'fast' workload, one run")
    parser.add_argument("--json", dest="json_path")
    args = parser.parse_args(argv)
    workload, runs = ("fast", 1) if args.smoke else (args.workload, args.runs)
    results = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="kubedra-perf-") as tmp:
            results.append(asyncio.run(run_once(workload, Path(tmp), args.timeout)))
    rates = [r["pods_per_second"] for r in results]
    summary = {"workload": workload, "runs": results,
               "median_pods_per_second": statistics.median(rates)}
    print(f"scheduler_perf {workload}: median {summary['median_pods_per_second']:.1f} pods/s "
          f"over {runs} run(s) ({', '.join(f'{r:.1f}' for r in rates)})")
    if args.json_path:
        Path(args.json_path).write_text(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Jobs through the whole control plane: API server, scheduler and controller manager as
separate processes (LocalCluster) and node agents (``kubedra node-pool`` processes, as
``kubedra up --nodes``) whose simulated runtime runs every pod for ``--run-seconds``
(``kubedra.io/run-seconds``).

Creates ``--jobs`` Jobs of ``--pods`` completions each (parallelism = completions) at once and
reports Jobs completed per second, pods created per second (first Job create to last pod
created) and pods tracked per second (counted in Job status, first create to last Job
complete), and the CPU-seconds per pod of each process: on a loaded machine the wall-clock
rates move with the load, CPU per pod much less. The load average and the calibration loop's
CPU time (as in ``bench.scheduler_perf``) tell how loaded the machine was.

    python -m bench.job_bench                # 500 Jobs x 10 pods
    python -m bench.job_bench --smoke        # 4 Jobs x 2 pods
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path

import aiohttp
from prometheus_client.parser import text_string_to_metric_families

from bench._common import arg_parser, calibration_ms, cpu_seconds, write_json
from kubedra.api import batch, codec
from kubedra.api.batch import Job
from kubedra.api.core import Node, Pod
from kubedra.cli.localcluster import Component, LocalCluster
from kubedra.cli.nodepool import node_names, pool_components
from kubedra.client import kubeconfig
from kubedra.client.informer import Informer
from kubedra.client.rest import Client
from kubedra.kubelet.runtime import RUN_SECONDS

PODS_PER_NODE = 110
"""The node agents' default pod capacity (as the kubelet's ``--max-pods``)."""
NODES_PER_PROCESS = 25
DRIVER = "gpu.example.com"


@dataclass
class Result:
    jobs: int
    pods: int
    nodes: int
    seconds: float
    jobs_per_second: float
    pods_created_per_second: float
    pods_tracked_per_second: float
    cpu_ms_per_pod: dict[str, float]
    """CPU milliseconds per pod of each process (node agents summed), during the run."""
    requests_per_pod: dict[str, float]
    """API requests per pod by ``verb resource[/subresource]`` (watches excluded)."""
    load_average: float
    calibration_ms: float
    """The calibration loop's CPU milliseconds, averaged over the start and end of the run."""


def _job(i: int, pods: int, run_seconds: float) -> Job:
    return codec.decode({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": f"bench-{i}", "namespace": "default"},
        "spec": {"completions": pods, "parallelism": pods, "template": {
            "metadata": {"annotations": {RUN_SECONDS: str(run_seconds)}},
            "spec": {"restartPolicy": "Never",
                     "containers": [{"name": "main", "image": "busybox"}]}}}}, Job)


def _role(component: Component) -> str:
    """Processes grouped as reported: node-pool processes together."""
    if component.name.startswith("nodes-"):
        return "node-agents"
    return component.name.removesuffix("-0")


def _cpu_by_role(cluster: LocalCluster) -> dict[str, float]:
    out: dict[str, float] = defaultdict(float)
    for c in cluster.components:
        if c.process is not None:
            out[_role(c)] += cpu_seconds(c.process.pid)
    out["bench"] = time.process_time()
    return out


async def _requests(config: kubeconfig.ClientConfig) -> dict[str, float]:
    """The API server's ``apiserver_request_total`` by verb and resource."""
    headers = {"Authorization": f"Bearer {config.token}"} if config.token else {}
    async with aiohttp.ClientSession(headers=headers) as session, session.get(
            config.server + "/metrics", ssl=config.ssl_context()) as resp:
        text = await resp.text()
    out: dict[str, float] = defaultdict(float)
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = sample.labels
            if (sample.name == "apiserver_request_total" and labels["resource"]
                    and labels["verb"].lower() != "watch"):
                out[f"{labels['verb']} {labels['resource']}"] += sample.value
    return out


def _ready(node: Node) -> bool:
    return any(c.type == "Ready" and c.status == "True" for c in node.status.conditions or ())


async def _until(what: str, ok: Callable[[], bool], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not ok():
        if time.monotonic() > deadline:
            raise TimeoutError(f"job_bench: timed out waiting for {what}")
        await asyncio.sleep(0.2)


async def run(jobs: int, pods: int, run_seconds: float, data_dir: Path) -> Result:
    total = jobs * pods
    nodes = max(2, -(-total // PODS_PER_NODE))
    cluster = LocalCluster(data_dir, emulated_version="1.30", feature_gates="JobManagedBy=true")
    cluster.node_names = node_names(nodes)  # each node its own identity, as in up
    cluster.others += pool_components(data_dir, nodes, NODES_PER_PROCESS, 1, DRIVER)
    await cluster.start()
    try:
        config = kubeconfig.load(cluster.kubeconfig_path)
        async with Client(config) as client:
            watched: Informer[Job] = Informer(client, Job)
            node_list: Informer[Node] = Informer(client, Node)
            for informer in (watched, node_list):
                informer.start()
                await informer.wait_synced(60)
            await _until(f"{nodes} Ready nodes",
                         lambda: sum(map(_ready, node_list.list())) >= nodes, 120)
            await node_list.stop()
            calibration, load = calibration_ms(), os.getloadavg()[0]
            cpu_before, requests_before = _cpu_by_role(cluster), await _requests(config)
            start_wall, start = time.time(), time.perf_counter()
            gate = asyncio.Semaphore(32)

            async def create(i: int) -> None:
                async with gate:
                    await client.create(_job(i, pods, run_seconds))

            await asyncio.gather(*(create(i) for i in range(jobs)))
            await _until("every Job complete", lambda: sum(
                1 for j in watched.list() if batch.is_job_complete(j)) >= jobs, 3600)
            elapsed = time.perf_counter() - start
            cpu_after, requests_after = _cpu_by_role(cluster), await _requests(config)
            calibration = (calibration + calibration_ms()) / 2
            tracked = sum(j.status.succeeded or 0 for j in watched.list())
            await watched.stop()
            created = [datetime.fromisoformat(p.metadata.creation_timestamp or "").timestamp()
                       for p in (await client.list(Pod, "default")).items]
    finally:
        await cluster.stop()
    assert tracked == total, f"{tracked} pods counted, expected {total}"
    # creationTimestamp has whole seconds: the last pod was created before that second ended
    created_span = max(max(created) + 1 - start_wall, 1e-3)
    cpu = {role: round((cpu_after[role] - cpu_before.get(role, 0.0)) / total * 1000, 2)
           for role in sorted(cpu_after)}
    requests = {key: round((n - requests_before.get(key, 0.0)) / total, 2)
                for key, n in sorted(requests_after.items(), key=lambda kv: -kv[1])}
    return Result(jobs, total, nodes, round(elapsed, 2), round(jobs / elapsed, 1),
                  round(len(created) / created_span, 1), round(total / elapsed, 1), cpu,
                  {key: n for key, n in requests.items() if n >= 0.01}, round(load, 2),
                  round(calibration, 1))


def main(argv: list[str] | None = None) -> int:
    parser = arg_parser(__doc__, "4 Jobs x 2 pods")
    parser.add_argument("--jobs", type=int, default=500)
    parser.add_argument("--pods", type=int, default=10, help="completions of each Job")
    parser.add_argument("--run-seconds", type=float, default=1.0,
                        help="how long each pod runs on its node")
    args = parser.parse_args(argv)
    jobs, pods = (4, 2) if args.smoke else (args.jobs, args.pods)
    # a short root: the node agents' Unix socket paths must fit in 107 bytes
    with tempfile.TemporaryDirectory(prefix="kd-jb-") as tmp:
        result = asyncio.run(run(jobs, pods, args.run_seconds, Path(tmp)))
    cpu = ", ".join(f"{role} {ms}" for role, ms in result.cpu_ms_per_pod.items())
    print(f"job_bench: {result.jobs} Jobs x {pods} pods on {result.nodes} nodes in "
          f"{result.seconds} s: {result.jobs_per_second} Jobs/s completed, "
          f"{result.pods_created_per_second} pods/s created, "
          f"{result.pods_tracked_per_second} pods/s tracked; CPU ms per pod: {cpu}; "
          f"API requests per pod: {sum(result.requests_per_pod.values()):.2f} ("
          + ", ".join(f"{k} {n}" for k, n in result.requests_per_pod.items())
          + f"); load {result.load_average}, calibration {result.calibration_ms} ms",
          file=sys.stderr)
    write_json(args.json, asdict(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

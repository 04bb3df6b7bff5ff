"""Jobs through the whole control plane: API server, scheduler and controller manager as
separate processes (LocalCluster), fake nodes, and the simulated kubelet of
``bench/_kubelet_sim.py`` in this process running every pod for 1 s (``kubedra.io/run-seconds``).

Creates ``--jobs`` Jobs of ``--pods`` completions each (parallelism = completions) at once and
reports Jobs completed per second, pods created per second (first to last pod created) and pods
tracked per second (counted in Job status, first create to last Job complete).

    python -m bench.job_bench                # 500 Jobs x 10 pods
    python -m bench.job_bench --smoke        # 4 Jobs x 2 pods
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import tempfile
import time
from pathlib import Path

from bench._common import arg_parser, write_json
from bench._kubelet_sim import RUN_SECONDS, SimulatedKubelet
from kubedra.api import batch, codec
from kubedra.api.batch import Job
from kubedra.api.core import Pod
from kubedra.cli.fakenodes import create_fake_nodes
from kubedra.cli.localcluster import LocalCluster
from kubedra.client import kubeconfig
from kubedra.client.informer import Informer
from kubedra.client.rest import Client

PODS_PER_NODE = 110


def _job(i: int, pods: int) -> Job:
    return codec.decode({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": f"bench-{i}", "namespace": "default"},
        "spec": {"completions": pods, "parallelism": pods, "template": {
            "metadata": {"annotations": {RUN_SECONDS: "1"}},
            "spec": {"restartPolicy": "Never",
                     "containers": [{"name": "main", "image": "busybox"}]}}}}, Job)


async def run(jobs: int, pods: int, data_dir: Path) -> dict[str, float]:
    total = jobs * pods
    cluster = LocalCluster(data_dir, feature_gates="JobManagedBy=true")
    await cluster.start()
    try:
        async with Client(kubeconfig.load(cluster.kubeconfig_path)) as client:
            nodes = max(2, -(-total // PODS_PER_NODE))
            await create_fake_nodes(client, nodes, 1, "gpu.example.com")
            kubelet = SimulatedKubelet(client)
            kubelet_task = asyncio.ensure_future(kubelet.run())
            watched: Informer[Job] = Informer(client, Job)
            pod_times: list[float] = []
            watched_pods: Informer[Pod] = Informer(client, Pod)
            watched_pods.add_handler(on_add=lambda _p: pod_times.append(time.perf_counter()))
            for informer in (watched, watched_pods):
                informer.start()
                await informer.wait_synced(30)
            start = time.perf_counter()
            gate = asyncio.Semaphore(32)

            async def create(i: int) -> None:
                async with gate:
                    await client.create(_job(i, pods))

            await asyncio.gather(*(create(i) for i in range(jobs)))
            while sum(1 for j in watched.list() if batch.is_job_complete(j)) < jobs:
                await asyncio.sleep(0.2)
            elapsed = time.perf_counter() - start
            tracked = sum(j.status.succeeded for j in watched.list())
            created_span = (max(pod_times) - start) if pod_times else elapsed
            kubelet_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await kubelet_task
            for informer in (watched, watched_pods):
                await informer.stop()
    finally:
        await cluster.stop()
    assert tracked == total, f"{tracked} pods counted, expected {total}"
    return {"jobs": jobs, "pods": total, "seconds": round(elapsed, 2),
            "jobs_per_second": round(jobs / elapsed, 1),
            "pods_created_per_second": round(len(pod_times) / created_span, 1),
            "pods_tracked_per_second": round(total / elapsed, 1)}


def main(argv: list[str] | None = None) -> int:
    parser = arg_parser(__doc__, "4 Jobs x 2 pods")
    parser.add_argument("--jobs", type=int, default=500)
    parser.add_argument("--pods", type=int, default=10, help="completions of each Job")
    args = parser.parse_args(argv)
    jobs, pods = (4, 2) if args.smoke else (args.jobs, args.pods)
    with tempfile.TemporaryDirectory(prefix="kubedra-job-bench-") as tmp:
        result = asyncio.run(run(jobs, pods, Path(tmp)))
    print(f"job_bench: {result['jobs']} Jobs x {pods} pods in {result['seconds']} s: "
          f"{result['jobs_per_second']} Jobs/s completed, {result['pods_created_per_second']} "
          f"pods/s created, {result['pods_tracked_per_second']} pods/s tracked",
          file=sys.stderr)
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

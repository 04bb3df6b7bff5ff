"""``kubedra up --etcd --apiservers 2`` survives the loss of either API server replica, as
kube-apiserver replicas behind a load balancer do: each replica is SIGKILLed twice, in turn,
and after each kill kubectl 1.30 works through the kubeconfig ``up`` wrote, a Job whose pods
each get a claim completes, and a pod with a claim template runs to Succeeded (the scheduler,
the controller manager and the node agents all reach the cluster through the front). The
killed replica comes back on the port it had. Since ``up`` starts a killed replica again
within seconds, the same checks also run on a :class:`LocalCluster` (``up``'s wiring without
its supervisor) whose killed replica stays down until they pass."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
from pathlib import Path

import aiohttp
import pytest

from kubedra.api.batch import Job
from kubedra.api.core import Pod
from kubedra.api.resource.v1alpha2 import ResourceClaim, ResourceSlice
from kubedra.cli.kubectl import KubectlUnavailable, ensure_kubectl
from kubedra.cli.localcluster import LocalCluster
from kubedra.cli.nodepool import node_names, pool_components
from kubedra.client import kubeconfig
from kubedra.client.rest import Client
from tests.e2e.dra_workload import kind, pod_body
from tests.e2e.node_support import eventually, socket_root
from tests.e2e.test_jobs import job_body
from tests.e2e.test_up import BANNER_END, DRIVER, read_until, start_up
from tests.etcd_processes import require_etcd


def replica_pid(data: Path, replica: int) -> int | None:
    """The pid of the API server replica whose kubeconfig is ``DATA/kubeconfig-<replica>``."""
    wanted = str(data / f"kubeconfig-{replica}").encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"apiserver" in argv and wanted in argv:
            return int(entry.name)
    return None


async def ready(url: str, config: kubeconfig.ClientConfig) -> bool:
    try:
        async with aiohttp.ClientSession() as session, \
                session.get(url + "/readyz", ssl=config.ssl_context()) as resp:
            return resp.status == 200
    except (aiohttp.ClientError, OSError):
        return False


async def create_class_and_template(client: Client) -> None:
    await client.create_raw(kind("resourceclasses"), {
        "apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClass",
        "metadata": {"name": "gpu"}, "driverName": DRIVER, "structuredParameters": True})
    await client.create_raw(kind("resourceclaimtemplates"), {
        "apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClaimTemplate",
        "metadata": {"name": "gpu", "namespace": "default"},
        "spec": {"spec": {"resourceClassName": "gpu"}}}, "default")


async def work_after_kill(config: kubeconfig.ClientConfig, round_: int) -> None:
    """A Job of two pods with claims completes; a pod with a claim template succeeds."""
    async with Client(config) as client:
        await client.create_raw(kind("jobs"), job_body(
            f"job-{round_}", gpu=True, completions=2, parallelism=2), "default")
        pod = f"pod-{round_}"
        await client.create_raw(kind("pods"), {
            **pod_body(pod), "metadata": {"name": pod, "namespace": "default"},
            "spec": {**pod_body(pod)["spec"], "restartPolicy": "Never"}}, "default")

        async def job_done() -> bool:
            job = await client.get(Job, f"job-{round_}", "default")
            return job.status.succeeded == 2

        async def pod_done() -> str | None:
            phase = (await client.get(Pod, pod, "default")).status.phase
            return phase if phase == "Succeeded" else None

        await eventually(f"job-{round_} completes", job_done, 180)
        await eventually(f"{pod} succeeds", pod_done, 120)
        claims = (await client.list(ResourceClaim, "default")).items
        assert all(c.status.allocation is not None for c in claims
                   if c.status.reserved_for), "a reserved claim without an allocation"


@pytest.mark.timeout(900)
async def test_cluster_survives_either_replica_killed() -> None:
    require_etcd()
    try:
        kubectl = ensure_kubectl("1.30")
    except KubectlUnavailable as err:
        pytest.skip(str(err))
    with socket_root() as data:
        proc = await start_up(data, "--port", "0", "--etcd", "--apiservers", "2",
                              "--nodes", "2", "--instances", "4")
        assert proc.stdout is not None
        try:
            await read_until(proc.stdout, BANNER_END, 120)
            front = kubeconfig.load(data / "kubeconfig")
            replicas = [kubeconfig.load(data / f"kubeconfig-{i}") for i in (0, 1)]
            assert front.server not in {r.server for r in replicas}
            async with Client(front) as client:
                await create_class_and_template(client)
                await eventually("two nodes with slices",
                                 lambda: _slices_published(client), 120)
            env = {"PATH": "/usr/bin:/bin", "HOME": str(data),
                   "KUBECONFIG": str(data / "kubeconfig")}
            for round_, victim in enumerate((0, 1, 0, 1)):
                pid = replica_pid(data, victim)
                assert pid is not None, f"replica {victim} is not running"
                os.kill(pid, signal.SIGKILL)
                # at once, while the replica is down (it takes seconds to start again)
                out = await asyncio.to_thread(
                    subprocess.run, [str(kubectl), "get", "nodes,pods", "-A"], env=env,
                    capture_output=True, text=True, timeout=60, check=False)
                assert out.returncode == 0, out.stderr
                assert "node-0" in out.stdout and "node-1" in out.stdout
                await work_after_kill(front, round_)
                # up started it again, on the port it had
                await eventually(f"replica {victim} back",
                                 lambda v=victim, p=pid: _back(data, v, p), 120)
                assert kubeconfig.load(data / f"kubeconfig-{victim}").server == \
                    replicas[victim].server
                await eventually(f"replica {victim} ready",
                                 lambda v=victim: ready(replicas[v].server, replicas[v]), 120)
            proc.send_signal(signal.SIGINT)
            rest = await read_until(proc.stdout, "kubedra stopped.", 60)
            assert await asyncio.wait_for(proc.wait(), 60) == 0, rest
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()


@pytest.mark.timeout(900)
async def test_cluster_works_while_either_replica_stays_down() -> None:
    require_etcd()
    try:
        kubectl = ensure_kubectl("1.30")
    except KubectlUnavailable as err:
        pytest.skip(str(err))
    with socket_root() as data:
        cluster = LocalCluster(data, emulated_version="1.30", etcd_members=1, apiservers=2)
        cluster.node_names = node_names(2)
        cluster.others += pool_components(data, 2, 25, 4, DRIVER)
        async with cluster:
            front = kubeconfig.load(cluster.kubeconfig_path)
            async with Client(front) as client:
                await create_class_and_template(client)
                await eventually("two nodes with slices",
                                 lambda: _slices_published(client), 120)
            env = {"PATH": "/usr/bin:/bin", "HOME": str(data),
                   "KUBECONFIG": str(cluster.kubeconfig_path)}
            for round_, victim in enumerate((0, 1)):
                replica = cluster.apiservers[victim]
                await replica.kill()
                out = await asyncio.to_thread(
                    subprocess.run, [str(kubectl), "get", "nodes"], env=env,
                    capture_output=True, text=True, timeout=60, check=False)
                assert out.returncode == 0 and "node-1" in out.stdout, out.stderr
                await work_after_kill(front, round_)
                assert not replica.running  # all of it with the replica down
                await replica.start()
                config = kubeconfig.load(cluster.kubeconfigs[victim])
                await eventually(f"replica {victim} ready again on its port",
                                 lambda c=config: ready(c.server, c), 120)
                assert config.server == cluster.servers[victim]


async def _slices_published(client: Client) -> bool:
    return len((await client.list(ResourceSlice)).items) == 2


async def _back(data: Path, replica: int, old_pid: int) -> bool:
    pid = replica_pid(data, replica)
    return pid is not None and pid != old_pid

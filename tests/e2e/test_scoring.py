"""Where pods land on ``kubedra up --nodes 3`` (real processes): kube-scheduler's default
scores spread plain pods, honour preferred node affinity, avoid a PreferNoSchedule taint
and keep a DoNotSchedule spread constraint; with DynamicResourcesPacking's weight raised
through ``--scheduler-config``, claims fill one node before the next."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import signal
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from kubedra.api.core import Node, Pod
from kubedra.api.resource import ResourceSlice
from kubedra.client import kubeconfig
from kubedra.client.rest import Client
from tests.e2e.dra_workload import kind
from tests.e2e.dra_workload import pod_body as gpu_pod_body
from tests.e2e.node_support import socket_root
from tests.e2e.test_up import UP, create_workload, read_until

NODES = {"node-0", "node-1", "node-2"}


@contextlib.asynccontextmanager
async def up(*args: str) -> AsyncIterator[Client]:
    """``kubedra up --nodes 3`` until its nodes are Ready and their slices published."""
    with socket_root() as data:
        proc = await asyncio.create_subprocess_exec(
            *UP, "--data-dir", str(data), "--port", "0", "--nodes", "3",
            "--nodes-per-process", "3", "--instances", "4", *args,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
        assert proc.stdout is not None
        try:
            await read_until(proc.stdout, "Press Ctrl-C to stop.", 90)
            async with Client(kubeconfig.load(data / "kubeconfig")) as client:
                deadline = time.monotonic() + 90
                while True:
                    nodes = (await client.list(Node)).items
                    slices = (await client.list(ResourceSlice)).items
                    ready = {n.metadata.name for n in nodes if any(
                        c.type == "Ready" and c.status == "True"
                        for c in n.status.conditions or ())}
                    if ready == NODES and len(slices) == 3:
                        break
                    assert time.monotonic() < deadline, (ready, len(slices))
                    await asyncio.sleep(0.2)
                yield client
            proc.send_signal(signal.SIGINT)
            await read_until(proc.stdout, "kubedra stopped.", 60)
            await asyncio.wait_for(proc.wait(), 30)
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()


def plain(name: str, labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": labels or {}},
            "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9"}],
                     **spec}}


async def create(client: Client, bodies: list[dict[str, Any]]) -> None:
    for body in bodies:
        await client.create_raw(kind("pods"), body, "default")


async def placed(client: Client, names: list[str], timeout: float = 120) -> dict[str, str]:
    """Pod name -> node, once all of ``names`` are bound."""
    deadline = time.monotonic() + timeout
    while True:
        pods = {p.metadata.name: p.spec.node_name
                for p in (await client.list(Pod, "default")).items}
        if all(pods.get(n) for n in names):
            return {n: pods[n] or "" for n in names}
        assert time.monotonic() < deadline, {n: pods.get(n) for n in names}
        await asyncio.sleep(0.2)


async def patch_node(client: Client, name: str, patch: dict[str, Any]) -> None:
    await client.send_patch(Node, name, patch, patch_type="strategic")


def per_node(where: dict[str, str]) -> dict[str, int]:
    counts = collections.Counter(where.values())
    return {n: counts.get(n, 0) for n in sorted(NODES)}


@pytest.mark.timeout(420)
async def test_default_scores_place_pods_as_kube_scheduler() -> None:
    async with up() as client:
        # 30 plain pods: LeastAllocated counts 100m/200Mi each, so they spread
        names = [f"plain-{i}" for i in range(30)]
        await create(client, [plain(n) for n in names])
        counts = per_node(await placed(client, names))
        assert max(counts.values()) - min(counts.values()) <= 1, counts

        # preferred node affinity: node-1 carries the label the pods prefer
        await patch_node(client, "node-1", {"metadata": {"labels": {"disk": "ssd"}}})
        prefer = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 10, "preference": {"matchExpressions": [
                {"key": "disk", "operator": "In", "values": ["ssd"]}]}}]}}
        names = [f"ssd-{i}" for i in range(3)]
        await create(client, [plain(n, affinity=prefer) for n in names])
        assert set((await placed(client, names)).values()) == {"node-1"}

        # a PreferNoSchedule taint is avoided while the other nodes fit
        await patch_node(client, "node-2", {"spec": {"taints": [
            {"key": "dedicated", "value": "batch", "effect": "PreferNoSchedule"}]}})
        names = [f"untainted-{i}" for i in range(6)]
        await create(client, [plain(n) for n in names])
        assert "node-2" not in set((await placed(client, names)).values())

        # DoNotSchedule: node-1 is preferred (affinity) and node-2 avoided (taint), yet the
        # skew between the nodes stays within maxSkew 1
        spread = [{"maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
                   "whenUnsatisfiable": "DoNotSchedule",
                   "labelSelector": {"matchLabels": {"app": "spread"}}}]
        names = [f"spread-{i}" for i in range(6)]
        await create(client, [plain(n, {"app": "spread"}, affinity=prefer,
                                    topologySpreadConstraints=spread) for n in names])
        assert per_node(await placed(client, names)) == {
            "node-0": 2, "node-1": 2, "node-2": 2}


PACKING = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: DynamicResourcesPacking
        weight: 20
"""


@pytest.mark.timeout(300)
async def test_raised_packing_weight_fills_one_node_before_the_next(tmp_path: Path) -> None:
    config = tmp_path / "scheduler.yaml"
    config.write_text(PACKING)
    async with up("--scheduler-config", str(config), "--seed", "7") as client:
        await create_workload(client)  # class, template and pod "app" with one claim
        first = await placed(client, ["app"])
        names = [f"gpu-{i}" for i in range(5)]
        for name in names:  # one by one: each sees the others' allocations
            await create(client, [{**gpu_pod_body(name),
                                   "metadata": {"name": name, "namespace": "default"}}])
            await placed(client, [name])
        where = {**first, **await placed(client, names)}
        counts = sorted(per_node(where).values(), reverse=True)
        assert counts == [4, 2, 0], where
        full = next(n for n, c in per_node(where).items() if c == 4)
        assert {where[n] for n in ["app", *names[:3]]} == {full}, where

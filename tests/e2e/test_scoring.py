"""Where pods land on ``kubedra up --nodes 3`` (real processes): kube-scheduler's default
scores spread plain pods, honour preferred node affinity, avoid a PreferNoSchedule taint
and keep a DoNotSchedule spread constraint; with DynamicResourcesPacking's weight raised
through ``--scheduler-config``, claims fill one node before the next."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import random
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubedra.api import codec
from kubedra.api.core import Node, Pod
from kubedra.api.resource.v1alpha2 import ResourceClaimTemplate, ResourceClass, ResourceSlice
from kubedra.client import kubeconfig
from kubedra.client.rest import Client
from tests.e2e.dra_workload import kind
from tests.e2e.dra_workload import pod_body as gpu_pod_body
from tests.e2e.node_support import socket_root
from tests.e2e.test_up import UP, create_workload, read_until

NODES = {"node-0", "node-1", "node-2"}
KUBEDRA = Path(sys.executable).parent / "kubedra"
HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


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


PACKING = HEAD + """\
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


def random_pod(rng: random.Random, i: int) -> dict[str, Any]:
    """One of the kinds of pod whose placement the default plugins decide."""
    kind = rng.choice(["plain", "cpu", "affinity", "soft-spread", "hard-spread", "gpu",
                       "anti"])
    name = f"r{i:02d}-{kind}"
    if kind == "gpu":
        return {**gpu_pod_body(name), "metadata": {"name": name, "namespace": "default"}}
    labels = {"app": rng.choice(["web", "db"])}
    spec: dict[str, Any] = {}
    if kind == "cpu":
        return plain(name, labels, containers=[{
            "name": "c", "image": "registry.k8s.io/pause:3.9",
            "resources": {"requests": {"cpu": f"{rng.randrange(1, 12) * 100}m",
                                       "memory": f"{rng.randrange(1, 9)}Gi"}}}])
    if kind == "affinity":
        spec["affinity"] = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": rng.randrange(1, 101), "preference": {"matchExpressions": [
                {"key": "zone", "operator": "In", "values": [rng.choice("ab")]}]}}]}}
    if kind in ("soft-spread", "hard-spread"):
        spec["topologySpreadConstraints"] = [{
            "maxSkew": rng.randrange(1, 3),
            "topologyKey": rng.choice(["zone", "kubernetes.io/hostname"]),
            "whenUnsatisfiable": "ScheduleAnyway" if kind == "soft-spread" else "DoNotSchedule",
            "labelSelector": {"matchLabels": labels}}]
    if kind == "anti":
        spec["affinity"] = {"podAntiAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [{
                "weight": rng.randrange(1, 101), "podAffinityTerm": {
                    "labelSelector": {"matchLabels": {"app": "web"}},
                    "topologyKey": "kubernetes.io/hostname"}}]}}
    return plain(name, labels, **spec)


def snapshot_documents(objects: list[Any], pods: list[dict[str, Any]]) -> list[Any]:
    """The cluster's objects, and the pods as they were created (pending)."""
    docs = [codec.to_builtins(codec.set_type_meta(o)) for o in objects]
    return docs + [{"apiVersion": "v1", "kind": "Pod", **body} for body in pods]


@pytest.mark.timeout(420)
async def test_simulate_agrees_with_the_scheduler(tmp_path: Path) -> None:
    """A randomized cluster (zones, a PreferNoSchedule taint, a profile with random
    weights) and randomized pods created one by one: ``simulate`` with the same seed and
    profile puts every pod where the scheduler did."""
    rng = random.Random(int(time.time()))
    seed = rng.randrange(1000)
    config = tmp_path / "scheduler.yaml"
    config.write_text(HEAD + f"""profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: DynamicResourcesPacking
        weight: {rng.randrange(1, 30)}
      - name: TaintToleration
        weight: {rng.randrange(1, 5)}
""")
    bodies = [random_pod(rng, i) for i in range(16)]
    async with up("--scheduler-config", str(config), "--seed", str(seed)) as client:
        for node in sorted(NODES):
            await patch_node(client, node, {"metadata": {"labels": {"zone": rng.choice("ab")}}})
        await patch_node(client, rng.choice(sorted(NODES)), {"spec": {"taints": [
            {"key": "dedicated", "value": "x", "effect": "PreferNoSchedule"}]}})
        await create_workload(client)  # the GPU class and template, and pod "app"
        scheduled: dict[str, str | None] = dict(await placed(client, ["app"]))
        for body in bodies:
            name = body["metadata"]["name"]
            await create(client, [body])
            try:
                scheduled.update(await placed(client, [name], timeout=20))
            except AssertionError:  # no node fits (a DoNotSchedule constraint)
                scheduled[name] = None
        objects = [*(await client.list(Node)).items, *(await client.list(ResourceSlice)).items,
                   *(await client.list(ResourceClass)).items,
                   *(await client.list(ResourceClaimTemplate, "default")).items]
    app = {**gpu_pod_body("app"), "metadata": {"name": "app", "namespace": "default"}}
    snapshot = tmp_path / "snapshot.yaml"
    snapshot.write_text(yaml.safe_dump_all(snapshot_documents(objects, [app, *bodies])))
    proc = subprocess.run([str(KUBEDRA), "simulate", "-f", str(snapshot), "--config",
                           str(config), "--seed", str(seed), "-o", "json"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    simulated = {p["pod"].removeprefix("default/"): p["node"]
                 for p in json.loads(proc.stdout)["placements"]}
    assert simulated == scheduled, (seed, config.read_text())

"""``kubedra explain`` and ``kubedra simulate`` reading a live ``--emulated-version 1.34``
cluster (real API server and controller manager; no scheduler, so the pods stay pending):
v1 objects written through the API, the generated claim of a template made by the claim
controller, the reasons per node and device, and the placement."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from kubedra.api import kinds
from kubedra.api.core import Pod
from kubedra.api.release import R1_34
from kubedra.cli.localcluster import LocalCluster
from kubedra.client import kubeconfig
from kubedra.client.rest import Client
from kubedra.testing import WITHOUT_NODE_LIFECYCLE

NS = "explain134"
DRIVER = "gpu.example.com"
KUBEDRA = Path(sys.executable).parent / "kubedra"


def kind(name: str) -> kinds.Kind:
    found = kinds.lookup(name, R1_34)
    assert found is not None, name
    return found


def node(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"},
                       "capacity": {"cpu": "8", "memory": "16Gi", "pods": "110"}}}


def gpu_slice(node_name: str, *models: str) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": f"{node_name}-gpus"},
            "spec": {"nodeName": node_name, "driver": DRIVER,
                     "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": f"gpu-{i}", "attributes": {"model": {"string": m}}}
                                 for i, m in enumerate(models)]}}


def pod(name: str, entry: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS},
            "spec": {"containers": [{"name": "c", "image": "busybox"}],
                     "resourceClaims": [{"name": "gpu", **entry}]}}


def cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(KUBEDRA), *args], capture_output=True, text=True, timeout=120,
                          check=False, env=env)


@pytest.mark.timeout(240)
async def test_explain_and_simulate_read_a_1_34_cluster(tmp_path: Path) -> None:
    cluster = LocalCluster(tmp_path, emulated_version="1.34", schedulers=0,
                           controller_manager_args=WITHOUT_NODE_LIFECYCLE)
    async with cluster, Client(kubeconfig.load(cluster.kubeconfig_path)) as client:
        await client.create_raw(kind("namespaces"), {
            "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
        for name, models in (("worker-1", ("a100", "h100")), ("worker-2", ("h100",))):
            await client.create_raw(kind("nodes"), node(name))
            await client.create_raw(kind("resourceslices"), gpu_slice(name, *models))
        await client.create_raw(kind("deviceclasses"), {
            "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
            "metadata": {"name": "gpu"},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}})
        a100 = f'device.attributes["{DRIVER}"].model == "a100"'
        await client.create_raw(kind("resourceclaimtemplates"), {
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "a100", "namespace": NS},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                "deviceClassName": "gpu",
                "selectors": [{"cel": {"expression": a100}}]}}]}}}}, NS)
        await client.create_raw(kind("resourceclaims"), {
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": "three", "namespace": NS},
            "spec": {"devices": {"requests": [{"name": "gpus", "exactly": {
                "deviceClassName": "gpu", "count": 3}}]}}}, NS)
        await client.create_raw(kind("pods"), pod("train", {"resourceClaimTemplateName":
                                                             "a100"}), NS)
        await client.create_raw(kind("pods"), pod("big", {"resourceClaimName": "three"}), NS)

        deadline = time.monotonic() + 60
        while not (await client.get(Pod, "train", NS)).status.resource_claim_statuses:
            assert time.monotonic() < deadline, "the claim controller made no claim for train"
            await asyncio.sleep(0.2)
        generated = (await client.get(Pod, "train", NS)).status.resource_claim_statuses
        assert generated is not None
        claim = generated[0].resource_claim_name

        env = {**os.environ, "KUBECONFIG": str(cluster.kubeconfig_path)}
        table = cli("explain", "-n", NS, "pod/train", env=env)
        assert table.returncode == 0, table.stderr
        lines = table.stdout.splitlines()
        assert lines[0] == f"pod {NS}/train: fits on worker-1; the scheduler picks worker-1"
        assert lines[1] == f"claims: {NS}/{claim}"
        assert ("  why: " f"{NS}/{claim}#gpu: needs 1 device (ExactCount), 0 of the node's 1 "
                "usable") in lines
        assert any(line.endswith(f"request selector #0 is false: {a100}") for line in lines)

        big = cli("explain", "-n", NS, "pod/big", "--kubeconfig",
                  str(cluster.kubeconfig_path), "-o", "json", env=env)
        assert big.returncode == 0, big.stderr
        whys = {n["node"]: n["why"] for n in json.loads(big.stdout)["nodes"]}
        assert whys == {
            "worker-1": f"{NS}/three#gpus: needs 3 devices (ExactCount), 2 of the node's 2 "
                        "usable",
            "worker-2": f"{NS}/three#gpus: needs 3 devices (ExactCount), 1 of the node's 1 "
                        "usable"}

        placed = cli("simulate", "-o", "json", env=env)
        assert placed.returncode == 0, placed.stderr
        got = {p["pod"]: p for p in json.loads(placed.stdout)["placements"]}
        assert got[f"{NS}/train"]["node"] == "worker-1"
        assert got[f"{NS}/train"]["claims"][0] == {
            "claim": f"{NS}/{claim}", "node": "worker-1",
            "instances": [f"{DRIVER}/worker-1/gpu-0"], "newly_allocated": True}
        assert got[f"{NS}/big"]["node"] is None

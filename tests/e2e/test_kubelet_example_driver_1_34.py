"""Separate processes on 1.34: the API server, scheduler and controller manager of a local
cluster, ``kubedra kubelet`` and ``kubedra example-driver`` (both with the node's identity).
The driver registers with the kubelet (``v1.DRAPlugin``) and publishes the node's slice; the
scheduler allocates a v1 claim of a pod from it; the kubelet asks the driver to prepare it (the
driver reads it from the API) and the pod runs with the CDI spec written; deleting the pod
unprepares it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubedra.api.core import Pod
from kubedra.api.resource import v1
from kubedra.cli.localcluster import Component, LocalCluster
from kubedra.client import kubeconfig
from kubedra.client.rest import Client
from kubedra.kubelet import devicestate
from tests.e2e.node_support import eventually, socket_root
from tests.e2e.test_up_nodes_1_34 import DRIVER, kind

NODE = "node-x"


@pytest.mark.timeout(300)
async def test_kubelet_and_example_driver_processes_on_1_34(tmp_path: Path) -> None:
    with socket_root() as sockets:
        root = sockets / NODE
        cluster = LocalCluster(tmp_path, emulated_version="1.34")
        cluster.node_names.append(NODE)
        async with cluster, Client(kubeconfig.load(cluster.kubeconfig_path)) as client:
            node_config = str(cluster.node_kubeconfig(NODE))
            logs = tmp_path / "logs"
            agent = Component("kubelet", ["kubelet", "--kubeconfig", node_config, "--node-name",
                                          NODE, "--root-dir", str(root), "-v"],
                              logs / "kubelet.log")
            driver = Component("driver", [
                "example-driver", "--driver-name", DRIVER, "--root-dir", str(root),
                "--cdi-dir", str(root / "cdi"), "--node-name", NODE, "--instances", "3",
                "--kubeconfig", node_config, "-v"], logs / "driver.log")
            await agent.start()
            await driver.start()
            try:
                await _scenario(client, root)
            finally:
                await driver.stop()
                await agent.stop()


async def _scenario(client: Client, root: Path) -> None:
    async def published() -> list[v1.ResourceSlice]:
        return (await client.list(v1.ResourceSlice)).items

    (slice_,) = await eventually("the node's slice", published, 90)
    assert (slice_.spec.node_name, slice_.spec.pool.name) == (NODE, NODE)
    assert [d.name for d in slice_.spec.devices] == ["device-00", "device-01", "device-02"]

    await client.create_raw(kind("deviceclasses"), {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": DRIVER},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}})
    await client.create_raw(kind("resourceclaims"), {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": "two-gpus", "namespace": "default"},
        "spec": {"devices": {"requests": [
            {"name": "gpu", "exactly": {"deviceClassName": DRIVER, "count": 2}}],
            "config": [{"requests": ["gpu"],
                        "opaque": {"driver": DRIVER, "parameters": {"mode": "fast"}}}]}}},
        "default")
    await client.create_raw(kind("pods"), {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "app", "namespace": "default"},
        "spec": {"restartPolicy": "Always", "terminationGracePeriodSeconds": 2,
                 "resourceClaims": [{"name": "gpu", "resourceClaimName": "two-gpus"}],
                 "containers": [{"name": "app", "image": "registry.k8s.io/pause:3.9",
                                 "resources": {"claims": [{"name": "gpu"}]}}]}}, "default")

    async def running() -> bool:
        return (await client.get(Pod, "app", "default")).status.phase == "Running"

    await eventually("the pod Running", running, 120)
    claim = await client.get(v1.ResourceClaim, "two-gpus", "default")
    assert claim.status.allocation is not None
    assert [(r.pool, r.device) for r in claim.status.allocation.devices.results or ()] == [
        (NODE, "device-00"), (NODE, "device-01")]
    uid = claim.metadata.uid
    spec_path = root / "cdi" / f"{DRIVER}-{uid}.json"
    (device,) = json.loads(spec_path.read_text())["devices"]
    assert device["containerEdits"]["env"] == ["claim_two_gpus_gpu=true", "user_mode=fast"]
    # the kubelet's 1.34 checkpoint holds the driver's answer for both devices
    (state,) = devicestate.unmarshal((root / "dra_manager_state").read_bytes())
    assert [(d.PoolName, d.DeviceName, d.RequestNames, d.CDIDeviceIDs)
            for d in state.DriverState[DRIVER].Devices] == [
        (NODE, f"device-0{i}", ["gpu"], [f"{DRIVER}/test=claim-{uid}-gpu"]) for i in (0, 1)]

    await client.delete(Pod, "app", "default")

    async def unprepared() -> bool:
        return not spec_path.exists()

    await eventually("the claim unprepared", unprepared, 120)

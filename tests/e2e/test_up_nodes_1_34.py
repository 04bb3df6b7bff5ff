"""``kubedra up --emulated-version 1.34 --nodes 2``, all real processes: each node agent is a
1.34 kubelet and its example driver a 1.34 driver that publishes its devices as the node's v1
ResourceSlice (with the node's own identity) and reads claims from the API. A pod naming a v1
claim template is scheduled by the 1.34 scheduler, the driver prepares the claim (CDI spec with
the claim's config), the pod runs and its log shows the device; deleting the pod unprepares
the claim (the spec is gone)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubedra.api import kinds
from kubedra.api.core import Node, Pod
from kubedra.api.release import R1_34
from kubedra.api.resource import v1
from kubedra.client.rest import Client
from tests.e2e.node_support import eventually, socket_root
from tests.e2e.test_up import up_client

DRIVER = "gpu.example.com"


def kind(name: str) -> kinds.Kind:
    found = kinds.lookup(name, R1_34)
    assert found is not None, name
    return found


@pytest.mark.timeout(240)
async def test_up_1_34_with_nodes_runs_a_pod_with_a_device() -> None:
    with socket_root() as data:
        async with up_client(data, "--nodes", "2", "--instances", "2",
                             "--emulated-version", "1.34") as client:
            await _scenario(client, data)


async def _scenario(client: Client, data: Path) -> None:
    async def ready() -> bool:
        nodes = (await client.list(Node)).items
        return {n.metadata.name for n in nodes if any(
            c.type == "Ready" and c.status == "True" for c in n.status.conditions or ())} == {
            "node-0", "node-1"}

    await eventually("nodes Ready", ready, 90)

    async def published() -> list[v1.ResourceSlice]:
        items = (await client.list(v1.ResourceSlice)).items
        return items if len(items) == 2 else []

    slices = await eventually("each node's ResourceSlice", published, 90)
    by_node = {s.spec.node_name: s for s in slices}
    assert set(by_node) == {"node-0", "node-1"}
    for node, slice_ in by_node.items():
        assert (slice_.spec.driver, slice_.spec.pool.name) == (DRIVER, node)
        assert [d.name for d in slice_.spec.devices] == ["device-00", "device-01"]
        assert [(o.kind, o.name) for o in slice_.metadata.owner_references or ()] == [
            ("Node", node)]

    await client.create_raw(kind("deviceclasses"), {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": DRIVER},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}],
                 "config": [{"opaque": {"driver": DRIVER, "parameters": {"tier": "gold"}}}]}})
    await client.create_raw(kind("resourceclaimtemplates"), {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
        "metadata": {"name": "one-gpu", "namespace": "default"},
        "spec": {"spec": {"devices": {
            "requests": [{"name": "gpu", "exactly": {
                "deviceClassName": DRIVER,
                "selectors": [{"cel": {"expression":
                                       f'device.attributes["{DRIVER}"].numa == 1'}}]}}],
            "config": [{"opaque": {"driver": DRIVER, "parameters": {"mode": "fast"}}}]}}}},
        "default")
    await client.create_raw(kind("pods"), {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "app", "namespace": "default"},
        "spec": {"restartPolicy": "Always", "terminationGracePeriodSeconds": 2,
                 "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
                 "containers": [{"name": "app", "image": "registry.k8s.io/pause:3.9",
                                 "resources": {"claims": [{"name": "gpu"}]}}]}}, "default")

    async def running() -> Pod | None:
        pod = await client.get(Pod, "app", "default")
        return pod if pod.status.phase == "Running" else None

    pod = await eventually("the pod Running", running, 120)
    (claim,) = (await client.list(v1.ResourceClaim, "default")).items
    assert claim.status.allocation is not None
    (result,) = claim.status.allocation.devices.results or []
    assert (result.driver, result.pool, result.device) == (DRIVER, pod.spec.node_name,
                                                           "device-01")
    uid = claim.metadata.uid
    spec_path = data / "nodes" / (pod.spec.node_name or "") / "cdi" / f"{DRIVER}-{uid}.json"
    spec = json.loads(spec_path.read_text())
    (device,) = spec["devices"]
    assert device["name"] == f"claim-{uid}-gpu"
    assert device["containerEdits"]["env"] == [
        "admin_tier=gold", f"claim_{claim.metadata.name.replace('-', '_')}_gpu=true",
        "user_mode=fast"]

    # kubectl logs: the API server proxies pods/log to the node agent, whose simulated
    # container prints the device it received and the env its CDI spec injects
    logs = (await client.get_path("/api/v1/namespaces/default/pods/app/log")).decode()
    assert (f"request gpu: driver {DRIVER} pool {pod.spec.node_name} device device-01 "
            f"cdi {DRIVER}/test=claim-{uid}-gpu") in logs, logs
    assert 'declare -x user_mode="fast"' in logs, logs

    await client.delete(Pod, "app", "default")

    async def unprepared() -> bool:
        return not spec_path.exists()

    await eventually("the claim unprepared", unprepared, 120)

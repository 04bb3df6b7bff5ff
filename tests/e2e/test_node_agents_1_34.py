"""Two 1.34 nodes, each a ``kubedra kubelet`` process with a ``kubedra example-driver`` process
(the node's identity), beside the API server, scheduler and controller manager:

- each driver publishes the node's pool (generation 1, one slice, owned by the Node);
- a pod with a claim from a template runs on the node whose device it got (the CDI spec
  written, the kubelet's PreparedDynamicResources event) and succeeds; its claim is
  unprepared, and, generated for a pod that is done, deleted;
- ``kill -9`` of a kubelet with prepared claims, a pod deleted while it is down, a restart:
  the checkpoint is read, the running pod's claim is not prepared again, the deleted pod's
  claim is unprepared and deallocated; the kubelet's start-up wipe takes the node's slices and
  the driver's controller puts them back;
- the other node's driver stopped for good: its slices are wiped after the delay, this node's
  stay.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from kubedra.api.core import Event, Node, Pod
from kubedra.api.resource import v1
from kubedra.cli.localcluster import Component, LocalCluster
from kubedra.client import kubeconfig
from kubedra.client.rest import Client
from kubedra.kubelet.runtime import RUN_SECONDS
from tests.e2e.node_support import eventually, socket_root
from tests.e2e.test_up_nodes_1_34 import DRIVER, kind

NS = "default"
NODES = ("node-a", "node-b")


class Agent:
    """One node's kubelet and example driver processes."""

    def __init__(self, cluster: LocalCluster, name: str, sockets: Path, logs: Path) -> None:
        self.name, self.root = name, sockets / name
        config = str(cluster.node_kubeconfig(name))
        self.kubelet = Component(f"kubelet-{name}", [
            "kubelet", "--kubeconfig", config, "--node-name", name, "--root-dir",
            str(self.root), "-v"], logs / f"kubelet-{name}.log")
        self.driver = Component(f"driver-{name}", [
            "example-driver", "--driver-name", DRIVER, "--root-dir", str(self.root),
            "--cdi-dir", str(self.root / "cdi"), "--node-name", name, "--instances", "2",
            "--kubeconfig", config, "-v"], logs / f"driver-{name}.log")

    def spec(self, claim: v1.ResourceClaim) -> Path:
        return self.root / "cdi" / f"{DRIVER}-{claim.metadata.uid}.json"

    def prepares(self, claim: v1.ResourceClaim) -> int:
        """How often the driver prepared the claim (its log's lines)."""
        text = self.driver.log_path.read_text(errors="replace")
        return len(re.findall(rf"(?<!un)prepared claim {claim.metadata.uid}", text))


@pytest.mark.timeout(420)
async def test_two_1_34_node_agents_with_example_drivers(tmp_path: Path) -> None:
    with socket_root() as sockets:
        cluster = LocalCluster(tmp_path, emulated_version="1.34")
        cluster.node_names.extend(NODES)
        async with cluster, Client(kubeconfig.load(cluster.kubeconfig_path)) as client:
            agents = {n: Agent(cluster, n, sockets, tmp_path / "logs") for n in NODES}
            for agent in agents.values():
                await agent.kubelet.start()
                await agent.driver.start()
            try:
                await _scenario(client, agents["node-a"], agents["node-b"])
            finally:
                for agent in agents.values():
                    await agent.driver.stop()
                    await agent.kubelet.stop()


async def slices_on(client: Client, node: str) -> list[v1.ResourceSlice]:
    return (await client.list(v1.ResourceSlice,
                              field_selector=f"spec.nodeName={node}")).items


async def pod(client: Client, name: str, node: str, claim: dict[str, str],
              run_seconds: str | None = None) -> None:
    await client.create_raw(kind("pods"), {
        "apiVersion": "v1", "kind": "Pod", "metadata": {
            "name": name, "namespace": NS,
            "annotations": {RUN_SECONDS: run_seconds} if run_seconds else {}},
        "spec": {"restartPolicy": "Never" if run_seconds else "Always",
                 "terminationGracePeriodSeconds": 2,
                 "nodeSelector": {"kubernetes.io/hostname": node},
                 "resourceClaims": [{"name": "gpu", **claim}],
                 "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9",
                                 "resources": {"claims": [{"name": "gpu"}]}}]}}, NS)


async def claim(client: Client, name: str) -> None:
    await client.create_raw(kind("resourceclaims"), {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"devices": {"requests": [
            {"name": "gpu", "exactly": {"deviceClassName": DRIVER}}]}}}, NS)


async def claim_of(client: Client, pod_name: str) -> v1.ResourceClaim:
    statuses = (await client.get(Pod, pod_name, NS)).status.resource_claim_statuses or []
    return await client.get(v1.ResourceClaim, statuses[0].resource_claim_name or "", NS)


async def _scenario(client: Client, a: Agent, b: Agent) -> None:
    async def ready() -> bool:
        nodes = (await client.list(Node)).items
        return {n.metadata.name for n in nodes if any(
            c.type == "Ready" and c.status == "True" for c in n.status.conditions or ())} == set(
            NODES)

    await eventually("both Nodes Ready", ready, 90)
    for agent in (a, b):
        (slice_,) = await eventually(f"{agent.name}'s slice",
                                     lambda n=agent.name: slices_on(client, n), 90)
        assert (slice_.spec.driver, slice_.spec.pool.name, slice_.spec.pool.generation,
                slice_.spec.pool.resource_slice_count) == (DRIVER, agent.name, 1, 1)
        assert [(o.kind, o.name) for o in slice_.metadata.owner_references or ()] == [
            ("Node", agent.name)]
    await client.create_raw(kind("deviceclasses"), {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": DRIVER},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}})
    await client.create_raw(kind("resourceclaimtemplates"), {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
        "metadata": {"name": "gpu", "namespace": NS},
        "spec": {"spec": {"devices": {"requests": [
            {"name": "gpu", "exactly": {"deviceClassName": DRIVER}}]}}}}, NS)

    # -- a pod runs on its device's node and succeeds; its claim is unprepared and deleted
    await pod(client, "run", "node-a", {"resourceClaimTemplateName": "gpu"}, "3")
    await eventually("run Running", phase_is(client, "run", "Running"), 120)
    run_claim = await claim_of(client, "run")
    assert run_claim.status.allocation is not None
    (result,) = run_claim.status.allocation.devices.results or []
    assert (result.pool, (await client.get(Pod, "run", NS)).spec.node_name) == (
        "node-a", "node-a")
    assert a.spec(run_claim).exists()
    events = [e.message or "" for e in (await client.list(Event, NS)).items
              if e.involved_object.name == "run" and e.reason == "PreparedDynamicResources"]
    assert events and f"{DRIVER}/test=claim-{run_claim.metadata.uid}-gpu" in events[0]
    await eventually("run Succeeded", phase_is(client, "run", "Succeeded"), 60)
    await eventually("run's claim unprepared", lambda: _gone(a.spec(run_claim)), 60)

    async def run_claim_deleted() -> bool:
        return not (await client.list(v1.ResourceClaim, NS,
                                      field_selector=f"metadata.name={run_claim.metadata.name}"
                                      )).items
    await eventually("run's claim deleted", run_claim_deleted, 60)

    # -- kill -9 of node-b's kubelet with two prepared claims, one pod deleted meanwhile
    for name in ("keep", "drop"):
        await claim(client, f"{name}-claim")
        await pod(client, name, "node-b", {"resourceClaimName": f"{name}-claim"})
    for name in ("keep", "drop"):
        await eventually(f"{name} Running", phase_is(client, name, "Running"),
                         120)
    keep = await client.get(v1.ResourceClaim, "keep-claim", NS)
    drop = await client.get(v1.ResourceClaim, "drop-claim", NS)
    assert (b.prepares(keep), b.prepares(drop)) == (1, 1)
    (b_slice,) = await slices_on(client, "node-b")
    await b.kubelet.kill()
    await client.delete(Pod, "drop", NS, grace_period_seconds=0)
    await b.kubelet.start()
    await a.driver.stop()  # node-a's driver gone for good (its wipe waits 30 s meanwhile)

    await eventually("drop's claim unprepared", lambda: _gone(b.spec(drop)), 90)

    async def drop_deallocated() -> bool:
        fresh = await client.get(v1.ResourceClaim, "drop-claim", NS)
        return fresh.status.allocation is None and not fresh.metadata.finalizers
    await eventually("drop's claim deallocated", drop_deallocated, 60)
    await asyncio.sleep(3)  # time for a wrong prepare to show
    assert b.prepares(keep) == 1  # the checkpoint says it is prepared
    assert await phase_is(client, "keep", "Running")() and b.spec(keep).exists()

    # the restarted kubelet wiped node-b's slices; the driver's controller puts them back
    # after its sync delay; node-a's driver is gone, so its slices are wiped for good
    async def b_back() -> list[v1.ResourceSlice]:
        items = await slices_on(client, "node-b")
        return items if {s.metadata.uid for s in items} - {b_slice.metadata.uid} else []
    (back,) = await eventually("node-b's slice back", b_back, 90)
    assert [d.name for d in back.spec.devices] == ["device-00", "device-01"]

    async def a_wiped() -> bool:
        return not await slices_on(client, "node-a")
    await eventually("node-a's slices wiped", a_wiped, 90)
    assert await slices_on(client, "node-b")


def phase_is(client: Client, name: str, want: str) -> Callable[[], Awaitable[bool]]:
    async def check() -> bool:
        return (await client.get(Pod, name, NS)).status.phase == want
    return check


async def _gone(path: Path) -> bool:
    return not path.exists()

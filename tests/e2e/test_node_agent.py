"""The node agent end to end with real processes: API server, scheduler, controller manager,
two ``kubedra kubelet`` processes, each with a ``kubedra example-driver``.

Covered, in order: Nodes Ready with their Leases; slices with the drivers' instances and Node
owners; a pod with a claim from
a template is scheduled, its claim prepared on its node with the allocated instance (CDI file,
pod event), the pod runs and succeeds, the claim is unprepared and deallocated; a driver
reload with fewer instances updates its slice; a driver answering UNIMPLEMENTED leaves no
slices and no error loop; ``kill -9`` of an agent with prepared claims, then a restart: the
checkpoint is read, the running pod is not prepared again, a claim released meanwhile is
unprepared, the slice of a driver that is gone is deleted; a driver killed and restarted
registers again and its slices stay consistent; graceful deletion; exit codes (``Error``) and
``OnFailure`` restarts.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Awaitable
from pathlib import Path

import pytest

from kubedra.api.coordination import Lease
from kubedra.api.core import Node, Pod
from kubedra.api.resource.v1alpha2 import (
    NamedResourcesInstance,
    NamedResourcesResources,
    ResourceSlice,
)
from kubedra.cli.localcluster import Component, LocalCluster
from kubedra.client import kubeconfig
from kubedra.client.rest import Client
from kubedra.kubelet.noderesources import new_slice
from tests.e2e.node_support import (
    DRIVER,
    NS,
    WIPING_FLAGS,
    allocated,
    create_pod,
    create_workload,
    deallocated,
    deleted,
    eventually,
    gone,
    instance_names,
    is_phase,
    log_count,
    logged,
    phase,
    pod_claim,
    prepared_events,
    slices_of,
    socket_root,
)

CONFIG = """instances:
{items}
"""


def instance_models(count: int) -> NamedResourcesResources:
    return NamedResourcesResources(instances=[NamedResourcesInstance(name=f"instance-{i:02d}")
                                              for i in range(count)])


async def _none(found: Awaitable[list[ResourceSlice]]) -> bool:
    return not await found


def _instances_yaml(count: int) -> str:
    return CONFIG.format(items="\n".join(f"- name: instance-{i:02d}" for i in range(count)))


class NodeProcs:
    """One node: its agent and its example driver, as separate processes."""

    def __init__(self, base: Path, sockets: Path, kubeconfig_path: Path, name: str,
                 instances: int) -> None:
        self.name = name
        self.root = sockets / name
        self.cdi = base / f"{name}-cdi"
        self.config = base / f"{name}-instances.yaml"
        self.config.write_text(_instances_yaml(instances))
        self.logs = logs = base / "logs"
        self.kubelet = Component(f"kubelet-{name}", [
            "kubelet", "--kubeconfig", str(kubeconfig_path), "--node-name", name,
            "--root-dir", str(self.root), *WIPING_FLAGS, "-v"], logs / f"kubelet-{name}.log")
        self.driver = self.example_driver(DRIVER, ["--config", str(self.config)])

    def example_driver(self, driver: str, extra: list[str]) -> Component:
        return Component(f"driver-{driver}-{self.name}", [
            "example-driver", "--driver-name", driver, "--root-dir", str(self.root),
            "--cdi-dir", str(self.cdi), "--node-name", self.name, *extra, "-v"],
            self.logs / f"driver-{driver}-{self.name}.log")

    def cdi_file(self, claim_uid: str) -> Path:
        return self.cdi / f"{DRIVER}-{claim_uid}.json"


@pytest.mark.timeout(300)
async def test_node_agents_with_example_drivers(tmp_path: Path) -> None:
    cluster = LocalCluster(tmp_path, emulated_version="1.30")
    with socket_root() as sockets:
        async with cluster, Client(kubeconfig.load(cluster.kubeconfig_path)) as client:
            await _scenario(tmp_path, sockets, cluster, client)


async def _scenario(tmp_path: Path, sockets: Path, cluster: LocalCluster,
                    client: Client) -> None:
    a = NodeProcs(tmp_path, sockets, cluster.node_kubeconfig("node-a"), "node-a", 4)
    b = NodeProcs(tmp_path, sockets, cluster.node_kubeconfig("node-b"), "node-b", 2)
    extra: list[Component] = []
    procs = [a.kubelet, a.driver, b.kubelet, b.driver]
    try:
        for c in procs:
            await c.start()
        await create_workload(client)

        # -- slices with the drivers' instances and Node owners
        for node, count in ((a, 4), (b, 2)):
            async def published(node: NodeProcs = node, count: int = count) -> bool:
                found = await slices_of(client, DRIVER, node.name)
                return len(found) == 1 and len(instance_names(found[0])) == count
            await eventually(f"slice of {node.name}", published, 90)
            s = (await slices_of(client, DRIVER, node.name))[0]
            owner = await client.get(Node, node.name)
            ref = (s.metadata.owner_references or [])[0]
            assert (ref.kind, ref.name, ref.uid, ref.controller) == (
                "Node", node.name, owner.metadata.uid, True)
            assert ref.block_owner_deletion is None
            assert s.metadata.name and s.metadata.name.startswith(f"{node.name}-{DRIVER}-")
            ready = {c.type: c.status for c in owner.status.conditions or ()}
            assert ready["Ready"] == "True"
            assert (owner.metadata.labels or {})["kubernetes.io/hostname"] == node.name
            lease = await client.get(Lease, node.name, "kube-node-lease")
            # the root dir's holder identity (kubelet/holder.py)
            holder = (node.root / "node-lease-holder").read_text().strip()
            assert lease.spec.holder_identity == f"{node.name}_{holder}"
            assert lease.spec.lease_duration_seconds == 40 and lease.spec.renew_time
            assert [o.uid for o in lease.metadata.owner_references or ()] == [
                owner.metadata.uid]
        # node agents yield the cores to the API server (batch tasks), as the control loops do
        if hasattr(os, "SCHED_BATCH"):
            for node in (a, b):
                assert node.kubelet.process is not None
                assert os.sched_getscheduler(node.kubelet.process.pid) == os.SCHED_BATCH

        # pods whose exits are checked at the end: a failure, and restarts on failure
        await create_pod(client, "fails", "node-b", "Never",
                         {"kubedra.io/run-seconds": "0.5", "kubedra.io/exit-code": "3"})
        await create_pod(client, "crashy", "node-b", "OnFailure",
                         {"kubedra.io/run-seconds": "0.2", "kubedra.io/exit-code": "1"})

        # -- a pod with a template claim: prepared on its node, runs, succeeds, released
        await create_pod(client, "once", "node-a", "Never", {"kubedra.io/run-seconds": "2"})
        claim = await eventually("claim allocated", lambda: allocated(client, "once"))
        uid = claim.metadata.uid or ""
        handle = claim.status.allocation.resource_handles[0]  # type: ignore[union-attr,index]
        assert handle.structured_data is not None
        assert handle.structured_data.node_name == "node-a"
        instance = handle.structured_data.results[0].named_resources.name  # type: ignore
        await eventually("pod Running", lambda: is_phase(client, "once", "Running"))
        spec = json.loads(a.cdi_file(uid).read_text())
        assert [d["name"] for d in spec["devices"]] == [f"claim-{uid}-{instance}"]
        assert "user_mode=exclusive" in spec["devices"][0]["containerEdits"]["env"]
        events = await eventually("prepared event", lambda: prepared_events(client, "once"))
        assert any(f"{DRIVER}/test=claim-{uid}-{instance}" in e for e in events)
        pod = await client.get(Pod, "once", NS)
        assert pod.status.host_ip and pod.status.pod_ip and pod.status.start_time
        await eventually("pod Succeeded", lambda: is_phase(client, "once", "Succeeded"), 20)
        pod = await client.get(Pod, "once", NS)
        cs = (pod.status.container_statuses or [])[0]
        assert cs.state["terminated"]["exitCode"] == 0
        assert cs.state["terminated"]["reason"] == "Completed"
        conditions = {c.type: c.status for c in pod.status.conditions or ()}
        assert conditions["Ready"] == "False" and conditions["PodScheduled"] == "True"
        await eventually("CDI file removed", lambda: gone(a.cdi_file(uid)))
        await eventually("claim deallocated", lambda: deallocated(client, claim))

        # -- a driver reload with fewer instances updates its slice
        a.config.write_text(_instances_yaml(2))
        assert a.driver.process is not None
        a.driver.process.send_signal(1)  # SIGHUP

        async def shrunk() -> bool:
            found = await slices_of(client, DRIVER, "node-a")
            return [instance_names(s) for s in found] == [["instance-00", "instance-01"]]
        await eventually("slice shrunk", shrunk)

        # -- UNIMPLEMENTED: no slices, no error loop
        silent = b.example_driver("silent.example.com", ["--instances", "-1"])
        extra.append(silent)
        await silent.start()
        await eventually("silent driver registered",
                         lambda: logged(b.kubelet.log_path, "driver silent.example.com "
                                                             "registered"))
        await asyncio.sleep(2)
        assert await slices_of(client, "silent.example.com") == []
        log = b.kubelet.log_path.read_text()
        assert "reading node resources of driver silent.example.com failed" not in log

        # -- kill -9 an agent with prepared claims, release one claim, restart
        await create_pod(client, "forever", "node-a", "Always", {})
        await create_pod(client, "released", "node-a", "Never",
                         {"kubedra.io/run-seconds": "600"})
        for name in ("forever", "released"):
            await eventually(f"{name} Running", lambda n=name: is_phase(client, n, "Running"))
        kept = (await pod_claim(client, "forever")).metadata.uid or ""
        released = (await pod_claim(client, "released")).metadata.uid or ""
        kept_mtime = a.cdi_file(kept).stat().st_mtime_ns
        assert a.cdi_file(released).exists()
        await a.kubelet.kill()
        await client.delete(Pod, "released", NS, grace_period_seconds=0)
        node_a = await client.get(Node, "node-a")
        stale = new_slice(node_a, "gone.example.com", instance_models(1))
        await client.create(stale)  # a driver that will not come back
        await a.kubelet.start()
        await eventually("stale slice removed",
                         lambda: _none(slices_of(client, "gone.example.com")))
        await eventually("released claim unprepared", lambda: gone(a.cdi_file(released)))
        await asyncio.sleep(1)
        assert a.cdi_file(kept).stat().st_mtime_ns == kept_mtime  # not prepared again
        assert await phase(client, "forever") == "Running"
        state = json.loads((a.root / "dra_manager_state").read_text())
        assert [e["ClaimUID"] for e in state["entries"]] == [kept]

        # -- a driver killed and restarted registers again; its slices stay consistent
        await b.driver.kill()
        await b.driver.start()

        async def consistent() -> bool:
            found = await slices_of(client, DRIVER, "node-b")
            return ([instance_names(s) for s in found] == [["instance-00", "instance-01"]]
                    and log_count(b.kubelet.log_path, f"driver {DRIVER} registered") >= 2)
        await eventually("node-b slices after driver restart", consistent)

        # -- graceful deletion: stopped, unprepared, then deleted by the agent
        await client.delete(Pod, "forever", NS)
        await eventually("forever deleted", lambda: deleted(client, "forever"))
        await eventually("kept claim unprepared", lambda: gone(a.cdi_file(kept)))

        # -- the exits: Error with its code; OnFailure restarts with back-off
        await eventually("fails Failed", lambda: is_phase(client, "fails", "Failed"))
        failed = (await client.get(Pod, "fails", NS)).status.container_statuses or []
        assert failed[0].state["terminated"]["exitCode"] == 3
        assert failed[0].state["terminated"]["reason"] == "Error"

        async def restarted() -> bool:
            crashy = await client.get(Pod, "crashy", NS)
            statuses = crashy.status.container_statuses or []
            return (crashy.status.phase == "Running" and bool(statuses)
                    and statuses[0].restart_count >= 1)
        await eventually("crashy restarted", restarted, 40)
    finally:
        for c in reversed(procs + extra):
            await c.stop()

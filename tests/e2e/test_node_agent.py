"""The node agent end to end with real processes: API server, scheduler, controller manager,
two ``kubedra kubelet`` processes, each with a ``kubedra example-driver``.

Covered, in order: slices with the drivers' instances and Node owners; a pod with a claim from
a template is scheduled, its claim prepared on its node with the allocated instance (CDI file,
pod event), the pod runs and succeeds, the claim is unprepared and deallocated; a driver
reload with fewer instances updates its slice; a driver answering UNIMPLEMENTED leaves no
slices and no error loop; ``kill -9`` of an agent with prepared claims, then a restart: the
checkpoint is read, the running pod is not prepared again, a claim released meanwhile is
unprepared; a driver killed and restarted registers again and its slices stay consistent.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from kubedra.api.core import Event, Node, Pod
from kubedra.api.resource import ResourceClaim, ResourceSlice
from kubedra.cli.localcluster import Component, LocalCluster
from kubedra.client import kubeconfig
from kubedra.client.rest import Client
from tests.e2e.dra_workload import kind

DRIVER = "gpu.example.com"
NS = "node-e2e"
CONFIG = """instances:
{items}
"""


def _instances_yaml(count: int) -> str:
    return CONFIG.format(items="\n".join(f"- name: instance-{i:02d}" for i in range(count)))


class NodeProcs:
    """One node: its agent and its example driver, as separate processes."""

    def __init__(self, base: Path, kubeconfig_path: Path, name: str, instances: int) -> None:
        self.name = name
        self.root = base / name
        self.cdi = base / f"{name}-cdi"
        self.config = base / f"{name}-instances.yaml"
        self.config.write_text(_instances_yaml(instances))
        logs = base / "logs"
        self.kubelet = Component(f"kubelet-{name}", [
            "kubelet", "--kubeconfig", str(kubeconfig_path), "--node-name", name,
            "--root-dir", str(self.root), "-v"], logs / f"kubelet-{name}.log")
        self.driver = self.example_driver(DRIVER, ["--config", str(self.config)])

    def example_driver(self, driver: str, extra: list[str]) -> Component:
        return Component(f"driver-{driver}-{self.name}", [
            "example-driver", "--driver-name", driver, "--root-dir", str(self.root),
            "--cdi-dir", str(self.cdi), "--node-name", self.name, *extra, "-v"],
            self.root.parent / "logs" / f"driver-{driver}-{self.name}.log")

    def cdi_file(self, claim_uid: str) -> Path:
        return self.cdi / f"{DRIVER}-{claim_uid}.json"


async def eventually(what: str, check: Callable[[], Awaitable[Any]], timeout: float = 30.0,
                     ) -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = await check()
            if last:
                return last
        except AssertionError as e:
            last = e
        await asyncio.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}: last {last!r}")


async def slices_of(client: Client, driver: str, node: str | None = None) -> list[ResourceSlice]:
    selector = f"driverName={driver}" + (f",nodeName={node}" if node else "")
    return (await client.list(ResourceSlice, field_selector=selector)).items


def instance_names(s: ResourceSlice) -> list[str]:
    return [i.name for i in (s.named_resources.instances if s.named_resources else [])]


async def create_workload(client: Client) -> None:
    await client.create_raw(kind("namespaces"), {"apiVersion": "v1", "kind": "Namespace",
                                                 "metadata": {"name": NS}})
    await client.create_raw(kind("resourceclasses"), {
        "apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClass",
        "metadata": {"name": "node-e2e-gpu"}, "driverName": DRIVER,
        "structuredParameters": True})
    await client.create_raw(kind("resourceclaimparameters"), {
        "apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClaimParameters",
        "metadata": {"name": "one-gpu", "namespace": NS},
        "driverRequests": [{"driverName": DRIVER, "vendorParameters": {"mode": "exclusive"},
                            "requests": [{"namedResources": {"selector": "true"}}]}]}, NS)
    await client.create_raw(kind("resourceclaimtemplates"), {
        "apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClaimTemplate",
        "metadata": {"name": "gpu", "namespace": NS},
        "spec": {"spec": {"resourceClassName": "node-e2e-gpu", "parametersRef": {
            "apiGroup": "resource.k8s.io", "kind": "ResourceClaimParameters",
            "name": "one-gpu"}}}}, NS)


async def create_pod(client: Client, name: str, node: str, policy: str,
                     annotations: dict[str, str]) -> None:
    await client.create_raw(kind("pods"), {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": NS, "annotations": annotations},
        "spec": {"restartPolicy": policy, "terminationGracePeriodSeconds": 5,
                 "nodeSelector": {"kubernetes.io/hostname": node},
                 "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9",
                                 "resources": {"claims": [{"name": "gpu"}]}}],
                 "resourceClaims": [{"name": "gpu",
                                     "source": {"resourceClaimTemplateName": "gpu"}}]}}, NS)


async def pod_claim(client: Client, pod_name: str) -> ResourceClaim:
    pod = await client.get(Pod, pod_name, NS)
    statuses = pod.status.resource_claim_statuses or []
    assert statuses and statuses[0].resource_claim_name, "claim not created yet"
    return await client.get(ResourceClaim, statuses[0].resource_claim_name, NS)


async def phase(client: Client, pod_name: str) -> str:
    return (await client.get(Pod, pod_name, NS)).status.phase or ""


@pytest.mark.timeout(300)
async def test_node_agents_with_example_drivers(tmp_path: Path) -> None:
    cluster = LocalCluster(tmp_path)
    async with cluster, Client(kubeconfig.load(cluster.kubeconfig_path)) as client:
        a = NodeProcs(tmp_path, cluster.kubeconfig_path, "node-a", 4)
        b = NodeProcs(tmp_path, cluster.kubeconfig_path, "node-b", 2)
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

            # -- a pod with a template claim: prepared on its node, runs, succeeds, released
            await create_pod(client, "once", "node-a", "Never", {"kubedra.io/run-seconds": "2"})
            claim = await eventually("claim allocated", lambda: _allocated(client, "once"))
            uid = claim.metadata.uid or ""
            handle = claim.status.allocation.resource_handles[0]  # type: ignore[union-attr,index]
            assert handle.structured_data is not None
            assert handle.structured_data.node_name == "node-a"
            instance = handle.structured_data.results[0].named_resources.name  # type: ignore
            await eventually("pod Running", lambda: _is(client, "once", "Running"))
            spec = json.loads(a.cdi_file(uid).read_text())
            assert [d["name"] for d in spec["devices"]] == [f"claim-{uid}-{instance}"]
            assert "user_mode=exclusive" in spec["devices"][0]["containerEdits"]["env"]
            events = await eventually("prepared event", lambda: _events(client, "once"))
            assert any(f"{DRIVER}/test=claim-{uid}-{instance}" in e for e in events)
            pod = await client.get(Pod, "once", NS)
            assert pod.status.host_ip and pod.status.pod_ip and pod.status.start_time
            await eventually("pod Succeeded", lambda: _is(client, "once", "Succeeded"), 20)
            pod = await client.get(Pod, "once", NS)
            cs = (pod.status.container_statuses or [])[0]
            assert cs.state["terminated"]["exitCode"] == 0
            assert cs.state["terminated"]["reason"] == "Completed"
            conditions = {c.type: c.status for c in pod.status.conditions or ()}
            assert conditions["Ready"] == "False" and conditions["PodScheduled"] == "True"
            await eventually("CDI file removed", lambda: _gone(a.cdi_file(uid)))
            await eventually("claim deallocated", lambda: _deallocated(client, claim))

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
                             lambda: _logged(b.kubelet.log_path, "driver silent.example.com "
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
                await eventually(f"{name} Running", lambda n=name: _is(client, n, "Running"))
            kept = (await pod_claim(client, "forever")).metadata.uid or ""
            released = (await pod_claim(client, "released")).metadata.uid or ""
            kept_mtime = a.cdi_file(kept).stat().st_mtime_ns
            assert a.cdi_file(released).exists()
            await a.kubelet.kill()
            await client.delete(Pod, "released", NS, grace_period_seconds=0)
            await a.kubelet.start()
            await eventually("released claim unprepared", lambda: _gone(a.cdi_file(released)))
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
                        and _count(b.kubelet.log_path, f"driver {DRIVER} registered") >= 2)
            await eventually("node-b slices after driver restart", consistent)

            # -- graceful deletion: stopped, unprepared, then deleted by the agent
            await client.delete(Pod, "forever", NS)
            await eventually("forever deleted", lambda: _deleted(client, "forever"))
            await eventually("kept claim unprepared", lambda: _gone(a.cdi_file(kept)))
        finally:
            for c in reversed(procs + extra):
                await c.stop()


async def _allocated(client: Client, pod: str) -> ResourceClaim | None:
    claim = await pod_claim(client, pod)
    return claim if claim.status.allocation is not None else None


async def _is(client: Client, pod: str, want: str) -> bool:
    return await phase(client, pod) == want


async def _events(client: Client, pod: str) -> list[str]:
    items = (await client.list(Event, NS)).items
    return [e.message or "" for e in items
            if e.involved_object.name == pod and e.reason == "PreparedDynamicResources"]


async def _gone(path: Path) -> bool:
    return not path.exists()


async def _deallocated(client: Client, claim: ResourceClaim) -> bool:
    try:
        fresh = await client.get(ResourceClaim, claim.metadata.name or "", NS)
    except Exception:
        return True
    return fresh.status.allocation is None


async def _deleted(client: Client, pod: str) -> bool:
    return pod not in {p.metadata.name for p in (await client.list(Pod, NS)).items}


async def _logged(path: Path, text: str) -> bool:
    return path.exists() and text in path.read_text()


def _count(path: Path, text: str) -> int:
    return path.read_text().count(text) if path.exists() else 0

"""Node lifecycle with real processes: an API server, a scheduler, a controller manager with a
short ``--node-monitor-grace-period``, and two ``kubedra kubelet`` agents.

A stopped agent's Node goes Unknown within the grace period, gets the unreachable NoSchedule
and NoExecute taints, its pods Ready=False with an event; a pod tolerating the taint for 3 s is
evicted then (``TaintManagerEviction``), one with the default 300 s toleration stays. The agent
restarted on its root dir takes its Node back at once: Ready again, taints gone. A second agent
for a live Node, or on a root dir in use, refuses to start with a clear message.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from kubedra.api.coordination import Lease
from kubedra.api.core import Event, Node, Pod
from kubedra.cli.localcluster import Component, LocalCluster
from kubedra.client import kubeconfig
from kubedra.client.rest import Client
from kubedra.kubelet.node import RENEW_INTERVAL
from tests.e2e.dra_workload import kind
from tests.e2e.node_support import eventually, socket_root

GRACE = 12.0
NS = "lifecycle"


def kubelet(cluster: LocalCluster, root: Path, name: str, logs: Path, tag: str = "",
            ) -> Component:
    return Component(f"kubelet-{name}{tag}", [
        "kubelet", "--kubeconfig", str(cluster.node_kubeconfig(name)), "--node-name", name,
        "--root-dir", str(root), "-v"], logs / f"kubelet-{name}{tag}.log")


def pod_body(name: str, node: str, tolerations: list[dict[str, Any]]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS},
            "spec": {"nodeSelector": {"kubernetes.io/hostname": node},
                     "terminationGracePeriodSeconds": 5, "tolerations": tolerations,
                     "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9"}]}}


def ready(obj: Node | Pod) -> Any:
    return next((c for c in obj.status.conditions or () if c.type == "Ready"), None)


def taints(node: Node) -> set[tuple[str, str]]:
    return {(t.key, t.effect) for t in node.spec.taints or ()}


UNREACHABLE = {("node.kubernetes.io/unreachable", "NoSchedule"),
               ("node.kubernetes.io/unreachable", "NoExecute")}


async def events(client: Client, name: str, reason: str) -> list[str]:
    return [e.message or "" for e in (await client.list(Event, NS)).items
            if e.involved_object.name == name and e.reason == reason]


@pytest.mark.timeout(300)
async def test_stopped_agent_node_is_tainted_and_evicted_then_comes_back(
        tmp_path: Path) -> None:
    cluster = LocalCluster(tmp_path, emulated_version="1.30", controller_manager_args=[
        f"--node-monitor-grace-period={GRACE:.0f}s", "--node-monitor-period=1s"])
    with socket_root() as sockets:
        async with cluster, Client(kubeconfig.load(cluster.kubeconfig_path)) as client:
            logs = tmp_path / "logs"
            live = kubelet(cluster, sockets / "live", "live", logs)
            dead = kubelet(cluster, sockets / "dead", "dead", logs)
            procs = [live, dead]
            try:
                for c in procs:
                    await c.start()
                await _scenario(client, cluster, sockets, logs, live, dead, procs)
            finally:
                for c in procs:
                    await c.stop()


async def _scenario(client: Client, cluster: LocalCluster, sockets: Path, logs: Path,
                    live: Component, dead: Component, procs: list[Component]) -> None:
    async def node_ready(name: str) -> bool:
        nodes = {n.metadata.name: n for n in (await client.list(Node)).items}
        cond = ready(nodes[name]) if name in nodes else None
        return cond is not None and cond.status == "True"

    for name in ("live", "dead"):
        await eventually(f"node {name} Ready", lambda n=name: node_ready(n), 60)
    await client.create_raw(kind("namespaces"), {"apiVersion": "v1", "kind": "Namespace",
                                                 "metadata": {"name": NS}})
    short = [{"key": "node.kubernetes.io/unreachable", "operator": "Exists",
              "effect": "NoExecute", "tolerationSeconds": 3}]
    await client.create_raw(kind("pods"), pod_body("short", "dead", short), NS)
    await client.create_raw(kind("pods"), pod_body("default", "dead", []), NS)

    async def running(name: str) -> bool:
        pod = await client.get(Pod, name, NS)
        cond = ready(pod)
        return pod.status.phase == "Running" and cond is not None and cond.status == "True"

    for name in ("short", "default"):
        await eventually(f"pod {name} running", lambda n=name: running(n), 60)
    # DefaultTolerationSeconds: the not-ready toleration added to "short", both to "default"
    added = {(t.key, t.toleration_seconds)
             for t in (await client.get(Pod, "short", NS)).spec.tolerations or ()}
    assert added == {("node.kubernetes.io/unreachable", 3), ("node.kubernetes.io/not-ready", 300)}

    # -- the agent stops: Unknown within the grace period, tainted, pods NotReady
    await dead.kill()
    stopped = time.monotonic()

    async def unknown() -> Node | None:
        node = await client.get(Node, "dead")
        cond = ready(node)
        return node if cond is not None and cond.status == "Unknown" else None

    node = await eventually("node dead Unknown", unknown, GRACE + RENEW_INTERVAL + 30)
    # the last renewal was at most one renew interval before the kill
    assert time.monotonic() - stopped < GRACE + RENEW_INTERVAL + 15
    cond = ready(node)
    assert (cond.reason, cond.message) == ("NodeStatusUnknown",
                                           "Kubelet stopped posting node status.")
    assert {c.type: c.status for c in node.status.conditions or ()} == {
        "Ready": "Unknown", "MemoryPressure": "Unknown", "DiskPressure": "Unknown",
        "PIDPressure": "Unknown"}

    async def tainted() -> bool:
        return taints(await client.get(Node, "dead")) >= UNREACHABLE

    await eventually("unreachable taints", tainted, 30)
    # the scheduler keeps new pods off the tainted Node
    await client.create_raw(kind("pods"), pod_body("late", "dead", []), NS)

    async def unschedulable() -> str:
        pod = await client.get(Pod, "late", NS)
        return next((c.message or "" for c in pod.status.conditions or ()
                     if c.type == "PodScheduled" and c.status == "False"), "")

    message = await eventually("late unschedulable", unschedulable, 30)
    assert "node(s) had untolerated taint {node.kubernetes.io/unreachable: }" in message
    assert ready(await client.get(Node, "live")).status == "True"
    assert not taints(await client.get(Node, "live"))

    async def pod_not_ready(name: str) -> bool:
        cond = ready(await client.get(Pod, name, NS))
        return cond is not None and cond.status == "False"

    await eventually("default pod NotReady", lambda: pod_not_ready("default"), 30)
    assert await events(client, "default", "NodeNotReady") == ["Node is not ready"]
    node_events = [e.message for e in (await client.list(Event, "default")).items
                   if e.involved_object.name == "dead" and e.reason == "NodeNotReady"]
    assert node_events == ["Node dead status is now: NodeNotReady"]

    # -- taint-based eviction: after 3 s for "short"; "default" tolerates 300 s
    async def evicted() -> bool:
        return (await client.get(Pod, "short", NS)).metadata.deletion_timestamp is not None

    await eventually("short evicted", evicted, 30)
    assert await events(client, "short", "TaintManagerEviction") == [
        f"Marking for deletion Pod {NS}/short"]
    short_pod = await client.get(Pod, "short", NS)
    target = [c for c in short_pod.status.conditions or () if c.type == "DisruptionTarget"]
    assert [(c.status, c.reason) for c in target] == [("True", "DeletionByTaintManager")]
    assert (await client.get(Pod, "default", NS)).metadata.deletion_timestamp is None

    # -- a second agent for the live node, or on a root dir in use, refuses to start
    second = kubelet(cluster, sockets / "other", "live", logs, "-second")
    await second.start()
    assert second.process is not None
    assert await asyncio.wait_for(second.process.wait(), 60) != 0
    text = second.log_path.read_text()
    assert "node live is already run by another node agent: its Lease " \
           "kube-node-lease/live is held by 'live_" in text, text[-2000:]
    same_root = kubelet(cluster, sockets / "live", "live", logs, "-same-root")
    await same_root.start()
    assert same_root.process is not None
    assert await asyncio.wait_for(same_root.process.wait(), 60) != 0
    assert f"root dir {sockets / 'live'} is in use by another node agent" in \
        same_root.log_path.read_text()

    # -- an agent killed and restarted on its root dir at once is the Lease's holder still
    before = await client.get(Lease, "live", "kube-node-lease")
    await live.kill()
    again = kubelet(cluster, sockets / "live", "live", logs, "-again")
    procs.append(again)
    await again.start()

    async def renewed() -> bool:
        lease = await client.get(Lease, "live", "kube-node-lease")
        return lease.spec.renew_time != before.spec.renew_time

    await eventually("live's Lease renewed by the restarted agent", renewed, 30)
    lease = await client.get(Lease, "live", "kube-node-lease")
    assert lease.spec.holder_identity == before.spec.holder_identity
    assert again.running, again.log_path.read_text()[-2000:]

    # -- the agent restarted on its root dir: its own Lease, Ready again, taints gone
    back = kubelet(cluster, sockets / "dead", "dead", logs, "-back")
    procs.append(back)
    await back.start()

    async def healthy() -> bool:
        node = await client.get(Node, "dead")
        cond = ready(node)
        return cond is not None and cond.status == "True" and not taints(node)

    await eventually("node dead Ready and untainted", healthy, 60)
    assert back.running, back.log_path.read_text()[-2000:]
    # the evicted pod's deletion is finished by its agent; the other runs on
    await eventually("short gone", lambda: _gone(client, "short"), 60)
    await eventually("default Ready", lambda: running("default"), 60)
    await eventually("late scheduled and running", lambda: running("late"), 90)
    log = (logs / "controller-manager.log").read_text()
    assert "Traceback" not in log, log[-3000:]


async def _gone(client: Client, name: str) -> bool:
    return name not in {p.metadata.name for p in (await client.list(Pod, NS)).items}

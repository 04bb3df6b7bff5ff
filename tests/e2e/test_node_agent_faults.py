"""Faults on the node side with real processes: an API server, scheduler and controller manager,
a ``kubedra kubelet`` and drivers that record every prepare and unprepare call they receive
(``recording_driver.py``).

- The agent is SIGKILLed while a driver takes 4 s to prepare a claim: if the pod is
  force-deleted meanwhile, the restarted agent unprepares the claim exactly once (the CDI spec is
  gone, the checkpoint forgets it); if the pod stays, it runs with its claim prepared (once more
  at most) and nothing is unprepared.
- Agent and driver killed together under a running pod: the restarted agent trusts its
  checkpoint (no second prepare, no second ``PreparedDynamicResources`` event).
- A driver that never answers delays neither another driver's prepare nor its unprepare.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kubedra.api.core import Event, Pod
from kubedra.cli.localcluster import Component, LocalCluster
from kubedra.client import kubeconfig
from kubedra.client.rest import Client
from tests.e2e import recording_driver
from tests.e2e.node_support import (
    NS,
    create_pod,
    create_workload,
    deleted,
    eventually,
    gone,
    is_phase,
    pod_claim,
    socket_root,
)
from tests.e2e.recording_driver import read_calls, received

NODE = "fault-node"
SLOW = "slow.example.com"
PREPARE = "NodePrepareResources"
UNPREPARE = "NodeUnprepareResources"


@dataclass
class Node:
    """One node: the agent and its recording drivers, each a process of its own."""

    base: Path
    root: Path
    kubeconfig_path: Path

    def __post_init__(self) -> None:
        self.logs = self.base / "logs"
        self.agent = Component("kubelet", [
            "kubelet", "--kubeconfig", str(self.kubeconfig_path), "--node-name", NODE,
            "--root-dir", str(self.root), "-v"], self.logs / "kubelet.log")
        self.drivers: dict[str, Component] = {}

    def calls(self, driver: str) -> Path:
        return self.base / f"{driver}.calls"

    def cdi_file(self, driver: str, claim_uid: str) -> Path:
        return self.base / "cdi" / f"{driver}-{claim_uid}.json"

    def driver(self, name: str, prepare_delay: float = 0.0) -> Component:
        self.drivers[name] = Component(f"driver-{name}", [
            recording_driver.__file__, "--driver-name", name, "--root-dir", str(self.root),
            "--cdi-dir", str(self.base / "cdi"), "--node-name", NODE, "--instances", "4",
            "--calls", str(self.calls(name)), "--prepare-delay", str(prepare_delay)],
            self.logs / f"driver-{name}.log", binary=sys.executable)
        return self.drivers[name]

    def checkpoint_claims(self) -> dict[str, Any]:
        state = json.loads((self.root / "dra_manager_state").read_text())
        return {e["ClaimUID"]: e for e in state.get("entries") or ()}

    async def stop(self) -> None:
        for c in [self.agent, *self.drivers.values()]:
            await c.stop()


@asynccontextmanager
async def node_with_cluster(tmp_path: Path) -> AsyncIterator[tuple[Node, Client]]:
    cluster = LocalCluster(tmp_path, emulated_version="1.30")
    with socket_root() as sockets:
        async with cluster, Client(kubeconfig.load(cluster.kubeconfig_path)) as client:
            node = Node(tmp_path, sockets / NODE, cluster.node_kubeconfig(NODE))
            try:
                yield node, client
            finally:
                await node.stop()


async def start(node: Node, client: Client, *drivers: Component) -> None:
    await node.agent.start()
    for d in drivers:
        await d.start()
    for name in node.drivers:
        await create_workload(client, name)

    async def registered() -> bool:
        log = node.agent.log_path
        return log.exists() and all(f"driver {n} registered" in log.read_text()
                                    for n in node.drivers)
    await eventually("drivers registered", registered, 60)


async def until(what: str, check: Callable[[], Any], timeout: float = 30.0) -> Any:
    """``eventually`` for a check that needs no await (the files the processes write)."""
    async def checked() -> Any:
        return check()
    return await eventually(what, checked, timeout)


async def claim_uid(client: Client, pod: str) -> str:
    claim = await eventually(f"claim of {pod}", lambda: pod_claim(client, pod), 60)
    return claim.metadata.uid or ""


async def killed_during_prepare(node: Node, client: Client) -> str:
    """A pod whose prepare takes 4 s; the agent SIGKILLed while the driver works on it."""
    await start(node, client, node.driver(SLOW, prepare_delay=4))
    await create_pod(client, "victim", NODE, "Always", {}, driver=SLOW)
    uid = await claim_uid(client, "victim")
    await until("prepare received", lambda: received(node.calls(SLOW), PREPARE, uid), 60)
    await node.agent.kill()
    return uid


@pytest.mark.timeout(240)
async def test_agent_killed_during_prepare_pod_force_deleted(tmp_path: Path) -> None:
    async with node_with_cluster(tmp_path) as (node, client):
        uid = await killed_during_prepare(node, client)
        await client.delete(Pod, "victim", NS, grace_period_seconds=0)
        spec = node.cdi_file(SLOW, uid)
        await until("the driver finished preparing", lambda: spec.exists(), 30)
        await node.agent.start()
        await until("unprepared after the restart",
                    lambda: received(node.calls(SLOW), UNPREPARE, uid), 30)
        await eventually("CDI spec removed", lambda: gone(spec), 30)
        await until("checkpoint forgot the claim",
                    lambda: uid not in node.checkpoint_claims(), 30)
        await asyncio.sleep(3)  # no second unprepare
        assert len(received(node.calls(SLOW), UNPREPARE, uid)) == 1
        assert len(received(node.calls(SLOW), PREPARE, uid)) == 1


@pytest.mark.timeout(240)
async def test_agent_killed_during_prepare_pod_kept(tmp_path: Path) -> None:
    async with node_with_cluster(tmp_path) as (node, client):
        uid = await killed_during_prepare(node, client)
        await until("the driver finished preparing",
                    lambda: node.cdi_file(SLOW, uid).exists(), 30)
        await node.agent.start()
        await eventually("pod Running", lambda: is_phase(client, "victim", "Running"), 60)
        entry = node.checkpoint_claims()[uid]
        assert entry["PodUIDs"] == {(await client.get(Pod, "victim", NS)).metadata.uid: {}}
        assert entry["CDIDevices"][SLOW], entry
        await asyncio.sleep(3)
        assert len(received(node.calls(SLOW), PREPARE, uid)) <= 2
        assert [c for c in read_calls(node.calls(SLOW)) if c["method"] == UNPREPARE] == []
        assert node.cdi_file(SLOW, uid).exists()


@pytest.mark.timeout(240)
async def test_agent_and_driver_killed_together_trust_the_checkpoint(tmp_path: Path) -> None:
    async with node_with_cluster(tmp_path) as (node, client):
        driver = node.driver(SLOW)
        await start(node, client, driver)
        await create_pod(client, "steady", NODE, "Always", {}, driver=SLOW)
        await eventually("pod Running", lambda: is_phase(client, "steady", "Running"), 60)
        uid = await claim_uid(client, "steady")
        mtime = node.cdi_file(SLOW, uid).stat().st_mtime_ns
        await eventually("prepared event", lambda: prepared_event_count(client, "steady"))
        await node.agent.kill()
        await driver.kill()
        await driver.start()
        await node.agent.start()
        await until("driver registered again", lambda: node.agent.log_path.read_text().count(
            f"driver {SLOW} registered") >= 2, 60)
        await asyncio.sleep(5)  # the pod worker has long resumed the pod
        assert await is_phase(client, "steady", "Running")
        assert len(received(node.calls(SLOW), PREPARE, uid)) == 1
        assert node.cdi_file(SLOW, uid).stat().st_mtime_ns == mtime
        assert await prepared_event_count(client, "steady") == 1


async def prepared_event_count(client: Client, pod: str) -> int:
    return sum(e.count or 1 for e in (await client.list(Event, NS)).items
               if e.involved_object.name == pod and e.reason == "PreparedDynamicResources")


@pytest.mark.timeout(240)
async def test_a_hung_driver_delays_no_other_driver(tmp_path: Path) -> None:
    hung, fast = "hung.example.com", "fast.example.com"
    async with node_with_cluster(tmp_path) as (node, client):
        await start(node, client, node.driver(hung, prepare_delay=3600), node.driver(fast))
        await create_pod(client, "stuck", NODE, "Always", {}, driver=hung)
        stuck = await claim_uid(client, "stuck")
        await until("hung prepare received",
                    lambda: received(node.calls(hung), PREPARE, stuck), 60)

        await create_pod(client, "quick", NODE, "Always", {}, driver=fast)
        bound = await bound_at(client, "quick")
        quick = await claim_uid(client, "quick")
        calls = await until("fast prepare received",
                            lambda: received(node.calls(fast), PREPARE, quick), 30)
        assert calls[0]["time"] - bound < 1.0, calls[0]["time"] - bound
        await eventually("quick Running", lambda: is_phase(client, "quick", "Running"), 30)

        asked = time.time()
        await client.delete(Pod, "quick", NS)
        calls = await until("fast unprepare received",
                            lambda: received(node.calls(fast), UNPREPARE, quick), 30)
        assert calls[0]["time"] - asked < 1.0, calls[0]["time"] - asked
        await eventually("quick deleted", lambda: deleted(client, "quick"), 30)
        answered = [c for c in read_calls(node.calls(hung)) if c["phase"] == "answered"]
        assert answered == []  # the hung call was still outstanding all along
        assert await is_phase(client, "stuck", "Pending")


async def bound_at(client: Client, pod: str) -> float:
    """When the pod was first seen bound to its node (polled closely)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if (await client.get(Pod, pod, NS)).spec.node_name:
            return time.time()
        await asyncio.sleep(0.02)
    raise AssertionError(f"{pod} never bound")

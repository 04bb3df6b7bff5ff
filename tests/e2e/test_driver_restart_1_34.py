"""A 1.34 node's devices change under the scheduler, all real processes (API server,
scheduler, controller manager, ``kubedra kubelet``, ``kubedra example-driver``):

- the driver restarted with fewer devices rewrites its pool (obsolete slices deleted first,
  then updates, then creates; a new generation when a slice is replaced, the same one when
  only one slice changes), so at no point does the scheduler's view of the pool (the newest
  generation, spec §8) hold a removed device; a claim allocated to a removed device keeps its
  allocation and its pod keeps running; a new claim only gets a device that exists; once the
  devices are back the free one is allocated, the held one not while its claim holds it;
  the driver stopped for good has its slices wiped by the kubelet after the wiping delay;
- the scheduler with a pool's old generation beside an incomplete new one (slices written by
  hand): the old generation is ignored, the incomplete pool serves ExactCount requests, an
  ``All`` request fails while the pool is being updated and is allocated once it is complete.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from kubedra.api import codec
from kubedra.api.core import Event, Node, Pod
from kubedra.api.resource import v1
from kubedra.cli.localcluster import Component, LocalCluster
from kubedra.client import kubeconfig
from kubedra.client.informer import Informer
from kubedra.client.rest import Client
from tests.e2e.node_support import (
    WIPING_DELAY,
    WIPING_FLAGS,
    eventually,
    logged,
    socket_root,
)
from tests.e2e.test_up_nodes_1_34 import DRIVER, kind

NODE = "node-r"
NS = "default"
ON_NODE = f"{v1.RESOURCE_SLICE_SELECTOR_NODE_NAME}={NODE}"


def newest_devices(slices: list[v1.ResourceSlice]) -> set[str]:
    """What the scheduler may allocate from a node's one pool: the devices of the slices at
    the highest generation, complete or not (spec §8, ``GatherPools``)."""
    if not slices:
        return set()
    top = max(s.spec.pool.generation for s in slices)
    return {d.name for s in slices if s.spec.pool.generation == top for d in s.spec.devices}


def final(slices: list[v1.ResourceSlice]) -> bool:
    """One generation, and every slice of it there."""
    return bool(slices) and len({s.spec.pool.generation for s in slices}) == 1 and len(
        slices) == slices[0].spec.pool.resource_slice_count


def device_set(count: int) -> set[str]:
    return {f"device-{i:02d}" for i in range(count)}


class NodeProcesses:
    """``kubedra kubelet`` and ``kubedra example-driver`` of one node, each a process with
    the node's identity."""

    def __init__(self, cluster: LocalCluster, root: Path, logs: Path) -> None:
        self.root, self.logs = root, logs
        self.config = str(cluster.node_kubeconfig(NODE))
        self.kubelet = Component("kubelet", [
            "kubelet", "--kubeconfig", self.config, "--node-name", NODE, "--root-dir",
            str(root), *WIPING_FLAGS, "-v"], logs / "kubelet.log")
        self.driver: Component | None = None

    async def start_driver(self, devices: int) -> None:
        """(Re)start the driver publishing ``device-00``, ... each with its ``index``."""
        if self.driver is not None:
            await self.driver.stop()
        config = self.logs / f"devices-{devices}.json"
        config.write_text(json.dumps({"devices": [
            {"name": f"device-{i:02d}", "attributes": {"index": {"int": i}}}
            for i in range(devices)]}))
        self.driver = Component("driver", [
            "example-driver", "--driver-name", DRIVER, "--root-dir", str(self.root),
            "--cdi-dir", str(self.root / "cdi"), "--node-name", NODE, "--config", str(config),
            "--kubeconfig", self.config, "-v"], self.logs / "driver.log")
        await self.driver.start()

    async def stop(self) -> None:
        if self.driver is not None:
            await self.driver.stop()
        await self.kubelet.stop()


async def node_slices(client: Client) -> list[v1.ResourceSlice]:
    return (await client.list(v1.ResourceSlice, field_selector=ON_NODE)).items


async def device_class(client: Client, driver: str) -> None:
    await client.create_raw(kind("deviceclasses"), {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": driver},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]}})


def index_in(driver: str, *values: int | str) -> str:
    """A selector of the devices whose ``index`` attribute is one of ``values``."""
    return f"device.attributes[{json.dumps(driver)}].index in {json.dumps(list(values))}"


async def pod_with_claim(client: Client, name: str, selector: str = "", *,
                         driver: str = DRIVER, all_devices: bool = False) -> None:
    """Pod ``name`` using claim ``name``: one device of ``driver``'s class (or all of them)
    matching ``selector``."""
    exactly: dict[str, Any] = {"deviceClassName": driver}
    if selector:
        exactly["selectors"] = [{"cel": {"expression": selector}}]
    if all_devices:
        exactly["allocationMode"] = "All"
    await client.create_raw(kind("resourceclaims"), {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}}, NS)
    await client.create_raw(kind("pods"), {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS},
        "spec": {"restartPolicy": "Always", "terminationGracePeriodSeconds": 2,
                 "resourceClaims": [{"name": "gpu", "resourceClaimName": name}],
                 "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9",
                                 "resources": {"claims": [{"name": "gpu"}]}}]}}, NS)


async def allocated(client: Client, claim: str) -> list[str]:
    """The devices the claim is allocated (none when it is not)."""
    allocation = (await client.get(v1.ResourceClaim, claim, NS)).status.allocation
    return [r.device for r in allocation.devices.results or ()] if allocation else []


async def running(client: Client, pod: str) -> bool:
    return (await client.get(Pod, pod, NS)).status.phase == "Running"


async def failed_scheduling(client: Client, pod: str) -> list[str]:
    return [e.message or "" for e in (await client.list(Event, NS)).items
            if e.involved_object.name == pod and e.reason == "FailedScheduling"]


async def node_ready(client: Client) -> bool:
    return any(c.type == "Ready" and c.status == "True"
               for n in (await client.list(Node)).items if n.metadata.name == NODE
               for c in n.status.conditions or ())


@pytest.mark.timeout(420)
async def test_driver_restarted_with_fewer_devices(tmp_path: Path) -> None:
    with socket_root() as sockets:
        cluster = LocalCluster(tmp_path, emulated_version="1.34")
        cluster.node_names.append(NODE)
        async with cluster, Client(kubeconfig.load(cluster.kubeconfig_path)) as client:
            node = NodeProcesses(cluster, sockets / NODE, tmp_path / "logs")
            await node.kubelet.start()
            try:
                await _restart_scenario(client, node)
            finally:
                await node.stop()


async def _pool_of(client: Client, devices: set[str]) -> list[v1.ResourceSlice]:
    items = await node_slices(client)
    return items if final(items) and newest_devices(items) == devices else []


async def restart_watched(client: Client, node: NodeProcesses,
                          devices: int) -> list[v1.ResourceSlice]:
    """Restart the driver with fewer ``devices`` and return the pool once final; a watch
    checks every state of the node's slices meanwhile: the scheduler's view never shows a
    removed device."""
    before = newest_devices(await node_slices(client))
    views: list[set[str]] = []
    watch: Informer[v1.ResourceSlice] = Informer(client, v1.ResourceSlice,
                                                 field_selector=ON_NODE)

    def record(*_: Any) -> None:
        views.append(newest_devices(watch.list()))
    watch.add_handler(on_add=record, on_update=record, on_delete=record)
    watch.start()
    await watch.wait_synced()
    listed = len(views)
    try:
        await node.start_driver(devices)
        pool = await eventually(f"{devices} devices published",
                                lambda: _pool_of(client, device_set(devices)), 90)

        async def settled() -> bool:
            return views[-1:] == [device_set(devices)]
        await eventually("the watch at the final state", settled, 30)
    finally:
        await watch.stop()
    changes = views[listed:]
    assert changes, "the watch saw no change"
    removed = before - device_set(devices)
    leaked = [v & removed for v in changes]
    assert not any(leaked), f"a removed device at the newest generation: {leaked}"
    return pool


async def _restart_scenario(client: Client, node: NodeProcesses) -> None:
    # 131 devices: two slices (128 + 3) of the node's pool at one generation
    await node.start_driver(131)
    first = await eventually("131 devices published", lambda: _pool_of(client, device_set(131)),
                             90)
    assert sorted(len(s.spec.devices) for s in first) == [3, 128]
    assert {(s.spec.pool.name, s.spec.pool.resource_slice_count) for s in first} == {(NODE, 2)}
    generation = first[0].spec.pool.generation
    await device_class(client, DRIVER)
    await pod_with_claim(client, "holder", index_in(DRIVER, 130))
    await eventually("holder Running", lambda: running(client, "holder"), 120)
    assert await allocated(client, "holder") == ["device-130"]

    # restarted with 129 devices: device-129 (free) and device-130 (held) are gone; the
    # slice whose devices changed is replaced, so the pool moves to a new generation
    second = await restart_watched(client, node, 129)
    assert {s.spec.pool.generation for s in second} == {generation + 1}
    assert sorted(len(s.spec.devices) for s in second) == [1, 128]
    kept = {s.metadata.name for s in first} & {s.metadata.name for s in second}
    assert [len(s.spec.devices) for s in second if s.metadata.name in kept] == [128]

    # the claim on a removed device keeps it, as upstream's do; its pod keeps running
    assert await allocated(client, "holder") == ["device-130"]
    assert await running(client, "holder")
    # new claims: only a device that exists
    await pod_with_claim(client, "gone", index_in(DRIVER, 129))
    await pod_with_claim(client, "held", index_in(DRIVER, 130))
    await pod_with_claim(client, "any",
                         index_in(DRIVER, 128, 129, 130))
    await eventually("any Running", lambda: running(client, "any"), 120)
    assert await allocated(client, "any") == ["device-128"]
    for pod in ("gone", "held"):
        await eventually(f"{pod} unschedulable", lambda p=pod: failed_scheduling(client, p), 60)
        assert await allocated(client, pod) == []

    # 128 devices: the second slice goes, the first stays with a new slice count; one
    # changed slice and none new keep the generation (upstream), so only deleting the
    # obsolete slice first keeps device-128 out of the scheduler's view
    third = await restart_watched(client, node, 128)
    assert [(s.spec.pool.generation, s.spec.pool.resource_slice_count) for s in third] == [
        (generation + 1, 1)]
    assert await allocated(client, "any") == ["device-128"]
    assert await running(client, "any")

    # the devices come back at a newer generation: the free one is allocated, the held one
    # stays with its claim
    await node.start_driver(131)
    fourth = await eventually("131 devices again", lambda: _pool_of(client, device_set(131)),
                              90)
    assert {s.spec.pool.generation for s in fourth} == {generation + 2}
    await eventually("gone Running", lambda: running(client, "gone"), 120)
    assert await allocated(client, "gone") == ["device-129"]
    await asyncio.sleep(3)  # the same slice events woke "held": time for a wrong allocation
    assert await allocated(client, "held") == []
    await client.delete(Pod, "holder", NS)
    await eventually("held Running", lambda: running(client, "held"), 120)
    assert await allocated(client, "held") == ["device-130"]

    # the driver stopped for good: the kubelet wipes its slices after the wiping delay
    assert node.driver is not None
    await node.driver.stop()
    await asyncio.sleep(WIPING_DELAY / 3)
    assert await node_slices(client), "wiped before the delay"
    await eventually("the gone driver's slices wiped", _no_slices(client), 60)
    assert await running(client, "held")  # what runs keeps running


def _no_slices(client: Client) -> Callable[[], Awaitable[bool]]:
    async def check() -> bool:
        return not await node_slices(client)
    return check


OTHER = "pool.example.com"
"""A driver no process serves: its slices are written by the test."""


def pool_slice(name: str, generation: int, count: int, devices: list[str]) -> v1.ResourceSlice:
    return codec.decode({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name},
        "spec": {"driver": OTHER, "nodeName": NODE,
                 "pool": {"name": "pool", "generation": generation,
                          "resourceSliceCount": count},
                 "devices": [{"name": d, "attributes": {"index": {"string": d}}}
                             for d in devices]}}, v1.ResourceSlice)


@pytest.mark.timeout(300)
async def test_an_old_generation_beside_an_incomplete_new_one(tmp_path: Path) -> None:
    with socket_root() as sockets:
        cluster = LocalCluster(tmp_path, emulated_version="1.34")
        cluster.node_names.append(NODE)
        async with cluster, Client(kubeconfig.load(cluster.kubeconfig_path)) as client:
            node = NodeProcesses(cluster, sockets / NODE, tmp_path / "logs")
            await node.kubelet.start()
            try:
                await eventually("the node Ready", lambda: node_ready(client), 60)
                # the kubelet's start-up wipe is over: what is written now stays
                await eventually("the start-up wipe", lambda: logged(
                    node.kubelet.log_path, f"deleted ResourceSlices {ON_NODE}"), 60)
                await _generations_scenario(client)
            finally:
                await node.stop()


async def _generations_scenario(client: Client) -> None:
    await device_class(client, OTHER)
    # generation 1 (complete) has dev-a and dev-b; generation 2 has one of its two slices
    await client.create(pool_slice("old", 1, 1, ["dev-a", "dev-b"]))
    await client.create(pool_slice("new-1", 2, 2, ["dev-a"]))
    await pod_with_claim(client, "wants-b", index_in(OTHER, "dev-b"), driver=OTHER)
    await pod_with_claim(client, "one", driver=OTHER)
    await pod_with_claim(client, "all", f"!({index_in(OTHER, 'dev-a')})", driver=OTHER,
                         all_devices=True)
    # the newest generation wins even incomplete: dev-b is not there, dev-a is
    assert await eventually("one allocated", lambda: allocated(client, "one"), 60) == ["dev-a"]
    await eventually("wants-b unschedulable", lambda: failed_scheduling(client, "wants-b"), 60)
    # All needs every device of the pool, which is still being written
    messages = await eventually("all refused", lambda: failed_scheduling(client, "all"), 60)
    assert any(f"resource pool {OTHER}/pool is currently being updated" in m
               for m in messages), messages
    assert await allocated(client, "all") == []

    await client.create(pool_slice("new-2", 2, 2, ["dev-c"]))
    assert await eventually("all allocated", lambda: allocated(client, "all"), 60) == ["dev-c"]
    await asyncio.sleep(2)
    assert await allocated(client, "wants-b") == []

"""DynamicResources on ``resource.k8s.io/v1`` (1.34) against an in-process 1.34 API server:
the scheduler allocates devices and writes them as 1.34 does (the
``resource.kubernetes.io/delete-protection`` finalizer by an update, then
``status.allocation`` and ``reservedFor``), two pods never get one device, Filter's texts
(``cannot allocate all claims``, ``timed out trying to allocate devices``, allocator errors
as Error statuses), PreFilter's (missing class, allocation in flight), admin access holding
nothing, PostFilter's deallocation, the queueing hints of v1 objects and the packing score;
and ``DynamicResourcesArgs`` of a 1.34 scheduler configuration."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from kubedra.allocation.devicesimulate import simulator_for
from kubedra.allocation.features import Features
from kubedra.allocation.simulate import Snapshot, pending_pods
from kubedra.api import codec, kinds
from kubedra.api.core import Event, Node, Pod
from kubedra.api.features import FeatureGates
from kubedra.api.release import R1_30, R1_34
from kubedra.api.resource import v1
from kubedra.apiserver.app import Options
from kubedra.client.rest import Client
from kubedra.scheduler.claimwriter import ClaimWriteError, DeviceClaimWriter
from kubedra.scheduler.config import ConfigError, decode, default_config, resolve
from kubedra.scheduler.framework import Code, CycleState, Diagnosis, NodeInfo, Resources
from kubedra.scheduler.offline import ProfileChooser
from kubedra.scheduler.plugins.dradevices import DeviceState
from kubedra.scheduler.plugins.dynamicresources import (
    FREE_INSTANCES,
    NAME,
    PACKING,
    DynamicResources,
    DynamicResourcesPacking,
)
from kubedra.scheduler.queue import ClusterEvent
from kubedra.scheduler.setup import IMPLEMENTS, build_scheduler
from kubedra.tasks import cancel_and_wait
from kubedra.testing import fake_node
from tests.conformance.scheduler_support import api_client

NS = "dra"
DRIVER = "gpu.example.com"
GATES = FeatureGates.for_release(R1_34)


def kind(name: str) -> kinds.Kind:
    found = kinds.lookup(name, R1_34)
    assert found is not None, name
    return found


def device_class(name: str = DRIVER) -> v1.DeviceClass:
    return codec.decode({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                         "metadata": {"name": name}, "spec": {"selectors": [
                             {"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}},
                        v1.DeviceClass)


def slice_(node: str, devices: int, *, names: list[str] | None = None) -> v1.ResourceSlice:
    return codec.decode({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-{DRIVER}"},
        "spec": {"driver": DRIVER, "nodeName": node,
                 "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                 "devices": [{"name": n} for n in names or
                             [f"gpu-{i}" for i in range(devices)]]}}, v1.ResourceSlice)


def exactly(name: str, count: int = 1, cls: str = DRIVER) -> dict[str, Any]:
    """A request as the server defaults it."""
    return {"name": name, "exactly": {"deviceClassName": cls, "allocationMode": "ExactCount",
                                      "count": count}}


def claim(name: str, *requests: dict[str, Any], uid: str = "",
          status: dict[str, Any] | None = None) -> v1.ResourceClaim:
    body: dict[str, Any] = {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": NS, "uid": uid or f"uid-{name}",
                     "resourceVersion": "1"},
        "spec": {"devices": {"requests": list(requests) or [exactly("gpu")]}}}
    if status is not None:
        body["status"] = status
    return codec.decode(body, v1.ResourceClaim)


def pod(name: str, *claims: str) -> Pod:
    return codec.decode({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": NS, "uid": f"uid-{name}"},
        "spec": {"containers": [{"name": "c", "image": "busybox"}],
                 "resourceClaims": [{"name": c, "resourceClaimName": c} for c in claims]}},
        Pod)


def info(node: Node) -> NodeInfo:
    return NodeInfo(node, node.metadata.name or "", dict(node.metadata.labels or {}),
                    Resources())


def state_of(*objects: Any) -> DeviceState:
    state = DeviceState()
    for obj in objects:
        if isinstance(obj, v1.ResourceClaim):
            state.set_claim(obj)
        elif isinstance(obj, v1.DeviceClass):
            state.set_class(obj)
        elif isinstance(obj, v1.ResourceSlice):
            state.set_slice(obj)
    return state


# --- the plugin phase by phase (no server) ------------------------------------------------


def test_prefilter_texts() -> None:
    plugin = DynamicResources(state_of(claim("c1")))
    status = plugin.pre_filter(CycleState(), pod("p", "c1"))
    assert (status.code, status.message) == (
        Code.UNRESOLVABLE, f"request gpu: device class {DRIVER} does not exist")
    status = plugin.pre_filter(CycleState(), pod("p", "missing"))
    assert (status.code, status.message) == (
        Code.UNRESOLVABLE, 'resourceclaim.resource.k8s.io "missing" not found')
    assert plugin.pre_filter(CycleState(), Pod()).code is Code.SKIP


def test_two_pods_never_get_one_device_and_release_frees_it() -> None:
    n1 = fake_node("n1")
    state = state_of(device_class(), slice_("n1", 1), claim("a"), claim("b"))
    plugin = DynamicResources(state)
    first, second = CycleState(), CycleState()
    assert plugin.pre_filter(first, pod("p1", "a")).ok
    assert plugin.filter(first, pod("p1", "a"), info(n1)).ok
    assert plugin.reserve(first, pod("p1", "a"), "n1").ok
    # a's device is in flight: b cannot have it
    assert plugin.pre_filter(second, pod("p2", "b")).ok
    status = plugin.filter(second, pod("p2", "b"), info(n1))
    assert (status.code, status.message) == (Code.UNRESOLVABLE, "cannot allocate all claims")
    # and a's own allocation is in flight for the next pod naming it
    again = plugin.pre_filter(CycleState(), pod("p3", "a"))
    assert again.message == "resource claim dra/a is in the process of being allocated"
    plugin.unreserve(first, pod("p1", "a"), "n1")
    third = CycleState()
    assert plugin.pre_filter(third, pod("p2", "b")).ok
    assert plugin.filter(third, pod("p2", "b"), info(n1)).ok


def test_devices_of_allocated_claims_are_taken_unless_admin_access() -> None:
    n1 = fake_node("n1")
    allocated = {"allocation": {"devices": {"results": [
        {"request": "gpu", "driver": DRIVER, "pool": "n1", "device": "gpu-0"}]}}}
    admin = {"allocation": {"devices": {"results": [
        {"request": "gpu", "driver": DRIVER, "pool": "n1", "device": "gpu-0",
         "adminAccess": True}]}}}
    for status, ok in ((allocated, False), (admin, True)):
        state = state_of(device_class(), slice_("n1", 1), claim("old", status=status),
                         claim("new"))
        plugin, cycle = DynamicResources(state), CycleState()
        assert plugin.pre_filter(cycle, pod("p", "new")).ok
        assert plugin.filter(cycle, pod("p", "new"), info(n1)).ok is ok


def test_filter_timeout_and_errors() -> None:
    n1 = fake_node("n1")
    many = [exactly(f"r{i}", 2) for i in range(8)]
    state = state_of(device_class(), slice_("n1", 15), claim("big", *many))
    plugin, cycle = DynamicResources(state, filter_timeout=1e-9), CycleState()
    assert plugin.pre_filter(cycle, pod("p", "big")).ok
    time.sleep(0.001)
    status = plugin.filter(cycle, pod("p", "big"), info(n1))
    assert (status.code, status.message) == (Code.UNRESOLVABLE,
                                              "timed out trying to allocate devices")
    # 0 turns the timeout off: the search runs to its (negative) end
    plugin, cycle = DynamicResources(state, filter_timeout=0), CycleState()
    assert plugin.pre_filter(cycle, pod("p", "big")).ok
    status = plugin.filter(cycle, pod("p", "big"), info(n1))
    assert (status.code, status.message) == (Code.UNRESOLVABLE, "cannot allocate all claims")
    # an invalid pool is an allocator error: Error, the cycle aborts
    broken = state_of(device_class(), slice_("n1", 0, names=["x", "x"]), claim("c"))
    plugin, cycle = DynamicResources(broken), CycleState()
    assert plugin.pre_filter(cycle, pod("p", "c")).ok
    status = plugin.filter(cycle, pod("p", "c"), info(n1))
    assert (status.code, status.message) == (Code.ERROR,
                                             "pool n1 is invalid: duplicate device name x")


def test_packing_counts_free_devices_of_the_pods_drivers() -> None:
    n1, n2 = fake_node("n1"), fake_node("n2")
    other = slice_("n2", 5)
    state = state_of(device_class(), slice_("n1", 2), other, claim("c"))
    plugin, packing, cycle = DynamicResources(state), DynamicResourcesPacking(), CycleState()
    assert plugin.pre_filter(cycle, pod("p", "c")).ok
    assert FREE_INSTANCES in cycle
    for node in (n1, n2):
        assert plugin.filter(cycle, pod("p", "c"), info(node)).ok
    assert packing.score(cycle, pod("p", "c"), info(n1)) == 98
    assert packing.score(cycle, pod("p", "c"), info(n2)) == 95


def test_post_filter_names_the_first_failing_check_of_each_node() -> None:
    """The FailedScheduling event's detail: explain's first failing check per node the
    plugin rejected (as the 1.30 path gives it), on the Node Filter saw."""
    n1, n2 = fake_node("n1"), fake_node("n2")
    taken = {"allocation": {"devices": {"results": [
        {"request": "gpu", "driver": DRIVER, "pool": "n1", "device": "gpu-0"}]}}}
    state = state_of(device_class(), slice_("n1", 1), slice_("n2", 1),
                     claim("old", status=taken), claim("pair", exactly("gpu", 2)))
    plugin, cycle, p = DynamicResources(state), CycleState(), pod("p", "pair")
    assert plugin.pre_filter(cycle, p).ok
    diagnosis = Diagnosis()
    for node in (n1, n2):
        status = plugin.filter(cycle, p, info(node))
        assert status.message == "cannot allocate all claims"
        diagnosis.node_statuses[node.metadata.name or ""] = dataclasses.replace(
            status, plugin=NAME)
    asyncio.run(plugin.post_filter(cycle, p, diagnosis))
    assert diagnosis.detail == (
        "On 1 node(s): dra/pair#gpu: needs 2 devices (ExactCount), 0 of the node's 1 usable; "
        "on 1 node(s): dra/pair#gpu: needs 2 devices (ExactCount), 1 of the node's 1 usable.")


@pytest.mark.parametrize("seed", range(6))
def test_simulate_packs_v1_claims_as_the_scheduler_does(seed: int) -> None:
    """Two nodes alike but for their devices: the packing score decides, and ``simulate``
    (the scheduler's profile offline) takes the node the plugin scores best, whatever the
    seed of the draw among equal scores."""
    nodes = [fake_node("n1"), fake_node("n2")]
    objects = [device_class(), slice_("n1", 5), slice_("n2", 2), claim("c")]
    plugin, packing, cycle = DynamicResources(state_of(*objects)), DynamicResourcesPacking(), \
        CycleState()
    assert plugin.pre_filter(cycle, pod("p", "c")).ok
    scores = {}
    for node in nodes:
        assert plugin.filter(cycle, pod("p", "c"), info(node)).ok
        scores[node.metadata.name] = packing.score(cycle, pod("p", "c"), info(node))
    assert scores == {"n1": 95, "n2": 98}
    snapshot = Snapshot.from_objects([*nodes, *objects, pod("p", "c")])
    chooser = ProfileChooser(default_config(IMPLEMENTS), snapshot.nodes, [], seed=seed)
    simulation = simulator_for(snapshot, chooser=chooser)
    explanation = simulation.explain(pod("p", "c"))
    assert explanation.result == "fits on n1, n2; the scheduler picks n2"
    assert explanation.scores["n2"][PACKING] > explanation.scores["n1"][PACKING]
    (placement,) = simulation.run(pending_pods(snapshot))
    assert placement.node == "n2"


def test_shortlist_is_the_nodes_with_a_free_device() -> None:
    """Nodes without a free device are passed over (a filling cluster's many); any node when
    a request may take devices in use, or all of them, or a slice is not one node's."""
    taken = {"allocation": {"devices": {"results": [
        {"request": "gpu", "driver": DRIVER, "pool": "n1", "device": "gpu-0"}]}}}
    objects = [device_class(), slice_("n1", 1), slice_("n2", 2), claim("old", status=taken)]

    def shortlist(*requests: dict[str, Any], more: tuple[Any, ...] = ()) -> Any:
        state = state_of(*objects, *more, claim("c", *requests))
        state.features = Features.from_gates(GATES)  # 1.34's: firstAvailable served
        plugin, cycle = DynamicResources(state), CycleState()
        assert plugin.pre_filter(cycle, pod("p", "c")).ok
        return plugin.shortlist(cycle, pod("p", "c"))

    assert shortlist(exactly("gpu")) == {"n2"}
    assert shortlist({"name": "any", "firstAvailable": [
        {"name": "one", "deviceClassName": DRIVER, "count": 1}]}) == {"n2"}
    admin = exactly("gpu")
    admin["exactly"]["adminAccess"] = True
    assert shortlist(admin) is None
    every = {"name": "gpu", "exactly": {"deviceClassName": DRIVER, "allocationMode": "All"}}
    assert shortlist(every) is None
    shared = codec.decode({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "net"},
        "spec": {"driver": DRIVER, "allNodes": True, "devices": [{"name": "nic"}],
                 "pool": {"name": "net", "generation": 1, "resourceSliceCount": 1}}},
        v1.ResourceSlice)
    assert shortlist(exactly("gpu"), more=(shared,)) is None


def test_queueing_hints_of_v1_objects() -> None:
    used = claim("c")
    state = state_of(device_class(), used)
    plugin = DynamicResources(state)
    events = dict(plugin.events_to_register())
    for resource in ("DeviceClass", "ResourceSlice"):
        for action in ("Add", "Update"):
            assert ClusterEvent(resource, action) in events
    assert ClusterEvent("ResourceClassParameters", "Add") not in events
    allocated = claim("other", status={"allocation": {"devices": {"results": []}}})
    freed = claim("other")
    assert plugin.hint_claim(pod("p", "c"), allocated, freed)  # devices freed: any pod
    # ...whose claims resolve: upstream's foreachPodResourceClaim comes first
    assert not plugin.hint_claim(pod("q", "not-created"), allocated, freed)
    assert plugin.hint_claim(pod("p", "c"), None, used)  # the pod's claim appeared
    assert not plugin.hint_claim(pod("p", "c"), None, claim("unrelated"))
    with pytest.raises(TypeError):
        plugin.hint_claim(pod("p", "c"), None, object())


# --- with the API server ----------------------------------------------------------------------


@contextlib.asynccontextmanager
async def server(tmp_path: Path) -> AsyncIterator[Client]:
    async with api_client(tmp_path, Options(gates=GATES, gc=False)) as client:
        await client.create_raw(kind("namespaces"), {
            "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
        yield client


async def eventually(what: str, check: Callable[[], Any], timeout: float = 30) -> Any:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        got = await check()
        if got:
            return got
        assert asyncio.get_running_loop().time() < deadline, f"timed out: {what}"
        await asyncio.sleep(0.05)


async def create(client: Client, obj: Any) -> Any:
    body = codec.to_builtins(obj)
    body["metadata"].pop("uid", None)
    body["metadata"].pop("resourceVersion", None)
    body.pop("status", None)
    resource = {v1.ResourceClaim: "resourceclaims", v1.DeviceClass: "deviceclasses",
                v1.ResourceSlice: "resourceslices", Pod: "pods"}[type(obj)]
    await client.create_raw(kind(resource), body, obj.metadata.namespace)
    return await client.get(type(obj), obj.metadata.name or "", obj.metadata.namespace)


async def test_scheduler_allocates_and_binds(tmp_path: Path) -> None:
    async with server(tmp_path) as client:
        for name in ("n1", "n2"):
            await client.create(fake_node(name))
        await create(client, device_class())
        await create(client, slice_("n1", 1))
        await create(client, claim("a"))
        await create(client, claim("b"))
        sched = build_scheduler(client, release=R1_34, seed=1)
        task = asyncio.create_task(sched.run())
        try:
            first = await create(client, pod("p1", "a"))

            async def bound() -> str | None:
                return (await client.get(Pod, "p1", NS)).spec.node_name
            assert await eventually("p1 bound", bound) == "n1"
            stored = await client.get(v1.ResourceClaim, "a", NS)
            assert stored.metadata.finalizers == [v1.FINALIZER]
            assert stored.status.allocation is not None
            assert codec.to_builtins(stored.status.allocation.devices.results) == [
                {"request": "gpu", "driver": DRIVER, "pool": "n1", "device": "gpu-0"}]
            assert codec.to_builtins(stored.status.reserved_for) == [
                {"resource": "pods", "name": "p1", "uid": first.metadata.uid}]
            # the only device is taken: the second pod stays pending, with the reason
            await create(client, pod("p2", "b"))

            async def reported() -> list[str]:
                events = await client.list(Event, NS)
                return [e.message or "" for e in events.items
                        if e.reason == "FailedScheduling"
                        and e.involved_object.name == "p2"]
            (message,) = await eventually("FailedScheduling of p2", reported)
            assert message == (
                "0/2 nodes are available: 2 cannot allocate all claims. still not "
                "schedulable. On 1 node(s): dra/b#gpu: needs 1 device (ExactCount), 0 of the "
                "node's 0 usable; on 1 node(s): dra/b#gpu: needs 1 device (ExactCount), 0 of "
                "the node's 1 usable."), message
            assert (await client.get(Pod, "p2", NS)).spec.node_name is None
        finally:
            await cancel_and_wait(task)
            await sched.informers.stop()


async def allocate(client: Client, name: str, node: str) -> v1.ResourceClaim:
    """Give the stored claim ``name`` an allocation of ``node``'s gpu-0 (finalizer first)."""
    body = codec.to_builtins(await client.get(v1.ResourceClaim, name, NS))
    body["metadata"]["finalizers"] = [v1.FINALIZER]
    body = codec.to_builtins(await client.update(codec.decode(body, v1.ResourceClaim)))
    body["status"] = {"allocation": {
        "devices": {"results": [
            {"request": "gpu", "driver": DRIVER, "pool": node, "device": "gpu-0"}]},
        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": [node]}]}]}}}
    return await client.update_status(codec.decode(body, v1.ResourceClaim))


async def test_an_allocated_claim_is_only_reserved(tmp_path: Path) -> None:
    async with server(tmp_path) as client:
        for name in ("n1", "n2"):
            await client.create(fake_node(name))
        await create(client, device_class())
        await create(client, claim("c"))
        allocated = await allocate(client, "c", "n2")
        sched = build_scheduler(client, release=R1_34, seed=1)
        task = asyncio.create_task(sched.run())
        try:
            created = await create(client, pod("p", "c"))

            async def bound() -> str | None:
                return (await client.get(Pod, "p", NS)).spec.node_name
            assert await eventually("p bound", bound) == "n2"  # the allocation's node
            stored = await client.get(v1.ResourceClaim, "c", NS)
            assert stored.status.allocation == allocated.status.allocation
            assert [r.uid for r in stored.status.reserved_for or ()] == [created.metadata.uid]
        finally:
            await cancel_and_wait(task)
            await sched.informers.stop()


async def test_prebind_refuses_a_claim_allocated_elsewhere(tmp_path: Path) -> None:
    async with server(tmp_path) as client:
        await create(client, claim("c"))
        unallocated = await client.get(v1.ResourceClaim, "c", NS)
        await allocate(client, "c", "n2")
        mine = codec.to_builtins(unallocated)
        mine["status"] = {"allocation": {"devices": {"results": [
            {"request": "gpu", "driver": DRIVER, "pool": "n1", "device": "gpu-0"}]}}}
        with pytest.raises(ClaimWriteError) as err:
            await DeviceClaimWriter(client).bind_claim(
                unallocated, pod("p", "c"), codec.decode(mine, v1.ResourceClaim))
        assert str(err.value) == "claim dra/c got allocated elsewhere in the meantime"


async def test_an_allocator_error_aborts_the_cycle(tmp_path: Path,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    """Upstream's Filter Error: no node is tried further, the pod goes to backoff and the
    error, not a FitError (``0/N nodes are available``), is reported: the FailedScheduling
    event and the PodScheduled condition (reason SchedulerError) say it, as upstream's
    handleSchedulingFailure does."""
    async with server(tmp_path) as client:
        for name in ("n1", "n2"):
            await client.create(fake_node(name))
        broken = codec.to_builtins(device_class("broken"))
        broken["spec"]["selectors"] = [{"cel": {"expression":
                                                'device.attributes["x.example.com"].size > 1'}}]
        await create(client, codec.decode(broken, v1.DeviceClass))
        await create(client, slice_("n1", 1))
        await create(client, claim("c", exactly("gpu", cls="broken")))
        sched = build_scheduler(client, release=R1_34, seed=1)
        task = asyncio.create_task(sched.run())
        try:
            with caplog.at_level("INFO", logger="kubedra.scheduler.scheduler"):
                await create(client, pod("p", "c"))

                async def retried() -> list[Any]:
                    return [r.args for r in caplog.records
                            if r.msg == "Error scheduling pod; retrying"]
                (args, *_) = await eventually("the error", retried)
            assert isinstance(args, dict)
            assert args["err"].startswith(
                'running "DynamicResources" filter plugin: class broken: selector #0 on device '
                f"{DRIVER}/n1/gpu-0: CEL runtime error: "), args

            async def reported() -> list[Event]:
                return [e for e in (await client.list(Event, NS)).items
                        if e.reason == "FailedScheduling"]
            (event, *_) = await eventually("the error reported", reported)
            assert event.message == args["err"]

            async def condition() -> list[tuple[str | None, str | None]]:
                return [(c.reason, c.message) for c in
                        (await client.get(Pod, "p", NS)).status.conditions or ()
                        if c.type == "PodScheduled"]
            assert await eventually("the condition", condition) == [
                ("SchedulerError", args["err"])]
            assert (await client.get(Pod, "p", NS)).spec.node_name is None
        finally:
            await cancel_and_wait(task)
            await sched.informers.stop()


async def test_post_filter_deallocates_an_allocation_for_another_node(tmp_path: Path) -> None:
    async with server(tmp_path) as client:
        await create(client, claim("c"))
        body = codec.to_builtins(await client.get(v1.ResourceClaim, "c", NS))
        body["status"] = {"allocation": {
            "devices": {"results": [
                {"request": "gpu", "driver": DRIVER, "pool": "gone", "device": "gpu-0"}]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": ["gone"]}]}]}}}
        stored = await client.update_status(codec.decode(body, v1.ResourceClaim))
        plugin = DynamicResources(state_of(stored), DeviceClaimWriter(client))
        cycle, p = CycleState(), pod("p", "c")
        assert plugin.pre_filter(cycle, p).ok
        status = plugin.filter(cycle, p, info(fake_node("n1")))
        assert status.message == "resourceclaim not available on the node"
        result = await plugin.post_filter(cycle, p, Diagnosis())
        assert result.message == "deallocation of ResourceClaim completed"
        after = await client.get(v1.ResourceClaim, "c", NS)
        assert after.status.allocation is None and not after.status.reserved_for


# --- DynamicResourcesArgs -------------------------------------------------------------------


def config(args: dict[str, Any] | None) -> str:
    entry = "  - name: DynamicResources\n" + (
        "    args:\n" + "".join(f"      {k}: {v}\n" for k, v in args.items())
        if args is not None else "")
    return ("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
            "profiles:\n- schedulerName: default-scheduler\n  pluginConfig:\n" + entry)


@pytest.mark.parametrize(("args", "seconds"), [
    (None, 10.0), ({"filterTimeout": "0s"}, 0.0), ({"filterTimeout": "1m30s"}, 90.0),
    ({"filterTimeout": "10ms"}, 0.01), ({"kind": "DynamicResourcesArgs"}, 10.0)])
def test_filter_timeout_of_a_1_34_scheduler(args: dict[str, Any] | None,
                                            seconds: float) -> None:
    (profile,) = resolve(decode(config(args)), IMPLEMENTS, R1_34).profiles
    assert profile.dra_filter_timeout == seconds


@pytest.mark.parametrize(("args", "text"), [
    ({"filterTimeout": "-1500ms"}, 'profiles[0].pluginConfig[0].args.filterTimeout: Invalid '
                                   'value: "-1.5s": must be zero or positive'),
    ({"filterTimeout": "soon"}, 'time: invalid duration "soon"'),
    ({"bindingTimeout": "1s"}, 'strict decoding error: unknown field "bindingTimeout"')])
def test_bad_dynamic_resources_args(args: dict[str, Any], text: str) -> None:
    with pytest.raises(ConfigError) as err:
        resolve(decode(config(args)), IMPLEMENTS, R1_34)
    assert str(err.value) == text


def test_a_1_30_scheduler_takes_no_dynamic_resources_args() -> None:
    with pytest.raises(ConfigError) as err:
        resolve(decode(config({"filterTimeout": "1s"})), IMPLEMENTS, R1_30)
    assert "pluginConfig[0].args" in str(err.value)
    (profile,) = resolve(decode(config(None)), IMPLEMENTS, R1_30).profiles
    assert profile.points["filter"][-1] == "DynamicResources"

"""The driver's ResourceSlice controller against a real 1.34 API server (in-process, SQLite):
what a driver publishes appears as v1 ResourceSlices (8 and 128 devices, one or several
slices, node-local with the Node as owner, or for all nodes / a node selector); new devices
bring a new pool generation and the old slices go; a slice someone else deletes or edits is
put back; a refused slice is reported and retried until the driver publishes a valid one;
a removed pool is deleted; stopping ends every task."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from kubedra.api import codec, kinds
from kubedra.api.core import Node, NodeSelector
from kubedra.api.features import FeatureGates
from kubedra.api.release import R1_34
from kubedra.api.resource import v1
from kubedra.apiserver.app import Options
from kubedra.client.errors import ApiError
from kubedra.client.rest import Client
from kubedra.driver.resourceslices import (
    DriverResources,
    DroppedFieldsError,
    Owner,
    Pool,
    ResourceSliceController,
    Slice,
)
from tests.conformance.scheduler_support import api_client
from tests.unit.driver.helpers import blocks

DRIVER = "gpu.example.com"
NODE = "worker-1"


@contextlib.asynccontextmanager
async def cluster(tmp_path: Path) -> AsyncIterator[tuple[Client, Node]]:
    """A 1.34 API server with one Node."""
    async with api_client(tmp_path, Options(gates=FeatureGates.for_release(R1_34),
                                            gc=False)) as client:
        found = kinds.lookup("nodes", R1_34)
        assert found is not None
        await client.create_raw(found, {"apiVersion": "v1", "kind": "Node",
                                        "metadata": {"name": NODE}})
        yield client, await client.get(Node, NODE)


def devices(n: int, prefix: str = "gpu") -> list[v1.Device]:
    return [v1.Device(name=f"{prefix}-{i}", attributes={
        "index": v1.DeviceAttribute(int_=i), "model": v1.DeviceAttribute(string="a100")})
        for i in range(n)]


def pool_of(devs: list[v1.Device], per_slice: int, **kw: Any) -> Pool:
    return Pool(slices=[Slice(devices=devs[i:i + per_slice])
                        for i in range(0, len(devs), per_slice)], **kw)


async def slices(client: Client, driver: str = DRIVER) -> list[v1.ResourceSlice]:
    return (await client.list(v1.ResourceSlice,
                              field_selector=f"spec.driver={driver}")).items


async def eventually(what: str, check: Callable[[], Any], timeout: float = 30) -> Any:
    """Poll ``await check()`` until it is truthy."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        got = await check()
        if got:
            return got
        assert asyncio.get_running_loop().time() < deadline, f"timed out: {what}"
        await asyncio.sleep(0.05)


def published(count: int, generation: int, names: set[str] | None = None,
              driver: str = DRIVER) -> Callable[[Client], Any]:
    """A check: the driver's slices are ``count`` slices of ``generation`` (with exactly the
    device ``names``)."""
    async def check(client: Client) -> list[v1.ResourceSlice] | None:
        got = await slices(client, driver)
        if len(got) != count or any(s.spec.pool.generation != generation for s in got):
            return None
        if names is not None and {d.name for s in got for d in s.spec.devices} != names:
            return None
        return got
    return check


@pytest.mark.parametrize(("count", "per_slice"), [(8, 8), (128, 128), (128, 32)])
async def test_node_local_devices_are_published_with_the_node_as_owner(
        tmp_path: Path, count: int, per_slice: int) -> None:
    async with cluster(tmp_path) as (client, node):
        resources = DriverResources(pools={NODE: pool_of(devices(count), per_slice)})
        async with ResourceSliceController(client, DRIVER, Owner.node(NODE),
                                           resources=resources):
            want = count // per_slice
            check = published(want, 1, {f"gpu-{i}" for i in range(count)})
            got = await eventually("slices published", lambda: check(client))
    for s in got:
        assert s.metadata.generate_name == f"{NODE}-{DRIVER}-"
        assert s.metadata.name.startswith(f"{NODE}-{DRIVER}-")
        assert codec.to_builtins(s.metadata.owner_references) == [{
            "apiVersion": "v1", "kind": "Node", "name": NODE, "uid": node.metadata.uid,
            "controller": True}]
        assert (s.spec.driver, s.spec.node_name, s.spec.all_nodes) == (DRIVER, NODE, None)
        assert codec.to_builtins(s.spec.pool) == {
            "name": NODE, "generation": 1, "resourceSliceCount": want}
        assert len(s.spec.devices) == per_slice
    first = next(s for s in got if s.spec.devices[0].name == "gpu-0")
    assert codec.to_builtins(first.spec.devices[0].attributes) == {
        "index": {"int": 0}, "model": {"string": "a100"}}


async def test_new_devices_bring_a_new_generation_and_the_old_slices_go(
        tmp_path: Path) -> None:
    async with cluster(tmp_path) as (client, _):
        seen: list[tuple[str, int]] = []  # (event, generation) as a watcher sees them

        async def watch() -> None:
            async for event in client.watch(v1.ResourceSlice, timeout_seconds=60):
                seen.append((event.type, event.object.spec.pool.generation))

        watcher = asyncio.create_task(watch())
        controller = ResourceSliceController(
            client, DRIVER, Owner.node(NODE),
            resources=DriverResources(pools={NODE: pool_of(devices(8), 4)}))
        try:
            async with controller:
                await eventually("generation 1", lambda: published(2, 1)(client))
                controller.publish_resources(DriverResources(pools={
                    NODE: pool_of(devices(12, "tpu"), 4)}))
                await eventually("generation 2", lambda: published(
                    3, 2, {f"tpu-{i}" for i in range(12)})(client))
        finally:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher
    assert (controller.stats.creates, controller.stats.deletes) == (5, 2)
    # as upstream orders it: the obsolete slices are deleted, then the new ones created
    deleted = [i for i, e in enumerate(seen) if e == ("DELETED", 1)]
    added = [i for i, e in enumerate(seen) if e == ("ADDED", 2)]
    assert (len(deleted), len(added)) == (2, 3), seen
    assert max(deleted) < min(added), seen


async def test_a_slice_deleted_or_edited_by_someone_else_is_put_back(
        tmp_path: Path) -> None:
    async with cluster(tmp_path) as (client, _):
        names = {f"gpu-{i}" for i in range(8)}
        resources = DriverResources(pools={NODE: pool_of(devices(8), 4)})
        async with ResourceSliceController(client, DRIVER, Owner.node(NODE),
                                           resources=resources, sync_delay=0.2):
            before = await eventually("published", lambda: published(2, 1, names)(client))
            gone = before[0]
            await client.delete(v1.ResourceSlice, gone.metadata.name)

            async def replaced() -> Any:
                got = await published(2, 2, names)(client)
                return got and gone.metadata.name not in {s.metadata.name for s in got}

            await eventually("deleted slice re-created", replaced)
            edited = (await slices(client))[0]
            edited.spec.devices = edited.spec.devices[:1]
            await client.update(edited)

            async def restored() -> Any:
                got = await slices(client)
                return (len(got) == 2 and {d.name for s in got for d in s.spec.devices} == names
                        and all(len(s.spec.devices) == 4 for s in got)
                        and len({s.spec.pool.generation for s in got}) == 1)

            await eventually("edited slice restored", restored)


async def test_pools_for_all_nodes_and_by_node_selector(tmp_path: Path) -> None:
    selector = codec.decode({"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "rack", "operator": "In", "values": ["r1"]}]}]}, NodeSelector)
    async with cluster(tmp_path) as (client, _):
        resources = DriverResources(pools={
            "shared": pool_of(devices(3, "nic"), 3),
            "rack-r1": pool_of(devices(2, "fpga"), 2, node_selector=selector)})
        async with ResourceSliceController(client, DRIVER, resources=resources):
            got = await eventually("published", lambda: published(2, 1)(client))
    by_pool = {s.spec.pool.name: s for s in got}
    shared, rack = by_pool["shared"], by_pool["rack-r1"]
    assert (shared.spec.all_nodes, shared.spec.node_name, shared.spec.node_selector) == (
        True, None, None)
    assert (rack.spec.all_nodes, rack.spec.node_name) == (None, None)
    assert rack.spec.node_selector == selector
    for s in got:
        assert s.metadata.generate_name == f"{DRIVER}-"
        assert s.metadata.owner_references is None


async def test_a_refused_slice_is_reported_and_retried_and_a_removed_pool_deleted(
        tmp_path: Path) -> None:
    errors: list[Exception] = []
    async with cluster(tmp_path) as (client, _):
        too_many = DriverResources(pools={NODE: pool_of(devices(129), 129)})
        controller = ResourceSliceController(
            client, DRIVER, Owner.node(NODE), resources=too_many,
            error_handler=lambda err, msg: errors.append(err))
        async with controller:
            async def retried() -> bool:
                return len(errors) >= 3
            await eventually("retries", retried)
            assert all(isinstance(e, ApiError) and e.code == 422 for e in errors), errors
            assert "must have at most 128 items" in str(errors[0])
            controller.publish_resources(DriverResources(pools={
                NODE: pool_of(devices(129), 64)}))
            await eventually("published", lambda: published(3, 1)(client))
            controller.publish_resources(DriverResources())
            await eventually("deleted", lambda: _none(client))
        assert controller.stats.deletes == 3
        with pytest.raises(ValueError, match="node selector"):
            controller.publish_resources(DriverResources(pools={NODE: Pool(
                node_selector=NodeSelector())}))


async def _none(client: Client) -> bool:
    return not await slices(client)


def _of_the_driver(task: asyncio.Task[Any]) -> bool:
    """A task of the driver SDK or of the client parts it runs (the in-process API server's
    compiled coroutines carry no code object and are not ours)."""
    coro = task.get_coro()
    code = getattr(coro, "cr_code", None)
    return ((code is not None and "kubedra/driver" in code.co_filename)
            or getattr(coro, "__qualname__", "").startswith(("WorkQueue", "Informer")))


async def test_stop_ends_every_task(tmp_path: Path) -> None:
    async with cluster(tmp_path) as (client, _):
        controller = ResourceSliceController(
            client, DRIVER, Owner.node(NODE),
            resources=DriverResources(pools={NODE: pool_of(devices(1), 1)}))
        await controller.start(20)
        await eventually("published", lambda: published(1, 1)(client))
        await controller.stop()
        assert controller._task is None
        ours = [t for t in asyncio.all_tasks() if _of_the_driver(t)]
        assert ours == []
        assert controller.stats.creates == 1


async def test_the_doc_example_publishes_its_gpus(tmp_path: Path) -> None:
    """docs/driver-sdk.md's ResourceSlice example, as written."""
    namespace: dict[str, Any] = {}
    exec(compile(blocks("python")[2], "publish.py", "exec"), namespace)
    async with cluster(tmp_path) as (client, _):
        controller = await namespace["publish"](client, NODE)
        try:
            check = published(1, 1, {f"gpu-{i}" for i in range(8)}, "mygpu.example.com")
            await eventually("published", lambda: check(client))
            controller.publish_resources(namespace["gpus"](4))
            check = published(1, 1, {f"gpu-{i}" for i in range(4)}, "mygpu.example.com")
            (got,) = await eventually("updated in place", lambda: check(client))
        finally:
            await controller.stop()
    assert (got.spec.pool.name, got.spec.node_name) == ("gpus", NODE)


async def test_fields_the_server_drops_are_reported_once_not_updated_forever(
        tmp_path: Path) -> None:
    """1.34 serves device taints only with the DRADeviceTaints gate (alpha, off)."""
    errors: list[Exception] = []
    tainted = devices(2)
    tainted[1].taints = [v1.DeviceTaint(key="broken", effect=v1.TAINT_EFFECT_NO_SCHEDULE)]
    async with cluster(tmp_path) as (client, _):
        controller = ResourceSliceController(
            client, DRIVER, Owner.node(NODE),
            resources=DriverResources(pools={NODE: pool_of(tainted, 2)}),
            error_handler=lambda err, msg: errors.append(err))
        async with controller:
            (got,) = await eventually("published", lambda: published(1, 1)(client))
            assert got.spec.devices[1].taints is None
            await controller.sync_pool(NODE)
    assert (controller.stats.creates, controller.stats.updates) == (1, 0)
    assert [type(e).__name__ for e in errors] == ["DroppedFieldsError"]
    assert str(errors[0]) == (
        f'pool "{NODE}", slice #0: some fields were dropped by the apiserver, probably '
        "because these features are disabled: DRADeviceTaints")


async def test_a_sync_before_the_informer_shows_new_slices_creates_no_second_copy(
        tmp_path: Path) -> None:
    async with cluster(tmp_path) as (client, _):
        controller = ResourceSliceController(
            client, DRIVER, Owner.node(NODE),
            resources=DriverResources(pools={NODE: pool_of(devices(8), 4)}))
        controller.informer.start()
        await controller.informer.wait_synced(20)
        await controller.informer.stop()  # it shows none of the writes below
        await controller.sync_pool(NODE)
        await controller.sync_pool(NODE)
        assert (controller.stats.creates, controller.stats.updates) == (2, 0)
        assert len(await slices(client)) == 2


def test_dropped_fields_name_the_gates_they_need() -> None:
    def slice_of(device: v1.Device, **spec: Any) -> v1.ResourceSlice:
        return v1.ResourceSlice(spec=v1.ResourceSliceSpec(devices=[device], **spec))

    want = slice_of(v1.Device(name="d", allow_multiple_allocations=True,
                              binding_conditions=["ready"]), per_device_node_selection=True)
    got = slice_of(v1.Device(name="d"))
    assert DroppedFieldsError("p", 2, want, got).disabled_features() == [
        "DRAPartitionableDevices", "DRADeviceBindingConditions", "DRAConsumableCapacity"]
    assert str(DroppedFieldsError("p", 2, got, got)) == (
        'pool "p", slice #2: some fields were dropped by the apiserver, probably because '
        "these features are disabled: unknown")


async def test_an_informer_that_gives_up_is_reported_and_restarted(tmp_path: Path) -> None:
    errors: list[Exception] = []
    async with cluster(tmp_path) as (client, _):
        controller = ResourceSliceController(
            client, DRIVER, Owner.node(NODE), sync_delay=0.2,
            resources=DriverResources(pools={NODE: pool_of(devices(4), 4)}),
            error_handler=lambda err, msg: errors.append(err))
        informer = controller.informer
        informer.max_failures = 1
        watch_once = informer._watch_once
        broken = [True]

        async def fails_once() -> None:
            if broken.pop() if broken else False:
                raise RuntimeError("cannot decode event")
            await watch_once()

        informer._watch_once = fails_once  # type: ignore[method-assign]
        async with controller:
            async def reported() -> bool:
                return bool(errors)
            await eventually("failure reported", reported)
            assert "cannot decode event" in str(errors[0])
            (gone,) = await eventually("published", lambda: published(1, 1)(client))
            await client.delete(v1.ResourceSlice, gone.metadata.name)

            async def recreated() -> bool:
                got = await published(1, 1)(client)  # no slice left: generation 1 again
                return bool(got) and got[0].metadata.name != gone.metadata.name

            await eventually("re-created after the restart", recreated)

"""v1-resourceslice-controller.json: the driver's ResourceSlice controller
(DRA resourceslice/resourceslicecontroller_test.go TestControllerSyncPool) against a real
1.34 API server: the case's existing slices are created through the API, the controller's
informer lists them, one ``sync_pool`` runs, and then its API calls are counted and the
slices the server holds compared with the expected ones (``updated``: its resourceVersion
moved; ``generateName``: created by the controller).

Upstream's table runs against a fake client that validates nothing, and its test attribute
``new-attribute`` is no valid attribute name (a C identifier): a real server refuses it, so
attribute names are sent, and expected, with ``_`` for ``-``."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from kubedra.api import codec
from kubedra.api.features import FeatureGates
from kubedra.api.release import R1_34
from kubedra.api.resource import v1
from kubedra.apiserver.app import Options
from kubedra.client.rest import Client
from kubedra.driver.resourceslices import (
    DriverResources,
    Owner,
    Pool,
    ResourceSliceController,
    Slice,
)
from tests.conformance.scheduler_support import api_client
from tests.vectors import load, vector_cases

FILE = "v1-resourceslice-controller.json"
DATA = load(FILE)
SETUP = DATA["setup"]
GATES = FeatureGates.for_release(R1_34)
SYNC_DELAY = 3600.0  # only the sync under test runs


@contextlib.asynccontextmanager
async def server(tmp_path: Path) -> AsyncIterator[Client]:
    async with api_client(tmp_path, Options(gates=GATES, gc=False)) as client:
        yield client


def valid_names(devices: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**d, "attributes": {k.replace("-", "_"): a for k, a in d["attributes"].items()}}
            if "attributes" in d else d for d in devices]


def desired(raw: dict[str, Any]) -> DriverResources:
    return DriverResources(pools={
        name: Pool(
            slices=[Slice(devices=[codec.decode(d, v1.Device) for d in valid_names(s["devices"])])
                    for s in pool.get("slices") or []],
            generation=pool.get("generation", 0))
        for name, pool in raw["pools"].items()})


async def create_existing(client: Client, raw: dict[str, Any]) -> v1.ResourceSlice:
    defaults = SETUP["sliceDefaults"]
    body = {"apiVersion": v1.API_VERSION, "kind": "ResourceSlice",
            "metadata": {"name": raw["name"],
                         "ownerReferences": defaults["metadata.ownerReferences"]},
            "spec": {"driver": defaults["spec.driver"], "nodeName": defaults["spec.nodeName"],
                     "pool": raw["pool"], "devices": valid_names(raw["devices"])}}
    return await client.create(codec.decode(body, v1.ResourceSlice))


def matches(expect: dict[str, Any], got: v1.ResourceSlice,
            versions: dict[str, str | None]) -> bool:
    meta, spec = got.metadata, got.spec
    if "name" in expect:
        if meta.name != expect["name"]:
            return False
        if expect.get("updated", False) != (versions[expect["name"]] != meta.resource_version):
            return False
    elif meta.generate_name != expect["generateName"] or meta.name in versions:
        return False
    return (codec.to_builtins(spec.pool) == expect["pool"]
            and codec.to_builtins(spec.devices) == valid_names(expect["devices"]))


@vector_cases(FILE, DATA["cases"])
async def test_v1_resourceslice_controller(case: dict[str, Any], tmp_path: Path) -> None:
    owner = SETUP["owner"]
    async with server(tmp_path) as client:
        existing = [await create_existing(client, raw) for raw in case["existing"]]
        versions = {s.metadata.name or "": s.metadata.resource_version for s in existing}
        controller = ResourceSliceController(
            client, SETUP["driverName"],
            Owner(owner["apiVersion"], owner["kind"], owner["name"], owner["uid"]),
            resources=desired(case["desired"]), sync_delay=SYNC_DELAY)
        controller.informer.start()
        try:
            await controller.informer.wait_synced(20)
            pools = {s.spec.pool.name for s in existing} | set(case["desired"]["pools"])
            for pool in sorted(pools):
                await controller.sync_pool(pool)
        finally:
            await controller.informer.stop()

        stats = case["expectStats"]
        assert (controller.stats.creates, controller.stats.updates, controller.stats.deletes) \
            == (stats.get("creates", 0), stats.get("updates", 0), stats.get("deletes", 0))
        stored = (await client.list(v1.ResourceSlice)).items
        assert len(stored) == len(case["expectSlices"]), [s.metadata.name for s in stored]
        unmatched = list(stored)
        for expect in case["expectSlices"]:
            found = next((s for s in unmatched if matches(expect, s, versions)), None)
            assert found is not None, (expect, [codec.to_builtins(s) for s in unmatched])
            unmatched.remove(found)
        for s in stored:
            assert s.spec.driver == SETUP["driverName"]
            assert s.spec.node_name == owner["name"] and s.spec.all_nodes is None
            refs = codec.to_builtins(s.metadata.owner_references)
            assert refs == SETUP["sliceDefaults"]["metadata.ownerReferences"]

"""v1-alloc-stable.json: upstream's TestAllocator rows on the devices-model allocator with
real CEL (``kubedra.allocation.deviceallocator`` over ``model.devicecel``).

Results compare as upstream's ConsistOf (a multiset per claim), ``config`` in order, a
``nodeSelector``'s requirement lists as sets; ``errorContains`` is a substring of the error.
Upstream runs its stable variant only on rows whose features it supports; ours supports them
all, so every row runs with its own features.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from kubedra.allocation.deviceallocator import AllocationError, DeviceAllocator
from kubedra.allocation.features import Features
from kubedra.allocation.model.devicecel import cel_device_selectors
from kubedra.api.codec import decode, to_builtins
from kubedra.api.core import Node
from kubedra.api.resource.v1 import DeviceClass, ResourceClaim, ResourceSlice
from tests.vectors import load, vector_cases

CASES = load("v1-alloc-stable.json")["cases"]
FEATURES = {"AdminAccess": "admin_access", "PrioritizedList": "prioritized_list",
            "PartitionableDevices": "partitionable_devices", "DeviceTaints": "device_taints",
            "DeviceBinding": "device_binding", "DeviceStatus": "device_status",
            "ConsumableCapacity": "consumable_capacity"}
SELECTORS = cel_device_selectors()


def _allocate(case: dict[str, Any]) -> Any:
    features = Features(**{FEATURES[k]: v for k, v in case["features"].items()})
    classes = {c["metadata"]["name"]: decode(c, DeviceClass) for c in case["classes"]}
    slices = [decode(s, ResourceSlice) for s in case["slices"]]
    claims = [decode(c, ResourceClaim) for c in case["claims"]]
    node = None if case["node"] is None else decode(
        {"metadata": {"name": case["node"]["name"], "labels": case["node"].get("labels")}},
        Node)
    allocated = {tuple(d.split("/")) for d in case["allocatedDevices"]}
    allocator = DeviceAllocator(features, allocated, classes, slices, SELECTORS)
    results = allocator.allocate(node, claims)
    return None if results is None else [to_builtins(r) for r in results]


def _comparable(result: dict[str, Any]) -> Any:
    devices = result.get("devices", {})
    selector = result.get("nodeSelector")
    terms = None if selector is None else [
        {k: sorted((r["key"], r["operator"], tuple(sorted(r.get("values") or ())))
                   for r in term.get(k) or ())
         for k in ("matchExpressions", "matchFields")}
        for term in selector["nodeSelectorTerms"]]
    results = Counter(tuple(sorted(r.items())) for r in devices.get("results") or ())
    return {"results": results, "config": devices.get("config") or [], "nodeSelector": terms}


@vector_cases("v1-alloc-stable.json", CASES)
def test_allocate(case: dict[str, Any]) -> None:
    expect = case["expect"]
    if "errorContains" in expect:
        with pytest.raises(AllocationError) as err:
            _allocate(case)
        assert expect["errorContains"] in str(err.value)
        return
    got = _allocate(case)
    if expect["results"] is None:
        assert got is None
        return
    assert got is not None
    assert [_comparable(r) for r in got] == [_comparable(r) for r in expect["results"]]

"""The 1.34 pod-claim checks (DynamicResources PreFilter and Filter of 1.34), upstream's texts."""

from __future__ import annotations

from typing import Any

import pytest

from kubedra.allocation.deviceallocator import AllocationError
from kubedra.allocation.features import Features
from kubedra.allocation.podclaims import (
    CANNOT_ALLOCATE,
    IN_USE,
    NOT_AVAILABLE,
    Unschedulable,
    device_node_reason,
    prepare_devices,
)
from kubedra.api.codec import decode
from kubedra.api.core import Node, Pod
from kubedra.api.resource.v1 import AllocationResult, DeviceClass, ResourceClaim

POD = decode({"metadata": {"name": "p", "namespace": "default", "uid": "uid-p"}}, Pod)
CLASSES = {"gpu": decode({"metadata": {"name": "gpu"}}, DeviceClass)}
ON = Features(prioritized_list=True)


def claim(*requests: dict[str, Any], status: dict[str, Any] | None = None) -> ResourceClaim:
    return decode({"metadata": {"name": "c", "namespace": "default"},
                   "spec": {"devices": {"requests": list(requests)}}, "status": status or {}},
                  ResourceClaim)


def node(name: str) -> Node:
    return decode({"metadata": {"name": name}}, Node)


def exact(cls: str = "gpu") -> dict[str, Any]:
    return {"name": "r", "exactly": {"deviceClassName": cls}}


def subs(*classes: str) -> dict[str, Any]:
    return {"name": "r", "firstAvailable": [{"name": f"s{i}", "deviceClassName": c}
                                            for i, c in enumerate(classes)]}


@pytest.mark.parametrize(("request_", "features", "text"), [
    (exact("nope"), ON, "request r: device class nope does not exist"),
    (subs("gpu", "nope"), ON, "request r/s1: device class nope does not exist"),
    (subs("gpu"), Features(), "resource claim default/c, request r: has subrequests, but the "
                              "DRAPrioritizedList feature is disabled"),
    ({"name": "r"}, ON, "resource claim default/c, request r: unknown request type"),
])
def test_prefilter_texts(request_: dict[str, Any], features: Features, text: str) -> None:
    with pytest.raises(Unschedulable) as err:
        prepare_devices(POD, [claim(request_)], CLASSES, features)
    assert err.value.message == text and err.value.unresolvable


def test_in_flight_and_in_use() -> None:
    with pytest.raises(Unschedulable) as err:
        prepare_devices(POD, [claim(exact())], CLASSES, ON, in_flight=lambda c: True)
    assert err.value.message == ("resource claim default/c is in the process of being "
                                 "allocated")
    # a v1 claim can always be reserved (1.34 has no shareable): never "in use"
    allocated = claim(exact(), status={"allocation": {"devices": {"results": []}},
                                       "reservedFor": [{"resource": "pods", "name": "o",
                                                        "uid": "uid-o"}]})
    assert prepare_devices(POD, [allocated], CLASSES, ON).to_allocate == []
    assert IN_USE == "resourceclaim in use"


def test_filter_allocates_first_then_checks_the_allocated_claims() -> None:
    pinned = {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}
    held = claim(exact(), status={"allocation": {"devices": {"results": []},
                                                 "nodeSelector": pinned}})
    plan = prepare_devices(POD, [held, claim(exact())], CLASSES, ON)

    def fails() -> list[AllocationResult] | None:
        raise AllocationError("pool p is invalid: duplicate device name d")

    assert device_node_reason(plan, node("n2"), lambda: None) == CANNOT_ALLOCATE
    assert device_node_reason(plan, node("n2"), fails) == \
        "pool p is invalid: duplicate device name d"
    assert device_node_reason(plan, node("n2"), lambda: []) == NOT_AVAILABLE
    assert device_node_reason(plan, node("n1"), lambda: []) is None

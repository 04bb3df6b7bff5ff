"""The 1.34 pod-claim checks (DynamicResources PreFilter and Filter of 1.34), upstream's texts."""

from __future__ import annotations

from typing import Any

import pytest

from kubedra.allocation.deviceclaims import DeviceClaims
from kubedra.allocation.devicepod import CANNOT_ALLOCATE, NOT_AVAILABLE, DevicePlan
from kubedra.allocation.features import Features
from kubedra.allocation.model.devicecel import cel_device_selectors
from kubedra.allocation.podclaims import Unschedulable, prepare_devices
from kubedra.api.codec import decode
from kubedra.api.core import Node, Pod
from kubedra.api.resource.v1 import DeviceClass, ResourceClaim, ResourceSlice

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
    return {"name": "r", "exactly": {"deviceClassName": cls, "allocationMode": "ExactCount",
                                     "count": 1}}


def prepare(claims: list[ResourceClaim], features: Features = ON,
            state: DeviceClaims | None = None,
            slices: list[ResourceSlice] | None = None) -> DevicePlan:
    return prepare_devices(POD, claims, CLASSES, state or DeviceClaims(), slices or [],
                           cel_device_selectors(), features)


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
        prepare([claim(request_)], features)
    assert err.value.message == text and err.value.unresolvable


def test_in_flight_and_in_use() -> None:
    state = DeviceClaims()
    pending = claim(exact())
    state.set_in_flight(pending)
    with pytest.raises(Unschedulable) as err:
        prepare([pending], state=state)
    assert err.value.message == ("resource claim default/c is in the process of being "
                                 "allocated")
    # a v1 claim can always be reserved (1.34 has no shareable): never "resourceclaim in use"
    allocated = claim(exact(), status={"allocation": {"devices": {"results": []}},
                                       "reservedFor": [{"resource": "pods", "name": "o",
                                                        "uid": "uid-o"}]})
    assert prepare([allocated]).allocator is None


def test_filter_allocates_first_then_checks_the_allocated_claims() -> None:
    pinned = {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}
    held = claim(exact(), status={"allocation": {"devices": {"results": []},
                                                 "nodeSelector": pinned}})
    held.metadata.name = "held"
    gpu = decode({"metadata": {"name": "s"}, "spec": {
        "driver": "d", "allNodes": True, "pool": {"name": "p", "resourceSliceCount": 1},
        "devices": [{"name": "gpu-0"}]}}, ResourceSlice)
    plan = prepare([held, claim(exact())], slices=[gpu])
    assert plan.node_reason(node("n2")) == NOT_AVAILABLE
    assert plan.node_reason(node("n1")) is None
    taken = prepare([held, claim({"name": "r", "exactly": {"deviceClassName": "gpu",
                                                           "count": 2,
                                                           "allocationMode": "ExactCount"}})],
                    slices=[gpu])
    assert taken.node_reason(node("n2")) == CANNOT_ALLOCATE  # allocation is asked first

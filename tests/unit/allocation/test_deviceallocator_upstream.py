"""Rows of upstream's TestAllocator (kubernetes/dynamic-resource-allocation
``structured/internal/allocatortesting/allocator_testing.go``) beyond v1-alloc-stable.json,
on the devices allocator with real CEL; each case is named after its upstream row.

Transcribed: ``All`` with other claims, admin access, prioritized lists, network-attached
devices, constraints, unknown types, invalid CEL and the result limit. Left out: the rows of
the alpha features kubedra's allocator does not implement (partitionable devices, consumable
capacity, binding conditions), and rows whose expectation changed after 1.34 (config entries
naming every request collapse to none in later releases; 1.34 keeps them). Results compare as
upstream's ``ConsistOf`` per claim.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubedra.allocation.deviceallocator import AllocationError, DeviceAllocator
from kubedra.allocation.features import Features
from kubedra.allocation.model.devicecel import cel_device_selectors
from kubedra.api.codec import decode
from kubedra.api.core import Node
from kubedra.api.resource.v1 import DeviceClass, ResourceClaim, ResourceSlice

A, B = "driver-a", "driver-b"
SELECTORS = cel_device_selectors()


def node(name: str = "node-1", region: str = "region-1") -> Node:
    return decode({"metadata": {"name": name, "labels": {"region": region, "planet": "earth"}}},
                  Node)


def dev(name: str = "device-1", memory: str | None = None, **attrs: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name}
    if memory is not None:
        out["capacity"] = {"memory": {"value": memory}}
    if attrs:
        out["attributes"] = {k: (v if isinstance(v, dict) else {"bool": v}
                                 if isinstance(v, bool) else {"int": v} if isinstance(v, int)
                                 else {"string": v})
                             for k, v in attrs.items()}
    return out


def sl(name: str, pool: str, driver: str, *devices: dict[str, Any], on: Any = "node-1",
       count: int = 1) -> ResourceSlice:
    spec: dict[str, Any] = {"driver": driver, "devices": list(devices),
                            "pool": {"name": pool, "generation": 1, "resourceSliceCount": count}}
    if on == "all":
        spec["allNodes"] = True
    elif isinstance(on, dict):
        spec["nodeSelector"] = on
    else:
        spec["nodeName"] = on
    return decode({"metadata": {"name": name}, "spec": spec}, ResourceSlice)


def region(value: str) -> dict[str, Any]:
    return {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "region", "operator": "In", "values": [value]}]}]}


def cls(name: str, driver: str, expr: str | None = None) -> DeviceClass:
    expr = expr or f'device.driver == "{driver}"'
    return decode({"metadata": {"name": name}, "spec": {"selectors": [{"cel": {
        "expression": expr}}]}}, DeviceClass)


def mem(quantity: str) -> str:
    return f'device.capacity["{A}"].memory.compareTo(quantity("{quantity}")) >= 0'


def _body(cls_: str, count: int, exprs: tuple[str, ...], mode: str) -> dict[str, Any]:
    body: dict[str, Any] = {"deviceClassName": cls_, "allocationMode": mode, "count": count}
    if exprs:
        body["selectors"] = [{"cel": {"expression": e}} for e in exprs]
    return body


def req(name: str, cls_: str = "class-a", count: int = 1, *exprs: str, mode: str = "ExactCount",
        admin: bool | None = None) -> dict[str, Any]:
    body = _body(cls_, count, exprs, mode)
    if admin is not None:
        body["adminAccess"] = admin
    return {"name": name, "exactly": body}


def sub(name: str, cls_: str = "class-a", count: int = 1, *exprs: str,
        mode: str = "ExactCount") -> dict[str, Any]:
    return {"name": name, **_body(cls_, count, exprs, mode)}


def first(name: str, *subs: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "firstAvailable": list(subs)}


def clm(name: str, *requests: dict[str, Any], constraints: list[dict[str, Any]] | None = None,
        ) -> ResourceClaim:
    devices: dict[str, Any] = {"requests": list(requests)}
    if constraints:
        devices["constraints"] = constraints
    return decode({"metadata": {"name": name}, "spec": {"devices": devices}}, ResourceClaim)


def match(attribute: str, *requests: str) -> dict[str, Any]:
    out: dict[str, Any] = {"matchAttribute": f"{A}/{attribute}"}
    if requests:
        out["requests"] = list(requests)
    return out


def r(request: str, device: str = "device-1", pool: str = "pool-1", driver: str = A,
      admin: bool = False) -> tuple[str, str, str, str, bool]:
    return (request, driver, pool, device, admin)


CLASS_A, CLASS_B = cls("class-a", A), cls("class-b", B)
ONE_A = sl("slice-1", "pool-1", A, dev())
TWO_A = sl("slice-1", "pool-1", A, dev("device-1"), dev("device-2"))
ONE_B = sl("slice-1", "pool-1", B, dev())
ALL_OF_A = clm("claim-0", req("req-0", mode="All", count=0))
ONE_OF_B = clm("claim-1", req("req-0", "class-b"))
ADMIN = Features(admin_access=True)
LIST = Features(prioritized_list=True)
V1, V2 = {"version": "1.0.0"}, {"version": "2.0.0"}

# name: (features, classes, slices, allocated, claims, expected results per claim | None | error)
ROWS: dict[str, tuple[Features, list[DeviceClass], list[ResourceSlice], list[str],
                      list[ResourceClaim], Any]] = {
    "small-and-large": (Features(), [CLASS_A], [sl("slice-1", "pool-1", A, dev("device-1", "1Gi"),
                                                   dev("device-2", "2Gi"))], [],
                        [clm("claim-0", req("req-0", "class-a", 1, mem("1Gi")),
                             req("req-1", "class-a", 1, mem("2Gi")))],
                        [[r("req-0"), r("req-1", "device-2")]]),
    "small-and-large-backtrack-claims": (
        Features(), [CLASS_A], [sl("slice-1", "pool-1", A, dev("device-2", "2Gi"),
                                   dev("device-1", "1Gi"))], [],
        [clm("claim-0", req("req-0", "class-a", 1, mem("1Gi"))),
         clm("claim-1", req("req-1", "class-a", 1, mem("2Gi")))],
        [[r("req-0")], [r("req-1", "device-2")]]),
    "devices-split-across-different-slices": (
        Features(), [CLASS_A], [ONE_A, sl("slice-2", "pool-2", A, dev())], [],
        [clm("claim-0", req("req-0", "class-a", 2))],
        [[r("req-0"), r("req-0", pool="pool-2")]]),
    "no-slices": (Features(), [CLASS_A], [], [], [clm("claim-0", req("req-0"))], None),
    "no-classes": (Features(), [], [ONE_A], [], [clm("claim-0", req("req-0"))],
                   "could not retrieve device class class-a"),
    "unknown-class": (Features(), [CLASS_A], [ONE_A], [],
                      [clm("claim-0", req("req-0", "unknown-class"))],
                      "could not retrieve device class unknown-class"),
    "all-devices-single": (Features(), [CLASS_A], [ONE_A], [],
                           [clm("claim-0", req("req-0", mode="All", count=0))], [[r("req-0")]]),
    "all-devices-many": (Features(), [CLASS_A], [ONE_A, sl("slice-1", "pool-2", A, dev())], [],
                         [clm("claim-0", req("req-0", mode="All", count=0))],
                         [[r("req-0"), r("req-0", pool="pool-2")]]),
    "all-devices-plus-another": (
        Features(), [CLASS_A, CLASS_B], [ONE_A, ONE_B], [],
        [ALL_OF_A, ONE_OF_B],
        [[r("req-0")], [r("req-0", driver=B)]]),
    "all-devices-plus-another-reversed": (
        Features(), [CLASS_A, CLASS_B], [ONE_A, ONE_B], [],
        [ONE_OF_B, ALL_OF_A],
        [[r("req-0", driver=B)], [r("req-0")]]),
    "all-devices-many-plus-another": (
        Features(), [CLASS_A, CLASS_B], [TWO_A, ONE_B], [],
        [ALL_OF_A, ONE_OF_B],
        [[r("req-0"), r("req-0", "device-2")], [r("req-0", driver=B)]]),
    "all-devices-many-plus-another-reversed": (
        Features(), [CLASS_A, CLASS_B], [TWO_A, ONE_B], [],
        [ONE_OF_B, ALL_OF_A],
        [[r("req-0", driver=B)], [r("req-0"), r("req-0", "device-2")]]),
    "all-devices-no-solution": (
        Features(), [CLASS_A], [ONE_A], [],
        [clm("claim-1", req("req-0")), clm("claim-0", req("req-0", mode="All", count=0))], None),
    "all-devices-no-solution-reversed": (
        Features(), [CLASS_A], [ONE_A], [],
        [clm("claim-0", req("req-0", mode="All", count=0)), clm("claim-1", req("req-0"))], None),
    "all-devices-slice-without-devices": (
        Features(), [CLASS_A], [sl("slice-1", "pool-1", A)], [],
        [clm("claim-0", req("req-0", mode="All", count=0))], None),
    "all-devices-no-slices": (Features(), [CLASS_A], [], [],
                              [clm("claim-0", req("req-0", mode="All", count=0))], None),
    "all-devices-some-allocating-admin-access": (
        ADMIN, [CLASS_A], [TWO_A], [],
        [clm("claim-0", req("req-0", admin=True), req("req-1", mode="All", count=0, admin=True))],
        None),
    "count-devices-some-allocated-admin-access": (
        ADMIN, [CLASS_A], [TWO_A], ["driver-a/pool-1/device-1"],
        [clm("claim-0", req("req-0", "class-a", 2, admin=True))],
        [[r("req-0", admin=True), r("req-0", "device-2", admin=True)]]),
    "separate-claims-share-device-admin-access": (
        ADMIN, [CLASS_A], [TWO_A], [],
        [clm("claim-0", req("req-0", admin=True)), clm("claim-1", req("req-0", admin=True))],
        [[r("req-0", admin=True)], [r("req-0", admin=True)]]),
    "admin-access-claims-device-allocating-for-non-admin-access": (
        ADMIN, [CLASS_A], [TWO_A], [],
        [clm("claim-0", req("req-0")), clm("claim-1", req("req-0", admin=True))],
        [[r("req-0")], [r("req-0", admin=True)]]),
    "admin-access-enabled": (
        ADMIN, [CLASS_A], [ONE_A], ["driver-a/pool-1/device-1", "driver-a/pool-1/device-2"],
        [clm("claim-0", req("req-0", admin=True))], [[r("req-0", admin=True)]]),
    "already-allocated-devices": (
        Features(), [CLASS_A], [ONE_A], ["driver-a/pool-1/device-1", "driver-a/pool-1/device-2"],
        [clm("claim-0", req("req-0"))], None),
    "all-devices-slice-without-devices-prioritized-list": (
        LIST, [CLASS_A, CLASS_B], [sl("slice-1", "pool-1", A), sl("slice-2", "pool-2", B, dev())],
        [], [clm("claim-0", first("req-0", sub("subReq-0", mode="All", count=0),
                                  sub("subReq-1", "class-b")))],
        [[r("req-0/subReq-1", pool="pool-2", driver=B)]]),
    "all-devices-no-slices-prioritized-list": (
        LIST, [CLASS_A, CLASS_B], [sl("slice-2", "pool-2", B, dev())], [],
        [clm("claim-0", first("req-0", sub("subReq-0", mode="All", count=0),
                              sub("subReq-1", "class-b")))],
        [[r("req-0/subReq-1", pool="pool-2", driver=B)]]),
    "all-devices-some-allocated-prioritized-list": (
        LIST, [CLASS_A, CLASS_B], [TWO_A, sl("slice-2", "pool-2", B, dev())],
        ["driver-a/pool-1/device-1"],
        [clm("claim-0", first("req-0", sub("subReq-0", mode="All", count=0),
                              sub("subReq-1", "class-b")))],
        [[r("req-0/subReq-1", pool="pool-2", driver=B)]]),
    "network-attached-device": (
        Features(), [CLASS_A], [sl("slice-1", "pool-1", A, dev(), on=region("region-1"))], [],
        [clm("claim-0", req("req-0"))], [[r("req-0")]]),
    "unsuccessful-allocation-network-attached-device": (
        Features(), [CLASS_A], [sl("slice-1", "pool-1", A, dev(), on=region("region-1"))], [],
        [clm("claim-0", req("req-0"))], None),
    "several-different-drivers": (
        Features(), [CLASS_A, CLASS_B], [TWO_A, ONE_B], [],
        [clm("claim-0", req("req-0")), clm("claim-0", req("req-0", "class-b"))],
        [[r("req-0")], [r("req-0", driver=B)]]),
    "with-constraint-non-existent-attribute": (
        Features(), [CLASS_A], [ONE_A], [],
        [clm("claim-0", req("req-0"), constraints=[match("NonExistentAttribute")])], None),
    "with-constraint-not-matching-int-attribute": (
        Features(), [CLASS_A], [sl("slice-1", "pool-1", A, dev("device-1", numa=1),
                                   dev("device-2", numa=2))], [],
        [clm("claim-0", req("req-0", "class-a", 2), constraints=[match("numa")])], None),
    "with-constraint-not-matching-string-attribute": (
        Features(), [CLASS_A], [sl("slice-1", "pool-1", A, dev("device-1", s="a"),
                                   dev("device-2", s="b"))], [],
        [clm("claim-0", req("req-0", "class-a", 2), constraints=[match("s")])], None),
    "with-constraint-not-matching-bool-attribute": (
        Features(), [CLASS_A], [sl("slice-1", "pool-1", A, dev("device-1", b=True),
                                   dev("device-2", b=False))], [],
        [clm("claim-0", req("req-0", "class-a", 2), constraints=[match("b")])], None),
    "with-constraint-not-matching-version-attribute": (
        Features(), [CLASS_A], [sl("slice-1", "pool-1", A, dev("device-1", driverVersion=V1),
                                   dev("device-2", driverVersion=V2))], [],
        [clm("claim-0", req("req-0", "class-a", 2), constraints=[match("driverVersion")])], None),
    "with-constraint-for-request": (
        Features(), [CLASS_A], [sl("slice-1", "pool-1", A, dev("device-1", driverVersion=V1),
                                   dev("device-2", driverVersion=V2))], [],
        [clm("claim-0", req("req-0"), req("req-1"),
             constraints=[match("driverVersion", "req-0")])],
        [[r("req-0"), r("req-1", "device-2")]]),
    "unknown-selector": (
        Features(), [CLASS_A], [ONE_A], [],
        [decode({"metadata": {"name": "claim-0"}, "spec": {"devices": {"requests": [
            {"name": "req-0", "exactly": {"deviceClassName": "class-a", "count": 1,
                                          "allocationMode": "ExactCount",
                                          "selectors": [{}]}}]}}}, ResourceClaim)],
        "CEL expression empty (unsupported selector type?)"),
    "unknown-allocation-mode": (Features(), [CLASS_A], [ONE_A], [],
                                [clm("claim-0", req("req-0", mode="future-mode"))],
                                "unsupported count mode future-mode"),
    "unknown-constraint": (Features(), [CLASS_A], [ONE_A], [],
                           [clm("claim-0", req("req-0"), constraints=[{}])],
                           "empty constraint (unsupported constraint type?)"),
    "invalid-CEL-one-device": (Features(), [CLASS_A], [ONE_A], [],
                               [clm("claim-0", req("req-0", "class-a", 1, "noSuchVar"))],
                               "undeclared reference"),
    "invalid-CEL-one-device-class": (Features(), [cls("class-a", A, "noSuchVar")], [ONE_A], [],
                                     [clm("claim-0", req("req-0"))], "undeclared reference"),
    "invalid-CEL-all-devices": (
        Features(), [CLASS_A], [ONE_A], [],
        [clm("claim-0", req("req-0", "class-a", 0, "noSuchVar", mode="All"))],
        "undeclared reference"),
    "too-many-devices-total": (
        Features(), [CLASS_A], [sl("slice-1", "pool-1", A, *[dev(f"device-{i}")
                                                             for i in range(33)])], [],
        [clm("claim-0", req("req-0", "class-a", 32), req("req-1"))], "exceeds the claim limit"),
    "prioritized-list-non-available": (
        LIST, [CLASS_A, CLASS_B], [ONE_A, sl("slice-2", "pool-2", B, dev())], [],
        [clm("claim-0", first("req-0", sub("subReq-0", "class-b", 2),
                              sub("subReq-1", "class-a", 2)))], None),
    "prioritized-list-subrequests-with-expressions": (
        LIST, [CLASS_A], [sl("slice-1", "pool-1", A, dev("device-1", "2Gi"),
                             dev("device-2", "2Gi"), dev("device-3", "1Gi"))], [],
        [clm("claim-0", req("req-0", "class-a", 1, mem("1Gi")),
             first("req-1", sub("subReq-0", "class-a", 1, mem("4Gi")),
                   sub("subReq-1", "class-a", 2, mem("2Gi"))))],
        [[r("req-0", "device-3"), r("req-1/subReq-1"), r("req-1/subReq-1", "device-2")]]),
    "prioritized-list-subrequests-with-constraints-ref-parent-request": (
        LIST, [CLASS_A], [sl("slice-1", "pool-1", A, dev("device-1", "8Gi", driverVersion=V1)),
                          sl("slice-2", "pool-2", A, dev("device-2", "2Gi", driverVersion=V2),
                             dev("device-3", "1Gi", driverVersion=V1))], [],
        [clm("claim-0", req("req-0", "class-a", 1, mem("8Gi")),
             first("req-1", sub("subReq-0", "class-a", 1, mem("2Gi")),
                   sub("subReq-1", "class-a", 1, mem("1Gi"))),
             constraints=[match("driverVersion", "req-0", "req-1")])],
        [[r("req-0"), r("req-1/subReq-1", "device-3", "pool-2")]]),
    "prioritized-list-subrequests-with-constraints-ref-sub-request": (
        LIST, [CLASS_A], [sl("slice-1", "pool-1", A, dev("device-1", "8Gi", driverVersion=V1)),
                          sl("slice-2", "pool-2", A, dev("device-2", "2Gi", driverVersion=V2))],
        [],
        [clm("claim-0", req("req-0", "class-a", 1, mem("8Gi")),
             first("req-1", sub("subReq-0", "class-a", 1, mem("2Gi")),
                   sub("subReq-1", "class-a", 1, mem("1Gi"))),
             constraints=[match("driverVersion", "req-0", "req-1/subReq-0")])],
        [[r("req-0"), r("req-1/subReq-1", "device-2", "pool-2")]]),
    "prioritized-list-subrequests-with-allocation-mode-all": (
        LIST, [CLASS_A], [TWO_A], ["driver-a/pool-1/device-1"],
        [clm("claim-0", first("req-0", sub("subReq-0", mode="All", count=0), sub("subReq-1")))],
        [[r("req-0/subReq-1", "device-2")]]),
    "prioritized-list-allocation-mode-all-multiple-requests": (
        LIST, [CLASS_A], [TWO_A], [],
        [clm("claim-0", req("req-0"), first("req-1", sub("subReq-0", mode="All", count=0),
                                            sub("subReq-1")))],
        [[r("req-0"), r("req-1/subReq-1", "device-2")]]),
    "prioritized-list-multi-request": (
        LIST, [CLASS_A], [sl("slice-1", "pool-1", A, dev("device-1", "8Gi")),
                          sl("slice-2", "pool-2", A, dev("device-2", "4Gi"))], [],
        [clm("claim-0", req("req-1", "class-a", 1, mem("8Gi")),
             first("req-0", sub("subReq-0", "class-a", 1, mem("8Gi")),
                   sub("subReq-1", "class-a", 1, mem("4Gi"))))],
        [[r("req-1"), r("req-0/subReq-1", "device-2", "pool-2")]]),
    "prioritized-list-too-many-in-first-subrequest": (
        LIST, [CLASS_A, CLASS_B], [ONE_A], [],
        [clm("claim-0", first("req-0", sub("subReq-0", "class-b", 500), sub("subReq-1")))],
        [[r("req-0/subReq-1")]]),
}

NODES = {"unsuccessful-allocation-network-attached-device": node("node-2", "region-2")}


@pytest.mark.parametrize("row", sorted(ROWS))
def test_upstream_row(row: str) -> None:
    features, classes, slices, allocated, claims, expect = ROWS[row]
    allocator = DeviceAllocator(features, {tuple(a.split("/")) for a in allocated},
                                {c.metadata.name or "": c for c in classes}, slices, SELECTORS)
    if isinstance(expect, str):
        with pytest.raises(AllocationError) as err:
            allocator.allocate(NODES.get(row, node()), claims)
        assert expect in str(err.value)
        return
    got = allocator.allocate(NODES.get(row, node()), claims)
    if expect is None:
        assert got is None
        return
    assert got is not None
    assert [sorted((x.request, x.driver, x.pool, x.device, bool(x.admin_access))
                   for x in a.devices.results or ()) for a in got] == [sorted(e) for e in expect]


def test_network_attached_device_keeps_the_slices_node_selector() -> None:
    """Upstream row ``network-attached-device``: the result's nodeSelector is the slice's."""
    features, classes, slices, _, claims, _ = ROWS["network-attached-device"]
    got = DeviceAllocator(features, set(), {c.metadata.name or "": c for c in classes}, slices,
                          SELECTORS).allocate(node(), claims)
    assert got is not None and got[0].node_selector is not None
    term = got[0].node_selector.node_selector_terms[0]
    assert term.match_fields is None and term.match_expressions is not None
    assert [(e.key, e.values) for e in term.match_expressions] == [("region", ["region-1"])]


def test_many_devices_okay() -> None:
    """Upstream row ``many-devices-okay``: 32 devices asked, none there, no node: no error."""
    claim = clm("claim-0", req("req-0", "class-a", 32))
    assert DeviceAllocator(Features(), set(), {"class-a": CLASS_A}, [], SELECTORS).allocate(
        None, [claim]) is None

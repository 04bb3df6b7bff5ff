"""The devices-model allocator: upstream's error texts, the rules of spec §8 that the vector
rows do not reach, the deadline, and instances where first fit with backtracking blows up."""

from __future__ import annotations

import time
from typing import Any

import pytest

from kubedra.allocation.deviceallocator import TIMED_OUT, AllocationError, AllocationTimeout
from kubedra.allocation.features import Features
from kubedra.allocation.model.devices import DeviceSelectors, claim_uses
from kubedra.api.features import FeatureGates
from kubedra.api.release import R1_34
from kubedra.api.resource.v1 import (
    AllocationResult,
    DeviceAllocationResult,
    DeviceRequestAllocationResult,
)
from tests.unit.allocation.devices_support import (
    NODE,
    PREDICATES,
    allocator,
    claim,
    device,
    device_class,
    exactly,
    first_available,
    slice_,
)

ANY = device_class("c")
NUMA = "example.com/numa"


def _devices(n: int, **attrs: Any) -> list[dict[str, Any]]:
    return [device(f"dev-{i}", **attrs) for i in range(n)]


def _picked(result: AllocationResult) -> list[tuple[str, str]]:
    return [(r.request, f"{r.pool}/{r.device}") for r in result.devices.results or ()]


def _error(slices: Any, classes: Any, claims: Any, features: Features | None = None) -> str:
    kwargs = {} if features is None else {"features": features}
    with pytest.raises(AllocationError) as err:
        allocator(slices, classes, **kwargs).allocate(NODE, claims)
    return str(err.value)


# --- pre-checks: upstream's texts, in its order ----------------------------------------------


@pytest.mark.parametrize(("request_", "text"), [
    ({"name": "r", "exactly": {"deviceClassName": "c", "allocationMode": "ExactCount",
                               "count": 1, "selectors": [{}]}},
     "claim default/cl, request r, selector #0: CEL expression empty (unsupported selector "
     "type?)"),
    (exactly("r", admin=False),
     "claim default/cl, request r: admin access is requested, but the feature is disabled"),
    (exactly("r", ""), "claim default/cl, request r: missing device class name (unsupported "
                       "request type?)"),
    (exactly("r", "nope"), 'claim default/cl, request r: could not retrieve device class nope: '
                           'deviceclass.resource.k8s.io "nope" not found'),
    (exactly("r", mode="Some"), "claim default/cl, request r: unsupported count mode Some"),
    (exactly("r", count=33), "claim default/cl: number of requested devices 33 exceeds the "
                             "claim limit of 32"),
    (first_available("r", exactly("a")), "claim default/cl, request r: has subrequests, but "
                                         "the DRAPrioritizedList feature is disabled"),
    (first_available("r", exactly("a"), exactly("b", "nope")),
     "claim default/cl, request b: could not retrieve device class nope"),
])
def test_request_checks(request_: dict[str, Any], text: str) -> None:
    features = Features(prioritized_list="/b" in text or "request b" in text)
    assert text in _error([slice_("s", "d0", "p", _devices(1))], [ANY],
                          [claim("cl", [request_])], features)


def test_constraint_without_match_attribute() -> None:
    c = claim("cl", [exactly("r")], [{"distinctAttribute": NUMA}])
    assert _error([], [ANY], [c]) == ("claim default/cl, constraint #0: empty constraint "
                                      "(unsupported constraint type?)")


def test_all_refuses_incomplete_and_invalid_pools() -> None:
    incomplete = slice_("s", "d0", "p", _devices(1), count=2)
    assert "resource pool d0/p is currently being updated" in _error(
        [incomplete], [ANY], [claim("cl", [exactly("r", mode="All")])])
    twice = [slice_("s1", "d0", "p", _devices(1), count=2),
             slice_("s2", "d0", "p", _devices(1), count=2)]
    assert _error(twice, [ANY], [claim("cl", [exactly("r", mode="All")])]) == (
        "claim default/cl, request r: asks for all devices, but resource pool d0/p is "
        "currently invalid")


def test_features_of_the_1_34_gates() -> None:
    assert Features.from_gates(FeatureGates.for_release(R1_34)) == Features(
        admin_access=True, prioritized_list=True, device_status=True)


# --- pools --------------------------------------------------------------------------------


def test_incomplete_pool_serves_exact_count() -> None:
    s = slice_("s", "d0", "p", _devices(1), count=2)
    got = allocator([s], [ANY]).allocate(NODE, [claim("cl", [exactly("r")])])
    assert got is not None and _picked(got[0]) == [("r", "p/dev-0")]


def test_invalid_pool_is_an_error_only_where_the_search_reaches_it() -> None:
    valid = slice_("s0", "d0", "a", _devices(1))
    invalid = [slice_("s1", "d0", "b", _devices(1), count=2),
               slice_("s2", "d0", "b", _devices(1), count=2)]
    got = allocator([valid, *invalid], [ANY]).allocate(NODE, [claim("cl", [exactly("r")])])
    assert got is not None and _picked(got[0]) == [("r", "a/dev-0")]
    assert _error([valid, *invalid], [ANY], [claim("cl", [exactly("r", count=2)])]) == (
        "pool b is invalid: duplicate device name dev-0")


def test_highest_generation_among_the_visible_slices() -> None:
    old = slice_("s1", "d0", "p", [device("old")], generation=1)
    newer_elsewhere = slice_("s2", "d0", "p", [device("new")], node="node-2", generation=2)
    got = allocator([old, newer_elsewhere], [ANY]).allocate(NODE, [claim("cl", [exactly("r")])])
    assert got is not None and _picked(got[0]) == [("r", "p/old")]


def test_node_selector_of_network_attached_devices() -> None:
    everywhere = slice_("s", "d0", "p", _devices(1), allNodes=True)
    got = allocator([everywhere], [ANY]).allocate(NODE, [claim("cl", [exactly("r")])])
    assert got is not None and got[0].node_selector is None
    labelled = slice_("s", "d0", "p", _devices(1), nodeSelector={"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1"]}]}]})
    got = allocator([labelled], [ANY]).allocate(NODE, [claim("cl", [exactly("r")])])
    assert got is not None and got[0].node_selector is not None
    term = got[0].node_selector.node_selector_terms[0]
    assert term.match_expressions is not None and term.match_expressions[0].key == "zone"
    other = slice_("s", "d0", "p", _devices(1), nodeSelector={"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z2"]}]}]})
    assert allocator([other], [ANY]).allocate(NODE, [claim("cl", [exactly("r")])]) is None


# --- selectors ------------------------------------------------------------------------------


def test_selector_errors_carry_upstreams_prefix() -> None:
    s = slice_("s", "d0", "p", [device("dev-0")])  # no "kind" attribute: evaluation fails
    assert _error([s], [device_class("k", "kind==a")], [claim("cl", [exactly("r", "k")])]) == (
        "class k: selector #0 on device d0/p/dev-0: CEL runtime error: no such key: kind")
    assert _error([s], [ANY], [claim("cl", [exactly("r", "c", 1, "kind==a")])]) == (
        "claim default/cl: selector #0 on device d0/p/dev-0: CEL runtime error: no such key: "
        "kind")
    assert _error([s], [device_class("k", "bogus")], [claim("cl", [exactly("r", "k")])]) == (
        "class k: selector #0: CEL compile error: unknown test selector 'bogus'")


def test_verdicts_are_kept_across_allocations() -> None:
    calls: list[str] = []

    def counting(expr: str) -> Any:
        fn = PREDICATES[expr]
        return lambda e: calls.append(e.key[2]) or fn(e)

    from kubedra.allocation.deviceallocator import DeviceAllocator

    slices = [slice_("s", "d0", "p", _devices(3, kind="a"))]
    selectors = DeviceSelectors(counting)
    for _ in range(3):
        DeviceAllocator(Features(), set(), {"k": device_class("k", "kind==a")}, slices,
                        selectors).allocate(NODE, [claim("cl", [exactly("r", "k", 3)])])
    assert sorted(calls) == ["dev-0", "dev-1", "dev-2"]


# --- admin access -----------------------------------------------------------------------------


def test_admin_access_ignores_other_claims_and_allocated_devices() -> None:
    s = slice_("s", "d0", "p", _devices(2))
    taker = claim("a", [exactly("r", count=1)])
    admin = claim("b", [exactly("r", count=2, admin=True)])
    got = allocator([s], [ANY], allocated={("d0", "p", "dev-1")}).allocate(NODE, [taker, admin])
    assert got is not None
    assert _picked(got[0]) == [("r", "p/dev-0")]
    assert _picked(got[1]) == [("r", "p/dev-0"), ("r", "p/dev-1")]
    assert [r.admin_access for r in got[1].devices.results or ()] == [True, True]
    # a non-admin request after an admin one of another claim may not share its device
    assert allocator([s], [ANY]).allocate(
        NODE, [claim("b", [exactly("r", count=2, admin=True)]),
               claim("a", [exactly("r", count=1)])]) is None


def test_admin_access_within_one_claim_takes_distinct_devices() -> None:
    s = slice_("s", "d0", "p", _devices(2))
    c = claim("cl", [exactly("r0", count=1), exactly("r1", count=2, admin=True)])
    assert allocator([s], [ANY]).allocate(NODE, [c]) is None


# --- firstAvailable and the result limit ------------------------------------------------------


def test_first_subrequest_that_admits_a_complete_allocation() -> None:
    s = slice_("s", "d0", "p", [device("big", kind="a", size=3), device("small", kind="b",
                                                                         size=1)])
    # r0 prefers "size>=2" (only "big"), r1 needs "big" too: r0 falls back to its second
    c = claim("cl", [first_available("r0", exactly("s0", "c", 1, "size>=2"),
                                     exactly("s1", "c", 1, "kind==b")),
                     exactly("r1", "c", 1, "kind==a")])
    got = allocator([s], [ANY]).allocate(NODE, [c])
    assert got is not None and _picked(got[0]) == [("r0/s1", "p/small"), ("r1", "p/big")]


def test_result_limit_picks_a_smaller_subrequest() -> None:
    s = slice_("s", "d0", "p", _devices(40))
    c = claim("cl", [exactly("r0", count=30),
                     first_available("r1", exactly("s0", count=5), exactly("s1", count=2))])
    got = allocator([s], [ANY]).allocate(NODE, [c])
    assert got is not None
    assert [r.request for r in got[0].devices.results or ()].count("r1/s1") == 2


def test_configuration_from_class_and_claim() -> None:
    opaque = {"opaque": {"driver": "d0", "parameters": {"x": 1}}}
    cls = device_class("c", config=[opaque])
    c = claim("cl", [exactly("r0"), first_available("r1", exactly("s0", "nope-first"),
                                                    exactly("s1"))],
              config=[{"requests": ["r1/s1"], **opaque}, {"requests": ["r0", "r1"], **opaque}])
    s = slice_("s", "d0", "p", _devices(2))
    classes = [cls, device_class("nope-first", "false")]
    got = allocator([s], classes).allocate(NODE, [c])
    assert got is not None
    config = [(e.source, e.requests) for e in got[0].devices.config or ()]
    assert config == [("FromClass", ["r0", "r1/s1"]), ("FromClaim", ["r1/s1"]),
                      ("FromClaim", ["r0", "r1"]), ("FromClaim", ["r0", "r1"])]


# --- matchAttribute -----------------------------------------------------------------------------


def _with(name: str, **attributes: int) -> dict[str, Any]:
    """A device whose attribute keys are given verbatim (``d0/numa``, ``numa``, ...)."""
    return {"name": name, "attributes": {k.replace("__", "/").replace("_", "."): {"int": v}
                                         for k, v in attributes.items()}}


def test_match_attribute_across_drivers_and_unqualified_names() -> None:
    # "numa" on a d0 device is d0/numa; d1's device has only the shared example.com/numa
    a = slice_("s0", "d0", "p0", [_with("x", d0__numa=1), _with("y", numa=1)])
    b = slice_("s1", "d1", "p1", [_with("z", example_com__numa=1)])
    own = claim("cl", [exactly("r0", count=2)], [{"matchAttribute": "d0/numa"}])
    got = allocator([a, b], [ANY]).allocate(NODE, [own])
    assert got is not None and _picked(got[0]) == [("r0", "p0/x"), ("r0", "p0/y")]
    across = claim("cl", [exactly("r0", "c", 1, "driver==d0"), exactly("r1")],
                   [{"matchAttribute": NUMA}])
    assert allocator([a, b], [ANY]).allocate(NODE, [across]) is None  # x, y lack the domain
    a = slice_("s0", "d0", "p0", [_with("x", d0__numa=1), _with("y", example_com__numa=1)])
    got = allocator([a, b], [ANY]).allocate(NODE, [across])
    assert got is not None and _picked(got[0]) == [("r0", "p0/y"), ("r1", "p1/z")]


def _numa_devices(groups: list[int]) -> list[dict[str, Any]]:
    out = []
    for i, numa in enumerate(groups):
        d = device(f"dev-{i:02}")
        d["attributes"] = {NUMA: {"int": numa}}
        out.append(d)
    return out


def test_constraint_that_defeats_backtracking_is_decided_at_once() -> None:
    """kubernetes/kubernetes#131730's shape: 9 devices sharing a value among 16 in two groups
    of 8. First fit with backtracking tries every 8-subset order of each group; here two
    groups x one matching each."""
    s = slice_("s", "d0", "p", _numa_devices([i % 2 for i in range(16)]))
    c = claim("cl", [exactly(f"r{i}") for i in range(9)], [{"matchAttribute": NUMA}])
    start = time.monotonic()
    assert allocator([s], [ANY]).allocate(NODE, [c]) is None
    assert time.monotonic() - start < 2


def test_group_is_switched_when_the_first_device_leads_nowhere() -> None:
    # dev-00 is numa 0, alone; the three others are numa 1: first fit's first pick is wrong
    s = slice_("s", "d0", "p", _numa_devices([0, 1, 1, 1]))
    c = claim("cl", [exactly("r0"), exactly("r1", count=2)], [{"matchAttribute": NUMA}])
    got = allocator([s], [ANY]).allocate(NODE, [c])
    assert got is not None
    assert _picked(got[0]) == [("r0", "p/dev-01"), ("r1", "p/dev-02"), ("r1", "p/dev-03")]


# --- the deadline -------------------------------------------------------------------------------


def test_deadline_ends_the_search_with_upstreams_text() -> None:
    s = slice_("s", "d0", "p", _devices(2))
    with pytest.raises(AllocationTimeout) as err:
        allocator([s], [ANY]).allocate(NODE, [claim("cl", [exactly("r")])],
                                       deadline=time.monotonic() - 1)
    assert str(err.value) == TIMED_OUT == "timed out trying to allocate devices"


# --- device taints (DRADeviceTaints) ----------------------------------------------------------


def test_device_taints_need_tolerations_with_the_feature() -> None:
    tainted = device("dev-0")
    tainted["taints"] = [{"key": "broken", "value": "yes", "effect": "NoSchedule"}]
    s = slice_("s", "d0", "p", [tainted])
    plain = claim("cl", [exactly("r")])
    tolerating = exactly("r")
    tolerating["exactly"]["tolerations"] = [{"key": "broken", "operator": "Exists"}]
    on = Features(device_taints=True)
    assert allocator([s], [ANY], features=Features()).allocate(NODE, [plain]) is not None
    assert allocator([s], [ANY], features=on).allocate(NODE, [plain]) is None
    got = allocator([s], [ANY], features=on).allocate(NODE, [claim("cl", [tolerating])])
    assert got is not None
    assert [t.key for t in got[0].devices.results[0].tolerations or ()] == ["broken"]


def test_claim_uses_leave_out_admin_access() -> None:
    held = claim("cl", [exactly("r")])
    held.status.allocation = AllocationResult(devices=DeviceAllocationResult(results=[
        DeviceRequestAllocationResult(request="r", driver="d0", pool="p", device="a"),
        DeviceRequestAllocationResult(request="r", driver="d0", pool="p", device="b",
                                      admin_access=True)]))
    assert claim_uses(held) == [("d0", "p", "a")]
    assert claim_uses(claim("cl", [exactly("r")])) == []


def test_slices_of_other_nodes_are_not_seen_and_input_order_is_kept() -> None:
    shared = slice_("s1", "d0", "p", [device("shared")], count=3, allNodes=True)
    local_a = slice_("s0", "d0", "p", [device("local-a")], count=3)
    local_b = slice_("s2", "d0", "p", [device("local-b")], count=3)
    elsewhere = slice_("s3", "d0", "q", [device("far")], node="node-2")
    got = allocator([local_a, shared, elsewhere, local_b], [ANY]).allocate(
        NODE, [claim("cl", [exactly("r", count=3)])])
    assert got is not None
    assert [d for _, d in _picked(got[0])] == ["p/local-a", "p/shared", "p/local-b"]


def test_all_request_under_a_constraint_leads_the_other_requests() -> None:
    # first fit gives r0 dev-0 (numa 0), then cannot add r1's dev-2 (numa 1): upstream's error;
    # the allocation r0 = dev-1 exists
    s = slice_("s", "d0", "p", [
        {"name": "dev-0", "attributes": {"kind": {"string": "b"}, NUMA: {"int": 0}}},
        {"name": "dev-1", "attributes": {"kind": {"string": "b"}, NUMA: {"int": 1}}},
        {"name": "dev-2", "attributes": {"kind": {"string": "a"}, NUMA: {"int": 1}}}])
    c = claim("cl", [exactly("r0", "c", 1, "kind==b"), exactly("r1", "c", 0, "kind==a",
                                                               mode="All")],
              [{"matchAttribute": NUMA}])
    got = allocator([s], [ANY]).allocate(NODE, [c])
    assert got is not None and _picked(got[0]) == [("r0", "p/dev-1"), ("r1", "p/dev-2")]


def test_cancellation_ends_the_search_with_its_cause() -> None:
    s = slice_("s", "d0", "p", _numa_devices([i % 2 for i in range(16)]))
    c = claim("cl", [exactly(f"r{i}") for i in range(9)], [{"matchAttribute": NUMA}])
    checks: list[int] = []

    def cancelled() -> str | None:
        checks.append(1)
        return "context canceled" if len(checks) > 2 else None

    with pytest.raises(AllocationError) as err:
        allocator([s], [ANY]).allocate(NODE, [c], cancelled=cancelled)
    assert str(err.value) == "filter operation aborted: context canceled"


def test_devices_with_counters_or_binding_conditions_are_never_chosen() -> None:
    counted = device("dev-0")
    counted["consumesCounters"] = [{"counterSet": "set", "counters": {"c": {"value": "1"}}}]
    bound = device("dev-1")
    bound["bindingConditions"] = ["ready"]
    s = slice_("s", "d0", "p", [counted, bound])
    every = Features(partitionable_devices=True, device_binding=True, device_status=True)
    for features in (Features(), every):
        assert allocator([s], [ANY], features=features).allocate(
            NODE, [claim("cl", [exactly("r")])]) is None

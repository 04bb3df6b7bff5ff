"""A pod's claims as the scheduler checks them: resolving the entries, the per-pod checks and
the node reason, and that the scheduler plugin and the simulator answer alike because both
use them."""

from __future__ import annotations

from typing import Any

import pytest

from kubedra.allocation import podclaims
from kubedra.allocation.engine import UNSUITABLE, NodeVerdict
from kubedra.allocation.index import AllocationIndex
from kubedra.allocation.model.parameters import ParameterStore
from kubedra.allocation.simulate import Simulator, Snapshot
from kubedra.api.codec import decode, decode_object
from kubedra.api.core import Node, Pod
from kubedra.api.resource.v1alpha2 import ResourceClaim, ResourceClass
from kubedra.scheduler.framework import CycleState, NodeInfo, Resources
from kubedra.scheduler.plugins.dynamicresources import DRAState, DynamicResources, feed
from tests.unit.allocation.helpers import selectors
from tests.unit.allocation.test_simulate import allocated, claim, node, rclass, rslice


def make_pod(*entries: dict[str, Any], statuses: list[dict[str, Any]] | None = None,
             uid: str = "uid-p") -> Pod:
    return decode({"metadata": {"name": "p", "namespace": "default", "uid": uid},
                   "spec": {"resourceClaims": list(entries)},
                   "status": {"resourceClaimStatuses": statuses} if statuses else {}}, Pod)


def direct(name: str) -> dict[str, Any]:
    return {"name": name, "source": {"resourceClaimName": name}}


def templated(name: str, template: str = "t") -> dict[str, Any]:
    return {"name": name, "source": {"resourceClaimTemplateName": template}}


def owned_claim(name: str, owner_uid: str) -> ResourceClaim:
    raw = claim(name)
    raw["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": "p",
                                           "uid": owner_uid, "controller": True}]
    return decode(raw, ResourceClaim)


def test_pod_claims_unnamed_entries_are_unschedulable() -> None:
    pod = make_pod(templated("b"))  # the controller has not made its claim yet
    with pytest.raises(podclaims.Unschedulable) as err:
        podclaims.pod_claims(pod, lambda ns, n: None)
    assert err.value.message == 'pod "default/p": ResourceClaim not created yet'
    assert err.value.unresolvable
    empty = make_pod({"name": "e", "source": {}})
    with pytest.raises(podclaims.Unschedulable, match="none of the supported fields are set"):
        podclaims.pod_claims(empty, lambda ns, n: None)


def test_pod_claims_checks_owner_deletion_and_existence() -> None:
    pod = make_pod(templated("b"), statuses=[{"name": "b", "resourceClaimName": "gen"}])
    not_needed = make_pod(templated("b"), templated("c"), statuses=[
        {"name": "b"}, {"name": "c", "resourceClaimName": ""}])
    assert podclaims.pod_claims(not_needed, lambda ns, n: None) == []
    mine, theirs = owned_claim("gen", "uid-p"), owned_claim("gen", "uid-other")
    assert podclaims.pod_claims(pod, lambda ns, n: mine) == [mine]
    with pytest.raises(podclaims.Unschedulable, match=r"ResourceClaim default/gen was not "
                       r"created for pod default/p \(pod is not owner\)"):
        podclaims.pod_claims(pod, lambda ns, n: theirs)
    with pytest.raises(podclaims.Unschedulable,
                       match=r'resourceclaim\.resource\.k8s\.io "gen" not found'):
        podclaims.pod_claims(pod, lambda ns, n: None)
    mine.metadata.deletion_timestamp = "2024-01-01T00:00:00Z"
    with pytest.raises(podclaims.Unschedulable, match='resourceclaim "gen" is being deleted'):
        podclaims.pod_claims(pod, lambda ns, n: mine)


def _prepare(pod: Pod, claims: list[ResourceClaim],
             classes: dict[str, ResourceClass]) -> podclaims.PodPlan:
    return podclaims.prepare(pod, claims, classes, AllocationIndex(), ParameterStore(),
                             selectors())


@pytest.mark.parametrize(("status", "cls", "message"), [
    ({"deallocationRequested": True}, rclass(), "resourceclaim must be reallocated"),
    (allocated("n1", "i0", reserved=["q"]), rclass(), "resourceclaim in use"),
    ({}, None, "resource class c does not exist"),
    ({}, rclass(structuredParameters=False),
     "resource class c does not use structured parameters; classic DRA needs a vendor "
     "control-plane controller, which is not supported"),
])
def test_prepare_rejections(status: dict[str, Any], cls: dict[str, Any] | None,
                            message: str) -> None:
    classes = {"c": decode(cls, ResourceClass)} if cls else {}
    with pytest.raises(podclaims.Unschedulable) as err:
        _prepare(make_pod(direct("a")), [decode(claim("a", status), ResourceClaim)], classes)
    assert (err.value.message, err.value.unresolvable) == (message, True)


def test_node_reason_order_class_filter_before_unavailable() -> None:
    zone_a = {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "zone", "operator": "In", "values": ["a"]}]}]}
    classes = {"c": decode(rclass(suitableNodes=zone_a), ResourceClass)}
    claims = [decode(claim("held", allocated("n1", "i0")), ResourceClaim),
              decode(claim("new"), ResourceClaim)]
    plan = _prepare(make_pod(direct("held"), direct("new")), claims, classes)
    assert not plan.only_pending
    n2_zone_b = decode({"metadata": {"name": "n2", "labels": {"zone": "b"}}}, Node)
    n2_zone_a = decode({"metadata": {"name": "n2", "labels": {"zone": "a"}}}, Node)
    assert podclaims.node_reason(plan, n2_zone_b, plan.allocator.filter) == \
        podclaims.CLASS_NODE_FILTER
    assert podclaims.node_reason(plan, n2_zone_a, plan.allocator.filter) == \
        UNSUITABLE  # nothing free on n2 for the new claim: the joint verdict
    fits = podclaims.node_reason(plan, n2_zone_a, lambda name: NodeVerdict(name, True))
    assert fits == podclaims.NOT_AVAILABLE  # and then the allocated claim is elsewhere
    assert plan.unavailable_on(n2_zone_a) == [0]


SNAPSHOT = [node("n1"), node("n2"), rslice("s1", "n1", 1), rslice("s2", "n2", 1), rclass(),
            claim("held", allocated("n1", "i0")), claim("pending")]


@pytest.mark.parametrize("claims", [["held"], ["pending"], ["held", "pending"], ["missing"]])
def test_scheduler_and_simulator_give_the_same_reasons(claims: list[str]) -> None:
    objects = [decode_object(raw) for raw in SNAPSHOT]
    pod = make_pod(*(direct(c) for c in claims))
    sim = Simulator(Snapshot.from_objects(objects), selectors())
    state = DRAState(selectors=selectors())
    feed(state, objects)
    plugin = DynamicResources(state)
    cycle = CycleState()
    status = plugin.pre_filter(cycle, pod)
    explanation = sim.explain(pod)
    if not status.ok:
        assert explanation.result == status.message
        return
    for n in (o for o in objects if isinstance(o, Node)):
        name = n.metadata.name or ""
        info = NodeInfo(n, name, n.metadata.labels or {}, Resources())
        got = plugin.filter(cycle, pod, info)
        want = next(e for e in explanation.nodes if e.node == name)
        assert (got.ok, got.message) == (want.suitable, want.reason)

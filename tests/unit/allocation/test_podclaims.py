"""A pod's claims: naming, ownership, reservations, the per-pod checks and the node reason,
and that the scheduler plugin and the simulator answer alike because both use them."""

from __future__ import annotations

from typing import Any

import pytest

from kubedra.allocation import podclaims
from kubedra.allocation.engine import UNSUITABLE, NodeVerdict
from kubedra.allocation.index import AllocationIndex
from kubedra.allocation.parameters import ParameterStore
from kubedra.allocation.simulate import Simulator, Snapshot
from kubedra.api.codec import decode, decode_object
from kubedra.api.core import Node, Pod
from kubedra.api.resource import ResourceClaim, ResourceClaimTemplate, ResourceClass
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


def test_claim_name_direct_template_and_errors() -> None:
    pod = make_pod(direct("a"), templated("b"), templated("c"),
                   statuses=[{"name": "b", "resourceClaimName": "p-b-x1"}, {"name": "c"}])
    entries = pod.spec.resource_claims or []
    assert podclaims.claim_name(pod, entries[0]) == ("a", False)
    assert podclaims.claim_name(pod, entries[1]) == ("p-b-x1", True)
    assert podclaims.claim_name(pod, entries[2]) == (None, True)  # recorded as not needed
    with pytest.raises(podclaims.Unschedulable, match='pod "default/p": ResourceClaim not '
                                                      "created yet"):
        podclaims.claim_name(make_pod(templated("b")), entries[1])
    empty = make_pod({"name": "e", "source": {}})
    with pytest.raises(podclaims.Unschedulable) as err:
        podclaims.claim_name(empty, (empty.spec.resource_claims or [])[0])
    assert err.value.message == ('pod "default/p", spec.resourceClaim "e": none of the '
                                 "supported fields are set")
    assert err.value.unresolvable


def test_pod_claims_checks_owner_deletion_and_existence() -> None:
    pod = make_pod(templated("b"), statuses=[{"name": "b", "resourceClaimName": "gen"}])
    not_needed = make_pod(templated("b"), templated("c"), statuses=[
        {"name": "b"}, {"name": "c", "resourceClaimName": ""}])
    assert podclaims.pod_claims(not_needed, lambda ns, n: None) == []
    mine, theirs = owned_claim("gen", "uid-p"), owned_claim("gen", "uid-other")
    assert podclaims.is_for_pod(pod, mine) and not podclaims.is_for_pod(pod, theirs)
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


def test_reservations_and_consumer() -> None:
    pod = make_pod(direct("a"))
    free = decode(claim("a", allocated("n1", "i0")), ResourceClaim)
    used = decode(claim("a", allocated("n1", "i0", reserved=["q"])), ResourceClaim)
    shared = decode(claim("a", allocated("n1", "i0", shareable=True, reserved=["q"])),
                    ResourceClaim)
    assert podclaims.can_be_reserved(free) and podclaims.can_be_reserved(shared)
    assert not podclaims.can_be_reserved(used)
    assert not podclaims.can_be_reserved(decode(claim("a"), ResourceClaim))  # unallocated
    assert not podclaims.is_reserved_for_pod(pod, used)
    ref = podclaims.consumer_ref(pod)
    assert (ref.resource, ref.name, ref.uid, ref.api_group) == ("pods", "p", "uid-p", "")


def test_claim_from_template_owned_annotated_and_named() -> None:
    pod = make_pod(templated("gpu"))
    template = decode({"metadata": {"name": "t", "namespace": "default"},
                       "spec": {"metadata": {"labels": {"a": "b"},
                                             "annotations": {"x": "y"}},
                                "spec": {"resourceClassName": "c"}}}, ResourceClaimTemplate)
    made = podclaims.claim_from_template(pod, "gpu", template)
    assert made.metadata.generate_name == "p-gpu-" and made.metadata.name is None
    assert made.metadata.annotations == {"x": "y", podclaims.POD_CLAIM_NAME_ANNOTATION: "gpu"}
    assert made.metadata.labels == {"a": "b"}
    assert podclaims.is_for_pod(pod, made)
    assert made.spec.resource_class_name == "c"
    named = podclaims.claim_from_template(pod, "gpu", template, name="fixed")
    assert (named.metadata.name, named.metadata.generate_name) == ("fixed", None)


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

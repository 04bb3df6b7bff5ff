"""The DynamicResources plugin's shortcuts give the same answers as the full path: reused
Filter verdicts, the claim-user index behind claim events."""

from __future__ import annotations

from kubedra.api.codec import decode
from kubedra.api.core import Pod
from kubedra.api.resource import (
    ResourceClaim,
    ResourceClaimParameters,
    ResourceClass,
    ResourceSlice,
)
from kubedra.client.informer import Informers
from kubedra.scheduler.cache import SchedulerCache
from kubedra.scheduler.framework import CycleState, NodeInfo
from kubedra.scheduler.plugins.dynamicresources import DRAState, DynamicResources, feed
from kubedra.scheduler.setup import ClaimUsers
from kubedra.testing import fake_node


def cluster(nodes: int, instances: int) -> DRAState:
    state = DRAState()
    feed(state, [decode({"metadata": {"name": "c"}, "driverName": "d",
                         "structuredParameters": True}, ResourceClass)])
    for n in range(nodes):
        feed(state, [decode({"metadata": {"name": f"s{n}"}, "nodeName": f"n{n}",
                             "driverName": "d", "namedResources": {"instances": [
                                 {"name": f"i{i}"} for i in range(instances)]}},
                            ResourceSlice)])
    return state


def pod_with_claim(i: int, state: DRAState) -> Pod:
    claim = decode({"metadata": {"name": f"c{i}", "namespace": "ns", "uid": f"cu{i}",
                                 "resourceVersion": "1"},
                    "spec": {"resourceClassName": "c"}}, ResourceClaim)
    state.set_claim(claim)
    return decode({"metadata": {"name": f"p{i}", "namespace": "ns", "uid": f"pu{i}"},
                   "spec": {"resourceClaims": [{"name": "r", "source": {
                       "resourceClaimName": f"c{i}"}}]}}, Pod)


def node(name: str) -> NodeInfo:
    cache = SchedulerCache()
    cache.set_node(fake_node(name))
    return cache.nodes[name]


def test_reused_verdict_follows_pool_changes() -> None:
    state = cluster(1, 1)
    plugin = DynamicResources(state)
    n0 = node("n0")
    first = CycleState()
    assert plugin.pre_filter(first, pod_with_claim(0, state)).ok
    assert plugin.filter(first, pod_with_claim(0, state), n0).ok
    assert plugin.reserve(first, pod_with_claim(0, state), "n0").ok  # takes the only instance
    second = CycleState()
    other = pod_with_claim(1, state)
    assert plugin.pre_filter(second, other).ok
    status = plugin.filter(second, other, n0)
    assert status.message == "resourceclaim cannot be allocated for the node (unsuitable)"
    plugin.unreserve(first, pod_with_claim(0, state), "n0")  # the instance is free again
    third = CycleState()
    assert plugin.pre_filter(third, other).ok
    assert plugin.filter(third, other, n0).ok


def test_reused_verdict_follows_an_allocation_that_leaves_the_pool_free() -> None:
    """The node still has a free instance after the first pod's allocation, but not one its
    selector accepts: the next pod asking the same thing is told so, not the old verdict."""
    state = DRAState()
    feed(state, [decode({"metadata": {"name": "c"}, "driverName": "d",
                         "structuredParameters": True}, ResourceClass),
                 decode({"metadata": {"name": "s0"}, "nodeName": "n0", "driverName": "d",
                         "namedResources": {"instances": [
                             {"name": "i0", "attributes": [{"name": "model", "string": "a"}]},
                             {"name": "i1", "attributes": [{"name": "model", "string": "b"}]},
                         ]}}, ResourceSlice),
                 decode({"metadata": {"name": "wants-a", "namespace": "ns"},
                         "driverRequests": [{"driverName": "d", "requests": [
                             {"namedResources": {
                                 "selector": 'attributes.string["model"] == "a"'}}]}]},
                        ResourceClaimParameters)])

    def pod(i: int) -> Pod:
        state.set_claim(decode({
            "metadata": {"name": f"c{i}", "namespace": "ns", "uid": f"cu{i}",
                         "resourceVersion": "1"},
            "spec": {"resourceClassName": "c", "parametersRef": {
                "apiGroup": "resource.k8s.io", "kind": "ResourceClaimParameters",
                "name": "wants-a"}}}, ResourceClaim))
        return decode({"metadata": {"name": f"p{i}", "namespace": "ns", "uid": f"pu{i}"},
                       "spec": {"resourceClaims": [{"name": "r", "source": {
                           "resourceClaimName": f"c{i}"}}]}}, Pod)

    plugin, n0 = DynamicResources(state), node("n0")
    first, second = CycleState(), CycleState()
    p0, p1 = pod(0), pod(1)
    assert plugin.pre_filter(first, p0).ok and plugin.filter(first, p0, n0).ok
    assert plugin.pre_filter(second, p1).ok and plugin.filter(second, p1, n0).ok  # cached
    assert plugin.reserve(first, p0, "n0").ok  # takes i0; i1 stays free
    third = CycleState()
    assert plugin.pre_filter(third, p1).ok
    assert not plugin.filter(third, p1, n0).ok


def test_claim_users_index_follows_pod_updates() -> None:
    informers = Informers(None)  # type: ignore[arg-type]  # handlers only
    users = ClaimUsers(informers)
    pods = informers.get(Pod)
    template_pod = decode({"metadata": {"name": "p", "namespace": "ns"}, "spec": {
        "resourceClaims": [{"name": "r", "source": {"resourceClaimTemplateName": "t"}},
                           {"name": "s", "source": {"resourceClaimName": "shared"}}]}}, Pod)
    pods._emit_add(template_pod)
    assert users.of("ns", "shared") == {"ns/p"} and users.of("ns", "p-r-x") == set()
    recorded = decode({"metadata": {"name": "p", "namespace": "ns"},
                       "spec": {"resourceClaims": [{"name": "r", "source": {
                           "resourceClaimTemplateName": "t"}}]},
                       "status": {"resourceClaimStatuses": [
                           {"name": "r", "resourceClaimName": "p-r-x"}]}}, Pod)
    pods._emit_update(template_pod, recorded)
    assert users.of("ns", "p-r-x") == {"ns/p"} and users.of("ns", "shared") == set()
    pods._emit_delete(recorded)
    assert users.of("ns", "p-r-x") == set()


def test_structured_claim_without_requests_fits_any_node() -> None:
    state = cluster(1, 0)  # not even a free instance
    feed(state, [
        decode({"metadata": {"name": "none", "namespace": "ns"}, "driverRequests": []},
               ResourceClaimParameters),
        decode({"metadata": {"name": "c0", "namespace": "ns", "uid": "cu0",
                             "resourceVersion": "1"},
                "spec": {"resourceClassName": "c", "parametersRef": {
                    "apiGroup": "resource.k8s.io", "kind": "ResourceClaimParameters",
                    "name": "none"}}}, ResourceClaim)])
    pod = decode({"metadata": {"name": "p0", "namespace": "ns", "uid": "pu0"},
                  "spec": {"resourceClaims": [{"name": "r", "source": {
                      "resourceClaimName": "c0"}}]}}, Pod)
    plugin, cycle = DynamicResources(state), CycleState()
    assert plugin.pre_filter(cycle, pod).ok
    assert plugin.filter(cycle, pod, node("n0")).ok

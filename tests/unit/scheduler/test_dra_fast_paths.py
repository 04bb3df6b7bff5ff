"""The DynamicResources plugin's shortcuts give the same answers as the full path: reused
Filter verdicts, the claim-user index behind claim events."""

from __future__ import annotations

import dataclasses
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from kubedra.allocation.podclaims import pod_claims, prepare
from kubedra.api import codec
from kubedra.api.codec import decode
from kubedra.api.core import Node, Pod
from kubedra.api.resource.v1alpha2 import (
    ResourceClaim,
    ResourceClaimParameters,
    ResourceClass,
    ResourceSlice,
)
from kubedra.client.informer import Informers
from kubedra.scheduler.cache import SchedulerCache
from kubedra.scheduler.framework import SKIP, Code, CycleState, Diagnosis, NodeInfo
from kubedra.scheduler.plugins.dynamicresources import (
    NAME,
    DRAState,
    DynamicResources,
    DynamicResourcesPacking,
    feed,
)
from kubedra.scheduler.scheduler import Scheduler
from kubedra.scheduler.setup import ClaimUsers, default_profile
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


def test_the_nodes_known_to_fit_follow_every_change() -> None:
    """Filter passes a cycle's ``passing`` nodes without a look: each must be a node where
    a fresh allocator fits the pod's claims, whatever was reserved, released or republished
    since the pod that found it."""
    rng = random.Random(5)
    state = DRAState()
    feed(state, [decode({"metadata": {"name": "c"}, "driverName": "d",
                         "structuredParameters": True}, ResourceClass)])
    names = [f"n{k}" for k in range(6)]

    def publish(n: str) -> None:
        feed(state, [decode({"metadata": {"name": f"s-{n}"}, "nodeName": n,
                             "driverName": "d", "namedResources": {"instances": [
                                 {"name": f"i{i}"} for i in range(rng.randint(0, 2))]}},
                            ResourceSlice)])

    for n in names:
        publish(n)
    plugin = DynamicResources(state)
    held: list[tuple[CycleState, Pod, str]] = []
    carried = 0
    for i in range(300):
        if rng.random() < 0.05:
            publish(rng.choice(names))
        pod, cycle_state, name = pod_with_claim(i, state), CycleState(), rng.choice(names)
        assert plugin.pre_filter(cycle_state, pod).ok
        cycle = cycle_state[NAME]
        carried += sum(n in cycle.passing for n in names)
        fits = plugin.filter(cycle_state, pod, node(name)).ok
        fresh = prepare(pod, pod_claims(pod, state.lookup), state.classes, state.index,
                        state.parameters, state.selectors).allocator
        for n in names:
            if n in cycle.passing:
                assert fresh.filter(n).ok, (i, n)
        if fits and rng.random() < 0.6:
            assert plugin.reserve(cycle_state, pod, name).ok  # in flight
            held.append((cycle_state, pod, name))
        elif held and rng.random() < 0.5:
            plugin.unreserve(*held.pop(rng.randrange(len(held))))
    assert carried > 100  # nodes were carried from pod to pod


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


def test_a_claim_is_read_from_our_own_newer_copy() -> None:
    """A claim our own write allocated is seen allocated at once (by the next pod that
    shares it too), before the informer's copy catches up (docs/deviations.md)."""
    state = cluster(1, 1)
    state.set_claim(decode({"metadata": {"name": "c0", "namespace": "ns", "uid": "u-c0",
                                         "resourceVersion": "1"},
                            "spec": {"resourceClassName": "c"}}, ResourceClaim))
    state.index.assume(_allocated("c0", "n0", "i0"))
    seen = state.lookup("ns", "c0")
    assert seen is not None and seen.status.allocation is not None
    assert state.claims["ns/c0"].status.allocation is None  # the informer's copy


def _allocated(name: str, node_name: str, instance: str) -> ResourceClaim:
    return decode({
        "metadata": {"name": name, "namespace": "ns", "uid": f"u-{name}",
                     "resourceVersion": "1"},
        "spec": {"resourceClassName": "c"},
        "status": {"driverName": "d", "allocation": {"resourceHandles": [{
            "driverName": "d", "structuredData": {"nodeName": node_name, "results": [
                {"namedResources": {"name": instance}}]}}]}}}, ResourceClaim)


def _cycle(scheduler: Scheduler, pod: Pod) -> tuple[object, ...]:
    state = CycleState()
    state.profile = scheduler.profile
    state.nodes = scheduler.cache.tally
    skipped = set()
    for plugin in scheduler.profile.pre_filter:
        if plugin.pre_filter(state, pod).code is Code.SKIP:
            skipped.add(plugin.name)
    diagnosis, rejectors = Diagnosis(), set[str]()
    feasible = scheduler._find_feasible(
        state, pod, [f for f in scheduler.profile.filter if f.name not in skipped], diagnosis,
        rejectors, scheduler._shortlist(state, pod, skipped))
    if feasible:  # the reasons are read only when no node fits
        return [n.name for n in feasible], scheduler.search.next_start
    return {n: (s.code.value, s.plugin, s.message)
            for n, s in diagnosis.node_statuses.items()}, rejectors, scheduler.search.next_start


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2), st.booleans()),
                min_size=1, max_size=130),
       st.integers(1, 2), st.integers(1, 4))
def test_passing_over_nodes_without_room_changes_no_outcome(
        nodes: list[tuple[int, int, bool]], claims: int, cycles: int) -> None:
    """Per node: instances, how many are taken, unschedulable. With more than 100 nodes the
    search stops early (and where the next one starts moves): the shortlist must not change
    where, nor which nodes are feasible, nor any reason of a pod that fits nowhere."""
    state = cluster(0, 0)
    shortlisted, plain = DynamicResources(state), DynamicResources(state)
    schedulers = []
    for dra in (shortlisted, plain):
        profile = default_profile(dra)
        if dra is plain:
            profile = dataclasses.replace(profile, shortlist=[])
        schedulers.append(Scheduler(None, Informers(None), profile))  # type: ignore[arg-type]
    for n, (instances, taken, unschedulable) in enumerate(nodes):
        if instances:
            feed(state, [decode({"metadata": {"name": f"s{n}"}, "nodeName": f"n{n}",
                                 "driverName": "d", "namedResources": {"instances": [
                                     {"name": f"i{i}"} for i in range(instances)]}},
                                ResourceSlice)])
            for i in range(min(taken, instances)):
                state.set_claim(_allocated(f"taken-{n}-{i}", f"n{n}", f"i{i}"))
        for scheduler in schedulers:
            scheduler.cache.set_node(codec.decode({
                "metadata": {"name": f"n{n}", "labels": {"kubernetes.io/hostname": f"n{n}"}},
                "spec": {"unschedulable": unschedulable},
                "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}},
                Node))
    for c in range(cycles):
        names = [f"p{c}-c{k}" for k in range(claims)]
        for name in names:
            state.set_claim(decode({"metadata": {"name": name, "namespace": "ns",
                                                 "uid": f"u-{name}", "resourceVersion": "1"},
                                    "spec": {"resourceClassName": "c"}}, ResourceClaim))
        pod = decode({"metadata": {"name": f"p{c}", "namespace": "ns", "uid": f"pu{c}"},
                      "spec": {"resourceClaims": [
                          {"name": f"r{k}", "source": {"resourceClaimName": name}}
                          for k, name in enumerate(names)]}}, Pod)
        assert _cycle(schedulers[0], pod) == _cycle(schedulers[1], pod)


def test_score_prefers_the_node_with_fewer_free_instances_of_the_requested_driver() -> None:
    state = cluster(2, 3)
    state.set_claim(_allocated("taken", "n1", "i0"))
    plugin, packing = DynamicResources(state), DynamicResourcesPacking()
    cycle = CycleState()
    pod = pod_with_claim(0, state)
    assert plugin.pre_filter(cycle, pod).ok
    assert packing.pre_score(cycle, pod, []).ok
    assert [packing.score(cycle, pod, node(n)) for n in ("n0", "n1", "absent")] == [97, 98, 100]
    assert packing.pre_score(CycleState(), pod, []) == SKIP  # no DRA cycle: nothing to score

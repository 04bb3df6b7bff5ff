"""NodeResourcesFit (LeastAllocated) and NodeResourcesBalancedAllocation against rows of
upstream's ``least_allocated_test.go`` and ``balanced_allocation_test.go`` (test names
quoted); capacities there are plain numbers, so cpu "4000" is 4000 cores."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kubedra.api.core import Pod
from kubedra.scheduler.framework import pod_requests
from kubedra.scheduler.plugins.noderesources import (
    BalancedAllocation,
    LeastAllocatedScore,
    with_pod,
)
from tests.unit.scheduler.score_support import cluster, node, pod, scores

TWO_CONTAINERS = [{"cpu": "1000", "memory": "2000"}, {"cpu": "2000", "memory": "3000"}]


def test_least_allocated_nothing_scheduled_resources_requested_differently_sized_nodes() -> None:
    cache = cluster([node("node1", cpu="4000", memory="10000"),
                     node("node2", cpu="6000", memory="10000")], [])
    assert scores(LeastAllocatedScore(), pod(requests=TWO_CONTAINERS), cache) == {
        "node1": 37, "node2": 50}


def test_least_allocated_no_resources_requested_pods_scheduled_with_resources() -> None:
    cache = cluster([node("node1", cpu="10000", memory="20000"),
                     node("node2", cpu="10000", memory="20000")], [
        pod("node1", requests=[{"cpu": "3000", "memory": "0"}]),
        pod("node1", requests=[{"cpu": "3000", "memory": "0"}]),
        pod("node2", requests=[{"cpu": "3000", "memory": "0"}]),
        pod("node2", requests=[{"cpu": "3000", "memory": "5000"}])])
    assert scores(LeastAllocatedScore(), pod(), cache) == {"node1": 70, "node2": 57}


def test_least_allocated_resources_requested_pods_scheduled_with_resources() -> None:
    cache = cluster([node("node1", cpu="10000", memory="20000"),
                     node("node2", cpu="10000", memory="20000")], [
        pod("node1", requests=[{"cpu": "3000", "memory": "0"}]),
        pod("node2", requests=[{"cpu": "3000", "memory": "5000"}])])
    assert scores(LeastAllocatedScore(), pod(requests=TWO_CONTAINERS), cache) == {
        "node1": 57, "node2": 45}


def test_least_allocated_requested_resources_exceed_node_capacity() -> None:
    cache = cluster([node("node1", cpu="4000", memory="10000"),
                     node("node2", cpu="4000", memory="10000")], [
        pod("node1", requests=[{"cpu": "3000", "memory": "0"}]),
        pod("node2", requests=[{"cpu": "3000", "memory": "5000"}])])
    incoming = pod(requests=[{"cpu": "3000", "memory": "0"}])
    assert scores(LeastAllocatedScore(), incoming, cache) == {"node1": 50, "node2": 25}


def test_least_allocated_zero_node_resources_pods_scheduled_with_resources() -> None:
    cache = cluster([node("node1"), node("node2")], [
        pod("node1", requests=[{"cpu": "3000", "memory": "0"}]),
        pod("node2", requests=[{"cpu": "3000", "memory": "5000"}])])
    assert scores(LeastAllocatedScore(), pod(), cache) == {"node1": 0, "node2": 0}


def test_least_allocated_counts_the_non_zero_defaults_for_containers_without_requests() -> None:
    """Not an upstream row: 100m cpu and 200Mi memory per container that names neither
    (``schedutil.DefaultMilliCPURequest`` / ``DefaultMemoryRequest``), both for the placed
    pods and the incoming one."""
    cache = cluster([node("node1", cpu="1", memory="1000Mi"),
                     node("node2", cpu="1", memory="1000Mi")],
                    [pod("node1", requests=[{}])])
    # node1: cpu (1000 - 200) * 100 / 1000 = 80, memory (1000 - 400) * 100 / 1000 = 60
    # node2: 90 and 80
    assert scores(LeastAllocatedScore(), pod(requests=[{}]), cache) == {
        "node1": 70, "node2": 85}


def test_balanced_nothing_scheduled_resources_requested_differently_sized_nodes() -> None:
    cache = cluster([node("node1", cpu="4000m", memory="10000"),
                     node("node2", cpu="6000m", memory="10000")], [])
    assert scores(BalancedAllocation(), pod(requests=[
        {"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000"}]), cache) == {
        "node1": 87, "node2": 100}


CPU_ONLY = [{"cpu": "1000m", "memory": "0"}, {"cpu": "2000m", "memory": "0"}]
CPU_AND_MEMORY = [{"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000"}]


def test_balanced_resources_requested_pods_scheduled_with_resources() -> None:
    cache = cluster([node("node1", cpu="10000m", memory="20000"),
                     node("node2", cpu="10000m", memory="20000")],
                    [pod("node1", requests=CPU_ONLY), pod("node2", requests=CPU_AND_MEMORY)])
    assert scores(BalancedAllocation(), pod(requests=CPU_AND_MEMORY), cache) == {
        "node1": 82, "node2": 95}


def test_balanced_requested_resources_at_node_capacity() -> None:
    cache = cluster([node("node1", cpu="6000m", memory="10000"),
                     node("node2", cpu="6000m", memory="10000")],
                    [pod("node1", requests=CPU_ONLY), pod("node2", requests=CPU_AND_MEMORY)])
    assert scores(BalancedAllocation(), pod(requests=CPU_ONLY), cache) == {
        "node1": 50, "node2": 75}


def test_scores_follow_the_nodes_requests_as_pods_come_and_go() -> None:
    """Not an upstream row: the per-node score cache is emptied when a node's requests
    change."""
    cache = cluster([node("node1", cpu="4", memory="4Gi")], [])
    plugin, incoming = LeastAllocatedScore(), pod(requests=[{"cpu": "1", "memory": "1Gi"}])
    assert scores(plugin, incoming, cache) == {"node1": 75}
    placed = pod("node1", requests=[{"cpu": "2", "memory": "2Gi"}])
    cache.set_pod(placed)
    assert scores(plugin, incoming, cache) == {"node1": 25}
    cache.remove_pod(placed)
    assert scores(plugin, incoming, cache) == {"node1": 75}


@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 4), st.booleans(),
                          st.integers(0, 2)), max_size=25))
@settings(max_examples=150, deadline=None)
def test_scores_of_all_nodes_equal_each_node_scored_fresh(
        steps: list[tuple[int, int, bool, int]]) -> None:
    """Not an upstream row: ``scores`` (kept scores, one pass) gives what the formula gives
    for each node as it is now, while pods come and go on some nodes between pods scored.
    A step places (or removes) a pod of ``cpu`` cores on a node, then scores a pod."""
    cache = cluster([node(f"node{i}", cpu=str(4 + i), memory=f"{8 + i}Gi")
                     for i in range(4)], [])
    placed: list[Pod] = []
    incoming = [pod(), pod(requests=[{"cpu": "1"}]), pod(requests=[{"memory": "1Gi"}])]
    for at, cpu, remove, which in steps:
        if remove and placed:
            cache.remove_pod(placed.pop(at % len(placed)))
        else:
            placed.append(pod(f"node{at}", requests=[{"cpu": str(cpu), "memory": "1Gi"}]))
            cache.set_pod(placed[-1])
        for plugin in (LeastAllocatedScore(), BalancedAllocation()):
            p = incoming[which]
            want = pod_requests(p, non_zero=plugin.non_zero)
            fresh = {info.name: plugin.formula(with_pod(
                info.non_zero_requested if plugin.non_zero else info.requested, want),
                info.allocatable) for info in cache.node_infos()}
            assert scores(plugin, p, cache) == fresh

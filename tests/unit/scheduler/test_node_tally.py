"""The cache's node tally, requests and kept scores stay equal to a recount through any
sequence of node and pod changes, and the PreFilter skips the tally allows give the same
feasible nodes and the same diagnosis as running every node filter."""

from __future__ import annotations

from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from kubedra.api import codec
from kubedra.api.core import Node, Pod
from kubedra.client.informer import Informers
from kubedra.scheduler.cache import SchedulerCache
from kubedra.scheduler.framework import (
    Code,
    CycleState,
    Diagnosis,
    NodeTally,
    Profile,
    Resources,
    pod_requests,
)
from kubedra.scheduler.plugins.noderesources import (
    LeastAllocatedScore,
    least_allocated,
    with_pod,
)
from kubedra.scheduler.plugins.nodes import (
    NodeName,
    NodeResourcesFit,
    NodeUnschedulable,
    TaintToleration,
)
from kubedra.scheduler.scheduler import Scheduler

NODES = [f"n{i}" for i in range(4)]
TAINTS = [None, [{"key": "k", "value": "v", "effect": "NoSchedule"}],
          [{"key": "k", "effect": "PreferNoSchedule"}], [{"key": "x", "effect": "NoExecute"}]]


def node(name: str, unschedulable: bool, taints: int, max_pods: int) -> Node:
    spec: dict[str, Any] = {"unschedulable": unschedulable}
    if TAINTS[taints] is not None:
        spec["taints"] = TAINTS[taints]
    return codec.decode({"metadata": {"name": name}, "spec": spec, "status": {
        "allocatable": {"cpu": "2", "memory": "4Gi", "pods": str(max_pods)}}}, Node)


def pod(i: int, node_name: str = "", cpu: str | None = None,
        tolerate: bool = False) -> Pod:
    container: dict[str, Any] = {"name": "c"}
    if cpu is not None:
        container["resources"] = {"requests": {"cpu": cpu}}
    spec: dict[str, Any] = {"containers": [container]}
    if node_name:
        spec["nodeName"] = node_name
    if tolerate:
        spec["tolerations"] = [{"operator": "Exists"}]
    return codec.decode({"metadata": {"name": f"p{i}", "namespace": "ns"}, "spec": spec}, Pod)


def recount(cache: SchedulerCache) -> NodeTally:
    tally = NodeTally()
    for info in cache.nodes.values():
        tally.count(info, 1)
    return tally


node_change = st.tuples(st.just("node"), st.sampled_from(NODES), st.booleans(),
                        st.integers(0, 3), st.integers(1, 3))
pod_change = st.tuples(st.sampled_from(["assume", "bind", "finish", "forget", "remove"]),
                       st.integers(0, 7), st.sampled_from(NODES),
                       st.sampled_from([None, "100m", "1"]))
removal = st.tuples(st.just("remove_node"), st.sampled_from(NODES))
changes = st.lists(st.one_of(node_change, pod_change, removal), max_size=40)


def apply(cache: SchedulerCache, change: tuple[Any, ...]) -> None:
    what = change[0]
    if what == "node":
        cache.set_node(node(*change[1:]))
    elif what == "remove_node":
        cache.remove_node(change[1])
    else:
        i, on, cpu = change[1], change[2], change[3]
        if what == "assume":
            cache.assume(pod(i, cpu=cpu), on)
        elif what == "bind":
            cache.set_pod(pod(i, on, cpu=cpu))
        elif what == "finish":
            finished = pod(i, on, cpu=cpu)
            finished.status.phase = "Succeeded"
            cache.set_pod(finished)
        elif what == "forget":
            cache.forget(pod(i))
        else:
            cache.remove_pod(pod(i))


@settings(max_examples=300, deadline=None)
@given(changes)
def test_the_tally_is_a_recount_after_every_change(steps: list[tuple[Any, ...]]) -> None:
    cache = SchedulerCache()
    for change in steps:
        apply(cache, change)
        assert cache.tally == recount(cache)


@settings(max_examples=300, deadline=None)
@given(changes)
@example([("node", "n0", False, 0, 3), ("assume", 1, "n0", None), ("bind", 1, "n0", None),
          ("bind", 1, "n0", "1")])  # bound as assumed, then resized where it is
def test_requests_and_kept_scores_follow_every_change(steps: list[tuple[Any, ...]]) -> None:
    """A pod seen again where it is keeps its node's sums and kept scores only while it
    asks the same (a binding, a new status); otherwise both are redone."""
    cache, score = SchedulerCache(), LeastAllocatedScore()
    asking = pod(99, cpu="100m")
    for change in steps:
        apply(cache, change)
        for info in cache.nodes.values():
            assert info.requested == sum_requests(info.pods.values(), non_zero=False)
            assert info.non_zero_requested == sum_requests(info.pods.values(), non_zero=True)
            state = CycleState()
            state.kept = cache.kept
            score.pre_score(state, asking, [info])
            kept = score.scores(state, asking, [info])
            fresh = least_allocated(with_pod(info.non_zero_requested,
                                             pod_requests(asking, non_zero=True)),
                                    info.allocatable)
            assert kept == [fresh]


def sum_requests(pods: Any, non_zero: bool) -> Resources:
    total = Resources()
    for p in pods:
        total.add(pod_requests(p, non_zero))
    return total


def outcome(scheduler: Scheduler, p: Pod, tally: NodeTally | None,
            ) -> tuple[list[str], dict[str, tuple[str, str, str]], set[str]]:
    state = CycleState()
    state.nodes = tally
    skipped = set()
    for plugin in scheduler.profile.pre_filter:
        status = plugin.pre_filter(state, p)
        if status.code is Code.SKIP:
            skipped.add(plugin.name)
    filters = [f for f in scheduler.profile.filter if f.name not in skipped]
    diagnosis, rejectors = Diagnosis(), set[str]()
    feasible = scheduler._find_feasible(state, p, filters, diagnosis, rejectors)
    return ([n.name for n in feasible],
            {n: (s.code.value, s.plugin, s.message) for n, s in diagnosis.node_statuses.items()},
            rejectors)


@settings(max_examples=300, deadline=None)
@given(changes, st.sampled_from([None, "100m"]), st.booleans())
def test_skipping_by_the_tally_changes_no_outcome(steps: list[tuple[Any, ...]],
                                                   cpu: str | None, tolerate: bool) -> None:
    plugins = [NodeUnschedulable(), NodeName(), TaintToleration(), NodeResourcesFit()]
    profile = Profile(pre_filter=plugins, filter=plugins)
    with_tally = Scheduler(None, Informers(None), profile)  # type: ignore[arg-type]
    without = Scheduler(None, Informers(None), profile)  # type: ignore[arg-type]
    for change in steps:
        apply(with_tally.cache, change)
        apply(without.cache, change)
    p = pod(99, cpu=cpu, tolerate=tolerate)
    assert outcome(with_tally, p, with_tally.cache.tally) == outcome(without, p, None)


def test_each_node_plugin_skips_only_while_no_node_could_fail_it() -> None:
    cache = SchedulerCache()
    cache.set_node(node("n0", False, 0, 1))
    state = CycleState()
    state.nodes = cache.tally
    plain, asks_cpu = pod(0), pod(1, cpu="1")
    assert NodeUnschedulable().pre_filter(state, plain).code is Code.SKIP
    assert TaintToleration().pre_filter(state, plain).code is Code.SKIP
    assert NodeResourcesFit().pre_filter(state, plain).code is Code.SKIP
    assert NodeResourcesFit().pre_filter(state, asks_cpu).ok
    cache.set_node(node("n1", True, 1, 1))
    cache.assume(pod(2), "n0")  # n0 holds its one pod
    assert cache.tally == NodeTally(unschedulable=1, tainted=1, pods_full=1)
    assert NodeUnschedulable().pre_filter(state, plain).ok
    assert TaintToleration().pre_filter(state, plain).ok
    assert NodeResourcesFit().pre_filter(state, plain).ok
    assert NodeUnschedulable().pre_filter(CycleState(), plain).ok  # no tally: filter all

"""TaintToleration and NodeAffinity scores against rows of upstream's
``taint_toleration_test.go`` (TestTaintTolerationScore) and ``node_affinity_test.go``
(TestNodeAffinityPriority), test names quoted; plus properties of the normalisations
(default, InterPodAffinity's min..max, PodTopologySpread's)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kubedra.scheduler.framework import Code, CycleState, NodeInfo, Resources
from kubedra.scheduler.plugins.helper import default_normalize_score
from kubedra.scheduler.plugins.interpodaffinity import InterPodAffinity
from kubedra.scheduler.plugins.nodeaffinity import NodeAffinityScore
from kubedra.scheduler.plugins.podtopologyspread import NAME, PodTopologySpread, _ScoreState
from kubedra.scheduler.plugins.tainttoleration import TaintTolerationScore
from kubedra.testing import fake_node
from tests.unit.scheduler.score_support import cluster, node, pod, scores


def taint(key: str, value: str, effect: str = "PreferNoSchedule") -> dict[str, str]:
    return {"key": key, "value": value, "effect": effect}


def toleration(key: str, value: str, effect: str = "PreferNoSchedule") -> dict[str, str]:
    return {"key": key, "operator": "Equal", "value": value, "effect": effect}


def test_taints_tolerated_by_the_pod_score_higher_than_intolerable_ones() -> None:
    """"node with taints tolerated by the pod, gets a higher score than those node with
    intolerable taints"."""
    cache = cluster([node("nodeA", taints=[taint("foo", "bar")]),
                     node("nodeB", taints=[taint("foo", "blah")])], [])
    incoming = pod(tolerations=[toleration("foo", "bar")])
    assert scores(TaintTolerationScore(), incoming, cache) == {"nodeA": 100, "nodeB": 0}


def test_nodes_whose_taints_are_all_tolerated_score_the_same() -> None:
    """"the nodes that all of their taints are tolerated by the pod, get the same score,
    no matter how many tolerable taints a node has"."""
    cache = cluster([node("nodeA"), node("nodeB", taints=[taint("cpu-type", "arm64")]),
                     node("nodeC", taints=[taint("cpu-type", "arm64"),
                                           taint("disk-type", "ssd")])], [])
    incoming = pod(tolerations=[toleration("cpu-type", "arm64"),
                                toleration("disk-type", "ssd")])
    assert scores(TaintTolerationScore(), incoming, cache) == {
        "nodeA": 100, "nodeB": 100, "nodeC": 100}


def test_the_more_intolerable_taints_the_lower_the_score() -> None:
    """"the more intolerable taints a node has, the lower score it gets."."""
    cache = cluster([node("nodeA"), node("nodeB", taints=[taint("cpu-type", "arm64")]),
                     node("nodeC", taints=[taint("cpu-type", "arm64"),
                                           taint("disk-type", "ssd")])], [])
    incoming = pod(tolerations=[toleration("foo", "bar")])
    assert scores(TaintTolerationScore(), incoming, cache) == {
        "nodeA": 100, "nodeB": 50, "nodeC": 0}


def test_only_prefer_no_schedule_taints_and_tolerations_count() -> None:
    """"only taints and tolerations that have effect PreferNoSchedule are checked by
    prioritizer function"."""
    cache = cluster([node("nodeA"),
                     node("nodeB", taints=[taint("cpu-type", "arm64", "NoSchedule")]),
                     node("nodeC", taints=[taint("cpu-type", "arm64"),
                                           taint("disk-type", "ssd")])], [])
    incoming = pod(tolerations=[toleration("cpu-type", "arm64", "NoSchedule"),
                                toleration("disk-type", "ssd", "NoSchedule")])
    assert scores(TaintTolerationScore(), incoming, cache) == {
        "nodeA": 100, "nodeB": 100, "nodeC": 0}


def test_no_prefer_no_schedule_taint_anywhere_skips() -> None:
    """kubedra only: with no PreferNoSchedule taint every node would score 100."""
    cache = cluster([node("nodeA"), node("nodeB", taints=[taint("a", "b", "NoSchedule")])],
                    [])
    assert scores(TaintTolerationScore(), pod(), cache) is Code.SKIP


def preferred(weight: int, **labels: list[str]) -> dict[str, object]:
    return {"weight": weight, "preference": {"matchExpressions": [
        {"key": k, "operator": "In", "values": v} for k, v in labels.items()]}}


LABEL1 = {"foo": "bar"}
LABEL2 = {"key": "value"}
LABEL5 = {"foo": "bar", "key": "value", "az": "az1"}


def test_all_nodes_are_same_priority_as_node_affinity_is_nil() -> None:
    """"all nodes are same priority as NodeAffinity is nil" (kubedra: PreScore SKIP, as
    upstream's PreScore returns for a pod without preferred terms)."""
    cache = cluster([node("node1", LABEL1), node("node2", LABEL2)], [])
    assert scores(NodeAffinityScore(), pod(), cache) is Code.SKIP


def test_no_node_matches_preferred_scheduling_requirements() -> None:
    """"no node matches preferred scheduling requirements in NodeAffinity of pod so all
    nodes' priority is zero"."""
    cache = cluster([node("node1", LABEL1), node("node2", LABEL2),
                     node("node3", {"az": "az1"})], [])
    incoming = pod(affinity={"nodeAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [preferred(2, foo=["bar1"])]}})
    assert scores(NodeAffinityScore(), incoming, cache) == {"node1": 0, "node2": 0, "node3": 0}


def test_only_node1_matches_the_preferred_scheduling_requirements() -> None:
    """"only node1 matches the preferred scheduling requirements of pod"."""
    cache = cluster([node("node1", LABEL1), node("node2", LABEL2),
                     node("node3", {"az": "az1"})], [])
    incoming = pod(affinity={"nodeAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [preferred(2, foo=["bar"])]}})
    assert scores(NodeAffinityScore(), incoming, cache) == {
        "node1": 100, "node2": 0, "node3": 0}


def test_all_nodes_match_the_preferred_requirements_with_different_priorities() -> None:
    """"all nodes matches the preferred scheduling requirements of pod but with different
    priorities"."""
    cache = cluster([node("node1", LABEL1), node("node5", LABEL5), node("node2", LABEL2)], [])
    incoming = pod(affinity={"nodeAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            preferred(2, foo=["bar"]), preferred(4, key=["value"]),
            preferred(5, foo=["bar"], key=["value"], az=["az1"])]}})
    assert scores(NodeAffinityScore(), incoming, cache) == {
        "node1": 18, "node5": 100, "node2": 36}


@given(st.lists(st.integers(min_value=0, max_value=10_000), max_size=20), st.booleans())
def test_default_normalisation_stays_in_range_and_keeps_the_order(raw: list[int],
                                                                 reverse: bool) -> None:
    scores_ = list(raw)
    default_normalize_score(scores_, reverse)
    assert all(0 <= s <= 100 for s in scores_)
    for i, a in enumerate(raw):
        for j, b in enumerate(raw):
            if a < b:  # never reordered (ties may appear through integer division)
                assert (scores_[i] >= scores_[j]) if reverse else (scores_[i] <= scores_[j])
    if raw and max(raw) > 0:
        best = raw.index(max(raw))
        assert scores_[best] == (0 if reverse else 100)
    elif raw:
        assert set(scores_) == {100 if reverse else 0}


@given(st.lists(st.integers(min_value=-500, max_value=500), min_size=1, max_size=20))
def test_inter_pod_affinity_normalisation_maps_min_to_0_and_max_to_100(raw: list[int]) -> None:
    scores_ = list(raw)
    InterPodAffinity().normalize_score(CycleState(), pod(), [], scores_)
    assert all(0 <= s <= 100 for s in scores_)
    if max(raw) > min(raw):
        assert scores_[raw.index(min(raw))] == 0 and scores_[raw.index(max(raw))] == 100
    else:
        assert set(scores_) == {0}
    for a, sa in zip(raw, scores_, strict=True):
        for b, sb in zip(raw, scores_, strict=True):
            assert a >= b or sa <= sb


@given(st.lists(st.tuples(st.integers(min_value=0, max_value=1000), st.booleans()),
                min_size=1, max_size=12))
def test_topology_spread_normalisation_prefers_fewer_pods(raw: list[tuple[int, bool]]) -> None:
    """Fewer matching pods score higher, the fewest 100; ignored nodes score 0."""
    nodes = [NodeInfo(fake_node(f"n{i}"), f"n{i}", {}, Resources()) for i in range(len(raw))]
    state = CycleState()
    state[f"PreScore{NAME}"] = _ScoreState([], {f"n{i}" for i, (_, ign) in enumerate(raw)
                                                if ign}, {}, [])
    scores_ = [s for s, _ in raw]
    PodTopologySpread().normalize_score(state, pod(), nodes, scores_)
    valid = [(r, s) for (r, ign), s in zip(raw, scores_, strict=True) if not ign]
    assert all(s == 0 for (_, ign), s in zip(raw, scores_, strict=True) if ign)
    assert all(0 <= s <= 100 for _, s in valid)
    if valid:  # 100 * (max + min - score) / max: the fewest pods score 100
        assert min(valid)[1] == 100
        for ra, sa in valid:
            for rb, sb in valid:
                assert ra <= rb or sa <= sb

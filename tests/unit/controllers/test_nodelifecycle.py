"""The node lifecycle and taint eviction controllers' rules, as upstream's unit tables state
them: zone states, condition taints, taint swaps, the eviction rate limiter, toleration
times."""

from __future__ import annotations

from kubedra.api.core import Node, NodeCondition, NodeSpec, NodeStatus, Taint, Toleration
from kubedra.api.meta import ObjectMeta
from kubedra.api.taints import matching_tolerations
from kubedra.controllers.nodelifecycle import (
    TokenBucket,
    ZoneState,
    no_schedule_taints,
    swapped,
    zone_key,
    zone_state,
)
from kubedra.controllers.tainteviction import min_toleration_seconds


def ready(status: str) -> NodeCondition:
    return NodeCondition(type="Ready", status=status)


def test_zone_states() -> None:
    assert zone_state([ready("True"), ready("Unknown")], 0.55) == (1, ZoneState.NORMAL)
    assert zone_state([ready("False"), None], 0.55) == (2, ZoneState.FULL_DISRUPTION)
    # more than two unready and at least the threshold: partial
    assert zone_state([ready("True")] + [ready("Unknown")] * 3, 0.55) == (
        3, ZoneState.PARTIAL_DISRUPTION)
    assert zone_state([ready("True")] * 3 + [ready("Unknown")] * 3, 0.55) == (
        3, ZoneState.NORMAL)


def test_zone_key_from_topology_labels() -> None:
    def node(labels: dict[str, str]) -> Node:
        return Node(metadata=ObjectMeta(name="n", labels=labels))

    assert zone_key(node({})) == ""
    assert zone_key(node({"topology.kubernetes.io/region": "r",
                          "topology.kubernetes.io/zone": "z"})) == "r:\x00:z"
    assert zone_key(node({"failure-domain.beta.kubernetes.io/zone": "z"})) == ":\x00:z"


def test_no_schedule_taints_follow_conditions_and_cordon() -> None:
    node = Node(spec=NodeSpec(unschedulable=True), status=NodeStatus(conditions=[
        ready("Unknown"), NodeCondition(type="MemoryPressure", status="True"),
        NodeCondition(type="DiskPressure", status="False")]))
    assert [(t.key, t.effect) for t in no_schedule_taints(node)] == [
        ("node.kubernetes.io/unreachable", "NoSchedule"),
        ("node.kubernetes.io/memory-pressure", "NoSchedule"),
        ("node.kubernetes.io/unschedulable", "NoSchedule")]
    node = Node(status=NodeStatus(conditions=[ready("False")]))
    assert [t.key for t in no_schedule_taints(node)] == ["node.kubernetes.io/not-ready"]


def test_swapped_keeps_other_taints_and_stamps_new_ones() -> None:
    mine = Taint(key="gpu", value="x", effect="NoSchedule")
    unreachable = Taint(key="node.kubernetes.io/unreachable", effect="NoExecute")
    not_ready = Taint(key="node.kubernetes.io/not-ready", effect="NoExecute")
    out = swapped([mine, unreachable], [not_ready], [unreachable], "2026-01-01T00:00:00Z")
    assert out == [mine, Taint(key=not_ready.key, effect="NoExecute",
                               time_added="2026-01-01T00:00:00Z")]
    assert swapped(out, [not_ready], [], "later") == out  # present: unchanged


def test_token_bucket_one_burst_then_the_rate() -> None:
    now = [0.0]
    bucket = TokenBucket(0.1, clock=lambda: now[0])
    assert bucket.try_accept() and not bucket.try_accept()
    now[0] = 9.9
    assert not bucket.try_accept()
    now[0] = 10.0
    assert bucket.try_accept()
    assert not TokenBucket(0.0).try_accept()


def test_toleration_times() -> None:
    taint = Taint(key="node.kubernetes.io/unreachable", effect="NoExecute")
    forever = Toleration(key=taint.key, operator="Exists", effect="NoExecute")
    short = Toleration(key=taint.key, operator="Exists", effect="NoExecute",
                       toleration_seconds=3)
    other = Toleration(key="node.kubernetes.io/not-ready", operator="Exists")
    assert matching_tolerations([taint], [other]) is None
    used = matching_tolerations([taint], [forever, short, other])
    assert used == [forever, short]
    assert min_toleration_seconds(used) == 3.0
    assert min_toleration_seconds([forever]) is None
    assert min_toleration_seconds([Toleration(toleration_seconds=-5)]) == 0.0
    assert min_toleration_seconds([]) == 0.0

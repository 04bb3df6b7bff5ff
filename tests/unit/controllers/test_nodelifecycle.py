"""The node lifecycle and taint eviction controllers' rules, as upstream's unit tables state
them: zone states, condition taints, taint swaps, the eviction rate limiter, toleration
times."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kubedra.api.coordination import Lease, LeaseSpec
from kubedra.api.core import Node, NodeCondition, NodeSpec, NodeStatus, Taint, Toleration
from kubedra.api.meta import ObjectMeta
from kubedra.api.taints import matching_tolerations
from kubedra.client.informer import Informers
from kubedra.controllers.nodelifecycle import (
    NodeLifecycleConfig,
    NodeLifecycleController,
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


class _Writes:
    """Stands in for the client: keeps the Node status writes."""

    def __init__(self) -> None:
        self.written: list[Node] = []

    async def update_status(self, node: Node) -> Node:
        self.written.append(node)
        return node


def _controller(now: list[float]) -> tuple[NodeLifecycleController, _Writes]:
    writes = _Writes()
    client: Any = writes
    controller = NodeLifecycleController(client, Informers(client),
                                         NodeLifecycleConfig(grace_period=40.0),
                                         clock=lambda: now[0])
    return controller, writes


def _lease(renew: str) -> Lease:
    return Lease(metadata=ObjectMeta(name="n", namespace="kube-node-lease"),
                 spec=LeaseSpec(holder_identity="n", renew_time=renew))


async def test_health_counts_lease_renewals_on_its_own_clock() -> None:
    now = [1000.0]
    controller, writes = _controller(now)
    heartbeat = "2020-01-01T00:00:00Z"  # a clock far behind: only changes count
    node = Node(metadata=ObjectMeta(name="n", creation_timestamp=heartbeat),
                status=NodeStatus(conditions=[NodeCondition(
                    type="Ready", status="True", last_heartbeat_time=heartbeat,
                    last_transition_time=heartbeat)]))
    _, observed, current = await controller.update_health(node)  # first seen: counts from now
    assert current is not None and observed.status == current.status == "True"
    controller.leases.store["kube-node-lease/n"] = _lease("2020-01-01T00:00:10.000000Z")
    now[0] = 1030.0
    await controller.update_health(node)  # renewed: counts from 1030
    now[0] = 1069.0
    await controller.update_health(node)
    assert not writes.written
    now[0] = 1071.0
    written, observed, current = await controller.update_health(node)
    assert observed.status == "True" and current is not None
    assert (current.status, current.reason, current.message) == (
        "Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status.")
    assert writes.written == [written]
    # the conditions it never posted are added as never updated
    assert [(c.type, c.status, c.reason) for c in written.status.conditions or ()] == [
        ("Ready", "Unknown", "NodeStatusUnknown"),
        ("MemoryPressure", "Unknown", "NodeStatusNeverUpdated"),
        ("DiskPressure", "Unknown", "NodeStatusNeverUpdated"),
        ("PIDPressure", "Unknown", "NodeStatusNeverUpdated")]
    assert [c.status for c in node.status.conditions or ()] == ["True"]  # the cache's copy


async def test_a_node_that_never_posted_status_gets_the_startup_grace() -> None:
    created = "2020-01-01T00:00:00Z"
    start = datetime.fromisoformat(created).timestamp()
    now = [start + 59.0]
    controller, writes = _controller(now)
    node = Node(metadata=ObjectMeta(name="n", creation_timestamp=created))
    _, _, current = await controller.update_health(node)
    assert current is None and not writes.written
    now[0] = start + 61.0
    _, _, current = await controller.update_health(node)
    assert current is not None and (current.status, current.reason) == (
        "Unknown", "NodeStatusNeverUpdated")
    assert {c.type for c in writes.written[0].status.conditions or ()} == {
        "Ready", "MemoryPressure", "DiskPressure", "PIDPressure"}

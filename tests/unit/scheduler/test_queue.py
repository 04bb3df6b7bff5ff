"""The scheduling queue: ordering, backoff, unschedulable pool and event-driven moves."""

from __future__ import annotations

import asyncio

from kubedra.api.core import Pod, PodSpec
from kubedra.api.meta import ObjectMeta
from kubedra.scheduler.queue import ClusterEvent, SchedulingQueue


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def pod(name: str, priority: int = 0) -> Pod:
    return Pod(metadata=ObjectMeta(name=name, namespace="default"),
               spec=PodSpec(priority=priority))


async def test_priority_then_fifo() -> None:
    clock = Clock()
    q = SchedulingQueue(clock=clock)
    q.add(pod("a"))
    clock.now += 1
    q.add(pod("b", priority=10))
    clock.now += 1
    q.add(pod("c"))
    order = [(await q.pop()).key for _ in range(3)]
    assert order == ["default/b", "default/a", "default/c"]


async def test_unschedulable_pod_moves_only_on_registered_event_with_positive_hint() -> None:
    clock = Clock()
    q = SchedulingQueue(clock=clock, initial_backoff=1.0)
    q.register("P", ClusterEvent("Node", "Add"))
    q.register("Q", ClusterEvent("ResourceClaim", "Update"), lambda p, old, new: new == "yes")
    q.add(pod("a"))
    qp = await q.pop()
    q.requeue_unschedulable(qp, {"Q"})
    assert q.pending_counts() == {"active": 0, "backoff": 0, "unschedulable": 1, "gated": 0}
    q.on_event(ClusterEvent("Node", "Add"))  # P did not reject it
    q.on_event(ClusterEvent("ResourceClaim", "Update"), None, "no")  # hint says no
    assert "default/a" in q.unschedulable
    q.on_event(ClusterEvent("ResourceClaim", "Update"), None, "yes")
    assert not q.unschedulable
    assert q.pending_counts()["backoff"] == 1  # still inside its 1 s backoff
    clock.now += 1.5
    assert (await asyncio.wait_for(q.pop(), 1)).key == "default/a"


async def test_event_during_attempt_sends_pod_to_backoff_not_unschedulable() -> None:
    q = SchedulingQueue(clock=Clock())
    q.register("P", ClusterEvent("Node", "Add"))
    q.add(pod("a"))
    qp = await q.pop()
    q.on_event(ClusterEvent("Node", "Add"))  # arrives while "a" is being scheduled
    q.requeue_unschedulable(qp, {"P"})
    assert not q.unschedulable
    assert q.pending_counts()["backoff"] == 1


async def test_backoff_doubles_up_to_max() -> None:
    q = SchedulingQueue(clock=Clock(), initial_backoff=1.0, max_backoff=10.0)
    q.add(pod("a"))
    qp = await q.pop()
    durations = []
    for attempts in range(1, 7):
        qp.attempts = attempts
        durations.append(q.backoff_duration(qp))
    assert durations == [1.0, 2.0, 4.0, 8.0, 10.0, 10.0]


async def test_unschedulable_pods_are_flushed_after_max_duration() -> None:
    clock = Clock()
    q = SchedulingQueue(clock=clock, max_unschedulable=300.0)
    q.add(pod("a"))
    qp = await q.pop()
    q.requeue_unschedulable(qp, {"X"})
    clock.now += 301
    assert (await asyncio.wait_for(q.pop(), 1)).key == "default/a"


async def test_deleted_pod_is_never_popped() -> None:
    q = SchedulingQueue(clock=Clock())
    q.add(pod("a"))
    q.add(pod("b"))
    q.delete("default/a")
    assert (await q.pop()).key == "default/b"
    assert len(q) == 1  # "b" is in flight until done/forget
    q.forget("default/b")
    assert len(q) == 0


async def test_pre_enqueue_gates_without_an_attempt() -> None:
    clock = Clock()
    gated = {"default/a"}
    q = SchedulingQueue(clock=clock, pre_enqueue=lambda p: (
        {"Gate"} if f"default/{p.metadata.name}" in gated else set()))
    q.register("Gate", ClusterEvent("Claim", "Add"))
    q.add(pod("a"))
    q.add(pod("b"))
    assert q.pending_counts() == {"active": 1, "backoff": 0, "unschedulable": 0, "gated": 1}
    assert (await q.pop()).key == "default/b"
    gated.clear()
    q.update(pod("a"))  # e.g. its claim name was recorded in the status
    qp = await asyncio.wait_for(q.pop(), 1)  # active at once: a gated pod has no backoff
    assert qp.key == "default/a" and qp.attempts == 1


async def test_event_only_reaches_the_named_pods_and_failing_hints_queue() -> None:
    clock = Clock()
    q = SchedulingQueue(clock=clock, initial_backoff=0.0)
    seen: list[str] = []

    def hint(p: Pod, old: object, new: object) -> bool:
        seen.append(p.metadata.name or "")
        raise TypeError("unexpected object")

    q.register("P", ClusterEvent("Claim", "Update"), hint)
    for name in ("a", "b"):
        q.add(pod(name))
        q.requeue_unschedulable(await q.pop(), {"P"})
    q.on_event(ClusterEvent("Claim", "Update"), None, object(), only={"default/b", "default/x"})
    assert seen == ["b"]
    assert set(q.unschedulable) == {"default/a"}
    assert (await asyncio.wait_for(q.pop(), 1)).key == "default/b"


async def test_stale_unschedulable_pods_leave_in_parking_order() -> None:
    clock = Clock()
    q = SchedulingQueue(clock=clock, initial_backoff=0.0, max_unschedulable=10.0)
    for name in ("a", "b"):
        q.add(pod(name))
        q.requeue_unschedulable(await q.pop(), {"P"})
        clock.now += 6
    assert list(q.unschedulable) == ["default/a", "default/b"]
    assert (await asyncio.wait_for(q.pop(), 1)).key == "default/a"  # parked 12 s ago
    assert list(q.unschedulable) == ["default/b"]

"""The scheduling queue: active, backoff and unschedulable pools, as kube-scheduler's.

* active: pods ready to be tried, highest priority first, then oldest.
* backoff: pods that failed recently; ready after 1 s doubling to 10 s per failed attempt.
* unschedulable: pods that no node fits; they move out when a cluster event that one of the
  plugins which rejected them registered for says it may help (queueing hint), or after
  five minutes at the latest.

A move request that happens while a pod is being scheduled sends that pod to backoff instead
of unschedulable, so an event is never lost between the attempt and its failure.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import logging
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field

from kubedra.api.core import Pod

log = logging.getLogger(__name__)

Hint = Callable[[Pod, object, object], bool]
"""Given a waiting pod and the event's old and new objects: may the pod fit now?"""


@dataclass(frozen=True, slots=True)
class ClusterEvent:
    resource: str
    action: str  # Add | Update | Delete


@dataclass
class QueuedPod:
    pod: Pod
    key: str
    added: float
    attempts: int = 0
    last_attempt: float = 0.0
    rejectors: frozenset[str] = field(default_factory=frozenset)
    unschedulable_since: float = 0.0
    gated: bool = False
    """Parked by a PreEnqueue plugin (never attempted since)."""


def _queue(hint: Hint, pod: Pod, old: object, new: object) -> bool:
    """A failing hint counts as "may help" (upstream: Queue with the error logged)."""
    try:
        return hint(pod, old, new)
    except Exception:
        log.exception("queueing hint failed for %s/%s", pod.metadata.namespace,
                      pod.metadata.name)
        return True


def pod_key(pod: Pod) -> str:
    return f"{pod.metadata.namespace}/{pod.metadata.name}"


class SchedulingQueue:
    def __init__(self, *, initial_backoff: float = 1.0, max_backoff: float = 10.0,
                 max_unschedulable: float = 300.0,
                 clock: Callable[[], float] = time.monotonic,
                 pre_enqueue: Callable[[Pod], set[str]] | None = None) -> None:
        self.pre_enqueue = pre_enqueue
        """Names of the PreEnqueue plugins that keep a pod out of the active pool (checked
        whenever it would become active, as upstream; a gated pod counts no attempt)."""
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self.max_unschedulable = max_unschedulable
        self.clock = clock
        self._info: dict[str, QueuedPod] = {}
        self._active: list[tuple[int, float, int, str]] = []
        self._in_active: set[str] = set()
        self._backoff: list[tuple[float, int, str]] = []
        self._in_backoff: set[str] = set()
        self.unschedulable: dict[str, QueuedPod] = {}
        self._in_flight: set[str] = set()
        self._moved_during_flight: set[str] = set()
        self._seq = itertools.count()
        self._wakeup = asyncio.Event()
        self._handlers: dict[ClusterEvent, list[tuple[str, Hint | None]]] = {}

    # --- registration ---------------------------------------------------------------------

    def register(self, plugin: str, event: ClusterEvent, hint: Hint | None = None) -> None:
        self._handlers.setdefault(event, []).append((plugin, hint))

    # --- adding and removing ----------------------------------------------------------------

    def add(self, pod: Pod) -> None:
        key = pod_key(pod)
        qp = self._info.get(key)
        if qp is None:
            qp = self._info[key] = QueuedPod(pod, key, self.clock())
            self._push_active(qp)
        else:
            qp.pod = pod

    def update(self, pod: Pod) -> None:
        """A pod changed: an unschedulable one is tried again (its change may help)."""
        key = pod_key(pod)
        qp = self._info.get(key)
        if qp is None:
            self.add(pod)
            return
        qp.pod = pod
        if key in self.unschedulable:
            del self.unschedulable[key]
            self._push_backoff_or_active(qp)

    def delete(self, key: str) -> None:
        self._info.pop(key, None)
        self.unschedulable.pop(key, None)
        self._in_active.discard(key)
        self._in_backoff.discard(key)

    def __contains__(self, key: str) -> bool:
        return key in self._info

    def __len__(self) -> int:
        return len(self._info)

    def pending_counts(self) -> dict[str, int]:
        gated = sum(1 for qp in self.unschedulable.values() if qp.gated)
        return {"active": len(self._in_active), "backoff": len(self._in_backoff),
                "unschedulable": len(self.unschedulable) - gated, "gated": gated}

    # --- the scheduling loop's side ------------------------------------------------------------

    async def pop(self) -> QueuedPod:
        while True:
            self._flush()
            while self._active:
                _, _, _, key = heapq.heappop(self._active)
                if key not in self._in_active:
                    continue
                self._in_active.discard(key)
                qp = self._info.get(key)
                if qp is None:
                    continue
                qp.attempts += 1
                qp.last_attempt = self.clock()
                self._in_flight.add(key)
                return qp
            self._wakeup.clear()
            timeout = self._next_wakeup()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wakeup.wait(), timeout)

    def done(self, key: str) -> None:
        """The attempt ended; the pod was bound (and is forgotten) or re-queued."""
        self._in_flight.discard(key)
        self._moved_during_flight.discard(key)

    def forget(self, key: str) -> None:
        self.done(key)
        self.delete(key)

    def requeue_unschedulable(self, qp: QueuedPod, rejectors: set[str]) -> None:
        qp.rejectors = frozenset(rejectors)
        key = qp.key
        moved = key in self._moved_during_flight
        self.done(key)
        if key not in self._info:
            return
        if moved:
            self._push_backoff_or_active(qp)
        else:
            self._park(qp)

    def requeue_error(self, qp: QueuedPod) -> None:
        """An error (not a verdict) ended the attempt: retry after backoff."""
        self.done(qp.key)
        if qp.key in self._info:
            self._push_backoff(qp)

    # --- events ----------------------------------------------------------------------------

    def on_event(self, event: ClusterEvent, old: object = None, new: object = None,
                 only: Collection[str] | None = None) -> None:
        """Move unschedulable pods that a plugin interested in ``event`` rejected, when its
        hint (if any) says the event may make them schedulable. ``only``: the pod keys the
        hints could say yes for (the caller knows; None = every waiting pod)."""
        handlers = self._handlers.get(event)
        if not handlers:
            return
        self._moved_during_flight.update(self._in_flight)
        if only is None:
            waiting = list(self.unschedulable.items())
        else:
            waiting = [(k, self.unschedulable[k]) for k in only if k in self.unschedulable]
        for key, qp in waiting:
            for plugin, hint in handlers:
                if plugin in qp.rejectors and (hint is None or _queue(hint, qp.pod, old, new)):
                    del self.unschedulable[key]
                    self._push_backoff_or_active(qp)
                    break

    def move_all(self) -> None:
        for key in list(self._in_flight):
            self._moved_during_flight.add(key)
        for qp in list(self.unschedulable.values()):
            self._push_backoff_or_active(qp)
        self.unschedulable.clear()

    # --- internals ---------------------------------------------------------------------------

    def backoff_duration(self, qp: QueuedPod) -> float:
        doublings: int = max(qp.attempts - 1, 0)
        return min(self.initial_backoff * float(2**doublings), self.max_backoff)

    def _park(self, qp: QueuedPod) -> None:
        """Into the unschedulable pool, at its end: the pool stays ordered by parking time."""
        self.unschedulable.pop(qp.key, None)
        qp.unschedulable_since = self.clock()
        self.unschedulable[qp.key] = qp

    def _push_active(self, qp: QueuedPod) -> None:
        gated = self.pre_enqueue(qp.pod) if self.pre_enqueue is not None else None
        qp.gated = bool(gated)
        if gated:
            qp.rejectors = frozenset(gated)
            self._park(qp)
            self._in_active.discard(qp.key)
            self._in_backoff.discard(qp.key)
            return
        priority = qp.pod.spec.priority or 0
        heapq.heappush(self._active, (-priority, qp.added, next(self._seq), qp.key))
        self._in_active.add(qp.key)
        self._in_backoff.discard(qp.key)
        self._wakeup.set()

    def _push_backoff(self, qp: QueuedPod) -> None:
        ready = qp.last_attempt + self.backoff_duration(qp)
        heapq.heappush(self._backoff, (ready, next(self._seq), qp.key))
        self._in_backoff.add(qp.key)
        self._wakeup.set()

    def _push_backoff_or_active(self, qp: QueuedPod) -> None:
        if qp.attempts and self.clock() < qp.last_attempt + self.backoff_duration(qp):
            self._push_backoff(qp)
        else:
            self._push_active(qp)

    def _flush(self) -> None:
        now = self.clock()
        while self._backoff and self._backoff[0][0] <= now:
            _, _, key = heapq.heappop(self._backoff)
            if key in self._in_backoff and key in self._info:
                self._in_backoff.discard(key)
                self._push_active(self._info[key])
        # The pool is in parking order (see _park), so the stale pods come first.
        while self.unschedulable:
            qp = next(iter(self.unschedulable.values()))
            if now - qp.unschedulable_since < self.max_unschedulable:
                break
            del self.unschedulable[qp.key]
            self._push_backoff_or_active(qp)

    def _next_wakeup(self) -> float:
        now = self.clock()
        deadlines = [30.0]
        if self._backoff:
            deadlines.append(self._backoff[0][0] - now)
        if self.unschedulable:
            oldest = next(iter(self.unschedulable.values())).unschedulable_since
            deadlines.append(oldest + self.max_unschedulable - now)
        return max(min(deadlines), 0.001)

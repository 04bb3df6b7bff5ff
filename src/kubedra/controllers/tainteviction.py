"""The taint eviction controller (kube-controller-manager's ``taint-eviction-controller``,
upstream ``pkg/controller/tainteviction`` at v1.30).

A pod bound to a Node with a NoExecute taint it does not tolerate is deleted at once; a pod
that tolerates every NoExecute taint of its Node is deleted after the least
``tolerationSeconds`` among the tolerations it uses (never, when none of them sets it),
counted from when the controller saw the taints. A taint removed in time cancels the
deletion. Each deletion is announced by a ``TaintManagerEviction`` event and marks the pod
``DisruptionTarget`` first (PodDisruptionConditions, on by default in v1.30), so that a Job's
pod failure policy can tell it from a failure.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any

import msgspec

from kubedra.api.core import Node, Pod, PodCondition, Taint, Toleration
from kubedra.api.meta import ObjectMeta, format_time, kobj
from kubedra.api.taints import NO_EXECUTE, matching_tolerations
from kubedra.client.errors import ApiError, is_not_found
from kubedra.client.events import EventRecorder
from kubedra.client.informer import Informers, object_key, run_informed
from kubedra.client.rest import Client
from kubedra.tasks import cancel_and_wait

log = logging.getLogger(__name__)

DELETE_RETRIES = 5
REASON = "TaintManagerEviction"


def no_execute_taints(node: Node | None) -> list[Taint]:
    return [t for t in (node.spec.taints if node is not None else None) or ()
            if t.effect == NO_EXECUTE]


def min_toleration_seconds(used: list[Toleration]) -> float | None:
    """``getMinTolerationTime``: seconds until eviction, None for never."""
    seconds = [t.toleration_seconds for t in used if t.toleration_seconds is not None]
    if not used:
        return 0.0
    if not seconds:
        return None
    return float(max(0, min(seconds)))


async def _forever() -> None:
    """The controller's work is done by its informers' handlers and the timers they set."""
    await asyncio.Event().wait()


@dataclass
class _Eviction:
    node: str
    created: float
    timer: asyncio.TimerHandle


def _pod_ref(key: str) -> Pod:
    """The event's object: the pod by namespace and name only, as upstream refers to it."""
    namespace, _, name = key.partition("/")
    return Pod(api_version="v1", kind="Pod", metadata=ObjectMeta(name=name, namespace=namespace))


class TaintEvictionController:
    def __init__(self, client: Client, informers: Informers) -> None:
        self.client = client
        self.nodes = informers.get(Node)
        self.pods = informers.get(Pod)
        self.events = EventRecorder(client, "taint-eviction-controller")
        self._tainted: dict[str, list[Taint]] = {}
        self._scheduled: dict[str, _Eviction] = {}
        self._work: set[asyncio.Task[None]] = set()
        self.nodes.add_handler(on_add=lambda n: self._node_changed(None, n),
                               on_update=self._node_changed,
                               on_delete=lambda n: self._node_changed(n, None))
        self.pods.add_handler(on_add=lambda p: self._pod_changed(None, p),
                              on_update=self._pod_changed,
                              on_delete=lambda p: self._pod_changed(p, None))

    async def run(self) -> None:
        log.info("Starting controller", {"controller": "taint-eviction-controller"})
        await run_informed([self.nodes, self.pods], _forever)

    async def stop(self) -> None:
        for eviction in self._scheduled.values():
            eviction.timer.cancel()
        self._scheduled.clear()
        await cancel_and_wait(*self._work)

    # --- events (NodeUpdated, PodUpdated) ---------------------------------------------------

    def _node_changed(self, old: Node | None, new: Node | None) -> None:
        if old is not None and new is not None and (
                no_execute_taints(old) == no_execute_taints(new)):
            return
        changed = new if new is not None else old
        assert changed is not None
        name = changed.metadata.name or ""
        node = self.nodes.get(name)
        if node is None:  # deleted: its pods go with it
            self._tainted.pop(name, None)
            return
        taints = no_execute_taints(node)
        if not taints:
            self._tainted.pop(name, None)
            for key in [k for k, e in self._scheduled.items() if e.node == name]:
                self._cancel(key)
            return
        self._tainted[name] = taints
        now = asyncio.get_running_loop().time()
        for pod in self.pods.list():
            if pod.spec.node_name == name:
                self._judge(object_key(pod), name, pod.spec.tolerations or [], taints, now)

    def _pod_changed(self, old: Pod | None, new: Pod | None) -> None:
        if old is not None and new is not None and (
                old.spec.tolerations == new.spec.tolerations
                and old.spec.node_name == new.spec.node_name):
            return
        changed = new if new is not None else old
        assert changed is not None
        key = object_key(changed)
        pod = self.pods.store.get(key)
        if pod is None:
            self._cancel(key)
            return
        node = pod.spec.node_name
        taints = self._tainted.get(node or "")
        if node and taints:
            self._judge(key, node, pod.spec.tolerations or [], taints,
                        asyncio.get_running_loop().time())

    # --- deciding (processPodOnNode) ------------------------------------------------------

    def _judge(self, key: str, node: str, tolerations: list[Toleration], taints: list[Taint],
               now: float) -> None:
        used = matching_tolerations(taints, tolerations)
        if used is None:
            log.info("Not all taints are tolerated after update for pod on node",
                     {"pod": key, "node": node})
            self._cancel(key)
            self._schedule(key, node, now, now)
            return
        seconds = min_toleration_seconds(used)
        if seconds is None:
            self._cancel(key)
            return
        start = now
        scheduled = self._scheduled.get(key)
        if scheduled is not None:
            start = scheduled.created
            if start < now:
                return  # as upstream: the eviction scheduled before stands
            self._cancel(key)
        self._schedule(key, node, start, start + seconds)

    def _schedule(self, key: str, node: str, created: float, fire_at: float) -> None:
        loop = asyncio.get_running_loop()
        timer = loop.call_at(fire_at, self._fire, key)
        self._scheduled[key] = _Eviction(node, created, timer)

    def _cancel(self, key: str) -> None:
        eviction = self._scheduled.pop(key, None)
        if eviction is None:
            return
        eviction.timer.cancel()
        self._background(self.events.record(
            _pod_ref(key), "Normal", REASON, f"Cancelling deletion of Pod {key}"))

    def _fire(self, key: str) -> None:
        self._scheduled.pop(key, None)
        self._background(self._evict(key))

    def _background(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        self._work.add(task)
        task.add_done_callback(self._work.discard)

    # --- deleting (deletePodHandler) ------------------------------------------------------

    async def _evict(self, key: str) -> None:
        namespace, _, name = key.partition("/")
        log.info("Deleting pod", {"controller": "taint-eviction-controller",
                                  "pod": kobj(namespace, name)})
        await self.events.record(_pod_ref(key), "Normal", REASON,
                                 f"Marking for deletion Pod {key}")
        for attempt in range(DELETE_RETRIES):
            try:
                await self._mark_and_delete(namespace, name)
                return
            except ApiError as e:
                if is_not_found(e):
                    return
                if attempt == DELETE_RETRIES - 1:
                    log.error("deleting pod %s failed: %s", key, e)
                    return
            await asyncio.sleep(0.01)

    async def _mark_and_delete(self, namespace: str, name: str) -> None:
        pod = await self.client.get(Pod, name, namespace)
        target = PodCondition(type="DisruptionTarget", status="True",
                              reason="DeletionByTaintManager",
                              message="Taint manager: deleting due to NoExecute taint")
        conditions = [c for c in pod.status.conditions or () if c.type != target.type]
        present = next((c for c in pod.status.conditions or () if c.type == target.type), None)
        if present is None or (present.status, present.reason, present.message) != (
                target.status, target.reason, target.message):
            conditions.append(msgspec.structs.replace(
                target, last_transition_time=format_time(time.time())))
            await self.client.update_status(msgspec.structs.replace(
                pod, status=msgspec.structs.replace(pod.status, conditions=conditions)))
        await self.client.delete(Pod, name, namespace)

"""The node lifecycle controller (kube-controller-manager's ``node-lifecycle-controller``,
upstream ``pkg/controller/nodelifecycle`` at v1.30).

* Health: every ``--node-monitor-period`` each Node is judged by when this controller last saw
  its kubelet renew its Lease in ``kube-node-lease`` or post a new Ready heartbeat (measured on
  this controller's clock, so clock skew does not matter; a Node seen for the first time starts
  its count then). After ``--node-monitor-grace-period`` without either (a Node that never
  posted a Ready condition: ``--node-startup-grace-period`` from its creation) its Ready,
  MemoryPressure, DiskPressure and PIDPressure conditions become ``Unknown``
  (``NodeStatusUnknown``, "Kubelet stopped posting node status."), the Node gets a
  ``NodeNotReady`` event and each of its pods Ready=False with a ``NodeNotReady`` event.
* NoSchedule taints mirror the conditions on every Node change: Ready False →
  ``node.kubernetes.io/not-ready``, Unknown → ``node.kubernetes.io/unreachable``, the
  pressure conditions, ``spec.unschedulable`` → ``node.kubernetes.io/unschedulable``.
* NoExecute taints (``not-ready`` / ``unreachable``, which the taint eviction controller acts
  on) are added by a per-zone queue limited to ``--node-eviction-rate`` Nodes a second, and
  removed when the Node is Ready again. A zone with more than two unready Nodes making
  ``--unhealthy-zone-threshold`` of it is partially disrupted (``--secondary-node-eviction-rate``
  above ``--large-cluster-size-threshold`` Nodes, else no tainting); when every zone is wholly
  unready the controller assumes its own network is at fault and takes the NoExecute taints
  away until some Node is Ready again.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum

import msgspec

from kubedra.api.coordination import Lease
from kubedra.api.core import Node, NodeCondition, Pod, Taint
from kubedra.api.meta import format_time
from kubedra.api.taints import (
    DISK_PRESSURE,
    MEMORY_PRESSURE,
    NETWORK_UNAVAILABLE,
    NO_EXECUTE,
    NO_SCHEDULE,
    NOT_READY,
    PID_PRESSURE,
    UNREACHABLE,
    UNSCHEDULABLE,
)
from kubedra.client.errors import ApiError, is_conflict, is_not_found
from kubedra.client.events import EventRecorder
from kubedra.client.informer import Informer, Informers, run_informed
from kubedra.client.rest import Client
from kubedra.client.workqueue import WorkQueue

log = logging.getLogger(__name__)

NODE_LEASE_NAMESPACE = "kube-node-lease"
EXCLUDE_DISRUPTION_LABEL = "node.kubernetes.io/exclude-disruption"
EVICTION_PERIOD = 0.1
"""Seconds between passes of the NoExecute tainting queues (upstream NodeEvictionPeriod)."""
UPDATE_RETRIES = 5
"""Attempts at one Node status write, re-reading it between them (NodeHealthUpdateRetry)."""

# the conditions the controller sets Unknown; NetworkUnavailable is the network's to say
_WATCHED_CONDITIONS = ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure")
_NO_SCHEDULE_TAINTS = {
    ("Ready", "False"): NOT_READY, ("Ready", "Unknown"): UNREACHABLE,
    ("MemoryPressure", "True"): MEMORY_PRESSURE, ("DiskPressure", "True"): DISK_PRESSURE,
    ("NetworkUnavailable", "True"): NETWORK_UNAVAILABLE, ("PIDPressure", "True"): PID_PRESSURE,
}
_CONDITION_TAINT_KEYS = frozenset(_NO_SCHEDULE_TAINTS.values()) | {UNSCHEDULABLE}
NOT_READY_TAINT = Taint(key=NOT_READY, effect=NO_EXECUTE)
UNREACHABLE_TAINT = Taint(key=UNREACHABLE, effect=NO_EXECUTE)


@dataclass(frozen=True)
class NodeLifecycleConfig:
    """The controller's flags, with upstream's defaults."""

    monitor_period: float = 5.0
    grace_period: float = 40.0
    startup_grace_period: float = 60.0
    eviction_rate: float = 0.1
    secondary_eviction_rate: float = 0.01
    unhealthy_zone_threshold: float = 0.55
    large_cluster_size_threshold: int = 50


class ZoneState(Enum):
    INITIAL = "Initial"
    NORMAL = "Normal"
    FULL_DISRUPTION = "FullDisruption"
    PARTIAL_DISRUPTION = "PartialDisruption"


def zone_key(node: Node) -> str:
    """``GetZoneKey``: region and zone from the topology labels (or their beta forms)."""
    labels = node.metadata.labels or {}
    region = (labels.get("topology.kubernetes.io/region")
              or labels.get("failure-domain.beta.kubernetes.io/region", ""))
    zone = (labels.get("topology.kubernetes.io/zone")
            or labels.get("failure-domain.beta.kubernetes.io/zone", ""))
    return f"{region}:\x00:{zone}" if region or zone else ""


def condition(conditions: Iterable[NodeCondition] | None, type_: str) -> NodeCondition | None:
    return next((c for c in conditions or () if c.type == type_), None)


def _seconds(stamp: str | None) -> float:
    return datetime.fromisoformat(stamp).timestamp() if stamp else 0.0


def zone_state(ready: list[NodeCondition | None], threshold: float) -> tuple[int, ZoneState]:
    """``ComputeZoneState``: the unready Nodes of a zone and what that makes the zone."""
    unready = sum(1 for c in ready if c is None or c.status != "True")
    if unready and unready == len(ready):
        return unready, ZoneState.FULL_DISRUPTION
    if unready > 2 and unready / len(ready) >= threshold:
        return unready, ZoneState.PARTIAL_DISRUPTION
    return unready, ZoneState.NORMAL


def no_schedule_taints(node: Node) -> list[Taint]:
    """The NoSchedule taints a Node's conditions and ``spec.unschedulable`` call for."""
    keys = [_NO_SCHEDULE_TAINTS[(c.type, c.status)] for c in node.status.conditions or ()
            if (c.type, c.status) in _NO_SCHEDULE_TAINTS]
    if node.spec.unschedulable:
        keys.append(UNSCHEDULABLE)
    return [Taint(key=k, effect=NO_SCHEDULE) for k in keys]


def has_taint(node: Node, taint: Taint) -> bool:
    return any(t.key == taint.key and t.effect == taint.effect for t in node.spec.taints or ())


def swapped(taints: list[Taint] | None, add: Iterable[Taint], remove: Iterable[Taint],
            now: str) -> list[Taint]:
    """``taints`` without those of ``remove``'s key and effect, with ``add`` appended (stamped
    ``timeAdded``, as SwapNodeControllerTaint) unless already there."""
    gone = {(t.key, t.effect) for t in remove}
    out = [t for t in taints or () if (t.key, t.effect) not in gone]
    have = {(t.key, t.effect) for t in out}
    out += [msgspec.structs.replace(t, time_added=now) for t in add
            if (t.key, t.effect) not in have]
    return out


class TokenBucket:
    """``flowcontrol.NewTokenBucketRateLimiter(qps, 1)``; a rate of 0 accepts nothing."""

    def __init__(self, qps: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.qps = qps
        self._clock = clock
        self._tokens = 1.0
        self._at = clock()

    def try_accept(self) -> bool:
        if self.qps <= 0:
            return False
        now = self._clock()
        self._tokens = min(1.0, self._tokens + (now - self._at) * self.qps)
        self._at = now
        if self._tokens < 1.0:
            return False
        self._tokens -= 1.0
        return True


@dataclass
class _ZoneQueue:
    """A zone's Nodes waiting for their NoExecute taint (``RateLimitedTimedQueue``)."""

    limiter: TokenBucket
    nodes: OrderedDict[str, float] = field(default_factory=OrderedDict)  # name -> not before


@dataclass
class _Health:
    """What the controller last saw of a Node (``nodeHealthData``); times are this
    controller's wall clock."""

    ready: NodeCondition | None
    probe: float
    ready_transition: float
    lease_renew: str | None = None


class NodeLifecycleController:
    def __init__(self, client: Client, informers: Informers,
                 config: NodeLifecycleConfig | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.client = client
        self.config = config or NodeLifecycleConfig()
        self.now = clock
        self.nodes = informers.get(Node)
        self.pods = informers.get(Pod)
        self.leases: Informer[Lease] = Informer(client, Lease, namespace=NODE_LEASE_NAMESPACE,
                                                trim_managed_fields=True)
        self.events = EventRecorder(client, "node-controller")
        self.queue = WorkQueue("node_lifecycle_controller")
        self._health: dict[str, _Health] = {}
        self._known: dict[str, Node] = {}
        self._zones: dict[str, ZoneState] = {}
        self._tainters: dict[str, _ZoneQueue] = {}
        self._to_retry: set[str] = set()
        self._queued = asyncio.Event()
        self.nodes.add_handler(on_add=self._node_changed,
                               on_update=lambda _old, new: self._node_changed(new))

    def _node_changed(self, node: Node) -> None:
        self.queue.add(node.metadata.name or "")

    # --- running --------------------------------------------------------------------------

    async def run(self) -> None:
        log.info("Starting controller", {"controller": "node-lifecycle-controller"})

        async def work() -> None:
            await asyncio.gather(self.queue.run_workers(self._sync_no_schedule_taints, 1),
                                 self._monitor_forever(), self._taint_no_execute_forever())

        await run_informed([self.nodes, self.pods, self.leases], work)

    async def stop(self) -> None:
        await self.leases.stop()

    async def _monitor_forever(self) -> None:
        while True:
            try:
                await self.monitor()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("monitoring node health failed; trying again next period")
            await asyncio.sleep(self.config.monitor_period)

    # --- NoSchedule taints (doNoScheduleTaintingPass) ---------------------------------------

    async def _sync_no_schedule_taints(self, name: str) -> None:
        node = self.nodes.get(name)
        if node is None:
            return
        wanted = no_schedule_taints(node)
        have = [t for t in node.spec.taints or ()
                if t.effect == NO_SCHEDULE and t.key in _CONDITION_TAINT_KEYS]
        wanted_keys = {t.key for t in wanted}
        have_keys = {t.key for t in have}
        add = [t for t in wanted if t.key not in have_keys]
        remove = [t for t in have if t.key not in wanted_keys]
        if add or remove:
            await self.swap_taints(name, add, remove)

    async def swap_taints(self, name: str, add: list[Taint], remove: list[Taint]) -> bool:
        """Write the Node's taints with ``add`` and without ``remove``, re-reading it on a
        conflict; False when the Node is gone."""
        for _ in range(UPDATE_RETRIES):
            try:
                node = await self.client.get(Node, name)
            except ApiError as e:
                if is_not_found(e):
                    return False
                raise
            taints = swapped(node.spec.taints, add, remove, format_time(self.now()))
            if taints == (node.spec.taints or []):
                return True
            node.spec.taints = taints or None
            try:
                await self.client.update(node)
                return True
            except ApiError as e:
                if not is_conflict(e):
                    raise
        raise RuntimeError(f"node {name}: taints still conflicting after {UPDATE_RETRIES} tries")

    # --- health (monitorNodeHealth) -------------------------------------------------------

    async def monitor(self) -> None:
        """One pass over every Node: health, NoExecute tainting, pods, zone states."""
        nodes = self.nodes.list()
        current = {n.metadata.name or "": n for n in nodes}
        for name, node in current.items():
            if name not in self._known:
                self._known[name] = node
                await self._node_event(node, "Normal", "RegisteredNode",
                                       f"Registered Node {name} in Controller")
                self._tainter(zone_key(node))
                await self._mark_reachable(node)
        for name in list(self._known):
            if name not in current:
                node = self._known.pop(name)
                await self._node_event(node, "Normal", "RemovingNode",
                                       f"Removing Node {name} from Controller")
                self._health.pop(name, None)
                self._tainter(zone_key(node)).nodes.pop(name, None)
        by_zone: dict[str, list[NodeCondition | None]] = defaultdict(list)
        for node in nodes:
            name = node.metadata.name or ""
            try:
                node, observed, ready = await self._update_health_retrying(node)
            except Exception as e:
                log.error("Update health of Node from Controller error, skipping",
                          {"node": name, "err": str(e)})
                continue
            if EXCLUDE_DISRUPTION_LABEL not in (node.metadata.labels or {}):
                by_zone[zone_key(node)].append(ready)
            if ready is None:
                continue
            await self._taint_for_eviction(node, observed)
            became_unready = ready.status != "True" and observed.status == "True"
            if became_unready:
                await self._node_event(node, "Normal", "NodeNotReady",
                                       f"Node {name} status is now: NodeNotReady")
            retry = name in self._to_retry and observed.status != "True"
            if (became_unready or retry) and not await self._mark_pods_not_ready(name):
                self._to_retry.add(name)
                continue
            self._to_retry.discard(name)
        await self._handle_disruption(by_zone, nodes)

    async def _update_health_retrying(self, node: Node,
                                      ) -> tuple[Node, NodeCondition, NodeCondition | None]:
        name = node.metadata.name or ""
        for attempt in range(UPDATE_RETRIES):
            try:
                return await self.update_health(node)
            except ApiError as e:
                if is_not_found(e) or attempt == UPDATE_RETRIES - 1:
                    raise
                node = await self.client.get(Node, name)
        raise AssertionError("unreachable")

    async def update_health(self, node: Node,
                            ) -> tuple[Node, NodeCondition, NodeCondition | None]:
        """``tryUpdateNodeHealth``: the Node (as written, if it was marked Unknown because
        its grace period passed), its Ready condition as observed before, and as it is now.
        ``node`` itself, an informer's object, is left as it is."""
        name = node.metadata.name or ""
        now = self.now()
        health = self._health.get(name)
        ready = condition(node.status.conditions, "Ready")
        if ready is None:
            created = node.metadata.creation_timestamp
            observed = NodeCondition(type="Ready", status="Unknown", last_heartbeat_time=created,
                                     last_transition_time=created)
            grace = self.config.startup_grace_period
            if health is None:
                health = _Health(None, _seconds(created), _seconds(created))
            else:
                health.ready = None
        else:
            observed = msgspec.structs.replace(ready)
            grace = self.config.grace_period
        saved = health.ready if health is not None else None
        if health is None or (saved is None and ready is not None):
            health = _Health(ready, now, now, health.lease_renew if health else None)
        elif saved is not None and ready is None:
            log.error("ReadyCondition was removed from Status of Node", {"node": name})
            health = _Health(None, now, now, health.lease_renew)
        elif (saved is not None and ready is not None
              and saved.last_heartbeat_time != ready.last_heartbeat_time):
            transition = (now if saved.last_transition_time != ready.last_transition_time
                          else health.ready_transition)
            health = _Health(ready, now, transition, health.lease_renew)
        # a renewed Lease is a heartbeat too (the kubelet posts its status far less often)
        lease = self.leases.get(name, NODE_LEASE_NAMESPACE)
        renew = lease.spec.renew_time if lease is not None else None
        if renew and (health.lease_renew is None or _seconds(health.lease_renew)
                      < _seconds(renew)):
            health.lease_renew = renew
            health.probe = now
        self._health[name] = health
        if now <= health.probe + grace:
            return node, observed, ready
        stamp = format_time(now)
        conditions = list(node.status.conditions or ())
        for type_ in _WATCHED_CONDITIONS:
            cond = condition(conditions, type_)
            if cond is None:
                conditions.append(NodeCondition(
                    type=type_, status="Unknown", reason="NodeStatusNeverUpdated",
                    message="Kubelet never posted node status.",
                    last_heartbeat_time=node.metadata.creation_timestamp,
                    last_transition_time=stamp))
            elif cond.status != "Unknown":
                log.info("Node hasn't been updated", {
                    "node": name, "duration": f"{now - health.probe:.1f}s",
                    "nodeConditionType": type_})
                conditions[conditions.index(cond)] = msgspec.structs.replace(
                    cond, status="Unknown", reason="NodeStatusUnknown",
                    message="Kubelet stopped posting node status.", last_transition_time=stamp)
        current = condition(conditions, "Ready")
        if current != observed:
            node = await self.client.update_status(msgspec.structs.replace(
                node, status=msgspec.structs.replace(node.status, conditions=conditions)))
            self._health[name] = _Health(current, health.probe, now, health.lease_renew)
        return node, observed, current

    async def _mark_pods_not_ready(self, node_name: str) -> bool:
        """``MarkPodsNotReady``: Ready=False on each pod of the Node, with an event; False
        when some write failed (tried again next pass)."""
        ok = True
        for pod in [p for p in self.pods.list() if p.spec.node_name == node_name]:
            ready = next((c for c in pod.status.conditions or () if c.type == "Ready"), None)
            if ready is None or ready.status == "False":
                continue
            conditions = [msgspec.structs.replace(c, status="False",
                                                  last_transition_time=format_time(self.now()))
                          if c is ready else c for c in pod.status.conditions or ()]
            try:
                await self.client.update_status(msgspec.structs.replace(
                    pod, status=msgspec.structs.replace(pod.status, conditions=conditions)))
            except ApiError as e:
                if is_not_found(e):
                    continue
                log.info("Failed to update status for pod",
                         {"pod": f"{pod.metadata.namespace}/{pod.metadata.name}", "err": str(e)})
                ok = False
                continue
            await self.events.record(pod, "Warning", "NodeNotReady", "Node is not ready")
        return ok

    async def _node_event(self, node: Node, event_type: str, reason: str, message: str) -> None:
        await self.events.record(node, event_type, reason, message)

    # --- NoExecute taints (processTaintBaseEviction, doNoExecuteTaintingPass) -------------

    def _tainter(self, zone: str) -> _ZoneQueue:
        queue = self._tainters.get(zone)
        if queue is None:
            queue = self._tainters[zone] = _ZoneQueue(TokenBucket(self.config.eviction_rate))
            self._zones.setdefault(zone, ZoneState.INITIAL)
        return queue

    async def _taint_for_eviction(self, node: Node, observed: NodeCondition) -> None:
        name = node.metadata.name or ""
        if observed.status == "True":
            if await self._mark_reachable(node):
                log.info("Node is healthy again, removed all taints", {"node": name})
            return
        taint, opposite = ((NOT_READY_TAINT, UNREACHABLE_TAINT) if observed.status == "False"
                           else (UNREACHABLE_TAINT, NOT_READY_TAINT))
        if has_taint(node, opposite):  # at once: the two mirror the one Ready condition
            await self.swap_taints(name, [taint], [opposite])
            return
        queue = self._tainter(zone_key(node))
        if not has_taint(node, taint) and name not in queue.nodes:
            log.info("Node is unresponsive. Adding it to the Taint queue", {"node": name})
            queue.nodes[name] = 0.0
            self._queued.set()

    async def _mark_reachable(self, node: Node) -> bool:
        """Remove both NoExecute taints; True when there was one."""
        self._tainter(zone_key(node)).nodes.pop(node.metadata.name or "", None)
        if not (has_taint(node, NOT_READY_TAINT) or has_taint(node, UNREACHABLE_TAINT)):
            return False
        return await self.swap_taints(node.metadata.name or "", [],
                                      [NOT_READY_TAINT, UNREACHABLE_TAINT])

    async def _taint_no_execute_forever(self) -> None:
        while True:
            if not any(q.nodes for q in self._tainters.values()):
                self._queued.clear()
                await self._queued.wait()
            for zone, queue in list(self._tainters.items()):
                try:
                    await self._taint_zone(zone, queue)
                except asyncio.CancelledError:
                    raise
                except Exception:
                    log.exception("tainting the nodes of zone %r failed", zone)
            await asyncio.sleep(EVICTION_PERIOD)

    async def _taint_zone(self, zone: str, queue: _ZoneQueue) -> None:
        now = time.monotonic()
        for name, not_before in list(queue.nodes.items()):
            if not_before > now:
                continue
            if not queue.limiter.try_accept():
                return
            node = self.nodes.get(name)
            ready = condition(node.status.conditions, "Ready") if node is not None else None
            if node is None or ready is None or ready.status == "True":
                queue.nodes.pop(name, None)  # gone, never reported, or Ready again
                continue
            taint, opposite = ((NOT_READY_TAINT, UNREACHABLE_TAINT) if ready.status == "False"
                               else (UNREACHABLE_TAINT, NOT_READY_TAINT))
            try:
                await self.swap_taints(name, [taint], [opposite])
            except ApiError as e:
                log.info("tainting node %s failed (retrying): %s", name, e)
                queue.nodes[name] = now + 0.05
                continue
            queue.nodes.pop(name, None)

    # --- zones (handleDisruption) ---------------------------------------------------------

    def _zone_rate(self, state: ZoneState, size: int) -> float:
        if state is ZoneState.PARTIAL_DISRUPTION:
            return (self.config.secondary_eviction_rate
                    if size > self.config.large_cluster_size_threshold else 0.0)
        return self.config.eviction_rate

    async def _handle_disruption(self, by_zone: dict[str, list[NodeCondition | None]],
                                 nodes: list[Node]) -> None:
        new_states = {}
        all_fully_disrupted = True
        for zone, ready in by_zone.items():
            _, state = zone_state(ready, self.config.unhealthy_zone_threshold)
            all_fully_disrupted &= state is ZoneState.FULL_DISRUPTION
            new_states[zone] = state
            self._tainter(zone)
        for zone in [z for z in self._zones if z not in by_zone]:
            del self._zones[zone]
        all_were_fully_disrupted = all(
            s is ZoneState.FULL_DISRUPTION for s in self._zones.values())
        if all_fully_disrupted and all_were_fully_disrupted:
            return
        if all_fully_disrupted:
            log.info("Controller detected that all Nodes are not-Ready. Entering master "
                     "disruption mode")
            for node in nodes:
                await self._mark_reachable(node)
            for zone in self._zones:
                self._tainter(zone).limiter = TokenBucket(0.0)
                self._zones[zone] = ZoneState.FULL_DISRUPTION
            return
        if all_were_fully_disrupted:
            log.info("Controller detected that some Nodes are Ready. Exiting master "
                     "disruption mode")
            now = self.now()
            for health in self._health.values():
                health.probe = health.ready_transition = now
            for zone in self._zones:
                self._set_zone(zone, new_states[zone], len(by_zone[zone]))
            return
        for zone, state in list(self._zones.items()):
            if state is not new_states[zone]:
                log.info("Controller detected that zone is now in new state",
                         {"zone": zone, "newState": new_states[zone].value})
                self._set_zone(zone, new_states[zone], len(by_zone[zone]))

    def _set_zone(self, zone: str, state: ZoneState, size: int) -> None:
        self._tainter(zone).limiter = TokenBucket(self._zone_rate(state, size))
        self._zones[zone] = state


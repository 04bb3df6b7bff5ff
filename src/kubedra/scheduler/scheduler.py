"""The scheduler: takes pending pods from the queue, finds a node through the plugins,
reserves, and binds in the background so the next pod's cycle can start at once.

Plugins take part in the extension points their :class:`~.framework.Profile` lists them for
(one Protocol per stage in :mod:`.framework`). Scoring (see :meth:`Scheduler._select`) is
upstream's: PreScore, Score, NormalizeScore, times the weight, summed; the node is drawn
uniformly among the best (reservoir sampling, as upstream's ``selectHost``) from the
scheduler's random generator, which a seed makes reproducible.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import functools
import itertools
import logging
import operator
import random
import time
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping, Sequence

from kubedra.api.core import Node, Pod
from kubedra.client.informer import Informers
from kubedra.client.rest import Client
from kubedra.scheduler.cache import SchedulerCache
from kubedra.scheduler.framework import (
    SUCCESS,
    Code,
    CycleState,
    Diagnosis,
    FilterPlugin,
    NodeInfo,
    Plugin,
    Profile,
    ReservePlugin,
    Status,
    error,
    event_message,
    feasible_nodes_to_find,
    fit_error_message,
)
from kubedra.scheduler.metrics import ERROR, SCHEDULED, UNSCHEDULABLE, SchedulerMetrics
from kubedra.scheduler.queue import ClusterEvent, QueuedPod, SchedulingQueue, pod_key

log = logging.getLogger(__name__)

DEFAULT_SCHEDULER_NAME = "default-scheduler"
SCHEDULER_ERROR = "SchedulerError"
"""The PodScheduled condition's reason after an error (upstream ``PodReasonSchedulerError``)."""

GATED_REPORT_DELAY = 2.0
"""Seconds a PreEnqueue plugin must keep rejecting a pod before the pod is reported, so a
rejection that the next informer event resolves (a claim seen before its pod, or after)
is not."""


class FilterError(Exception):
    """A Filter plugin answered Error: the search stops and the pod is retried with
    backoff (upstream ``findNodesThatPassFilters`` aborts)."""

    def __init__(self, status: Status) -> None:
        super().__init__(status.message)
        self.status = status


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class Scheduler:
    def __init__(self, client: Client, informers: Informers, profile: Profile, *,
                 scheduler_name: str = DEFAULT_SCHEDULER_NAME, parallel_binds: int = 32,
                 queue: SchedulingQueue | None = None,
                 record_event: Callable[[Pod, str, str, str], Awaitable[None]] | None = None,
                 metrics: SchedulerMetrics | None = None,
                 sampled_profile: Profile | None = None, seed: int | None = None,
                 percentage_of_nodes_to_score: int = 0,
                 more_profiles: Mapping[str, tuple[Profile, Profile]] | None = None) -> None:
        """``sampled_profile``: ``profile`` as run in the cycles whose plugin calls are timed
        (see metrics.sampled); ``more_profiles``: other scheduler names' (plain, sampled)
        profiles."""
        self.client = client
        self.informers = informers
        self.profile = profile
        self.profiles = {scheduler_name: (profile, sampled_profile or profile),
                         **(more_profiles or {})}
        """By scheduler name: the profile, and as run in sampled cycles."""
        self.scheduler_name = scheduler_name
        self.queue = queue if queue is not None else SchedulingQueue()
        self.queue.pre_enqueue = self._pre_enqueue
        self.metrics = metrics if metrics is not None else SchedulerMetrics(self.queue)
        self.cache = SchedulerCache()
        self._binds = asyncio.Semaphore(parallel_binds)
        self._bind_tasks: set[asyncio.Task[None]] = set()
        self._gated_checks: dict[str, asyncio.TimerHandle] = {}
        self._reports: set[asyncio.Task[None]] = set()
        self._record_event = record_event
        self.rng = random.Random(seed)
        """Breaks ties between the best nodes; seeded, placement is reproducible."""
        self.search = NodeSearch(percentage_of_nodes_to_score)
        registered: set[str] = set()
        for plain, _ in self.profiles.values():
            for plugin in plain.enqueue:
                if plugin.name not in registered:
                    registered.add(plugin.name)
                    for event, hint in plugin.events_to_register():
                        self.queue.register(plugin.name, event, hint)
        self.pods = informers.get(Pod)
        self.nodes = informers.get(Node)
        self._wire()

    # --- informers ----------------------------------------------------------------------------

    def _responsible(self, pod: Pod) -> bool:
        return (pod.spec.scheduler_name or DEFAULT_SCHEDULER_NAME) in self.profiles

    def _profiles_of(self, pod: Pod) -> tuple[Profile, Profile]:
        return self.profiles.get(pod.spec.scheduler_name or DEFAULT_SCHEDULER_NAME,
                                 (self.profile, self.profile))

    def _pre_enqueue(self, pod: Pod) -> set[str]:
        """PreEnqueue plugins that reject the pod. Such a pod waits until an event its
        rejectors registered for (or a pod update) moves it; one still rejected, not quietly,
        after :data:`GATED_REPORT_DELAY` is reported (upstream v1.30 reports none)."""
        rejections = [(p.name, s) for p in self._profiles_of(pod)[0].pre_enqueue
                      if not (s := p.pre_enqueue(pod)).ok]
        key = pod_key(pod)
        if (any(not s.quiet for _, s in rejections) and self._record_event is not None
                and key not in self._gated_checks):
            self._gated_checks[key] = asyncio.get_running_loop().call_later(
                GATED_REPORT_DELAY, self._report_gated, pod.metadata.namespace or "",
                pod.metadata.name or "")
        return {name for name, _ in rejections}

    def _report_gated(self, namespace: str, name: str) -> None:
        """FailedScheduling (and the condition) for a pod PreEnqueue still rejects, with the
        text upstream's PreFilter gives the same rejection: ``0/N nodes are available:
        resourceclaim.resource.k8s.io "x" not found.``"""
        self._gated_checks.pop(f"{namespace}/{name}", None)
        pod = self.pods.get(name, namespace)
        if pod is None or pod.spec.node_name or pod.metadata.deletion_timestamp is not None:
            return
        status = next((s for p in self._profiles_of(pod)[0].pre_enqueue
                       if not (s := p.pre_enqueue(pod)).ok and not s.quiet), None)
        if status is None:
            return
        diagnosis = Diagnosis(pre_filter_message=status.message)
        message = fit_error_message(len(self.cache.nodes), diagnosis)
        if any(c.type == "PodScheduled" and c.status == "False" and c.message == message
               for c in pod.status.conditions or ()):
            return  # reported already
        log.info("Unable to schedule pod; waiting", {"pod": pod_key(pod), "err": message})
        task = asyncio.create_task(
            self._report_unschedulable(pod, message, event_message(message, diagnosis)))
        self._reports.add(task)
        task.add_done_callback(self._reports.discard)

    def _wire(self) -> None:
        self.pods.add_handler(on_add=self._pod_added, on_update=self._pod_updated,
                              on_delete=self._pod_deleted)
        self.nodes.add_handler(
            on_add=lambda n: self._node_changed(n, ClusterEvent("Node", "Add"), None),
            on_update=lambda old, new: self._node_changed(new, ClusterEvent("Node", "Update"),
                                                          old),
            on_delete=lambda n: self.cache.remove_node(n.metadata.name or ""))

    def _pod_added(self, pod: Pod) -> None:
        if pod.spec.node_name:
            self.cache.set_pod(pod)
        elif (self._responsible(pod) and pod.metadata.deletion_timestamp is None
              and pod.status.phase not in ("Succeeded", "Failed")):
            self.queue.add(pod)

    def _pod_updated(self, old: Pod, new: Pod) -> None:
        if new.spec.node_name:
            self.cache.set_pod(new)
            self.queue.delete(pod_key(new))
            if new.status.phase in ("Succeeded", "Failed"):
                self.queue.on_event(ClusterEvent("Pod", "Delete"), old, new)
        elif self._responsible(new) and new.metadata.deletion_timestamp is None:
            self.queue.update(new)
        else:
            self.queue.delete(pod_key(new))

    def _pod_deleted(self, pod: Pod) -> None:
        self.queue.delete(pod_key(pod))
        if self.cache.node_of(pod) is not None:
            self.cache.remove_pod(pod)
            self.queue.on_event(ClusterEvent("Pod", "Delete"), pod, None)

    def _node_changed(self, node: Node, event: ClusterEvent, old: Node | None) -> None:
        self.cache.set_node(node)
        self.queue.on_event(event, old, node)

    # --- the loop ---------------------------------------------------------------------------

    async def run(self) -> None:
        try:
            await self.informers.run(self._schedule_forever)
        finally:
            for handle in self._gated_checks.values():
                handle.cancel()
            for task in [*self._bind_tasks, *self._reports]:
                task.cancel()

    async def _schedule_forever(self) -> None:
        while True:
            qp = await self.queue.pop()
            try:
                await self.schedule_one(qp)
            except Exception:
                log.exception("scheduling %s failed unexpectedly", qp.key)
                self.metrics.attempt(ERROR, self.scheduler_name, None)
                self.queue.requeue_error(qp)

    async def wait_binds(self) -> None:
        while self._bind_tasks:
            await asyncio.gather(*list(self._bind_tasks), return_exceptions=True)

    async def schedule_one(self, qp: QueuedPod) -> None:
        pod = self.pods.get(qp.pod.metadata.name or "", qp.pod.metadata.namespace) or qp.pod
        if pod.spec.node_name or pod.metadata.deletion_timestamp is not None:
            self.queue.forget(qp.key)
            return
        state = CycleState()
        state.started = time.monotonic()
        plain, sampled = self._profiles_of(pod)
        state.profile = sampled if self.metrics.sampled() else plain
        state.profile_name = pod.spec.scheduler_name or DEFAULT_SCHEDULER_NAME
        state.nodes, state.kept = self.cache.tally, self.cache.kept
        state.all_nodes = self.cache.node_infos()
        diagnosis = Diagnosis()
        rejectors: set[str] = set()
        skipped: set[str] = set()
        for plugin in state.profile.pre_filter:
            status = plugin.pre_filter(state, pod)
            if status.code is Code.SKIP:
                skipped.add(plugin.name)
            elif not status.ok:
                rejectors.add(plugin.name)
                diagnosis.pre_filter_message = status.message
                await self._fail(qp, pod, state, diagnosis, rejectors, _by(status, plugin))
                return
        filters = [p for p in state.profile.filter if p.name not in skipped]
        try:
            feasible = self._find_feasible(state, pod, filters, diagnosis, rejectors,
                                           self._shortlist(state, pod, skipped),
                                           state.profile.percentage_of_nodes_to_score)
        except FilterError as e:
            await self._fail(qp, pod, state, diagnosis, rejectors, e.status)
            return
        if not feasible:
            await self._fail(qp, pod, state, diagnosis, rejectors, None)
            return
        node = select_host(self.rng, feasible, score_nodes(state, pod, feasible))
        await self._assume_and_bind(qp, pod, state, node)

    @staticmethod
    def _shortlist(state: CycleState, pod: Pod, skipped: set[str]) -> Collection[str] | None:
        """The first shortlist a plugin of the cycle's profile gives (None: every node)."""
        return next((names for p in state.profile.shortlist if p.name not in skipped
                     and (names := p.shortlist(state, pod)) is not None), None)

    def _find_feasible(self, state: CycleState, pod: Pod, filters: Sequence[FilterPlugin],
                       diagnosis: Diagnosis, rejectors: set[str],
                       shortlist: Collection[str] | None = None,
                       percentage: int | None = None) -> list[NodeInfo]:
        return self.search.find(self.cache.node_infos(), state, pod, filters, diagnosis,
                                rejectors, shortlist, percentage)

    async def _fail(self, qp: QueuedPod, pod: Pod, state: CycleState, diagnosis: Diagnosis,
                    rejectors: set[str], status: Status | None) -> None:
        if status is not None and status.code is Code.ERROR:
            self._attempted(state, ERROR)
            log.info("Error scheduling pod; retrying", {"pod": qp.key, "err": status.message})
            self.queue.requeue_error(qp)
            # upstream's handleSchedulingFailure reports an error as it reports a misfit
            await self._report_unschedulable(pod, status.message,
                                             event_message(status.message, Diagnosis()),
                                             SCHEDULER_ERROR)
            return
        if status is None:
            for plugin in state.profile.post_filter:
                result = await plugin.post_filter(state, pod, diagnosis)
                if result.message:
                    diagnosis.post_filter_message = result.message
                if result.ok:
                    break
        message = fit_error_message(len(self.cache.nodes), diagnosis)
        self._attempted(state, UNSCHEDULABLE)
        log.info("Unable to schedule pod; no fit; waiting", {"pod": qp.key, "err": message})
        self.queue.requeue_unschedulable(qp, rejectors)
        await self._report_unschedulable(pod, message, event_message(message, diagnosis))

    async def _report_unschedulable(self, pod: Pod, message: str, event: str,
                                    reason: str = "Unschedulable") -> None:
        """The FailedScheduling ``event`` and the PodScheduled condition with ``message``
        (``reason`` ``SchedulerError`` for an error rather than a misfit)."""
        if self._record_event is not None:
            await self._record_event(pod, "Warning", "FailedScheduling", event)
        condition = {"type": "PodScheduled", "status": "False", "reason": reason,
                     "message": message, "lastTransitionTime": _now(), "lastProbeTime": None}
        for c in pod.status.conditions or ():
            if (c.type == "PodScheduled" and c.status == "False" and c.message == message):
                return
        try:
            await self.client.send_patch(Pod, pod.metadata.name or "", {
                "status": {"conditions": [condition]}}, namespace=pod.metadata.namespace,
                patch_type="strategic", subresource="status")
        except Exception as e:  # a stale pod must not stop scheduling
            log.info("could not update condition of %s: %s", pod_key(pod), e)

    # --- reserve and bind ---------------------------------------------------------------------

    async def _assume_and_bind(self, qp: QueuedPod, pod: Pod, state: CycleState,
                               node: NodeInfo) -> None:
        self.cache.assume(pod, node.name, (state.requests(pod), state.requests(pod, True)))
        reserved: list[ReservePlugin] = []
        for plugin in state.profile.reserve:
            status = plugin.reserve(state, pod, node.name)
            reserved.append(plugin)
            if not status.ok:
                self._unreserve(reserved, state, pod, node.name)
                self.cache.forget(pod)
                self._attempted(state, ERROR)
                log.info("Error scheduling pod; retrying",
                         {"pod": qp.key, "node": node.name, "err": status.message})
                self.queue.requeue_error(qp)
                return
        await self._binds.acquire()
        task = asyncio.create_task(self._bind(qp, pod, state, node.name))
        self._bind_tasks.add(task)
        task.add_done_callback(self._bind_tasks.discard)

    def _attempted(self, state: CycleState, result: str) -> None:
        self.metrics.attempt(result, state.profile_name or self.scheduler_name,
                             time.monotonic() - state.started)

    def _unreserve(self, plugins: Sequence[ReservePlugin], state: CycleState, pod: Pod,
                   node: str) -> None:
        for plugin in reversed(plugins):
            plugin.unreserve(state, pod, node)

    async def _bind(self, qp: QueuedPod, pod: Pod, state: CycleState, node: str) -> None:
        try:
            for plugin in state.profile.pre_bind:
                status = await plugin.pre_bind(state, pod, node)
                if not status.ok:
                    raise RuntimeError(status.message)
            await self.client.bind(pod.metadata.namespace or "", pod.metadata.name or "", node,
                                   pod.metadata.uid)
        except Exception as e:
            self._attempted(state, ERROR)
            log.info("Failed to bind pod", {"pod": qp.key, "node": node, "err": str(e)})
            self._unreserve(state.profile.reserve, state, pod, node)
            for after in state.profile.after_unreserve:
                await after.after_unreserve(state, pod)
            self.cache.forget(pod)
            self.queue.requeue_error(qp)
            return
        finally:
            self._binds.release()
        self.queue.forget(qp.key)
        self._attempted(state, SCHEDULED)
        log.info("Successfully bound pod to node", {"pod": qp.key, "node": node})
        for bound in state.profile.post_bind:
            bound.post_bind(state, pod, node)
        if self._record_event is not None:
            await self._record_event(
                pod, "Normal", "Scheduled",
                f"Successfully assigned {pod.metadata.namespace}/{pod.metadata.name} to {node}")


class NodeSearch:
    """The search for feasible nodes: round-robin from where the last pod's search stopped
    (upstream ``nextStartNodeIndex``) until enough are found (percentageOfNodesToScore).
    The scheduler and the simulation (:mod:`.offline`) search alike."""

    def __init__(self, percentage_of_nodes_to_score: int = 0) -> None:
        self.next_start = 0
        self.percentage = percentage_of_nodes_to_score

    def find(self, infos: Sequence[NodeInfo], state: CycleState, pod: Pod,
             filters: Sequence[FilterPlugin], diagnosis: Diagnosis, rejectors: set[str],
             shortlist: Collection[str] | None = None,
             percentage: int | None = None) -> list[NodeInfo]:
        """Nodes off the ``shortlist`` are passed over (counted as checked), and filtered only
        if no node is feasible: the only case in which the reasons in ``diagnosis`` and
        ``rejectors`` are read. ``percentage``: the profile's percentageOfNodesToScore
        (None: the scheduler's)."""
        n = len(infos)
        if not n:
            return []
        want = feasible_nodes_to_find(n, self.percentage if percentage is None else percentage)
        start = self.next_start % n
        passed_over: list[NodeInfo] = []
        feasible, checked = self._filter_nodes(
            state, pod, filters, itertools.chain(itertools.islice(infos, start, None),
                                                 itertools.islice(infos, start)),
            want, diagnosis, rejectors, shortlist, passed_over)
        self.next_start = (start + checked) % n
        if not feasible and passed_over:  # the FitError gives every node's reason
            feasible, _ = self._filter_nodes(state, pod, filters, passed_over, want, diagnosis,
                                             rejectors, None, [])
        return feasible

    @staticmethod
    def _filter_nodes(state: CycleState, pod: Pod, filters: Sequence[FilterPlugin],
                      nodes: Iterable[NodeInfo], want: int, diagnosis: Diagnosis,
                      rejectors: set[str], shortlist: Collection[str] | None,
                      passed_over: list[NodeInfo]) -> tuple[list[NodeInfo], int]:
        """The feasible nodes (at most ``want``) and how many nodes were checked; raises
        :class:`FilterError`. This loop is the hot path."""
        checks = [(p.filter, p) for p in filters]
        feasible: list[NodeInfo] = []
        checked = 0
        last: tuple[Status | None, object, Status] = (None, None, SUCCESS)
        for info in nodes:
            checked += 1
            if shortlist is not None and info.name not in shortlist:
                passed_over.append(info)
                continue
            for check, plugin in checks:
                status = check(state, pod, info)
                if status is not SUCCESS and status.code is not Code.SUCCESS:
                    if status.code is Code.ERROR:  # upstream RunFilterPlugins' wording
                        raise FilterError(_by(error(
                            f'running "{plugin.name}" filter plugin: {status.message}'), plugin))
                    if status is not last[0] or plugin is not last[1]:  # the same one, mostly
                        last = (status, plugin, _by(status, plugin))
                    diagnosis.node_statuses[info.name] = last[2]
                    rejectors.add(plugin.name)
                    break
            else:
                feasible.append(info)
                if len(feasible) >= want:
                    break
        return feasible, checked


def score_nodes(state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
                ) -> dict[str, list[int]]:
    """Each scoring plugin's weighted, normalised score per node (same order as ``nodes``),
    by plugin name: PreScore (SKIP leaves a plugin out), Score, NormalizeScore, weight.
    One feasible node is not scored (upstream)."""
    profile = state.profile
    if len(nodes) < 2 or not profile.score:
        return {}
    skipped = {p.name for p in profile.pre_score
               if p.pre_score(state, pod, nodes).code is Code.SKIP}
    normalizers = {p.name: p for p in profile.normalize_score}
    table: dict[str, list[int]] = {}
    for plugin in profile.score:
        if plugin.name in skipped:
            continue
        scores = plugin.scores(state, pod, nodes)
        normalizer = normalizers.get(plugin.name)
        if normalizer is not None:
            normalizer.normalize_score(state, pod, nodes, scores)
        weight = plugin.weight
        table[plugin.name] = [s * weight for s in scores] if weight != 1 else scores
    return table


def select_host(rng: random.Random, nodes: Sequence[NodeInfo],
                table: dict[str, list[int]]) -> NodeInfo:
    """Upstream ``selectHost``: the node with the highest total, a tie going to each of the
    tied nodes with equal chance (upstream's reservoir sampling draws once per tied node; one
    draw among them has the same distribution). Summed, searched and picked in C: with
    hundreds of feasible nodes this runs once per pod."""
    if not table:
        return nodes[0] if len(nodes) == 1 else nodes[rng.randrange(len(nodes))]
    columns = iter(table.values())
    totals = next(columns)
    for column in columns:  # a pass in C per plugin (summing per node is slower)
        totals = list(map(operator.add, totals, column))
    best = max(totals)
    count = totals.count(best)
    if count == 1:
        return nodes[totals.index(best)]
    tied = list(itertools.compress(range(len(totals)), map(best.__eq__, totals)))
    return nodes[tied[rng.randrange(count)]]


@functools.lru_cache(maxsize=1024)
def _named(status: Status, plugin: str) -> Status:
    return dataclasses.replace(status, plugin=plugin)


def _by(status: Status, plugin: Plugin) -> Status:
    """``status`` as returned by ``plugin`` (upstream ``Status.SetPlugin``); plugins repeat a
    few statuses very often, so the named copies are shared."""
    return _named(status, plugin.name)

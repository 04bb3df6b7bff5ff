"""Assembling a scheduler against an API server: informers, DRA state, plugins, writers."""

from __future__ import annotations

from typing import Any

from kubedra.api.core import Pod
from kubedra.api.resource import (
    ResourceClaim,
    ResourceClaimParameters,
    ResourceClass,
    ResourceClassParameters,
    ResourceSlice,
)
from kubedra.api.resourceclaim import claim_names
from kubedra.client.events import EventRecorder
from kubedra.client.informer import Informers
from kubedra.client.rest import Client
from kubedra.scheduler.claimwriter import ClientClaimWriter
from kubedra.scheduler.framework import Profile
from kubedra.scheduler.metrics import SchedulerMetrics, timed_profile
from kubedra.scheduler.plugins.dynamicresources import DRAState, DynamicResources, frees_instances
from kubedra.scheduler.plugins.nodes import (
    NodeAffinity,
    NodeName,
    NodeResourcesFit,
    NodeUnschedulable,
    TaintToleration,
)
from kubedra.scheduler.queue import ClusterEvent, SchedulingQueue, pod_key
from kubedra.scheduler.scheduler import DEFAULT_SCHEDULER_NAME, Scheduler


def default_profile(dra: DynamicResources) -> Profile:
    """The default profile, in upstream's filter order (cheap checks first)."""
    unschedulable, node_name, taints = NodeUnschedulable(), NodeName(), TaintToleration()
    affinity, fit = NodeAffinity(), NodeResourcesFit()
    return Profile(
        pre_enqueue=[dra],
        enqueue=[taints, dra],
        pre_filter=[unschedulable, node_name, taints, affinity, fit, dra],
        filter=[unschedulable, node_name, taints, affinity, fit, dra],
        shortlist=[dra],
        post_filter=[dra],
        score=[dra],
        reserve=[dra],
        after_unreserve=[dra],
        pre_bind=[dra],
    )


def wire_dra(informers: Informers, state: DRAState, queue: SchedulingQueue) -> None:
    """Informer events update ``state`` first, then move pods the event may help."""
    def on(resource: str, add: Any, delete: Any, model: type[Any]) -> None:
        def added(obj: Any) -> None:
            add(obj)
            queue.on_event(ClusterEvent(resource, "Add"), None, obj)

        def updated(old: Any, new: Any) -> None:
            add(new)
            queue.on_event(ClusterEvent(resource, "Update"), old, new)

        informers.get(model).add_handler(on_add=added, on_update=updated, on_delete=delete)

    users = ClaimUsers(informers)

    def claim_event(action: str, old: ResourceClaim | None, new: ResourceClaim) -> None:
        state.set_claim(new)
        meta = new.metadata
        only = None if old is not None and frees_instances(old, new) else users.of(
            meta.namespace or "", meta.name or "")
        queue.on_event(ClusterEvent("ResourceClaim", action), old, new, only)

    informers.get(ResourceClaim).add_handler(
        on_add=lambda c: claim_event("Add", None, c),
        on_update=lambda old, new: claim_event("Update", old, new),
        on_delete=state.delete_claim)
    on("ResourceClass", state.set_class, state.delete_class, ResourceClass)
    on("ResourceSlice", state.index.upsert_slice,
       lambda s: state.index.delete_slice(s.metadata.name or ""), ResourceSlice)
    on("ResourceClaimParameters", state.parameters.upsert_claim_parameters,
       lambda p: state.parameters.delete_claim_parameters(p.metadata.namespace or "",
                                                          p.metadata.name or ""),
       ResourceClaimParameters)
    on("ResourceClassParameters", state.parameters.upsert_class_parameters,
       lambda p: state.parameters.delete_class_parameters(p.metadata.namespace or "",
                                                          p.metadata.name or ""),
       ResourceClassParameters)


class ClaimUsers:
    """Which pods (``ns/name``) name which claims: a claim event is shown to those pods'
    hints only (others would answer QueueSkip), which keeps events O(users), not O(pods)."""

    def __init__(self, informers: Informers) -> None:
        self._users: dict[tuple[str, str], set[str]] = {}
        self._names: dict[str, tuple[str, set[str]]] = {}
        informers.get(Pod).add_handler(on_add=self._set, on_update=lambda _o, n: self._set(n),
                                       on_delete=self._delete)

    def of(self, namespace: str, claim: str) -> set[str]:
        return self._users.get((namespace, claim), set())

    def _set(self, pod: Pod) -> None:
        key = pod_key(pod)
        names = claim_names(pod)
        if self._names.get(key, ("", set()))[1] == names:
            return
        self._delete(pod)
        if names:
            ns = pod.metadata.namespace or ""
            self._names[key] = (ns, names)
            for name in names:
                self._users.setdefault((ns, name), set()).add(key)

    def _delete(self, pod: Pod) -> None:
        ns, names = self._names.pop(pod_key(pod), ("", set()))
        for name in names:
            users = self._users.get((ns, name))
            if users is not None:
                users.discard(pod_key(pod))
                if not users:
                    del self._users[(ns, name)]


def build_scheduler(client: Client, *, scheduler_name: str = DEFAULT_SCHEDULER_NAME,
                    record_events: bool = True) -> Scheduler:
    informers = Informers(client, trim_managed_fields={Pod})  # as kube-scheduler's pods
    queue = SchedulingQueue()
    metrics = SchedulerMetrics(queue)
    state = DRAState()
    wire_dra(informers, state, queue)
    dra = DynamicResources(state, ClientClaimWriter(client))
    recorder = EventRecorder(client, scheduler_name)

    async def record(pod: Pod, event_type: str, reason: str, message: str) -> None:
        await recorder.record(pod, event_type, reason, message)

    profile = default_profile(dra)
    # the DRA plugin's calls are timed for scheduler_plugin_execution_duration_seconds
    return Scheduler(client, informers, profile, scheduler_name=scheduler_name,
                     queue=queue, record_event=record if record_events else None,
                     metrics=metrics, sampled_profile=timed_profile(profile, metrics, [dra]))

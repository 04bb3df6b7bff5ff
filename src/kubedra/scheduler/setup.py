"""Assembling a scheduler against an API server: informers, DRA state, plugins, writers."""

from __future__ import annotations

import dataclasses
from typing import Any

from kubedra.allocation.features import Features
from kubedra.api.core import Namespace, Pod
from kubedra.api.features import FeatureGates
from kubedra.api.release import R1_30, R1_34, Release
from kubedra.api.resource import v1
from kubedra.api.resource.v1alpha2 import (
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
from kubedra.scheduler.claimwriter import ClientClaimWriter, DeviceClaimWriter
from kubedra.scheduler.config import ProfileConfig, SchedulerConfig, default_config
from kubedra.scheduler.framework import Profile
from kubedra.scheduler.metrics import SchedulerMetrics, timed_profile
from kubedra.scheduler.plugins.dradevices import DeviceState
from kubedra.scheduler.plugins.dynamicresources import (
    ClaimModel,
    ClaimWriter,
    DRAState,
    DynamicResources,
    DynamicResourcesPacking,
)
from kubedra.scheduler.plugins.interpodaffinity import InterPodAffinity, NamespaceLabels
from kubedra.scheduler.plugins.nodeaffinity import NodeAffinityScore
from kubedra.scheduler.plugins.noderesources import (
    BalancedAllocation,
    ImageLocality,
    LeastAllocatedScore,
)
from kubedra.scheduler.plugins.nodes import (
    NodeAffinity,
    NodeName,
    NodeResourcesFit,
    NodeUnschedulable,
    TaintToleration,
)
from kubedra.scheduler.plugins.podtopologyspread import PodTopologySpread
from kubedra.scheduler.plugins.tainttoleration import TaintTolerationScore
from kubedra.scheduler.queue import ClusterEvent, SchedulingQueue, pod_key
from kubedra.scheduler.scheduler import DEFAULT_SCHEDULER_NAME, Scheduler

IMPLEMENTS: dict[str, frozenset[str]] = {name: frozenset(points) for name, points in {
    "SchedulingGates": ("preEnqueue",),
    "PrioritySort": ("queueSort",),
    "NodeUnschedulable": ("filter",),
    "NodeName": ("filter",),
    "TaintToleration": ("filter", "preScore", "score"),
    "NodeAffinity": ("preFilter", "filter", "preScore", "score"),
    "NodePorts": ("preFilter", "filter"),
    "NodeResourcesFit": ("preFilter", "filter", "preScore", "score"),
    "VolumeRestrictions": ("preFilter", "filter"),
    "NodeVolumeLimits": ("filter",),
    "VolumeBinding": ("preFilter", "filter", "reserve", "preBind", "preScore", "score"),
    "VolumeZone": ("preFilter", "filter"),
    "PodTopologySpread": ("preFilter", "filter", "preScore", "score"),
    "InterPodAffinity": ("preFilter", "filter", "preScore", "score"),
    "DefaultPreemption": ("postFilter",),
    "NodeResourcesBalancedAllocation": ("preScore", "score"),
    "ImageLocality": ("score",),
    "DefaultBinder": ("bind",),
    "DynamicResources": ("preEnqueue", "preFilter", "filter", "postFilter", "preScore",
                         "reserve", "preBind", "postBind"),
    "DynamicResourcesPacking": ("preScore", "score"),
}.items()}
"""Every plugin a configuration may name, with upstream's extension points. Those kubedra
has no code for (SchedulingGates, PrioritySort, NodePorts, the volume plugins,
DefaultPreemption, DefaultBinder) check what kubedra does not model (or, for the queue sort
and binder, what kubedra always does) and are accepted as no-ops."""


def _plugins(dra: DynamicResources | None, namespace_labels: NamespaceLabels | None
             ) -> dict[str, tuple[Any, Any]]:
    """Fresh instances per plugin name: (Filter half, Score half)."""
    spread, pod_affinity = PodTopologySpread(), InterPodAffinity(namespace_labels)
    plugins: dict[str, tuple[Any, Any]] = {
        "NodeUnschedulable": (NodeUnschedulable(), None),
        "NodeName": (NodeName(), None),
        "TaintToleration": (TaintToleration(), TaintTolerationScore()),
        "NodeAffinity": (NodeAffinity(), NodeAffinityScore()),
        "NodeResourcesFit": (NodeResourcesFit(), LeastAllocatedScore()),
        "PodTopologySpread": (spread, spread),
        "InterPodAffinity": (pod_affinity, pod_affinity),
        "NodeResourcesBalancedAllocation": (None, BalancedAllocation()),
        "ImageLocality": (None, ImageLocality()),
        "DynamicResourcesPacking": (None, DynamicResourcesPacking()),
    }
    if dra is not None:
        plugins["DynamicResources"] = (dra, None)
    return plugins


def build_profile(config: ProfileConfig, dra: DynamicResources | None,
                  namespace_labels: NamespaceLabels | None = None) -> Profile:
    """The plugins of one configured profile, per stage. kubedra's own PreFilters of
    filter-only plugins (they only SKIP) run when their Filter does; a Score plugin's
    PreScore and NormalizeScore run with its Score. Without ``dra`` the profile leaves
    DynamicResources out (a simulation decides on claims itself)."""
    plugins = _plugins(dra, namespace_labels)
    points = config.points

    def halves(point: str, half: int, method: str) -> list[Any]:
        found = [plugins[n][half] for n in points[point] if n in plugins]
        return [p for p in found if p is not None and hasattr(p, method)]

    scores = halves("score", 1, "score")
    for plugin in scores:
        plugin.weight = config.weights[plugin.name]
    own_pre_filters = [p for p in halves("filter", 0, "pre_filter")
                       if "preFilter" not in IMPLEMENTS[p.name]]
    with_dra = {stage: [dra] if dra is not None and "DynamicResources" in points[point] else []
                for stage, point in (("shortlist", "filter"), ("after_unreserve", "reserve"))}
    # upstream registers the queueing hints of every enabled plugin, whatever its points
    enabled = dict.fromkeys(n for names in points.values() for n in names if n in plugins)
    enqueue = [p for n in enabled if (p := plugins[n][0]) is not None
               and hasattr(p, "events_to_register")]
    return Profile(
        pre_enqueue=halves("preEnqueue", 0, "pre_enqueue"),
        enqueue=enqueue,
        pre_filter=own_pre_filters + halves("preFilter", 0, "pre_filter"),
        filter=halves("filter", 0, "filter"),
        shortlist=with_dra["shortlist"],
        post_filter=halves("postFilter", 0, "post_filter"),
        pre_score=scores,
        score=scores,
        normalize_score=[p for p in scores if hasattr(p, "normalize_score")],
        reserve=halves("reserve", 0, "reserve"),
        after_unreserve=with_dra["after_unreserve"],
        pre_bind=halves("preBind", 0, "pre_bind"),
        post_bind=halves("postBind", 0, "post_bind"),
        percentage_of_nodes_to_score=config.percentage_of_nodes_to_score,
    )


def default_profile(dra: DynamicResources,
                    namespace_labels: NamespaceLabels | None = None) -> Profile:
    """The default profile: upstream's plugins, order and score weights, plus kubedra's
    DynamicResourcesPacking score."""
    return build_profile(default_config(IMPLEMENTS).profiles[0], dra, namespace_labels)


def _on(informers: Informers, queue: SchedulingQueue, resource: str, model: type[Any],
        add: Any, delete: Any) -> None:
    """``model``'s informer events update the state (``add``, ``delete``) first, then move
    the pods the event may help."""
    def added(obj: Any) -> None:
        add(obj)
        queue.on_event(ClusterEvent(resource, "Add"), None, obj)

    def updated(old: Any, new: Any) -> None:
        add(new)
        queue.on_event(ClusterEvent(resource, "Update"), old, new)

    informers.get(model).add_handler(on_add=added, on_update=updated, on_delete=delete)


def _wire_claims(informers: Informers, queue: SchedulingQueue, model: type[Any],
                 state: ClaimModel, add: Any, delete: Any) -> None:
    """Claim events go to the hints of the pods that use the claim, or of every pod when
    the claim's allocation was freed (``state.frees``)."""
    users = ClaimUsers(informers)

    def claim_event(action: str, old: Any | None, new: Any) -> None:
        add(new)
        meta = new.metadata
        only = None if old is not None and state.frees(old, new) else users.of(
            meta.namespace or "", meta.name or "")
        queue.on_event(ClusterEvent("ResourceClaim", action), old, new, only)

    informers.get(model).add_handler(
        on_add=lambda c: claim_event("Add", None, c),
        on_update=lambda old, new: claim_event("Update", old, new),
        on_delete=delete)


def wire_dra(informers: Informers, state: DRAState, queue: SchedulingQueue) -> None:
    """The v1alpha2 informers feed ``state`` (named resources, 1.30)."""
    _wire_claims(informers, queue, ResourceClaim, state, state.set_claim, state.delete_claim)
    _on(informers, queue, "ResourceClass", ResourceClass, state.set_class, state.delete_class)
    _on(informers, queue, "ResourceSlice", ResourceSlice, state.index.upsert_slice,
        lambda s: state.index.delete_slice(s.metadata.name or ""))
    _on(informers, queue, "ResourceClaimParameters", ResourceClaimParameters,
        state.parameters.upsert_claim_parameters,
        lambda p: state.parameters.delete_claim_parameters(p.metadata.namespace or "",
                                                           p.metadata.name or ""))
    _on(informers, queue, "ResourceClassParameters", ResourceClassParameters,
        state.parameters.upsert_class_parameters,
        lambda p: state.parameters.delete_class_parameters(p.metadata.namespace or "",
                                                           p.metadata.name or ""))


def wire_devices(informers: Informers, state: DeviceState, queue: SchedulingQueue) -> None:
    """The ``resource.k8s.io/v1`` informers feed ``state`` (devices, 1.34)."""
    _wire_claims(informers, queue, v1.ResourceClaim, state, state.set_claim,
                 state.delete_claim)
    _on(informers, queue, "DeviceClass", v1.DeviceClass, state.set_class, state.delete_class)
    _on(informers, queue, "ResourceSlice", v1.ResourceSlice, state.set_slice,
        state.delete_slice)


def dra_model(client: Client, informers: Informers, queue: SchedulingQueue,
              release: Release) -> tuple[ClaimModel, ClaimWriter]:
    """The DynamicResources state and claim writer of ``release``'s DRA generation, fed by
    its informers (the 1.34 allocator's features from the release's default gates)."""
    if release is R1_34:
        devices = DeviceState(Features.from_gates(FeatureGates.for_release(release)))
        wire_devices(informers, devices, queue)
        return devices, DeviceClaimWriter(client)
    named = DRAState()
    wire_dra(informers, named, queue)
    return named, ClientClaimWriter(client)


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
                    record_events: bool = True, seed: int | None = None,
                    config: SchedulerConfig | None = None, dra: bool = True,
                    release: Release = R1_30) -> Scheduler:
    """A scheduler with ``config``'s profiles, or the default profile named
    ``scheduler_name``. The DynamicResources plugin speaks ``release``'s DRA generation
    (the server's); ``dra=False`` (a server without it) leaves out the plugin and its
    informers."""
    if config is None:
        only = default_config(IMPLEMENTS, release).profiles[0]
        config = SchedulerConfig([dataclasses.replace(only, scheduler_name=scheduler_name)])
    informers = Informers(client, trim_managed_fields={Pod})  # as kube-scheduler's pods
    namespaces = informers.get(Namespace)

    def namespace_labels(name: str) -> dict[str, str]:
        found = namespaces.get(name)
        return (found.metadata.labels or {}) if found is not None else {}

    queue = SchedulingQueue(initial_backoff=config.pod_initial_backoff_seconds,
                            max_backoff=config.pod_max_backoff_seconds)
    metrics = SchedulerMetrics(queue)
    model = dra_model(client, informers, queue, release) if dra else None
    first = config.profiles[0].scheduler_name
    recorder = EventRecorder(client, first)

    async def record(pod: Pod, event_type: str, reason: str, message: str) -> None:
        await recorder.record(pod, event_type, reason, message)

    profiles = {}
    for one in config.profiles:
        plugin = None if model is None else DynamicResources(*model, one.dra_filter_timeout)
        profile = build_profile(one, plugin, namespace_labels)
        # the DRA plugin's calls are timed for scheduler_plugin_execution_duration_seconds
        timed = [plugin] if plugin is not None else []
        profiles[one.scheduler_name] = (profile, timed_profile(profile, metrics, timed))
    profile, sampled = profiles.pop(first)
    return Scheduler(client, informers, profile, scheduler_name=first,
                     queue=queue, record_event=record if record_events else None,
                     metrics=metrics, sampled_profile=sampled, seed=seed,
                     percentage_of_nodes_to_score=config.percentage_of_nodes_to_score,
                     more_profiles=profiles)

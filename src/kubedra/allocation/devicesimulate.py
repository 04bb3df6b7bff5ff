"""Offline placement and explanations for ``resource.k8s.io/v1`` snapshots (the 1.34 era).

A snapshot's era is its DRA objects' ``apiVersion``: v1 ResourceSlices, DeviceClasses, claims
and templates (with 1.34 Pods) are the 1.34 era; :func:`simulator_for` picks the simulation
of the era. The checks are the 1.34 scheduler's: the pod-claim checks of
:mod:`~kubedra.allocation.podclaims` (``prepare_devices``, ``device_node_reason``) and the
devices allocator (:mod:`~kubedra.allocation.deviceallocator`) under 1.34's default gates;
explanations come from :mod:`~kubedra.allocation.deviceexplain`.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass, field

from kubedra.allocation.deviceallocator import AllocationError, DeviceAllocator
from kubedra.allocation.deviceexplain import DeviceNodeExplanation, explain_node, first_failure
from kubedra.allocation.engine import PodAllocator
from kubedra.allocation.features import Features
from kubedra.allocation.index import AllocationIndex
from kubedra.allocation.model.devicecel import cel_device_selectors
from kubedra.allocation.model.devices import DeviceKey, DeviceSelectors, claim_uses, device_id
from kubedra.allocation.podclaims import (
    CANNOT_ALLOCATE,
    DevicePodPlan,
    device_node_reason,
    pod_claims,
    prepare_devices,
)
from kubedra.allocation.selectors import Selectors
from kubedra.allocation.simulate import (
    ClaimOutcome,
    NodeChooser,
    Simulation,
    Simulator,
    Snapshot,
)
from kubedra.api.core import Node, Pod
from kubedra.api.features import FeatureGates
from kubedra.api.meta import kobj
from kubedra.api.release import R1_34
from kubedra.api.resource.v1 import (
    AllocationResult,
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceClaimTemplate,
)
from kubedra.api.resourceclaim import V1_CLAIMS, claim_from_template, consumer_ref

Result = list[AllocationResult] | None | AllocationError


class MixedSnapshot(ValueError):
    """A snapshot of both eras' DRA objects: no cluster serves both."""

    def __init__(self) -> None:
        super().__init__("the snapshot mixes resource.k8s.io/v1alpha2 objects (Kubernetes "
                         "1.30) with resource.k8s.io/v1 ones (1.34); one cluster serves one")


def simulator_for(snapshot: Snapshot, selectors: Selectors | None = None,
                  added_nodes: Iterable[str] = (), chooser: NodeChooser | None = None
                  ) -> Simulator | DeviceSimulator:
    """The simulation of the snapshot's era (v1alpha2 unless it holds v1 objects); raises
    :class:`MixedSnapshot`. ``selectors`` are the named-resources model's."""
    if snapshot.devices:
        if snapshot.named_resources:
            raise MixedSnapshot
        return DeviceSimulator(snapshot, added_nodes, chooser)
    return Simulator(snapshot, selectors, added_nodes, chooser)


@dataclass
class DevicePlan:
    """A pod's checked claims, the allocator of its cycle and its outcome per node."""

    claims: DevicePodPlan
    allocator: DeviceAllocator
    results: dict[str, Result] = field(default_factory=dict)

    def allocate(self, node: Node) -> list[AllocationResult] | None:
        name = node.metadata.name or ""
        if name not in self.results:
            try:
                self.results[name] = self.allocator.allocate(node, self.claims.to_allocate)
            except AllocationError as err:
                self.results[name] = err
        found = self.results[name]
        if isinstance(found, AllocationError):
            raise found
        return found


class DeviceSimulator(Simulation[DevicePlan, ResourceClaim, ResourceClaimTemplate]):
    """A ``resource.k8s.io/v1`` snapshot: slices, classes and the devices its claims hold."""

    def __init__(self, snapshot: Snapshot, added_nodes: Iterable[str] = (),
                 chooser: NodeChooser | None = None,
                 features: Features | None = None) -> None:
        super().__init__(snapshot, snapshot.device_templates, added_nodes, chooser)
        self.features = features or Features.from_gates(FeatureGates.for_release(R1_34))
        self.selectors: DeviceSelectors = cel_device_selectors()
        self.slices = snapshot.device_slices
        self.classes = {c.metadata.name or "": c for c in snapshot.device_classes}
        self.holders: dict[DeviceKey, str] = {}
        """Each allocated device (not with admin access) and the claim holding it."""
        for c in snapshot.device_claims:
            self._store(c)

    def _store(self, claim: ResourceClaim) -> None:
        key = (claim.metadata.namespace or "", claim.metadata.name or "")
        old = self.claims.get(key)
        for device in claim_uses(old) if old is not None else ():
            self.holders.pop(device, None)
        self.claims[key] = claim
        name = kobj(*key)
        for device in claim_uses(claim):
            self.holders[device] = name

    def _lookup(self, namespace: str, name: str) -> ResourceClaim | None:
        return self.claims.get((namespace, name))

    def _from_template(self, pod: Pod, pod_claim: str, template: ResourceClaimTemplate,
                       name: str) -> ResourceClaim:
        return claim_from_template(pod, pod_claim, template, name=name)

    def _plan(self, pod: Pod) -> DevicePlan:
        claims = prepare_devices(pod, pod_claims(pod, self._lookup), self.classes,
                                 self.features)
        allocator = DeviceAllocator(self.features, set(self.holders), self.classes,
                                    self.slices, self.selectors)
        return DevicePlan(claims, allocator)

    def _claim_reason(self, plan: DevicePlan, node: Node) -> str | None:
        return device_node_reason(plan.claims, node, lambda: plan.allocate(node))

    def _pod_of(self, plan: DevicePlan) -> Pod:
        return plan.claims.pod

    def _claims_of(self, plan: DevicePlan) -> list[ResourceClaim]:
        return plan.claims.claims

    def _chooser_allocator(self, plan: DevicePlan) -> PodAllocator:
        """No named-resources plans: the packing score, which counts free instances of that
        model, has nothing to score (it answers SKIP)."""
        return PodAllocator(AllocationIndex(), [])

    def _score(self, plan: DevicePlan, node: str) -> tuple[bool, int, str]:
        allocator = plan.allocator
        free = sum(1 for s in allocator.slices.for_node(self.nodes[node])
                   for d in s.spec.devices or ()
                   if (s.spec.driver, s.spec.pool.name, d.name) not in self.holders)
        return (node in self.added, free, node)

    def _commit(self, plan: DevicePlan, node: str) -> list[ClaimOutcome]:
        pod = plan.claims.pod
        ref = consumer_ref(pod, V1_CLAIMS)
        assert isinstance(ref, ResourceClaimConsumerReference)
        results = plan.allocate(self.nodes[node]) if plan.claims.to_allocate else []
        new = dict(zip((id(c) for c in plan.claims.to_allocate), results or (), strict=True))
        outcomes: list[ClaimOutcome] = []
        for claim in plan.claims.claims:
            allocation = new.get(id(claim))
            updated = copy.deepcopy(claim)
            if allocation is not None:
                updated.status.allocation = allocation
                finalizers = updated.metadata.finalizers or []
                if V1_CLAIMS.finalizer not in finalizers:
                    updated.metadata.finalizers = [*finalizers, V1_CLAIMS.finalizer]
            if ref.uid not in [r.uid for r in updated.status.reserved_for or ()]:
                updated.status.reserved_for = [*(updated.status.reserved_for or []), ref]
            self._store(updated)
            outcomes.append(_outcome(updated, node if allocation is not None else None))
        return outcomes

    def _explain_node(self, plan: DevicePlan, node: str, reason: str | None
                      ) -> DeviceNodeExplanation:
        obj = self.nodes[node]
        ex = explain_node(plan.allocator, obj, plan.claims.to_allocate, self.holders,
                          lambda: plan.allocate(obj))
        ex.suitable, ex.reason = reason is None, reason or ""
        if reason == CANNOT_ALLOCATE:
            ex.why = first_failure(plan.allocator, obj, plan.claims.to_allocate)
        if reason is not None:
            ex.notes += [f"claim {kobj(c.metadata.namespace, c.metadata.name)} is allocated "
                         "with a nodeSelector that excludes the node"
                         for c in (plan.claims.claims[i]
                                   for i in plan.claims.unavailable_on(obj))]
        return ex


def _outcome(claim: ResourceClaim, node: str | None) -> ClaimOutcome:
    """The claim's devices (``driver/pool/device``); ``node``: where it was just allocated."""
    allocation = claim.status.allocation
    results = (allocation.devices.results or []) if allocation is not None else []
    devices = [device_id((r.driver, r.pool, r.device)) for r in results]
    return ClaimOutcome(kobj(claim.metadata.namespace, claim.metadata.name), node, devices,
                        node is not None)

"""Offline placement and explanations for ``resource.k8s.io/v1`` snapshots (the 1.34 era).

A snapshot's era is its DRA objects' ``apiVersion``: v1 ResourceSlices, DeviceClasses, claims
and templates (with 1.34 Pods) are the 1.34 era; :func:`simulator_for` picks the simulation
of the era. The checks are the 1.34 scheduler's: the pod-claim checks of
:mod:`~kubedra.allocation.podclaims` (``prepare_devices``), the cycle of
:mod:`~kubedra.allocation.devicepod` (Filter's ``node_reason``, Reserve) and the devices
allocator under 1.34's default gates; explanations come from
:mod:`~kubedra.allocation.deviceexplain`.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable

from kubedra.allocation.deviceallocator import AllocationError
from kubedra.allocation.deviceclaims import DeviceClaims
from kubedra.allocation.deviceexplain import DeviceNodeExplanation, explain_node, first_failure
from kubedra.allocation.devicepod import CANNOT_ALLOCATE, DevicePlan
from kubedra.allocation.deviceverdicts import DeviceVerdicts
from kubedra.allocation.features import Features
from kubedra.allocation.model.devicecel import cel_device_selectors
from kubedra.allocation.model.devices import (
    DeviceKey,
    DeviceSelectors,
    SliceIndex,
    claim_uses,
    device_id,
)
from kubedra.allocation.packing import FreeCounts
from kubedra.allocation.podclaims import pod_claims, prepare_devices
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
from kubedra.api.nodeaffinity import matches
from kubedra.api.release import R1_34
from kubedra.api.resource.v1 import (
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceClaimTemplate,
)
from kubedra.api.resourceclaim import V1_CLAIMS, claim_from_template, consumer_ref


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


class DeviceSimulator(Simulation[DevicePlan, ResourceClaim, ResourceClaimTemplate]):
    """A ``resource.k8s.io/v1`` snapshot: slices, classes and the claims with the devices
    they hold (the scheduler's :class:`DeviceClaims`)."""

    def __init__(self, snapshot: Snapshot, added_nodes: Iterable[str] = (),
                 chooser: NodeChooser | None = None,
                 features: Features | None = None) -> None:
        super().__init__(snapshot, snapshot.device_templates, added_nodes, chooser)
        self.features = features or Features.from_gates(FeatureGates.for_release(R1_34))
        self.selectors: DeviceSelectors = cel_device_selectors()
        self.slices = SliceIndex(snapshot.device_slices)
        self.verdicts = DeviceVerdicts()  # pods from one template share them, as in Filter
        self.classes = {c.metadata.name or "": c for c in snapshot.device_classes}
        self.state = DeviceClaims()
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
        self.state.upsert_claim(claim)
        for device in claim_uses(claim):
            self.holders[device] = kobj(*key)

    def _lookup(self, namespace: str, name: str) -> ResourceClaim | None:
        return self.state.lookup(namespace, name)

    def _from_template(self, pod: Pod, pod_claim: str, template: ResourceClaimTemplate,
                       name: str) -> ResourceClaim:
        return claim_from_template(pod, pod_claim, template, name=name)

    def _plan(self, pod: Pod) -> DevicePlan:
        return prepare_devices(pod, pod_claims(pod, self._lookup), self.classes, self.state,
                               self.slices, self.selectors, self.features, None, self.verdicts)

    def _claim_reason(self, plan: DevicePlan, node: Node) -> str | None:
        try:
            return plan.node_reason(node)
        except AllocationError as err:  # the scheduler's Filter error: the pod does not fit
            return str(err)

    def _pod_of(self, plan: DevicePlan) -> Pod:
        return plan.pod

    def _claims_of(self, plan: DevicePlan) -> list[ResourceClaim]:
        return [c.claim for c in plan.checks]

    def _free_counter(self, plan: DevicePlan) -> FreeCounts | None:
        return plan.free_counter()

    def _score(self, plan: DevicePlan, node: str) -> tuple[bool, int, str]:
        """The packing score's count: the free devices of the drivers allocated from."""
        free = plan.allocator.free_devices((node,))[0] if plan.allocator is not None else 0
        return (node in self.added, free, node)

    def _commit(self, plan: DevicePlan, node: str) -> list[ClaimOutcome]:
        ref = consumer_ref(plan.pod, V1_CLAIMS)
        assert isinstance(ref, ResourceClaimConsumerReference)
        allocated = {}
        if plan.allocator is not None:
            allocated = {_key(c): c for c in plan.allocator.reserve(node)}
            plan.allocator.release()  # the claims are stored below instead
        outcomes: list[ClaimOutcome] = []
        for check in plan.checks:
            new = allocated.get(_key(check.claim))
            updated = copy.deepcopy(new or check.claim)
            if ref.uid not in [r.uid for r in updated.status.reserved_for or ()]:
                updated.status.reserved_for = [*(updated.status.reserved_for or []), ref]
            self._store(updated)
            outcomes.append(_outcome(updated, node if new is not None else None))
        return outcomes

    def _explain_node(self, plan: DevicePlan, node: str, reason: str | None
                      ) -> DeviceNodeExplanation:
        obj = self.nodes[node]
        pending = plan.allocator
        if pending is None:
            ex = DeviceNodeExplanation(node, True, "")
        else:
            ex = explain_node(pending.allocator, obj, pending.pending, self.holders,
                              lambda: pending.allocate(obj))
        ex.suitable, ex.reason = reason is None, reason or ""
        if pending is not None and reason == CANNOT_ALLOCATE:
            ex.why = first_failure(pending.allocator, obj, pending.pending)
        labels = obj.metadata.labels or {}
        ex.notes += [f"claim {kobj(c.claim.metadata.namespace, c.claim.metadata.name)} is "
                     "allocated with a nodeSelector that excludes the node"
                     for c in plan.checks if reason is not None and c.available_on is not None
                     and not matches(c.available_on, labels, node)]
        return ex


def _key(claim: ResourceClaim) -> tuple[str | None, str | None]:
    return claim.metadata.namespace, claim.metadata.name


def _outcome(claim: ResourceClaim, node: str | None) -> ClaimOutcome:
    """The claim's devices (``driver/pool/device``); ``node``: where it was just allocated."""
    allocation = claim.status.allocation
    results = (allocation.devices.results or []) if allocation is not None else []
    devices = [device_id((r.driver, r.pool, r.device)) for r in results]
    return ClaimOutcome(kobj(claim.metadata.namespace, claim.metadata.name), node, devices,
                        node is not None)

"""DynamicResources on ``resource.k8s.io/v1`` (Kubernetes 1.34): the devices model's state
(:class:`DeviceState`, a :class:`~.dynamicresources.ClaimModel`) and a pod's cycle in it.

PreFilter is :func:`kubedra.allocation.podclaims.prepare_devices`; Filter runs the devices
allocator per node with the plugin's ``filterTimeout`` (as upstream: ``timed out trying to
allocate devices``, ``cannot allocate all claims``, allocator errors as Error statuses);
Reserve holds the chosen node's results in flight, PreBind writes them
(:class:`~kubedra.scheduler.claimwriter.DeviceClaimWriter`), PostFilter may deallocate an
allocated claim whose node selector refused a node.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from kubedra.allocation.deviceallocator import AllocationError
from kubedra.allocation.deviceclaims import DeviceClaims
from kubedra.allocation.deviceexplain import first_failure
from kubedra.allocation.devicepod import DevicePlan
from kubedra.allocation.deviceverdicts import DeviceVerdicts
from kubedra.allocation.features import Features
from kubedra.allocation.model.devicecel import cel_device_selectors
from kubedra.allocation.model.devices import DeviceSelectors, SliceIndex
from kubedra.allocation.packing import FreeCounts
from kubedra.allocation.podclaims import Unschedulable, prepare_devices
from kubedra.api.core import Node, Pod
from kubedra.api.resource.v1 import DeviceClass, ResourceClaim, ResourceSlice
from kubedra.scheduler.plugins.dynamicresources import (
    Check,
    ClaimModel,
    Cycle,
    DynamicResources,
)
from kubedra.scheduler.queue import ClusterEvent, Hint


@dataclass
class DeviceState:
    """What the plugin knows about the cluster's v1 objects (kept current by informers)."""

    features: Features = field(default_factory=Features)
    claims: DeviceClaims = field(default_factory=DeviceClaims)
    classes: dict[str, DeviceClass] = field(default_factory=dict)
    selectors: DeviceSelectors = field(default_factory=cel_device_selectors)
    verdicts: DeviceVerdicts = field(default_factory=DeviceVerdicts)
    _slices: dict[str, ResourceSlice] = field(default_factory=dict)
    _slice_index: SliceIndex | None = None

    # --- informer events ----------------------------------------------------------------------

    def set_claim(self, claim: ResourceClaim) -> None:
        self.claims.upsert_claim(claim)

    def delete_claim(self, claim: ResourceClaim) -> None:
        self.claims.delete_claim(claim)

    def set_class(self, cls: DeviceClass) -> None:
        self.classes[cls.metadata.name or ""] = cls

    def delete_class(self, cls: DeviceClass) -> None:
        self.classes.pop(cls.metadata.name or "", None)

    def set_slice(self, slice_: ResourceSlice) -> None:
        self._slices[slice_.metadata.name or ""] = slice_
        self._slice_index = None

    def delete_slice(self, slice_: ResourceSlice) -> None:
        self._slices.pop(slice_.metadata.name or "", None)
        self._slice_index = None

    def slices(self) -> SliceIndex:
        """Every slice, in the order the informer first saw them, indexed by node (one index
        until a change)."""
        if self._slice_index is None:
            self._slice_index = SliceIndex(self._slices.values())
        return self._slice_index

    # --- the model's part of the plugin ---------------------------------------------------------

    claim_kind: ClassVar[type] = ResourceClaim

    def lookup(self, namespace: str, name: str) -> ResourceClaim | None:
        return self.claims.lookup(namespace, name)

    def current(self, claim: ResourceClaim) -> ResourceClaim:
        return self.claims.current(claim)

    @staticmethod
    def frees(old: ResourceClaim, new: ResourceClaim) -> bool:
        """Deallocated: the devices are free for any pod (isSchedulableAfterClaimChange)."""
        return old.status.allocation is not None and new.status.allocation is None

    def events(self, plugin: DynamicResources) -> list[tuple[ClusterEvent, Hint | None]]:
        """1.34's registered events (DeviceClass and ResourceSlice changes wake every pod the
        plugin rejected, claim changes the pods that use the claim)."""
        return [
            (ClusterEvent("ResourceClaim", "Add"), plugin.hint_claim),
            (ClusterEvent("ResourceClaim", "Update"), plugin.hint_claim),
            (ClusterEvent("DeviceClass", "Add"), None),
            (ClusterEvent("DeviceClass", "Update"), None),
            (ClusterEvent("ResourceSlice", "Add"), None),
            (ClusterEvent("ResourceSlice", "Update"), None),
            (ClusterEvent("Node", "Add"), None),
            (ClusterEvent("Node", "Update"), None),
            (ClusterEvent("Pod", "Update"), None),
        ]

    def cycle(self, pod: Pod, claims: list[ResourceClaim], plugin: DynamicResources
              ) -> DeviceCycle:
        plan = prepare_devices(pod, claims, self.classes, self.claims, self.slices(),
                               self.selectors, self.features, plugin.filter_timeout or None,
                               self.verdicts)
        return DeviceCycle(plan, self.claims)


class DeviceCycle:
    """A pod's v1 claims through a cycle (:class:`~.dynamicresources.Cycle`)."""

    def __init__(self, plan: DevicePlan, claims: DeviceClaims) -> None:
        self.plan = plan
        self.claims = claims
        self.unavailable = plan.unavailable
        self.passing = plan.passing()
        self._allocated: dict[str, ResourceClaim] = {}

    @property
    def checks(self) -> Sequence[Check]:
        return self.plan.checks

    def allocates(self) -> bool:
        return self.plan.allocator is not None

    def reason(self, node: Node) -> str | None:
        try:
            return self.plan.node_reason(node)
        except AllocationError as e:  # upstream: an Error status, the pod retried
            raise Unschedulable(str(e), unresolvable=False) from e

    def shortlist(self) -> Collection[str] | None:
        allocator = self.plan.allocator
        return None if allocator is None else allocator.nodes_with_free_devices()

    def free_counter(self) -> FreeCounts | None:
        return self.plan.free_counter()

    def deallocatable(self, i: int) -> bool:
        return True

    def first_failure(self, node: str) -> str | None:
        """Explain's first failing check, on the Node that Filter allocated on."""
        pending = self.plan.allocator
        seen = None if pending is None else pending.seen(node)
        if pending is None or seen is None:
            return None
        return first_failure(pending.allocator, seen, pending.pending) or None

    def reserve(self, node: str) -> None:
        if self.plan.allocator is not None:
            self._allocated = {c.metadata.uid or "": c
                               for c in self.plan.allocator.reserve(node)}

    def allocation_of(self, claim: ResourceClaim) -> ResourceClaim | None:
        return self._allocated.get(claim.metadata.uid or "")

    def commit(self, stored: ResourceClaim) -> bool:
        """Also for a reservation only: the next pod sees it at once."""
        allocator = self.plan.allocator
        return self.claims.commit(stored) if allocator is None else allocator.commit(stored)

    def release(self) -> None:
        if self.plan.allocator is not None:
            self.plan.allocator.release()
        self._allocated = {}


if TYPE_CHECKING:
    _model: ClaimModel = DeviceState()
    _cycle: Cycle = DeviceCycle(DevicePlan(Pod(), [], None), DeviceClaims())

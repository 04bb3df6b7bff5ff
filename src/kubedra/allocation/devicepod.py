"""One pod's ``resource.k8s.io/v1`` claims through a scheduling cycle (upstream's
DynamicResources state for the devices model): :class:`DevicePlan` is what PreFilter learnt
(:func:`kubedra.allocation.podclaims.prepare_devices` makes it), :class:`DevicePodAllocator`
allocates the pending claims per node with :class:`~.deviceallocator.DeviceAllocator`
(the cluster's allocated devices plus the in-flight ones of :class:`~.deviceclaims.DeviceClaims`),
keeps each node's results for Reserve, and moves the chosen results through in flight and
assumed, as :class:`~.engine.PodAllocator` does for named resources.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Container, Iterable, Sequence
from dataclasses import dataclass, field

import msgspec

from kubedra.allocation.deviceallocator import (
    TIMED_OUT,
    AllocationError,
    AllocationTimeout,
    DeviceAllocator,
)
from kubedra.allocation.deviceclaims import DeviceClaims, claim_key
from kubedra.allocation.deviceverdicts import DeviceVerdict, DeviceVerdicts
from kubedra.allocation.model.devices import gather_pools
from kubedra.allocation.packing import FreeCounts
from kubedra.api.core import Node, NodeSelector, Pod
from kubedra.api.nodeaffinity import matches
from kubedra.api.resource.v1 import FINALIZER, AllocationResult, ResourceClaim

CANNOT_ALLOCATE = "cannot allocate all claims"
NOT_AVAILABLE = "resourceclaim not available on the node"


@dataclass(slots=True)
class DeviceCheck:
    """What PreFilter learnt about one of the pod's claims."""

    claim: ResourceClaim
    available_on: NodeSelector | None  # the allocation's nodeSelector (allocated claims)
    pending: bool  # unallocated: allocated for this pod by the allocator


class DevicePodAllocator:
    """The allocation part of one pod's cycle: ``allocate`` per node (results kept),
    ``reserve`` for the chosen node, ``commit`` per written claim, ``release`` at the end."""

    def __init__(self, claims: DeviceClaims, allocator: DeviceAllocator,
                 pending: Sequence[ResourceClaim], timeout: float | None,
                 verdicts: DeviceVerdicts | None = None) -> None:
        self.claims = claims
        self.allocator = allocator
        self.pending = pending
        self.timeout = timeout  # seconds per node (None or 0: none)
        self.verdicts = verdicts if verdicts is not None else DeviceVerdicts()
        self._sig = self.verdicts.signature_id(pending, allocator.classes)
        self._verdict = self.verdicts.for_pod(self._sig, allocator.slices, claims)
        self._found: dict[str, tuple[DeviceVerdict, Node]] = {}  # the Node it ran on
        self.fits = self.verdicts.fits(self._sig, allocator.slices, claims)
        """The nodes where the allocation is known to hold (so far, as of this cycle):
        Filter passes them without a call (:meth:`DeviceVerdicts.fits`)."""
        self._reserved: list[str] = []

    def allocate(self, node: Node) -> list[AllocationResult] | None:
        """Per pending claim its result on ``node`` (None: no allocation); raises
        :class:`AllocationError` (upstream's text; ``AllocationTimeout`` past the timeout).
        The verdict of an earlier pod that asked the same is reused while the node's pools
        stay as they were."""
        name = node.metadata.name or ""
        known = self._of(name)
        if known is not None:
            return known[0].results
        state, found = self._verdict(node, name)
        if found is None:
            deadline = time.monotonic() + self.timeout if self.timeout else None
            results = self.allocator.allocate(node, self.pending, deadline=deadline)
            found = self.verdicts.store(self._sig, name, state, results)
        self._found[name] = (found, node)
        if found.results is not None:
            self.fits[name] = (found, node)
        return found.results

    def _of(self, node: str) -> tuple[DeviceVerdict, Node] | None:
        """The verdict on ``node`` in this cycle and the Node it was reached on, if any."""
        return self._found.get(node) or self.fits.get(node)

    def reserve(self, node: str) -> list[ResourceClaim]:
        """The pending claims as allocated on ``node`` (with the finalizer, as PreBind will
        write them), recorded as in flight so no other pod takes their devices."""
        found = self._of(node)
        results = None if found is None else found[0].results
        if not results or len(results) != len(self.pending):
            raise AllocationError("claim allocation not found for node")
        out = []
        for claim, result in zip(self.pending, results, strict=True):
            finalizers = list(claim.metadata.finalizers or ())
            if FINALIZER not in finalizers:
                finalizers.append(FINALIZER)
            allocated = msgspec.structs.replace(
                claim, metadata=msgspec.structs.replace(claim.metadata, finalizers=finalizers),
                status=msgspec.structs.replace(claim.status, allocation=result))
            self.claims.set_in_flight(allocated)
            self._reserved.append(claim_key(allocated))
            out.append(allocated)
        return out

    def commit(self, stored: ResourceClaim) -> bool:
        """``stored`` was written (see :meth:`DeviceClaims.commit`)."""
        key = claim_key(stored)
        if key in self._reserved:
            self._reserved.remove(key)
        return self.claims.commit(stored)

    def release(self) -> None:
        """Forget the in-flight allocations not committed (Unreserve, or a failed write)."""
        for key in self._reserved:
            self.claims.clear_in_flight(key)
        self._reserved.clear()

    def seen(self, node: str) -> Node | None:
        """The Node :meth:`allocate` ran on under that name (None: not yet)."""
        found = self._of(node)
        return None if found is None else found[1]

    def nodes_with_free_devices(self) -> Collection[str] | None:
        """Names that include every node where the pending claims can be allocated: the
        nodes with a device not in use in a slice of their own. None (any node) when a
        request may take devices in use (admin access, consumable capacity) or ``All`` of
        them, or when a slice is not bound to one node. The scheduler's shortlist: in a
        filling cluster most nodes have no device left, and each costs an allocation."""
        local = self.allocator.slices.node_local()
        if local is None or self.allocator.features.consumable_capacity or not all(
                _takes_free_devices(c) for c in self.pending):
            return None
        return self.verdicts.nodes_with_free_devices(self.allocator.slices, self.claims, local)

    def free_devices(self, nodes: Iterable[str]) -> list[int]:
        """Per node, the devices of the drivers this pod's allocation there uses that are
        still free (kubedra's packing score; 0 for a node not allocated on). One pass over
        the feasible nodes: each verdict keeps its count once asked."""
        found, fits = self._found, self.fits
        counts = []
        for node in nodes:
            known = found.get(node) or fits.get(node)
            if known is None:
                counts.append(0)
                continue
            verdict = known[0]
            free = verdict.free
            if free is None:
                results = verdict.results
                free = verdict.free = self._count_free(results, known[1]) if results else 0
            counts.append(free)
        return counts

    def _count_free(self, found: list[AllocationResult], seen: Node) -> int:
        drivers = {r.driver for a in found for r in a.devices.results or ()}
        allocated = self.claims.allocated()
        owner = self.allocator
        free = 0
        for pool in gather_pools(owner.slices.for_node(seen), seen,
                                 owner.features.partitionable_devices):
            if pool.driver not in drivers:
                continue
            for s in pool.slices:
                free += sum((pool.driver, pool.name, d.name) not in allocated
                            for d in s.spec.devices or ())
        return free


def _takes_free_devices(claim: ResourceClaim) -> bool:
    """Each of the claim's requests takes a count of devices not in use."""
    for request in claim.spec.devices.requests or ():
        if request.exactly is not None:
            if request.exactly.admin_access or request.exactly.allocation_mode == "All":
                return False
        elif not request.first_available or any(
                sub.allocation_mode == "All" for sub in request.first_available):
            return False
    return True


@dataclass
class DevicePlan:
    """The outcome of ``prepare_devices``: the checked claims and the allocator for the
    pending ones (None when every claim is allocated already)."""

    pod: Pod
    checks: list[DeviceCheck]
    allocator: DevicePodAllocator | None
    unavailable: set[int] = field(default_factory=set)
    """Allocated claims some node was refused for (PostFilter may deallocate them)."""
    _placed: list[tuple[int, NodeSelector]] = field(init=False)
    """The allocated claims whose allocation names nodes, by index (every node's Filter
    asks them)."""

    def __post_init__(self) -> None:
        self._placed = [(i, c.available_on) for i, c in enumerate(self.checks)
                        if c.available_on is not None]

    def free_counter(self) -> FreeCounts | None:
        """Free devices per node of a list, for the packing score (None: nothing to
        allocate)."""
        return None if self.allocator is None else self.allocator.free_devices

    def passing(self) -> Container[str]:
        """Names of nodes :meth:`node_reason` is known to pass: where the allocation holds
        (:attr:`DevicePodAllocator.fits`), unless an allocated claim's nodes must be checked
        too."""
        return self.allocator.fits if self.allocator is not None and not self._placed else ()

    def node_reason(self, node: Node) -> str | None:
        """DynamicResources Filter: None when the claims can be used on ``node``, else the
        reason; raises :class:`AllocationError` (a Filter error). The pending claims are
        allocated first, then the allocated claims' node selectors are checked."""
        if self.allocator is not None:
            try:
                if self.allocator.allocate(node) is None:
                    return CANNOT_ALLOCATE
            except AllocationTimeout:
                return TIMED_OUT
        if not self._placed:
            return None
        labels, name = node.metadata.labels or {}, node.metadata.name or ""
        unavailable = [i for i, where in self._placed if not matches(where, labels, name)]
        if unavailable:
            self.unavailable.update(unavailable)
            return NOT_AVAILABLE
        return None

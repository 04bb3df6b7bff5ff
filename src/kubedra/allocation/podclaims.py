"""A pod's claims as the scheduler checks them: the claim checks of the DynamicResources
PreFilter and Filter, shared by the scheduler and the simulator. How a pod names and uses its
claims (shared with the claim controller and the node agent too) is
:mod:`kubedra.api.resourceclaim`.

* :func:`pod_claims` (resolve every entry), :func:`prepare` (check each claim, plan the
  unallocated structured ones; a :class:`PodPlan` or one :class:`Unschedulable`) and
  :func:`node_reason` (why a node cannot take the pod's claims);
* for ``resource.k8s.io/v1`` claims (1.34): :func:`prepare_devices` (a
  :class:`~kubedra.allocation.devicepod.DevicePlan`, whose ``node_reason`` is Filter's).

Pure and synchronous; every user-facing text lives here once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from kubedra.allocation.deviceallocator import DeviceAllocator
from kubedra.allocation.deviceclaims import DeviceClaims
from kubedra.allocation.deviceclaims import claim_key as device_key
from kubedra.allocation.devicepod import DeviceCheck, DevicePlan, DevicePodAllocator
from kubedra.allocation.deviceverdicts import DeviceVerdicts
from kubedra.allocation.engine import NodeVerdict, PodAllocator
from kubedra.allocation.features import Features
from kubedra.allocation.index import AllocationIndex, claim_key
from kubedra.allocation.model.devices import DeviceSelectors, SliceIndex
from kubedra.allocation.model.namedresources import ClaimPlan, ClaimPlanError, plan_claim
from kubedra.allocation.model.parameters import ParameterError, ParameterStore
from kubedra.allocation.selectors import Selectors
from kubedra.api.core import Node, NodeSelector, Pod
from kubedra.api.meta import kobj
from kubedra.api.nodeaffinity import matches
from kubedra.api.resource import v1
from kubedra.api.resource.v1alpha2 import (
    ALLOCATION_MODE_IMMEDIATE,
    FINALIZER,
    ResourceClaim,
    ResourceClass,
)
from kubedra.api.resourceclaim import (
    ClaimNameError,
    ClaimNotCreatedError,
    can_be_reserved,
    claim_name,
    is_for_pod,
    is_reserved_for_pod,
    not_for_pod,
)

IN_USE = "resourceclaim in use"
CLASS_NODE_FILTER = "excluded by resource class node filter"
NOT_AVAILABLE = "resourceclaim not available on the node"


class Unschedulable(Exception):
    """The pod's claims cannot be used as they are.

    ``unresolvable``: nothing but a change of the objects helps (upstream's
    UnschedulableAndUnresolvable); otherwise an error worth retrying with backoff.
    """

    def __init__(self, message: str, *, unresolvable: bool = True) -> None:
        super().__init__(message)
        self.message = message
        self.unresolvable = unresolvable


class ClaimNotCreated(Unschedulable):
    """A claim from a template is not recorded in the pod's status yet: the ResourceClaim
    controller's next step, not a problem of the pod."""


# --- scheduling one pod -----------------------------------------------------------------------

AnyClaim = TypeVar("AnyClaim", ResourceClaim, v1.ResourceClaim)
ClaimLookup = Callable[[str, str], ResourceClaim | None]
"""(namespace, name) -> the newest known copy of the claim."""


def pod_claims(pod: Pod, lookup: Callable[[str, str], AnyClaim | None]) -> list[AnyClaim]:
    """The pod's claims in spec order (upstream ``foreachPodResourceClaim``); entries whose
    generated claim is recorded as not needed are skipped. ``lookup``: (namespace, name) ->
    the newest known copy of a claim of either generation."""
    ns = pod.metadata.namespace or ""
    out: list[AnyClaim] = []
    for pc in pod.spec.resource_claims or ():
        try:
            name, generated = claim_name(pod, pc)
        except ClaimNotCreatedError as e:
            raise ClaimNotCreated(str(e)) from e
        except ClaimNameError as e:
            raise Unschedulable(str(e)) from e
        if not name:
            continue
        claim = lookup(ns, name)
        if claim is None:
            raise Unschedulable(f'resourceclaim.resource.k8s.io "{name}" not found')
        if claim.metadata.deletion_timestamp is not None:
            raise Unschedulable(f'resourceclaim "{name}" is being deleted')
        if generated and not is_for_pod(pod, claim):
            raise Unschedulable(not_for_pod(pod, claim))
        out.append(claim)
    return out


@dataclass(slots=True)
class ClaimCheck:
    """What PreFilter learnt about one of the pod's claims."""

    claim: ResourceClaim
    available_on: NodeSelector | None  # allocation.availableOnNodes, or class.suitableNodes
    structured: bool  # allocated (or to be allocated) from structured parameters
    pending: bool  # unallocated: allocated for this pod by the allocator


@dataclass
class PodPlan:
    """The outcome of :func:`prepare`: the checked claims and the allocator for the pending
    ones (its plans are empty when every claim is allocated already)."""

    pod: Pod
    checks: list[ClaimCheck]
    allocator: PodAllocator
    only_pending: bool = field(init=False)  # no node selector of any kind to test

    def __post_init__(self) -> None:
        self.only_pending = all(c.pending and c.available_on is None for c in self.checks)

    @property
    def claims(self) -> list[ResourceClaim]:
        return [c.claim for c in self.checks]

    def unavailable_on(self, node: Node) -> list[int]:
        """Positions of allocated claims whose ``availableOnNodes`` excludes ``node``."""
        return [i for i, c in enumerate(self.checks)
                if not c.pending and not _on_node(c.available_on, node)]


def prepare(pod: Pod, claims: list[ResourceClaim], classes: Mapping[str, ResourceClass],
            index: AllocationIndex, parameters: ParameterStore,
            selectors: Selectors) -> PodPlan:
    """DynamicResources PreFilter for the pod's ``claims``: reservation rules, the class of
    each unallocated claim, its parameters and plan; raises :class:`Unschedulable`."""
    checks: list[ClaimCheck] = []
    plans: list[ClaimPlan] = []
    for claim in claims:
        status = claim.status
        if status.deallocation_requested:
            raise Unschedulable("resourceclaim must be reallocated")
        if status.allocation is not None:
            if not can_be_reserved(claim) and not is_reserved_for_pod(pod, claim):
                raise Unschedulable(IN_USE)
            # Upstream's marker of an allocation made from structured parameters.
            structured = FINALIZER in (claim.metadata.finalizers or ())
            checks.append(ClaimCheck(claim, status.allocation.available_on_nodes, structured,
                                     False))
            continue
        cls = classes.get(claim.spec.resource_class_name)
        if cls is None:
            raise Unschedulable(f"resource class {claim.spec.resource_class_name} does not exist")
        if not cls.structured_parameters:
            if claim.spec.allocation_mode == ALLOCATION_MODE_IMMEDIATE:
                raise Unschedulable("unallocated immediate resourceclaim")
            raise Unschedulable(
                f"resource class {cls.metadata.name} does not use structured parameters; "
                "classic DRA needs a vendor control-plane controller, which is not supported")
        if index.is_in_flight(claim_key(claim)):
            raise Unschedulable(f"resource claim {claim.metadata.namespace}/"
                                f"{claim.metadata.name} is in the process of being allocated")
        try:
            class_params = parameters.class_parameters(cls)
            claim_params = parameters.claim_parameters(claim, cls)
            plans.append(plan_claim(len(plans), claim, cls, class_params, claim_params,
                                    selectors))
        except ParameterError as e:
            raise Unschedulable(e.message, unresolvable=e.unresolvable) from e
        except ClaimPlanError as e:
            raise Unschedulable(str(e), unresolvable=False) from e
        checks.append(ClaimCheck(claim, cls.suitable_nodes, True, True))
    return PodPlan(pod, checks, PodAllocator(index, plans))


def _on_node(selector: NodeSelector | None, node: Node) -> bool:
    return selector is None or matches(selector, node.metadata.labels or {},
                                       node.metadata.name or "")


def node_reason(plan: PodPlan, node: Node,
                verdict: Callable[[str], NodeVerdict]) -> str | None:
    """DynamicResources Filter: None when the pod's claims can be used on ``node``, else the
    reason. ``verdict(node_name)`` is the allocator's joint verdict (maybe cached)."""
    if plan.only_pending:  # the hot path: nothing but the allocator to ask
        v = verdict(node.metadata.name or "")
        return None if v.ok else v.reason
    unavailable = False
    joint_checked = False
    for check in plan.checks:
        if not check.pending:
            unavailable = unavailable or not _on_node(check.available_on, node)
            continue
        if not _on_node(check.available_on, node):
            return CLASS_NODE_FILTER
        if not joint_checked:
            joint_checked = True
            v = verdict(node.metadata.name or "")
            if not v.ok:
                return v.reason
    return NOT_AVAILABLE if unavailable else None


# --- resource.k8s.io/v1 (1.34) -------------------------------------------------------------


def prepare_devices(pod: Pod, claims: list[v1.ResourceClaim],
                    classes: Mapping[str, v1.DeviceClass], state: DeviceClaims,
                    slices: Sequence[v1.ResourceSlice] | SliceIndex, selectors: DeviceSelectors,
                    features: Features, timeout: float | None = None,
                    verdicts: DeviceVerdicts | None = None) -> DevicePlan:
    """DynamicResources PreFilter of 1.34 for the pod's v1 ``claims``: reservation rules, the
    classes of each unallocated claim's requests, no allocation in flight; then one
    allocator over the cluster's allocated devices for the pending claims (``timeout``
    seconds per node, None: none; ``verdicts`` kept from earlier pods). Raises
    :class:`Unschedulable`."""
    checks: list[DeviceCheck] = []
    pending: list[v1.ResourceClaim] = []
    for claim in claims:
        allocation = claim.status.allocation
        if allocation is not None:
            if not can_be_reserved(claim) and not is_reserved_for_pod(pod, claim):
                raise Unschedulable(IN_USE)
            checks.append(DeviceCheck(claim, allocation.node_selector, False))
            continue
        if state.is_in_flight(device_key(claim)):
            raise Unschedulable(f"resource claim {_kobj(claim)} is in the process of being "
                                "allocated")
        for request in claim.spec.devices.requests:
            if request.exactly is not None:
                _check_class(classes, request.exactly.device_class_name, request.name)
            elif request.first_available:
                if not features.prioritized_list:
                    raise Unschedulable(f"resource claim {_kobj(claim)}, request "
                                        f"{request.name}: has subrequests, but the "
                                        "DRAPrioritizedList feature is disabled")
                for sub in request.first_available:
                    _check_class(classes, sub.device_class_name, f"{request.name}/{sub.name}")
            else:
                raise Unschedulable(f"resource claim {_kobj(claim)}, request {request.name}: "
                                    "unknown request type")
        checks.append(DeviceCheck(claim, None, True))
        pending.append(claim)
    allocator = None
    if pending:
        allocator = DevicePodAllocator(state, DeviceAllocator(
            features, state.allocated(), classes, slices, selectors), pending, timeout, verdicts)
    return DevicePlan(pod, checks, allocator)


def _check_class(classes: Mapping[str, v1.DeviceClass], name: str, request: str) -> None:
    """Upstream ``validateDeviceClass``: a request must name a class that exists."""
    if not name:
        raise Unschedulable(f"request {request}: unsupported request type", unresolvable=False)
    if name not in classes:
        raise Unschedulable(f"request {request}: device class {name} does not exist")


def _kobj(claim: v1.ResourceClaim) -> str:
    return kobj(claim.metadata.namespace, claim.metadata.name)

"""A pod's claims: the rules the scheduler, the simulator, the ResourceClaim controller and the
node agent share, written once (upstream: ``dynamic-resource-allocation/resourceclaim`` plus
the claim checks of the scheduler's DynamicResources PreFilter and Filter).

* naming: :func:`claim_name` (direct name, or the generated one recorded in
  ``pod.status.resourceClaimStatuses``), :func:`claim_names`, :func:`is_for_pod`,
  :func:`owning_pod`, :func:`generate_name`, :func:`claim_from_template`;
* using: :func:`is_reserved_for_pod`, :func:`can_be_reserved`, :func:`consumer_ref`,
  :func:`structured_allocation`;
* scheduling one pod: :func:`pod_claims` (resolve every entry), :func:`prepare` (check each
  claim, plan the unallocated structured ones; a :class:`PodPlan` or one
  :class:`Unschedulable`) and :func:`node_reason` (why a node cannot take the pod's claims).

Pure and synchronous; every user-facing text lives here once.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from kubedra.allocation.claims import ClaimPlan, ClaimPlanError, plan_claim
from kubedra.allocation.engine import NodeVerdict, PodAllocator
from kubedra.allocation.index import AllocationIndex, claim_key
from kubedra.allocation.parameters import ParameterError, ParameterStore
from kubedra.allocation.selectors import Selectors
from kubedra.api.core import Node, NodeSelector, Pod, PodResourceClaim
from kubedra.api.meta import ObjectMeta, OwnerReference
from kubedra.api.nodeaffinity import matches
from kubedra.api.resource import (
    ALLOCATION_MODE_IMMEDIATE,
    API_VERSION,
    FINALIZER,
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceClaimTemplate,
    ResourceClass,
)

POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
"""On a generated claim: the ``pod.spec.resourceClaims`` entry it was made for."""

MAX_GENERATE_NAME_BASE = 57

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


# --- naming -----------------------------------------------------------------------------------


def _pod_ref(pod: Pod) -> str:
    return f"{pod.metadata.namespace or ''}/{pod.metadata.name or ''}"


def claim_name(pod: Pod, pod_claim: PodResourceClaim) -> tuple[str | None, bool]:
    """upstream ``resourceclaim.Name``: the claim's name (None: recorded as not needed) and
    whether it was generated from a template, so the caller must check :func:`is_for_pod`."""
    source = pod_claim.source
    if source.resource_claim_name:
        return source.resource_claim_name, False
    if source.resource_claim_template_name:
        for status in pod.status.resource_claim_statuses or ():
            if status.name == pod_claim.name:
                return status.resource_claim_name, True
        raise ClaimNotCreated(f'pod "{_pod_ref(pod)}": ResourceClaim not created yet')
    raise Unschedulable(f'pod "{_pod_ref(pod)}", spec.resourceClaim "{pod_claim.name}": '
                        "none of the supported fields are set")


def claim_names(pod: Pod) -> set[str]:
    """Names of the claims the pod uses, as far as known (spec references, and generated
    claims recorded in the status): a claim event can only help pods that name it."""
    names = {pc.source.resource_claim_name for pc in pod.spec.resource_claims or ()
             if pc.source.resource_claim_name}
    names.update(s.resource_claim_name for s in pod.status.resource_claim_statuses or ()
                 if s.resource_claim_name)
    return names


def owning_pod(claim: ResourceClaim) -> tuple[str, str] | None:
    """(name, UID) of the pod controlling the claim, if any."""
    for ref in claim.metadata.owner_references or ():
        if ref.api_version == "v1" and ref.kind == "Pod" and ref.controller:
            return ref.name, ref.uid
    return None


def is_for_pod(pod: Pod, claim: ResourceClaim) -> bool:
    """upstream ``resourceclaim.IsForPod``: a generated claim must be controlled by the pod
    (the error text, when it is not, is :func:`not_for_pod`)."""
    owner = owning_pod(claim)
    return owner is not None and owner[1] == pod.metadata.uid


def not_for_pod(pod: Pod, claim: ResourceClaim) -> str:
    return (f"ResourceClaim {claim.metadata.namespace}/{claim.metadata.name} "
            f"was not created for pod {_pod_ref(pod)} (pod is not owner)")


def generate_name(pod_name: str, pod_claim_name: str) -> str:
    """``<pod>-<claim>-``; when longer than 57 characters both parts are cut in proportion to
    their length, as upstream does (then without the trailing dash)."""
    name = f"{pod_name}-{pod_claim_name}-"
    if len(name) <= MAX_GENERATE_NAME_BASE:
        return name
    total = len(name)
    return (pod_name[: len(pod_name) * MAX_GENERATE_NAME_BASE // total] + "-"
            + pod_claim_name[: len(pod_claim_name) * MAX_GENERATE_NAME_BASE // total])


def template_not_found(template: str) -> str:
    return (f'resource claim template "{template}": resourceclaimtemplate.resource.k8s.io '
            f'"{template}" not found')


def claim_from_template(pod: Pod, pod_claim: str, template: ResourceClaimTemplate, *,
                        name: str | None = None) -> ResourceClaim:
    """The claim the ResourceClaim controller creates for ``pod_claim``: the template's
    metadata and spec, owned (controller) by the pod; ``generateName`` unless ``name``."""
    tmeta = template.spec.metadata
    meta = ObjectMeta(
        name=name,
        generate_name=None if name else generate_name(pod.metadata.name or "", pod_claim),
        namespace=pod.metadata.namespace,
        labels=dict(tmeta.labels) if tmeta.labels else None,
        annotations={**(tmeta.annotations or {}), POD_CLAIM_NAME_ANNOTATION: pod_claim},
        owner_references=[OwnerReference(api_version="v1", kind="Pod",
                                         name=pod.metadata.name or "",
                                         uid=pod.metadata.uid or "", controller=True,
                                         block_owner_deletion=True)],
    )
    return ResourceClaim(api_version=API_VERSION, kind="ResourceClaim", metadata=meta,
                         spec=copy.deepcopy(template.spec.spec))


# --- using ------------------------------------------------------------------------------------


def is_reserved_for_pod(pod: Pod, claim: ResourceClaim) -> bool:
    return any(r.uid == pod.metadata.uid for r in claim.status.reserved_for or ())


def can_be_reserved(claim: ResourceClaim) -> bool:
    """upstream ``resourceclaim.CanBeReserved``, for an allocated claim."""
    allocation = claim.status.allocation
    return allocation is not None and (allocation.shareable or not claim.status.reserved_for)


def consumer_ref(pod: Pod) -> ResourceClaimConsumerReference:
    """The ``status.reservedFor`` entry for ``pod``."""
    return ResourceClaimConsumerReference(resource="pods", name=pod.metadata.name or "",
                                          uid=pod.metadata.uid or "")


def structured_allocation(claim: ResourceClaim) -> bool:
    """upstream ``IsAllocatedWithStructuredParameters``: some handle carries structured data."""
    allocation = claim.status.allocation
    return allocation is not None and any(
        h.structured_data is not None for h in allocation.resource_handles or ())


# --- scheduling one pod -----------------------------------------------------------------------

ClaimLookup = Callable[[str, str], ResourceClaim | None]
"""(namespace, name) -> the newest known copy of the claim."""


def pod_claims(pod: Pod, lookup: ClaimLookup) -> list[ResourceClaim]:
    """The pod's claims in spec order (upstream ``foreachPodResourceClaim``); entries whose
    generated claim is recorded as not needed are skipped."""
    ns = pod.metadata.namespace or ""
    out: list[ResourceClaim] = []
    for pc in pod.spec.resource_claims or ():
        name, generated = claim_name(pod, pc)
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

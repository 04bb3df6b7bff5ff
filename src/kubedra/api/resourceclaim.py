"""How a pod refers to its ResourceClaims (upstream's model-free library
``dynamic-resource-allocation/resourceclaim``, plus the claim-from-template rules of the
ResourceClaim controller): the rules the scheduler, the allocator's simulator, the claim
controller and the node agent share, written once.

* naming: :func:`claim_name` (direct name, or the generated one recorded in
  ``pod.status.resourceClaimStatuses``), :func:`claim_names`, :func:`is_for_pod`,
  :func:`owning_pod`, :func:`generate_name`, :func:`claim_from_template`;
* using: :func:`is_reserved_for_pod`, :func:`can_be_reserved`, :func:`consumer_ref`,
  :func:`structured_allocation`.

Nothing here knows a resource model (named resources live in ``allocation/``). Pure and
synchronous; every user-facing text lives here once.
"""

from __future__ import annotations

import copy

from kubedra.api.core import Pod, PodResourceClaim
from kubedra.api.meta import ObjectMeta, OwnerReference
from kubedra.api.resource.v1alpha2 import (
    API_VERSION,
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceClaimTemplate,
)

POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
"""On a generated claim: the ``pod.spec.resourceClaims`` entry it was made for."""

MAX_GENERATE_NAME_BASE = 57


class ClaimNameError(ValueError):
    """A pod's claim entry names no claim yet (upstream ``ErrClaimNotFound``) or sets none of
    the supported fields (``ErrAPIUnsupported``); the text says which, for which pod."""


class ClaimNotCreatedError(ClaimNameError):
    """The entry's claim comes from a template and is not recorded in the pod's status yet:
    the ResourceClaim controller's next step, not a fault of the pod."""


# --- naming -----------------------------------------------------------------------------------


def _pod_ref(pod: Pod) -> str:
    return f"{pod.metadata.namespace or ''}/{pod.metadata.name or ''}"


def claim_name(pod: Pod, pod_claim: PodResourceClaim) -> tuple[str | None, bool]:
    """upstream ``resourceclaim.Name``: the claim's name (None: recorded as not needed) and
    whether it was generated from a template, so the caller must check :func:`is_for_pod`;
    raises :class:`ClaimNameError`."""
    source = pod_claim.source
    if source.resource_claim_name:
        return source.resource_claim_name, False
    if source.resource_claim_template_name:
        for status in pod.status.resource_claim_statuses or ():
            if status.name == pod_claim.name:
                return status.resource_claim_name, True
        raise ClaimNotCreatedError(f'pod "{_pod_ref(pod)}": ResourceClaim not created yet')
    raise ClaimNameError(f'pod "{_pod_ref(pod)}", spec.resourceClaim "{pod_claim.name}": '
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
    """upstream ``resourceclaim.IsReservedForPod``: ``status.reservedFor`` lists the pod."""
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

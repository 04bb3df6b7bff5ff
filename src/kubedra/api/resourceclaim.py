"""How a pod refers to its ResourceClaims (upstream's model-free library
``dynamic-resource-allocation/resourceclaim``, plus the claim-from-template rules of the
ResourceClaim controller): the rules the scheduler, the allocator's simulator, the claim
controller and the node agent share, written once.

* naming: :func:`claim_ref` (what a ``pod.spec.resourceClaims`` entry names, in v1.30's
  ``source`` shape or v1.34's top-level one), :func:`claim_name` (direct name, or the
  generated one recorded in ``pod.status.resourceClaimStatuses``), :func:`claim_names`,
  :func:`is_for_pod`,
  :func:`owning_pod`, :func:`generate_name`, :func:`claim_from_template`;
* using: :func:`is_reserved_for_pod`, :func:`can_be_reserved`, :func:`consumer_ref`,
  :func:`structured_allocation`.

The rules take the claims of either DRA generation; what differs between them (the kinds,
the finalizer, who may share a claim) is one :class:`ClaimAPI` per generation
(:data:`V1ALPHA2_CLAIMS` for 1.30, :data:`V1_CLAIMS` for 1.34, :func:`claim_api`).
Nothing here knows a resource model (named resources live in ``allocation/``). Pure and
synchronous; every user-facing text lives here once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, overload

from kubedra.api import codec
from kubedra.api.core import Pod, PodResourceClaim
from kubedra.api.meta import ObjectMeta, OwnerReference
from kubedra.api.release import R1_30, R1_34, Release
from kubedra.api.resource import v1, v1alpha2

ResourceClaim = v1alpha2.ResourceClaim | v1.ResourceClaim
ResourceClaimTemplate = v1alpha2.ResourceClaimTemplate | v1.ResourceClaimTemplate
ResourceClaimConsumerReference = (v1alpha2.ResourceClaimConsumerReference
                                  | v1.ResourceClaimConsumerReference)

POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
"""On a generated claim: the ``pod.spec.resourceClaims`` entry it was made for."""

MAX_GENERATE_NAME_BASE = 57


@dataclass(frozen=True, slots=True)
class ClaimAPI:
    """One DRA generation's claim kinds: what a component of that release reads and writes
    (``version`` of ``resource.k8s.io``), and the finalizer that keeps an allocated claim."""

    version: str
    claim: type[v1alpha2.ResourceClaim] | type[v1.ResourceClaim]
    template: type[v1alpha2.ResourceClaimTemplate] | type[v1.ResourceClaimTemplate]
    consumer: (type[v1alpha2.ResourceClaimConsumerReference]
               | type[v1.ResourceClaimConsumerReference])
    finalizer: str


V1ALPHA2_CLAIMS: Final = ClaimAPI(
    v1alpha2.VERSION, v1alpha2.ResourceClaim, v1alpha2.ResourceClaimTemplate,
    v1alpha2.ResourceClaimConsumerReference, v1alpha2.FINALIZER)
V1_CLAIMS: Final = ClaimAPI(v1.VERSION, v1.ResourceClaim, v1.ResourceClaimTemplate,
                            v1.ResourceClaimConsumerReference, v1.FINALIZER)
_BY_RELEASE: Final[dict[Release, ClaimAPI]] = {R1_30: V1ALPHA2_CLAIMS, R1_34: V1_CLAIMS}


def claim_api(release: Release) -> ClaimAPI:
    """The claim generation ``release`` serves."""
    return _BY_RELEASE[release]


class ClaimNameError(ValueError):
    """A pod's claim entry names no claim yet (upstream ``ErrClaimNotFound``) or sets none of
    the supported fields (``ErrAPIUnsupported``); the text says which, for which pod."""


class ClaimNotCreatedError(ClaimNameError):
    """The entry's claim comes from a template and is not recorded in the pod's status yet:
    the ResourceClaim controller's next step, not a fault of the pod."""


# --- naming -----------------------------------------------------------------------------------


def _pod_ref(pod: Pod) -> str:
    return f"{pod.metadata.namespace or ''}/{pod.metadata.name or ''}"


def claim_ref(pod_claim: PodResourceClaim) -> tuple[str | None, str | None]:
    """(claim name, template name) of a pod's claim entry, read from v1.34's top-level
    fields when one is set, else from v1.30's ``source``: the one rule for both shapes (the
    Pod strategy leaves only the serving release's)."""
    if (pod_claim.resource_claim_name is not None
            or pod_claim.resource_claim_template_name is not None):
        return pod_claim.resource_claim_name, pod_claim.resource_claim_template_name
    source = pod_claim.source
    if source is None:
        return None, None
    return source.resource_claim_name, source.resource_claim_template_name


def claim_name(pod: Pod, pod_claim: PodResourceClaim) -> tuple[str | None, bool]:
    """upstream ``resourceclaim.Name``: the claim's name (None: recorded as not needed) and
    whether it was generated from a template, so the caller must check :func:`is_for_pod`;
    raises :class:`ClaimNameError`."""
    direct, template = claim_ref(pod_claim)
    if direct:
        return direct, False
    if template:
        for status in pod.status.resource_claim_statuses or ():
            if status.name == pod_claim.name:
                return status.resource_claim_name, True
        raise ClaimNotCreatedError(f'pod "{_pod_ref(pod)}": ResourceClaim not created yet')
    raise ClaimNameError(f'pod "{_pod_ref(pod)}", spec.resourceClaim "{pod_claim.name}": '
                         "none of the supported fields are set")


def claim_names(pod: Pod) -> set[str]:
    """Names of the claims the pod uses, as far as known (spec references, and generated
    claims recorded in the status): a claim event can only help pods that name it."""
    names = {direct for pc in pod.spec.resource_claims or ()
             if (direct := claim_ref(pc)[0])}
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


@overload
def claim_from_template(pod: Pod, pod_claim: str, template: v1alpha2.ResourceClaimTemplate, *,
                        name: str | None = None) -> v1alpha2.ResourceClaim: ...
@overload
def claim_from_template(pod: Pod, pod_claim: str, template: v1.ResourceClaimTemplate, *,
                        name: str | None = None) -> v1.ResourceClaim: ...
def claim_from_template(pod: Pod, pod_claim: str, template: ResourceClaimTemplate, *,
                        name: str | None = None) -> ResourceClaim:
    """The claim the ResourceClaim controller creates for ``pod_claim``: the template's
    metadata and spec, owned (controller) by the pod, of the template's generation;
    ``generateName`` unless ``name``."""
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
    if isinstance(template, v1.ResourceClaimTemplate):
        return v1.ResourceClaim(api_version=v1.API_VERSION, kind="ResourceClaim",
                                metadata=meta,
                                spec=codec.deep_copy(template.spec.spec, v1.ResourceClaimSpec))
    return v1alpha2.ResourceClaim(
        api_version=v1alpha2.API_VERSION, kind="ResourceClaim", metadata=meta,
        spec=codec.deep_copy(template.spec.spec, v1alpha2.ResourceClaimSpec))


# --- using ------------------------------------------------------------------------------------


def is_reserved_for_pod(pod: Pod, claim: ResourceClaim) -> bool:
    """upstream ``resourceclaim.IsReservedForPod``: ``status.reservedFor`` lists the pod."""
    return any(r.uid == pod.metadata.uid for r in claim.status.reserved_for or ())


def can_be_reserved(claim: ResourceClaim) -> bool:
    """upstream ``resourceclaim.CanBeReserved``, for an allocated claim: a v1alpha2 claim
    when its allocation is shareable or unused, a v1 claim always (1.34 has no
    ``shareable``)."""
    if isinstance(claim, v1.ResourceClaim):
        return claim.status.allocation is not None
    allocation = claim.status.allocation
    return allocation is not None and (allocation.shareable or not claim.status.reserved_for)


@overload
def consumer_ref(pod: Pod) -> v1alpha2.ResourceClaimConsumerReference: ...
@overload
def consumer_ref(pod: Pod, api: ClaimAPI) -> ResourceClaimConsumerReference: ...
def consumer_ref(pod: Pod, api: ClaimAPI = V1ALPHA2_CLAIMS) -> ResourceClaimConsumerReference:
    """The ``status.reservedFor`` entry for ``pod``, in ``api``'s generation (v1alpha2's
    unless given)."""
    return api.consumer(resource="pods", name=pod.metadata.name or "",
                        uid=pod.metadata.uid or "")


def structured_allocation(claim: v1alpha2.ResourceClaim) -> bool:
    """upstream ``IsAllocatedWithStructuredParameters``: some handle carries structured data."""
    allocation = claim.status.allocation
    return allocation is not None and any(
        h.structured_data is not None for h in allocation.resource_handles or ())

"""Which ResourceClaims a pod uses and whether it may use them, as the kubelet checks before
preparing (k8s.io/dynamic-resource-allocation resourceclaim ``Name``, ``IsForPod``,
``IsReservedForPod``)."""

from __future__ import annotations

from kubedra.api.core import Pod, PodResourceClaim
from kubedra.api.resource import ResourceClaim


class PodClaimError(Exception):
    pass


def claim_name(pod: Pod, pc: PodResourceClaim) -> tuple[str | None, bool]:
    """The claim's name (``None``: the template needed no claim) and whether the claim must
    be owned by the pod (generated from a template)."""
    ref = f"{pod.metadata.namespace}/{pod.metadata.name}"
    if pc.source.resource_claim_name:
        return pc.source.resource_claim_name, False
    if pc.source.resource_claim_template_name:
        for status in pod.status.resource_claim_statuses or ():
            if status.name == pc.name:
                return status.resource_claim_name, True
        raise PodClaimError(f'pod "{ref}": ResourceClaim not created yet')
    raise PodClaimError(f'pod "{ref}", spec.resourceClaim "{pc.name}": resource claim '
                        "reference in pod is incompatible with the current API version")


def check_for_pod(pod: Pod, claim: ResourceClaim) -> None:
    """``IsForPod``: a generated claim is controlled by its pod."""
    uid = pod.metadata.uid
    if not any(o.controller and o.uid == uid for o in claim.metadata.owner_references or ()):
        raise PodClaimError(f"ResourceClaim {claim.metadata.namespace}/{claim.metadata.name} "
                            f"was not created for pod {pod.metadata.namespace}/"
                            f"{pod.metadata.name} (pod is not owner)")


def is_reserved_for_pod(pod: Pod, claim: ResourceClaim) -> bool:
    return any(r.uid == pod.metadata.uid and r.resource == "pods" and not r.api_group
               for r in claim.status.reserved_for or ())


def used_by_containers(pod: Pod, pc: PodResourceClaim) -> bool:
    """Claims no container or init container lists in ``resources.claims`` are not prepared."""
    containers = [*(pod.spec.init_containers or ()), *pod.spec.containers]
    return any(c.name == pc.name for ct in containers for c in ct.resources.claims or ())

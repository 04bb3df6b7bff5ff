"""Defaulting of resource.k8s.io/v1alpha2 (k8s v1.30 ``defaults.go``): the only defaulter sets
an empty ``allocationMode`` to ``WaitForFirstConsumer``, in claims and claim templates.
Nothing else is defaulted (``structuredParameters`` stays unset, ``shareable`` false)."""

from __future__ import annotations

from kubedra.api.resource.v1alpha2 import (
    ALLOCATION_MODE_WAIT_FOR_FIRST_CONSUMER,
    ResourceClaim,
    ResourceClaimSpec,
    ResourceClaimTemplate,
)


def default_resource_claim_spec(spec: ResourceClaimSpec) -> None:
    if not spec.allocation_mode:
        spec.allocation_mode = ALLOCATION_MODE_WAIT_FOR_FIRST_CONSUMER


def default_resource_claim(claim: ResourceClaim) -> None:
    default_resource_claim_spec(claim.spec)


def default_resource_claim_template(template: ResourceClaimTemplate) -> None:
    default_resource_claim_spec(template.spec.spec)

"""The claim fields a pod spec has in the serving release (upstream handles fields of one
release inside a GA type as it handles gated fields: ``pkg/api/pod`` ``dropDisabledFields``).

v1.30 names a claim in ``spec.resourceClaims[].source``; v1.34 has no ``source`` and names it
at the top level (``resourceClaimName`` / ``resourceClaimTemplateName``), and a container may
reference one ``request`` of a claim. The model carries both (``api/core.py``); every strategy
that stores a pod spec (Pod, Job's template) keeps only its release's, so what is stored and
served is that release's shape. The other release's fields are dropped, never "kept because
the old object uses them": that release's type has no such field at all, so a strict decoder
calls them unknown (:data:`ABSENT`).
"""

from __future__ import annotations

from kubedra.api.codec import Absent
from kubedra.api.core import ClaimSource, PodResourceClaim, PodSpec, ResourceClaim
from kubedra.api.release import R1_30, R1_34, Release

ABSENT: dict[Release, Absent] = {
    R1_30: frozenset({(PodResourceClaim, "resourceClaimName"),
                      (PodResourceClaim, "resourceClaimTemplateName"),
                      (ResourceClaim, "request")}),
    R1_34: frozenset({(PodResourceClaim, "source")}),
}
"""The claim fields of the model each release's types lack: unknown fields of a body."""


def drop_other_release_claim_fields(spec: PodSpec, release: Release) -> None:
    """Keep the claim fields ``release`` has. v1.30 writes ``source`` even when empty, as
    Go encodes a struct that is not a pointer; v1.34's ``request`` is omitted when empty."""
    containers = (*spec.containers, *(spec.init_containers or ()))
    refs = [ref for c in containers for ref in c.resources.claims or ()]
    if release == R1_30:
        for pc in spec.resource_claims or ():
            pc.resource_claim_name = pc.resource_claim_template_name = None
            if pc.source is None:
                pc.source = ClaimSource()
        for ref in refs:
            ref.request = None
        return
    for pc in spec.resource_claims or ():
        pc.source = None
    for ref in refs:
        ref.request = ref.request or None


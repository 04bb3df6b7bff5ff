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

import msgspec

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


def _attributes(absent: Absent) -> dict[type, list[str]]:
    """Per class, the attribute names of its fields in ``absent`` (which names JSON keys)."""
    out: dict[type, list[str]] = {}
    for cls, key in absent:
        out.setdefault(cls, []).extend(
            f.name for f in msgspec.structs.fields(cls) if f.encode_name == key)
    return out


_CLEARED = {release: _attributes(absent) for release, absent in ABSENT.items()}


def drop_other_release_claim_fields(spec: PodSpec, release: Release) -> None:
    """Clear the claim fields ``release`` lacks (:data:`ABSENT`). v1.30 writes ``source``
    even when empty, as Go encodes a struct that is not a pointer; v1.34's ``request`` is
    omitted when empty."""
    containers = (*spec.containers, *(spec.init_containers or ()))
    refs = [ref for c in containers for ref in c.resources.claims or ()]
    cleared = _CLEARED[release]
    for obj in (*(spec.resource_claims or ()), *refs):
        for name in cleared.get(type(obj), ()):
            setattr(obj, name, None)
    if release == R1_30:
        for pc in spec.resource_claims or ():
            if pc.source is None:
                pc.source = ClaimSource()
    else:
        for ref in refs:
            ref.request = ref.request or None

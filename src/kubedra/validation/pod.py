"""Pod validation for DRA (``pkg/apis/core/validation`` of the serving release):
``spec.resourceClaims``, containers' ``resources.claims`` and ``status.resourceClaimStatuses``,
on top of the pod-spec subset of :mod:`kubedra.validation.pod_template`.

The claim shapes differ by release (the Pod strategy has already dropped the other release's
fields): v1.30 names a claim in ``source`` and checks the generated ``<pod>-<claim>`` name;
v1.34 names it at the top level and lets a container reference one ``request`` of a claim.
The DRA checks run after the generic spec checks (upstream interleaves them; the set of
errors is the same). Spec updates follow upstream's rule that only a few fields may change.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import msgspec

from kubedra.api.core import ClaimSource, Container, Pod, PodResourceClaim, PodSpec, PodStatus
from kubedra.api.release import R1_30, Release
from kubedra.validation.equality import semantic_equal
from kubedra.validation.field import (
    ErrorList,
    ErrorType,
    FieldError,
    Path,
    duplicate,
    forbidden,
    invalid,
    required,
)
from kubedra.validation.meta import (
    METADATA,
    validate_object_meta,
    validate_object_meta_update,
)
from kubedra.validation.names import is_dns1123_label, name_is_dns_subdomain
from kubedra.validation.pod_template import validate_pod_spec

SPEC = Path("spec")
UPDATABLE_POD_SPEC_FIELDS = (
    "`spec.containers[*].image`",
    "`spec.initContainers[*].image`",
    "`spec.activeDeadlineSeconds`",
    "`spec.tolerations` (only additions to existing tolerations)",
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
)
_MAX_INT32 = 2**31 - 1


def pod_claim_names(claims: Sequence[PodResourceClaim] | None) -> set[str]:
    """The non-empty names of ``spec.resourceClaims`` (what containers may reference)."""
    return {c.name for c in claims or () if c.name}


def _validate_reference(
    claim_name: str | None, template: str | None, path: Path, value: object
) -> ErrorList:
    """Exactly one of the two names, each a valid name. ``path`` and the bad ``value`` of a
    whole reference are each release's: v1.30's ``source``, v1.34's claim entry."""
    errs: ErrorList = []
    if claim_name is not None and template is not None:
        errs.append(invalid(path, value, "at most one of `resourceClaimName` or "
                                         "`resourceClaimTemplateName` may be specified"))
    if claim_name is None and template is None:
        errs.append(invalid(path, value, "must specify one of: `resourceClaimName`, "
                                         "`resourceClaimTemplateName`"))
    if claim_name is not None:
        errs += [invalid(path.child("resourceClaimName"), claim_name, msg)
                 for msg in name_is_dns_subdomain(claim_name, False)]
    if template is not None:
        errs += [invalid(path.child("resourceClaimTemplateName"), template, msg)
                 for msg in name_is_dns_subdomain(template, False)]
    return errs


def _claim_value(claim: PodResourceClaim) -> dict[str, str | None]:
    """The bad value v1.34 prints for a whole entry: ``json.Marshal`` of the internal
    ``core.PodResourceClaim``, which has no JSON tags (so Go's field names)."""
    return {"Name": claim.name, "ResourceClaimName": claim.resource_claim_name,
            "ResourceClaimTemplateName": claim.resource_claim_template_name}


def validate_pod_resource_claims(
    pod_name: str, claims: Sequence[PodResourceClaim] | None, path: Path,
    release: Release,
) -> ErrorList:
    """``spec.resourceClaims``: unique DNS-label names and one reference each; in v1.30 a
    template-backed claim's generated name (``<pod>-<claim>``) must also be a valid
    ResourceClaim name."""
    errs: ErrorList = []
    seen: set[str] = set()
    for i, claim in enumerate(claims or ()):
        p = path.index(i)
        name_path = p.child("name")
        source = claim.source or ClaimSource()
        if not claim.name:
            errs.append(required(name_path))
        elif claim.name in seen:
            errs.append(duplicate(name_path, claim.name))
        else:
            name_errs = [invalid(name_path, claim.name, m) for m in is_dns1123_label(claim.name)]
            errs += name_errs
            if (release == R1_30 and not name_errs and pod_name
                    and source.resource_claim_template_name is not None):
                final = f"{pod_name}-{claim.name}"
                errs += [invalid(name_path, final, "final ResourceClaim name: " + m)
                         for m in name_is_dns_subdomain(final, False)]
            seen.add(claim.name)
        if release == R1_30:
            errs += _validate_reference(source.resource_claim_name,
                                        source.resource_claim_template_name,
                                        p.child("source"), source)
        else:
            errs += _validate_reference(claim.resource_claim_name,
                                        claim.resource_claim_template_name, p,
                                        _claim_value(claim))
    return errs


def _not_found(path: Path, name: str, known: set[str]) -> FieldError:
    detail = "must be one of the names in pod.spec.resourceClaims"
    detail += ": " + ", ".join(sorted(known)) if known else " which is empty"
    return FieldError(ErrorType.NOT_FOUND, path, name, detail)


def _check_request_ref(name: str, request: str | None, p: Path, seen: list[str]) -> ErrorList:
    """v1.34: a container names a claim once, or some of its requests once each (a whole
    claim overlaps every request of it, in either order)."""
    errs: ErrorList = []
    if name in seen:  # all requests of that claim are referenced already
        return [duplicate(p, name)]
    key = name
    if request:
        errs += [invalid(p.child("request"), request, m) for m in is_dns1123_label(request)]
        key = f"{name}/{request}"
    if key in seen:
        errs.append(duplicate(p, key))
    else:
        if not request:
            errs += [duplicate(p, name) for k in seen if "/" in k and k.split("/")[0] == name]
        seen.append(key)
    return errs


def validate_container_claims(
    container: Container, known: set[str], path: Path, release: Release
) -> ErrorList:
    """``<container>.resources.claims``: named, unique, and one of the pod's claims (v1.34:
    unique per claim and request)."""
    errs: ErrorList = []
    seen: list[str] = []
    claims_path = path.child("resources", "claims")
    for j, ref in enumerate(container.resources.claims or ()):
        p = claims_path.index(j)
        if not ref.name:
            errs.append(required(p))
            continue
        if release != R1_30:
            errs += _check_request_ref(ref.name, ref.request, p, seen)
        elif ref.name in seen:
            errs.append(duplicate(p, ref.name))
        else:
            seen.append(ref.name)
        if ref.name not in known:
            errs.append(_not_found(p, ref.name, known))
    return errs


def validate_pod_dra_fields(
    pod_name: str, spec: PodSpec, path: Path, release: Release
) -> ErrorList:
    """All DRA checks of a pod spec (resource claims and the containers' references)."""
    errs = validate_pod_resource_claims(pod_name, spec.resource_claims,
                                        path.child("resourceClaims"), release)
    known = pod_claim_names(spec.resource_claims)
    for i, c in enumerate(spec.containers):
        errs += validate_container_claims(c, known, path.child("containers").index(i), release)
    for i, c in enumerate(spec.init_containers or ()):
        errs += validate_container_claims(c, known, path.child("initContainers").index(i),
                                          release)
    return errs


def validate_pod(pod: Pod, release: Release) -> ErrorList:
    """A pod create (after defaulting): metadata, the pod-spec subset and the DRA fields of
    ``release``."""
    errs = validate_object_meta(pod.metadata, True, name_is_dns_subdomain, METADATA)
    errs += validate_pod_spec(pod.spec, SPEC)
    return errs + validate_pod_dra_fields(pod.metadata.name or "", pod.spec, SPEC, release)


def _munged_spec(new: PodSpec, old: PodSpec) -> PodSpec:
    """``new`` with the fields a pod update may change taken from ``old`` (upstream's munging):
    container images, activeDeadlineSeconds, tolerations, scheduling gates, and a grace period
    set to 1 from a negative value. Whatever still differs afterwards is forbidden."""
    grace = new.termination_grace_period_seconds
    old_grace = old.termination_grace_period_seconds
    if old_grace is not None and old_grace < 0 and grace == 1:
        grace = old_grace
    munged = msgspec.structs.replace(
        new,
        active_deadline_seconds=old.active_deadline_seconds,
        tolerations=old.tolerations,
        termination_grace_period_seconds=grace,
        scheduling_gates=old.scheduling_gates,
        containers=_with_images(new.containers, old.containers),
        init_containers=_with_images(new.init_containers, old.init_containers),
    )
    return munged


def _with_images(
    new: list[Container] | None, old: list[Container] | None
) -> list[Container] | None:
    if new is None or old is None or len(new) != len(old):
        return new
    return [msgspec.structs.replace(c, image=o.image) for c, o in zip(new, old, strict=True)]


def _validate_deadline_update(new: PodSpec, old: PodSpec) -> ErrorList:
    path = SPEC.child("activeDeadlineSeconds")
    value, before = new.active_deadline_seconds, old.active_deadline_seconds
    if value is None:
        if before is not None:
            return [invalid(path, None, "must not update from a positive integer to nil value")]
        return []
    if not 0 <= value <= _MAX_INT32:
        return [invalid(path, value, f"must be between 0 and {_MAX_INT32}, inclusive")]
    if before is not None and before < value:
        return [invalid(path, value, "must be less than or equal to previous value")]
    return []


def _validate_only_added_tolerations(new: PodSpec, old: PodSpec) -> ErrorList:
    """Existing tolerations stay (only their tolerationSeconds may change)."""
    for before in old.tolerations or ():
        if not any(
            semantic_equal(msgspec.structs.replace(before, toleration_seconds=t.toleration_seconds),
                           t)
            for t in new.tolerations or ()
        ):
            return [forbidden(SPEC.child("tolerations"),
                              "existing toleration can not be modified except its "
                              "tolerationSeconds")]
    return []


def _validate_only_deleted_scheduling_gates(new: PodSpec, old: PodSpec) -> ErrorList:
    before = {g.name for g in old.scheduling_gates or ()}
    return [
        forbidden(SPEC.child("schedulingGates").index(i).child("name"),
                  f"only deletion is allowed, but found new scheduling gate '{gate.name}'")
        for i, gate in enumerate(new.scheduling_gates or ())
        if gate.name not in before
    ]


@functools.cache
def _pod_spec_fields() -> tuple[msgspec.structs.FieldInfo, ...]:
    return msgspec.structs.fields(PodSpec)


def validate_pod_update(pod: Pod, old: Pod, release: Release) -> ErrorList:
    """A pod update: metadata update checks, the new pod's own validity, and the rule that
    only a few spec fields may change (which keeps ``spec.resourceClaims`` and the containers'
    claims immutable). The Forbidden text names the changed fields instead of Go's cmp.Diff."""
    errs = validate_object_meta_update(pod.metadata, old.metadata, METADATA)
    errs += validate_pod(pod, release)
    errs += _validate_deadline_update(pod.spec, old.spec)
    errs += _validate_only_added_tolerations(pod.spec, old.spec)
    errs += _validate_only_deleted_scheduling_gates(pod.spec, old.spec)
    munged = _munged_spec(pod.spec, old.spec)
    changed = [] if semantic_equal(munged, old.spec) else [
        f.encode_name for f in _pod_spec_fields()
        if not semantic_equal(getattr(munged, f.name), getattr(old.spec, f.name))]
    if changed:
        errs.append(forbidden(
            SPEC,
            "pod updates may not change fields other than " + ",".join(UPDATABLE_POD_SPEC_FIELDS)
            + "\nchanged: " + ", ".join(f"spec.{f}" for f in changed),
        ))
    return errs


def validate_pod_resource_claim_statuses(
    status: PodStatus, spec: PodSpec, path: Path
) -> ErrorList:
    """``status.resourceClaimStatuses``: each name is one of the pod's claims, once; a
    generated claim name must be a valid ResourceClaim name (reported at ``.name``, sic)."""
    errs: ErrorList = []
    known = {c.name for c in spec.resource_claims or ()}
    seen: set[str] = set()
    for i, entry in enumerate(status.resource_claim_statuses or ()):
        p = path.index(i).child("name")
        if entry.name not in known:
            errs.append(invalid(p, entry.name,
                                "must match the name of an entry in `spec.resourceClaims`"))
        if entry.name in seen:
            errs.append(duplicate(p, entry.name))
        else:
            seen.add(entry.name)
        if entry.resource_claim_name is not None:
            errs += [invalid(p, entry.resource_claim_name, msg)
                     for msg in name_is_dns_subdomain(entry.resource_claim_name, False)]
    return errs


def validate_pod_status_update(pod: Pod, old: Pod) -> ErrorList:
    """A pod status update (the DRA part): metadata update plus resourceClaimStatuses."""
    errs = validate_object_meta_update(pod.metadata, old.metadata, METADATA)
    return errs + validate_pod_resource_claim_statuses(
        pod.status, pod.spec, Path("status").child("resourceClaimStatuses")
    )

"""How a pod names and uses its claims (upstream's ``resourceclaim`` library): claim names,
ownership, reservations, claims from templates."""

from __future__ import annotations

from typing import Any

import pytest

from kubedra.api import resourceclaim
from kubedra.api.codec import decode
from kubedra.api.core import Pod
from kubedra.api.resource import v1
from kubedra.api.resource.v1alpha2 import (
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceClaimTemplate,
)


def make_pod(*entries: dict[str, Any], statuses: list[dict[str, Any]] | None = None,
             uid: str = "uid-p") -> Pod:
    return decode({"metadata": {"name": "p", "namespace": "default", "uid": uid},
                   "spec": {"resourceClaims": list(entries)},
                   "status": {"resourceClaimStatuses": statuses} if statuses else {}}, Pod)


def direct(name: str) -> dict[str, Any]:
    return {"name": name, "source": {"resourceClaimName": name}}


def templated(name: str, template: str = "t") -> dict[str, Any]:
    return {"name": name, "source": {"resourceClaimTemplateName": template}}


def claim(name: str, status: dict[str, Any] | None = None,
          owner_uid: str | None = None) -> ResourceClaim:
    meta: dict[str, Any] = {"name": name, "namespace": "default", "uid": f"uid-{name}"}
    if owner_uid:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": "p",
                                    "uid": owner_uid, "controller": True}]
    return decode({"metadata": meta, "spec": {"resourceClassName": "c"},
                   "status": status or {}}, ResourceClaim)


def allocated(*, shareable: bool = False, reserved: tuple[str, ...] = (),
              structured: bool = True) -> dict[str, Any]:
    handle: dict[str, Any] = {"driverName": "d"}
    if structured:
        handle["structuredData"] = {"nodeName": "n1", "results": []}
    return {"driverName": "d",
            "allocation": {"shareable": shareable, "resourceHandles": [handle]},
            "reservedFor": [{"resource": "pods", "name": r, "uid": f"uid-{r}"}
                            for r in reserved]}


def test_claim_name_direct_template_and_errors() -> None:
    pod = make_pod(direct("a"), templated("b"), templated("c"),
                   statuses=[{"name": "b", "resourceClaimName": "p-b-x1"}, {"name": "c"}])
    entries = pod.spec.resource_claims or []
    assert resourceclaim.claim_name(pod, entries[0]) == ("a", False)
    assert resourceclaim.claim_name(pod, entries[1]) == ("p-b-x1", True)
    assert resourceclaim.claim_name(pod, entries[2]) == (None, True)  # recorded as not needed
    with pytest.raises(resourceclaim.ClaimNameError) as err:
        resourceclaim.claim_name(make_pod(templated("b")), entries[1])
    assert str(err.value) == 'pod "default/p": ResourceClaim not created yet'
    empty = make_pod({"name": "e", "source": {}})
    with pytest.raises(resourceclaim.ClaimNameError) as err:
        resourceclaim.claim_name(empty, (empty.spec.resource_claims or [])[0])
    assert str(err.value) == ('pod "default/p", spec.resourceClaim "e": none of the supported '
                              "fields are set")
    assert resourceclaim.claim_names(pod) == {"a", "p-b-x1"}


def test_claim_name_reads_the_1_34_shape_too() -> None:
    """v1.34 names a claim at the top level (no ``source``); the same rules apply, and the
    top-level fields win when an entry carries both shapes."""
    pod = make_pod({"name": "a", "resourceClaimName": "a"},
                   {"name": "b", "resourceClaimTemplateName": "t"},
                   {"name": "m", "resourceClaimName": "new",
                    "source": {"resourceClaimName": "old"}},
                   statuses=[{"name": "b", "resourceClaimName": "p-b-x1"}])
    entries = pod.spec.resource_claims or []
    assert [resourceclaim.claim_ref(pc) for pc in entries] == [
        ("a", None), (None, "t"), ("new", None)]
    assert resourceclaim.claim_name(pod, entries[0]) == ("a", False)
    assert resourceclaim.claim_name(pod, entries[1]) == ("p-b-x1", True)
    assert resourceclaim.claim_names(pod) == {"a", "new", "p-b-x1"}
    with pytest.raises(resourceclaim.ClaimNotCreatedError):
        resourceclaim.claim_name(make_pod({"name": "b", "resourceClaimTemplateName": "t"}),
                                 entries[1])
    bare = make_pod({"name": "e"})
    assert resourceclaim.claim_ref((bare.spec.resource_claims or [])[0]) == (None, None)
    with pytest.raises(resourceclaim.ClaimNameError) as err:
        resourceclaim.claim_name(bare, (bare.spec.resource_claims or [])[0])
    assert str(err.value) == ('pod "default/p", spec.resourceClaim "e": none of the supported '
                              "fields are set")


def test_is_for_pod_needs_the_pod_as_controller() -> None:
    pod = make_pod(templated("b"), statuses=[{"name": "b", "resourceClaimName": "gen"}])
    mine, theirs = claim("gen", owner_uid="uid-p"), claim("gen", owner_uid="uid-other")
    assert resourceclaim.is_for_pod(pod, mine) and not resourceclaim.is_for_pod(pod, theirs)
    assert not resourceclaim.is_for_pod(pod, claim("gen"))
    assert resourceclaim.owning_pod(theirs) == ("p", "uid-other")
    assert resourceclaim.not_for_pod(pod, theirs) == (
        "ResourceClaim default/gen was not created for pod default/p (pod is not owner)")


def test_reservations_and_consumer() -> None:
    pod = make_pod(direct("a"))
    free, used = claim("a", allocated()), claim("a", allocated(reserved=("q",)))
    shared = claim("a", allocated(shareable=True, reserved=("q",)))
    assert resourceclaim.can_be_reserved(free) and resourceclaim.can_be_reserved(shared)
    assert not resourceclaim.can_be_reserved(used)
    assert not resourceclaim.can_be_reserved(claim("a"))  # unallocated
    assert not resourceclaim.is_reserved_for_pod(pod, used)
    assert resourceclaim.is_reserved_for_pod(pod, claim("a", allocated(reserved=("p",))))
    ref = resourceclaim.consumer_ref(pod)
    assert (ref.resource, ref.name, ref.uid, ref.api_group) == ("pods", "p", "uid-p", "")
    assert resourceclaim.structured_allocation(free)
    assert not resourceclaim.structured_allocation(claim("a", allocated(structured=False)))
    assert not resourceclaim.structured_allocation(claim("a"))


def test_generate_name_short_and_truncated_proportionally() -> None:
    assert resourceclaim.generate_name("my-pod", "gpu") == "my-pod-gpu-"
    pod, pod_claim = "p" * 60, "c" * 30
    name = resourceclaim.generate_name(pod, pod_claim)
    total = len(pod) + len(pod_claim) + 2
    assert name == "p" * (60 * 57 // total) + "-" + "c" * (30 * 57 // total)
    assert len(name) <= 58


def test_claim_from_template_owned_annotated_and_named() -> None:
    pod = make_pod(templated("gpu"))
    template = decode({"metadata": {"name": "t", "namespace": "default"},
                       "spec": {"metadata": {"labels": {"a": "b"},
                                             "annotations": {"x": "y"}},
                                "spec": {"resourceClassName": "c"}}}, ResourceClaimTemplate)
    made = resourceclaim.claim_from_template(pod, "gpu", template)
    assert made.metadata.generate_name == "p-gpu-" and made.metadata.name is None
    assert made.metadata.annotations == {"x": "y",
                                         resourceclaim.POD_CLAIM_NAME_ANNOTATION: "gpu"}
    assert made.metadata.labels == {"a": "b"}
    assert resourceclaim.is_for_pod(pod, made)
    assert made.spec.resource_class_name == "c"
    named = resourceclaim.claim_from_template(pod, "gpu", template, name="fixed")
    assert (named.metadata.name, named.metadata.generate_name) == ("fixed", None)


def test_v1_claims_from_templates_reservations_and_consumers() -> None:
    """The same rules for 1.34's claims: a v1 template gives a v1 claim, every allocated v1
    claim can be reserved (1.34 has no ``shareable``), and the consumer is a v1 one."""
    pod = make_pod({"name": "gpu", "resourceClaimTemplateName": "t"})
    template = decode({"metadata": {"name": "t", "namespace": "default"},
                       "spec": {"metadata": {"annotations": {"x": "y"}},
                                "spec": {"devices": {"requests": [{"name": "r", "exactly": {
                                    "deviceClassName": "c"}}]}}}}, v1.ResourceClaimTemplate)
    made = resourceclaim.claim_from_template(pod, "gpu", template)
    assert isinstance(made, v1.ResourceClaim)
    assert made.api_version == "resource.k8s.io/v1" and made.kind == "ResourceClaim"
    assert made.metadata.generate_name == "p-gpu-"
    assert made.metadata.annotations == {"x": "y",
                                         resourceclaim.POD_CLAIM_NAME_ANNOTATION: "gpu"}
    assert resourceclaim.is_for_pod(pod, made)
    assert made.spec == template.spec.spec and made.spec is not template.spec.spec
    reserved = decode({"status": {
        "allocation": {"devices": {"results": []}},
        "reservedFor": [{"resource": "pods", "name": "q", "uid": "uid-q"}]}},
        v1.ResourceClaim)
    assert resourceclaim.can_be_reserved(reserved)
    assert not resourceclaim.can_be_reserved(v1.ResourceClaim())  # unallocated
    assert not resourceclaim.is_reserved_for_pod(pod, reserved)
    ref = resourceclaim.consumer_ref(pod, resourceclaim.V1_CLAIMS)
    assert isinstance(ref, v1.ResourceClaimConsumerReference)
    assert (ref.resource, ref.name, ref.uid, ref.api_group) == ("pods", "p", "uid-p", "")
    assert isinstance(resourceclaim.consumer_ref(pod), ResourceClaimConsumerReference)

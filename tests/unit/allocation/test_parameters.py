"""Parameter resolution: none / in-tree / generatedFrom, defaults, upstream error texts."""

from __future__ import annotations

from typing import Any

import pytest

from kubedra.allocation.model.parameters import ParameterError, ParameterStore
from kubedra.api.codec import decode
from kubedra.api.resource.v1alpha2 import (
    ResourceClaim,
    ResourceClaimParameters,
    ResourceClass,
    ResourceClassParameters,
)

CRD_CLASS_REF = {"apiGroup": "example.com", "kind": "ResourceClassParameters",
                 "name": "my-resource-class", "namespace": "default"}
CRD_CLAIM_REF = {"apiGroup": "example.com", "kind": "ResourceClaimParameters",
                 "name": "my-pod-my-resource"}


def cls(ref: dict[str, Any] | None = None) -> ResourceClass:
    raw: dict[str, Any] = {"metadata": {"name": "my-resource-class"}, "driverName": "some-driver",
                           "structuredParameters": True}
    if ref:
        raw["parametersRef"] = ref
    return decode(raw, ResourceClass)


def claim(ref: dict[str, Any] | None = None, ns: str = "default") -> ResourceClaim:
    raw: dict[str, Any] = {"metadata": {"name": "my-pod-my-resource", "namespace": ns},
                           "spec": {"resourceClassName": "my-resource-class"}}
    if ref:
        raw["spec"]["parametersRef"] = ref
    return decode(raw, ResourceClaim)


def class_params(name: str, gen: dict[str, Any] | None = None) -> ResourceClassParameters:
    raw: dict[str, Any] = {"metadata": {"name": name, "namespace": "default"}}
    if gen:
        raw["generatedFrom"] = gen
    return decode(raw, ResourceClassParameters)


def claim_params(name: str, ns: str = "default", gen: dict[str, Any] | None = None,
                 shareable: bool = False) -> ResourceClaimParameters:
    raw: dict[str, Any] = {"metadata": {"name": name, "namespace": ns}, "shareable": shareable}
    if gen:
        raw["generatedFrom"] = gen
    return decode(raw, ResourceClaimParameters)


def test_no_references_give_empty_class_and_default_claim_parameters() -> None:
    store = ParameterStore()
    assert store.class_parameters(cls()) == ResourceClassParameters()
    got = store.claim_parameters(claim(), cls())
    assert got.shareable is True
    (dr,) = got.driver_requests or []
    assert dr.driver_name == "some-driver"
    (req,) = dr.requests or []
    assert req.named_resources is not None and req.named_resources.selector == "true"


def test_in_tree_references() -> None:
    store = ParameterStore()
    ref = {"apiGroup": "resource.k8s.io", "kind": "ResourceClassParameters",
           "name": "p", "namespace": "default"}
    with pytest.raises(ParameterError) as info:
        store.class_parameters(cls(ref))
    assert info.value.message == "class parameters default/p not found"
    assert info.value.unresolvable
    store.upsert_class_parameters(class_params("p"))
    assert store.class_parameters(cls(ref)).metadata.name == "p"

    cref = {"apiGroup": "resource.k8s.io", "kind": "ResourceClaimParameters", "name": "q"}
    with pytest.raises(ParameterError) as info:
        store.claim_parameters(claim(cref), cls())
    assert info.value.message == "claim parameters default/q not found"
    store.upsert_claim_parameters(claim_params("q", shareable=True))
    assert store.claim_parameters(claim(cref), cls()).shareable is True
    store.delete_claim_parameters("default", "q")
    with pytest.raises(ParameterError):
        store.claim_parameters(claim(cref), cls())


def test_generated_from_lookup_and_errors() -> None:
    store = ParameterStore()
    with pytest.raises(ParameterError) as info:
        store.class_parameters(cls(CRD_CLASS_REF))
    assert info.value.message == ("generated class parameters for "
                                  "ResourceClassParameters.example.com my-resource-class not found")
    with pytest.raises(ParameterError) as info:
        store.claim_parameters(claim(CRD_CLAIM_REF), cls())
    assert info.value.message == ("generated claim parameters for ResourceClaimParameters."
                                  "example.com default/my-pod-my-resource not found")

    store.upsert_class_parameters(class_params("my-resource-class", CRD_CLASS_REF))
    store.upsert_claim_parameters(claim_params("my-pod-my-resource", gen=CRD_CLAIM_REF))
    store.upsert_claim_parameters(claim_params("my-pod-my-resource", "default-2", CRD_CLAIM_REF))
    assert store.class_parameters(cls(CRD_CLASS_REF)).metadata.name == "my-resource-class"
    got = store.claim_parameters(claim(CRD_CLAIM_REF), cls())
    assert got.metadata.namespace == "default"  # only the claim's namespace is searched

    store.upsert_class_parameters(class_params("other", CRD_CLASS_REF))
    store.upsert_claim_parameters(claim_params("other", gen=CRD_CLAIM_REF))
    with pytest.raises(ParameterError) as info:
        store.class_parameters(cls(CRD_CLASS_REF))
    assert info.value.message == (
        "multiple generated class parameters for ResourceClassParameters.example.com "
        "my-resource-class found: [default/my-resource-class default/other]")
    assert not info.value.unresolvable
    with pytest.raises(ParameterError) as info:
        store.claim_parameters(claim(CRD_CLAIM_REF), cls())
    assert info.value.message == (
        "multiple generated claim parameters for ResourceClaimParameters.example.com "
        "default/my-pod-my-resource found: [default/my-pod-my-resource default/other]")

    # an update that changes generatedFrom moves the object out of the index
    store.upsert_class_parameters(class_params("other", {**CRD_CLASS_REF, "name": "x"}))
    assert store.class_parameters(cls(CRD_CLASS_REF)).metadata.name == "my-resource-class"

"""resource.k8s.io registry strategies: status/spec separation, defaulting, duplicated update
errors, generation handling and ResourceSlice field selectors."""

from __future__ import annotations

import copy
from typing import Any

from kubedra.api.features import FeatureGates
from tests.unit.registry.json_hooks import json_strategies

API = "resource.k8s.io/v1alpha2"
S = {k: s for k, s in json_strategies(FeatureGates()).items()
     if s.strategy.__module__.endswith(".resource")}


def claim(**status: Any) -> dict[str, Any]:
    return {"apiVersion": API, "kind": "ResourceClaim",
            "metadata": {"name": "c", "namespace": "ns", "resourceVersion": "1",
                         "labels": {"a": "1"}, "finalizers": ["x.io/f"]},
            "spec": {"resourceClassName": "gpu"}, "status": dict(status)}


def test_every_kind_has_a_strategy() -> None:
    assert sorted(S) == sorted([
        "ResourceClass", "ResourceClaim", "ResourceClaimTemplate", "PodSchedulingContext",
        "ResourceSlice", "ResourceClaimParameters", "ResourceClassParameters"])
    assert all(s.return_deleted_object and not s.tracks_generation for s in S.values())
    assert all(not s.allow_create_on_update for s in S.values())
    assert {k for k, s in S.items() if s.has_status_subresource} == {
        "ResourceClaim", "PodSchedulingContext"}


def test_reset_fields_are_what_the_endpoint_resets() -> None:
    """upstream ``GetResetFields``: a main-resource write may not own a claim's status, a
    status write nothing but status (and metadata); a kind without status owns it all."""
    obj = claim(driverName="d")
    assert S["ResourceClaim"].reset_fields("", obj, obj) == {("f:status",)}
    assert S["ResourceClaim"].reset_fields("status", None, obj) == {("f:spec",)}
    assert S["ResourceClaim"].reset_fields("status", {"extra": 1}, obj) == {("f:spec",),
                                                                            ("f:extra",)}
    assert S["ResourceClass"].reset_fields("", None, {"driverName": "d"}) == set()


def test_claim_create_defaults_and_drops_status() -> None:
    s = S["ResourceClaim"]
    obj = claim(driverName="d")
    obj["metadata"]["generation"] = 7
    s.default(obj)
    s.prepare_for_create(obj)
    assert obj["spec"]["allocationMode"] == "WaitForFirstConsumer"
    assert "status" not in obj or obj["status"] == {}
    assert obj["metadata"]["generation"] == 7  # kept, never set or bumped
    assert s.validate(obj) == []


def test_claim_template_defaulting() -> None:
    s = S["ResourceClaimTemplate"]
    obj: dict[str, Any] = {"apiVersion": API, "kind": "ResourceClaimTemplate",
           "metadata": {"name": "t", "namespace": "ns"}, "spec": {"spec": {}}}
    s.default(obj)
    assert obj["spec"]["spec"]["allocationMode"] == "WaitForFirstConsumer"


def test_claim_main_update_keeps_status_and_duplicates_errors() -> None:
    s = S["ResourceClaim"]
    old = claim(driverName="d")
    old["spec"]["allocationMode"] = "Immediate"
    new = copy.deepcopy(old)
    new["status"] = {}
    new["spec"]["resourceClassName"] = "Bad!"
    s.prepare_for_update(new, old)
    assert new["status"] == {"driverName": "d"}
    errs = s.validate_update(new, old)
    assert [(e.type.value, str(e.field)) for e in errs] == [
        ("FieldValueInvalid", "spec.resourceClassName"),
        ("FieldValueInvalid", "spec"),
        ("FieldValueInvalid", "spec.resourceClassName"),
    ]


def test_claim_status_update_restores_spec_and_metadata() -> None:
    s = S["ResourceClaim"]
    old = claim()
    old["spec"]["allocationMode"] = "Immediate"
    new = copy.deepcopy(old)
    new["spec"]["resourceClassName"] = "other"
    new["metadata"]["labels"] = {"b": "2"}
    new["metadata"]["finalizers"] = []
    new["status"] = {"driverName": "d", "allocation": {}}
    s.prepare_for_status_update(new, old)
    assert new["spec"] == old["spec"]
    assert new["metadata"]["labels"] == {"a": "1"}
    assert new["metadata"]["finalizers"] == ["x.io/f"]
    assert new["status"]["driverName"] == "d"
    assert s.validate_status_update(new, old) == []
    new["status"] = {"allocation": {}}
    errs = s.validate_status_update(new, old)
    assert [(e.type.value, str(e.field)) for e in errs] == [
        ("FieldValueRequired", "status.driverName")]


def test_slice_update_errors_not_duplicated() -> None:
    s = S["ResourceSlice"]
    old = {"apiVersion": API, "kind": "ResourceSlice",
           "metadata": {"name": "s", "resourceVersion": "1"},
           "nodeName": "n", "driverName": "d", "namedResources": {}}
    new = copy.deepcopy(old)
    new["nodeName"] = "Bad!"
    errs = s.validate_update(new, old)
    assert [str(e.field) for e in errs] == ["nodeName", "nodeName"]
    assert [e.detail for e in errs][1] == "field is immutable"


def test_slice_field_selectors() -> None:
    s = S["ResourceSlice"]
    obj = {"metadata": {"name": "s"}, "nodeName": "n1", "driverName": "d"}
    assert s.selectable_fields(obj) == {"metadata.name": "s", "nodeName": "n1",
                                        "driverName": "d"}
    assert s.selectable_fields({"metadata": {"name": "s"}})["nodeName"] == ""
    assert s.extra_field_labels == ("nodeName", "driverName")
    assert s.field_label_error("spec.x") == (
        "field label not supported for resource.k8s.io/v1alpha2, Kind=ResourceSlice: spec.x")


def test_class_update_duplicates_errors() -> None:
    s = S["ResourceClass"]
    old = {"apiVersion": API, "kind": "ResourceClass",
           "metadata": {"name": "c", "resourceVersion": "1"}, "driverName": "d"}
    new = copy.deepcopy(old)
    new["driverName"] = ""
    errs = s.validate_update(new, old)
    assert [e.type.value for e in errs] == ["FieldValueRequired", "FieldValueInvalid"] * 2


def test_scheduling_context_status() -> None:
    s = S["PodSchedulingContext"]
    old = {"apiVersion": API, "kind": "PodSchedulingContext",
           "metadata": {"name": "p", "namespace": "ns", "resourceVersion": "1"},
           "spec": {"potentialNodes": ["a"]}}
    new = copy.deepcopy(old)
    new["spec"] = {"potentialNodes": ["b"]}
    new["status"] = {"resourceClaims": [{"name": "x"}, {"name": "x"}]}
    s.prepare_for_status_update(new, old)
    assert new["spec"] == {"potentialNodes": ["a"]}
    errs = s.validate_status_update(new, old)
    assert [(e.type.value, str(e.field)) for e in errs] == [
        ("FieldValueDuplicate", "status.claims[1]")]

"""Patch metadata exported as OpenAPI extensions; set and map ownership in field sets."""

from __future__ import annotations

from typing import Any

import pytest

from kubedra.apiserver.errors import ApiError
from kubedra.apiserver.patch import annotate_openapi, schema_of, server_side_apply
from kubedra.apiserver.patch.fieldset import field_set


def _components() -> dict[str, Any]:
    return {
        "Pod": {"properties": {"metadata": {"$ref": "#/components/schemas/ObjectMeta"},
                               "spec": {"allOf": [{"$ref": "#/components/schemas/PodSpec"}],
                                        "nullable": True}}},
        "ObjectMeta": {"properties": {"finalizers": {"type": "array",
                                                     "items": {"type": "string"}},
                                      "ownerReferences": {"type": "array", "items": {
                                          "$ref": "#/components/schemas/OwnerReference"}}}},
        "OwnerReference": {"properties": {"uid": {"type": "string"}}},
        "PodSpec": {"properties": {
            "containers": {"type": "array", "items": {"$ref": "#/components/schemas/Container"}},
            "tolerations": {"type": "array", "items": {"type": "object"}}}},
        "Container": {"properties": {"env": {"type": "array", "items": {"type": "object"}},
                                     "ports": {"type": "array", "items": {"type": "object"}}}},
    }


def test_annotate_openapi_follows_refs() -> None:
    comps = _components()
    annotate_openapi(comps, "Pod", schema_of("v1", "Pod"))
    containers = comps["PodSpec"]["properties"]["containers"]
    assert containers["x-kubernetes-patch-strategy"] == "merge"
    assert containers["x-kubernetes-patch-merge-key"] == "name"
    assert containers["x-kubernetes-list-type"] == "map"
    assert containers["x-kubernetes-list-map-keys"] == ["name"]
    ports = comps["Container"]["properties"]["ports"]
    assert ports["x-kubernetes-patch-merge-key"] == "containerPort"
    assert ports["x-kubernetes-list-map-keys"] == ["containerPort", "protocol"]
    assert comps["Container"]["properties"]["env"]["x-kubernetes-patch-merge-key"] == "name"
    finalizers = comps["ObjectMeta"]["properties"]["finalizers"]
    assert finalizers == {"type": "array", "items": {"type": "string"},
                          "x-kubernetes-patch-strategy": "merge",
                          "x-kubernetes-list-type": "set"}
    assert "x-kubernetes-patch-strategy" not in comps["PodSpec"]["properties"]["tolerations"]
    before = repr(comps)
    annotate_openapi(comps, "Pod", schema_of("v1", "Pod"))
    assert repr(comps) == before


def test_set_and_map_members() -> None:
    psc = {"apiVersion": "resource.k8s.io/v1alpha2", "kind": "PodSchedulingContext",
           "metadata": {"name": "p", "labels": {"a": "b"}},
           "spec": {"potentialNodes": ["n1", "n2"], "selectedNode": "n1"},
           "status": {"resourceClaims": [{"name": "gpu", "unsuitableNodes": ["n2"]}]}}
    got = field_set(psc, schema_of("resource.k8s.io/v1alpha2", "PodSchedulingContext"))
    assert got == {
        ("f:metadata", "f:labels", "f:a"),
        ("f:spec", "f:potentialNodes", 'v:"n1"'), ("f:spec", "f:potentialNodes", 'v:"n2"'),
        ("f:spec", "f:selectedNode"),
        ("f:status", "f:resourceClaims", 'k:{"name":"gpu"}'),
        ("f:status", "f:resourceClaims", 'k:{"name":"gpu"}', "f:name"),
        ("f:status", "f:resourceClaims", 'k:{"name":"gpu"}', "f:unsuitableNodes", 'v:"n2"'),
    }


def test_atomic_list_is_one_leaf() -> None:
    rs = {"apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceSlice",
          "metadata": {"name": "s"}, "driverName": "d",
          "namedResources": {"instances": [{"name": "gpu-0"}]}}
    assert field_set(rs, schema_of("resource.k8s.io/v1alpha2", "ResourceSlice")) == {
        ("f:driverName",), ("f:namedResources", "f:instances")}


def test_server_side_apply_raises_409() -> None:
    rc = {"apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClass",
          "metadata": {"name": "c"}, "driverName": "a.example.com"}
    live = server_side_apply(None, rc, manager="alice", force=False)
    with pytest.raises(ApiError) as info:
        server_side_apply(live, dict(rc, driverName="b.example.com"), manager="bob",
                          force=False)
    assert info.value.code == 409
    assert info.value.status["message"] == (
        'Apply failed with 1 conflict: conflict with "alice": .driverName')
    forced = server_side_apply(live, dict(rc, driverName="b.example.com"), manager="bob",
                               force=True)
    assert forced["driverName"] == "b.example.com"
    assert [m["manager"] for m in forced["metadata"]["managedFields"]] == ["bob"]

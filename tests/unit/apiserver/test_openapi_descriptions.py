"""The OpenAPI documents carry a description on every type and field, and the descriptions
table names only types and fields that exist (kubedra.api.descriptions)."""

from __future__ import annotations

from typing import Any

from kubedra.api import scheme
from kubedra.api.descriptions import DESCRIPTIONS, REQUIRED
from kubedra.api.features import FeatureGates
from kubedra.api.release import R1_34
from kubedra.api.runtimeconfig import parse_runtime_config
from kubedra.apiserver import openapi
from kubedra.apiserver.registry import Registry


def _definitions(registry: Registry | None = None) -> dict[str, Any]:
    registry = registry or Registry(FeatureGates())
    defs: dict[str, Any] = {}
    for path in openapi.v3_index(registry)["paths"]:
        doc = openapi.v3_document(registry, path)
        assert doc is not None
        defs.update(doc["components"]["schemas"])
    return defs


def test_every_type_and_field_is_described() -> None:
    missing = []
    for name, schema in _definitions().items():
        if name.endswith("List"):
            continue
        if not schema.get("description"):
            missing.append(name)
        missing += [f"{name}.{field}" for field, prop in schema.get("properties", {}).items()
                    if not prop.get("description")]
    assert missing == []


def test_descriptions_name_existing_fields() -> None:
    defs = _definitions()
    # resource.k8s.io/v1 is not served by the default (1.30) release: its descriptions are
    # checked against the models (tests/unit/api/test_resource_v1.py)
    stale = [f"{name}.{field}" for name, fields in DESCRIPTIONS.items() for field in fields
             if not name.startswith("io.k8s.api.resource.v1.")
             and (name not in defs or (field and field not in defs[name].get("properties", {})))]
    assert stale == []


def test_v2_definitions_match_v3() -> None:
    registry = Registry(FeatureGates())
    v2 = openapi.v2_document(registry)["definitions"]
    assert set(v2) == set(_definitions())
    claim = v2["io.k8s.api.resource.v1alpha2.ResourceClaim"]["properties"]["spec"]
    assert claim == {"description": DESCRIPTIONS["io.k8s.api.resource.v1alpha2.ResourceClaim"][
        "spec"], "$ref": "#/definitions/io.k8s.api.resource.v1alpha2.ResourceClaimSpec"}


def test_required_fields_are_upstreams_and_exist() -> None:
    # kubectl explain prints -required- from these; v1beta2 is served by v1's types
    config = parse_runtime_config("resource.k8s.io/v1beta2=true", scheme.registered(R1_34))
    defs = _definitions(Registry(FeatureGates.for_release(R1_34), runtime_config=config))
    for name, fields in REQUIRED.items():
        schema = defs[name]
        assert schema["required"] == list(fields)
        assert set(fields) <= set(schema["properties"]), name
    assert defs["io.k8s.api.resource.v1.ResourceSliceSpec"]["required"] == ["driver", "pool"]
    assert "required" not in defs["io.k8s.api.resource.v1.DeviceClassSpec"]

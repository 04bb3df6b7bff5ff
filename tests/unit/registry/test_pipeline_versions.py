"""The write pipeline of a version served beside the stored one (resource.k8s.io v1beta1 and
v1beta2 beside v1): bodies are defaulted in their version and converted to the hub, and
field errors name the fields as the client wrote them."""

from __future__ import annotations

from typing import Any

import pytest

from kubedra.api import codec, kinds
from kubedra.api.features import FeatureGates
from kubedra.api.release import R1_34
from kubedra.api.resource import v1
from kubedra.registry import pipeline, resources

STRATEGIES = resources.strategies(FeatureGates.for_release(R1_34))


def admit(version: str, kind: str, body: dict[str, Any]) -> Any:
    k = kinds.by_gvk("resource.k8s.io", version, kind)
    assert k is not None
    raw = {"apiVersion": f"resource.k8s.io/{version}", "kind": kind, **body}
    return pipeline.admit_new(STRATEGIES[k.resource.storage_gvr], k, raw, namespace="ns",
                              mode="Strict").obj


def test_a_v1beta1_claim_is_defaulted_then_stored_as_v1() -> None:
    claim = admit("v1beta1", "ResourceClaim", {
        "metadata": {"name": "c"},
        "spec": {"devices": {"requests": [{"name": "r", "deviceClassName": "gpu"}]}}})
    assert isinstance(claim, v1.ResourceClaim)
    assert claim.api_version == "resource.k8s.io/v1"
    exactly = claim.spec.devices.requests[0].exactly
    assert exactly is not None
    assert (exactly.device_class_name, exactly.allocation_mode, exactly.count) == (
        "gpu", "ExactCount", 1)


def test_a_v1beta2_slice_is_stored_as_v1() -> None:
    obj = admit("v1beta2", "ResourceSlice", {
        "metadata": {"name": "s"},
        "spec": {"driver": "d.example.com", "allNodes": True,
                 "pool": {"name": "p", "generation": 0, "resourceSliceCount": 1},
                 "devices": []}})
    assert isinstance(obj, v1.ResourceSlice)
    assert obj.api_version == "resource.k8s.io/v1"


@pytest.mark.parametrize(("version", "device", "path"), [
    ("v1beta1", {"name": "d", "basic": {"attributes": {"a": {"string": "x" * 65}}}},
     "spec.devices[0].basic.attributes[a].string"),
    ("v1", {"name": "d", "attributes": {"a": {"string": "x" * 65}}},
     "spec.devices[0].attributes[a].string"),
])
def test_field_errors_name_the_clients_fields(version: str, device: dict[str, Any],
                                              path: str) -> None:
    with pytest.raises(pipeline.Invalid) as err:
        admit(version, "ResourceSlice", {
            "metadata": {"name": "s"},
            "spec": {"driver": "d.example.com", "allNodes": True,
                     "pool": {"name": "p", "generation": 0, "resourceSliceCount": 1},
                     "devices": [device]}})
    assert [str(e.field) for e in err.value.errors] == [path]


def test_a_shared_model_is_written_as_the_preferred_version() -> None:
    claim = codec.set_type_meta(v1.ResourceClaim())
    assert claim.api_version == "resource.k8s.io/v1"

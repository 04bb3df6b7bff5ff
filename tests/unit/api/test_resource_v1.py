"""resource.k8s.io/v1 and v1beta1 models: upstream's JSON names, what Go always writes, and
what a decode/encode round trip keeps."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest

from kubedra.api import codec
from kubedra.api.descriptions import DESCRIPTIONS
from kubedra.api.quantity import Quantity
from kubedra.api.resource import v1, v1beta1
from tests.unit.api.resource_v1_samples import V1, V1BETA1, by_kind, documents
from tests.unit.api.samples import omit_empty
from tests.vectors import load

V1_MODELS: dict[str, type[Any]] = {
    "DeviceClass": v1.DeviceClass,
    "ResourceClaim": v1.ResourceClaim,
    "ResourceClaimTemplate": v1.ResourceClaimTemplate,
    "ResourceSlice": v1.ResourceSlice,
}
V1BETA1_MODELS: dict[str, type[Any]] = {
    "DeviceClass": v1.DeviceClass,
    "ResourceClaim": v1beta1.ResourceClaim,
    "ResourceClaimTemplate": v1beta1.ResourceClaimTemplate,
    "ResourceSlice": v1beta1.ResourceSlice,
}


def _has_macro(value: Any) -> bool:
    if isinstance(value, dict):
        return any(k.startswith("$") or _has_macro(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_macro(v) for v in value)
    return False


def _vector_objects() -> list[tuple[str, dict[str, Any]]]:
    """Every whole v1 object in the v1 vectors (transcribed from upstream's test tables)."""
    out: list[tuple[str, dict[str, Any]]] = []

    def collect(value: Any, where: str) -> None:
        if isinstance(value, dict):
            if value.get("apiVersion") == v1.API_VERSION and value.get("kind") in V1_MODELS \
                    and not _has_macro(value):
                out.append((where, value))
            for k, v in value.items():
                collect(v, f"{where}.{k}")
        elif isinstance(value, list):
            for i, v in enumerate(value):
                collect(v, f"{where}[{i}]")

    for name in ("v1-validation-resourceslice.json", "v1-validation-resourceclaim.json",
                 "v1-validation-deviceclass.json", "v1-alloc-stable.json",
                 "v1-resourceslice-controller.json"):
        collect(load(name), name)
    return out


SAMPLES = [(f"v1#{i}", d, V1_MODELS) for i, d in enumerate(documents(V1))] + \
    [(f"v1beta1#{i}", d, V1BETA1_MODELS) for i, d in enumerate(documents(V1BETA1))]
VECTOR_OBJECTS = _vector_objects()


@pytest.mark.parametrize("name,raw,models", SAMPLES, ids=[s[0] for s in SAMPLES])
def test_manifests_use_only_upstream_names_and_round_trip(
        name: str, raw: dict[str, Any], models: dict[str, type[Any]]) -> None:
    model = models[raw["kind"]]
    assert codec.unknown_fields(raw, model) == []
    obj = codec.decode(raw, model)
    encoded = json.loads(codec.encode(obj))
    assert omit_empty(encoded) == omit_empty(raw)
    assert codec.decode(encoded, model) == obj


def test_vector_objects_are_many() -> None:
    kinds = {raw["kind"] for _, raw in VECTOR_OBJECTS}
    assert len(VECTOR_OBJECTS) > 100 and kinds >= {"ResourceSlice", "ResourceClaim",
                                                   "DeviceClass"}


@pytest.mark.parametrize("where,raw", VECTOR_OBJECTS, ids=[w for w, _ in VECTOR_OBJECTS])
def test_vector_objects_decode_without_unknown_fields(where: str, raw: dict[str, Any]) -> None:
    model = V1_MODELS[raw["kind"]]
    assert codec.unknown_fields(raw, model) == []
    obj = codec.decode(raw, model)
    assert omit_empty(json.loads(codec.encode(obj)), lists=True) == omit_empty(raw, lists=True)


@pytest.mark.parametrize("model,raw,unknown", [
    # a misspelt key: the name check above can fail
    (v1.ResourceClaim, {"spec": {"devices": {"requests": [{"name": "r", "exact": {}}]}}},
     "spec.devices.requests[0].exact"),
    # tombstoned fields of v1alpha3/v1beta1 times are gone from v1
    (v1.ResourceClaim, {"spec": {"controller": "x"}}, "spec.controller"),
    (v1.ResourceClaim, {"status": {"deallocationRequested": True}},
     "status.deallocationRequested"),
    (v1.DeviceClass, {"spec": {"suitableNodes": {}}}, "spec.suitableNodes"),
    # the shapes of the other version are unknown in each
    (v1.ResourceSlice, {"spec": {"devices": [{"name": "d", "basic": {}}]}},
     "spec.devices[0].basic"),
    (v1beta1.ResourceClaim, {"spec": {"devices": {"requests": [{"exactly": {}}]}}},
     "spec.devices.requests[0].exactly"),
])
def test_unknown_fields_are_reported(model: type[Any], raw: dict[str, Any],
                                     unknown: str) -> None:
    assert unknown in codec.unknown_fields(raw, model)


def test_values_decode_into_their_types() -> None:
    slice_ = codec.decode(by_kind(V1, "ResourceSlice"), v1.ResourceSlice)
    dev = slice_.spec.devices[0]
    assert dev.attributes is not None and dev.capacity is not None
    assert dev.attributes["type"] == v1.DeviceAttribute(string="gpu")
    assert dev.attributes["index"] == v1.DeviceAttribute(int_=0)
    assert dev.attributes["healthy"] == v1.DeviceAttribute(bool_=True)
    assert dev.attributes["driverVersion"] == v1.DeviceAttribute(version="1.2.3")
    assert dev.capacity["memory"].value == Quantity.parse("80Gi")
    policy = dev.capacity["bandwidth"].request_policy
    assert policy is not None and policy.valid_range is not None
    assert policy.valid_range.step == Quantity.parse("1G")
    assert slice_.spec.node_name == "worker-1" and slice_.spec.all_nodes is None
    claim = codec.decode(by_kind(V1, "ResourceClaim"), v1.ResourceClaim)
    exactly = claim.spec.devices.requests[0].exactly
    assert exactly is not None and exactly.admin_access is False and exactly.count == 2
    assert claim.status.devices is not None
    assert claim.status.devices[0].data == {"vlan": 7}
    assert claim.status.devices[0].share_id == "9a1b2c3d-0000-4000-8000-000000000002"


def test_keys_go_always_writes() -> None:
    # devices/requests/items have no omitempty (spec pitfall 12), nor the pool's numbers,
    # deviceClassName, requestPolicy.default, device status conditions, opaque parameters.
    assert json.loads(codec.encode(v1.ResourceSlice()))["spec"] == {
        "pool": {"generation": 0, "resourceSliceCount": 0}, "devices": []}
    assert json.loads(codec.encode(v1.ResourceClaim())) == {
        "metadata": {}, "spec": {"devices": {"requests": []}}, "status": {}}
    assert json.loads(codec.encode(v1.DeviceRequest(name="r", exactly=v1.ExactDeviceRequest()))) \
        == {"name": "r", "exactly": {"deviceClassName": ""}}
    assert json.loads(codec.encode(v1beta1.DeviceRequest(name="r"))) == {
        "name": "r", "deviceClassName": ""}
    assert json.loads(codec.encode(v1.CapacityRequestPolicy())) == {"default": None}
    assert json.loads(codec.encode(v1.AllocatedDeviceStatus())) == {"conditions": None}
    assert json.loads(codec.encode(v1.OpaqueDeviceConfiguration())) == {"parameters": None}
    assert json.loads(codec.encode(v1.AllocationResult())) == {"devices": {}}
    assert json.loads(codec.encode(v1.DeviceClassList())) == {"metadata": {}, "items": []}
    assert json.loads(codec.encode(v1beta1.ResourceSliceList())) == {"metadata": {}, "items": []}


def test_go_nulls_read_back_as_empty_lists() -> None:
    slice_ = codec.decode({"spec": {"devices": None}}, v1.ResourceSlice)
    assert slice_.spec.devices == []
    claim = codec.decode({"spec": {"devices": {"requests": None}}}, v1.ResourceClaim)
    assert claim.spec.devices.requests == []
    beta = codec.decode({"spec": {"devices": {"requests": None}}}, v1beta1.ResourceClaim)
    assert beta.spec.devices.requests == []
    assert codec.decode({"spec": {"devices": None}}, v1beta1.ResourceSlice).spec.devices == []


def test_v1beta1_plain_node_fields() -> None:
    raw = {"spec": {"nodeName": "", "allNodes": False}}
    beta = codec.decode(raw, v1beta1.ResourceSlice)
    assert beta.spec.node_name == "" and beta.spec.all_nodes is False
    assert "nodeName" not in json.loads(codec.encode(beta))["spec"]
    # v1's pointers keep an explicit "" and false (invalid there, but what the client sent)
    hub = codec.decode(raw, v1.ResourceSlice)
    assert hub.spec.node_name == "" and hub.spec.all_nodes is False
    assert json.loads(codec.encode(hub))["spec"]["nodeName"] == ""


def test_constants_of_types_go() -> None:
    assert v1.FINALIZER == "resource.kubernetes.io/delete-protection"
    assert v1.DRA_ADMIN_NAMESPACE_LABEL_KEY == "resource.kubernetes.io/admin-access"
    assert v1.DEVICE_REQUESTS_MAX_SIZE == v1.ALLOCATION_RESULTS_MAX_SIZE == 32
    assert (v1.RESOURCE_SLICE_MAX_DEVICES, v1.RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE,
            v1.CEL_SELECTOR_EXPRESSION_MAX_LENGTH) == (128, 256, 10240)


def test_v1beta1_classes_mirror_v1() -> None:
    # BasicDevice is v1's device without the name; the flat request holds all of exactly.
    assert v1beta1.BasicDevice.__struct_encode_fields__ == tuple(
        n for n in v1.Device.__struct_encode_fields__ if n != "name")
    flat = set(v1beta1.DeviceRequest.__struct_fields__)
    assert set(v1.ExactDeviceRequest.__struct_fields__) <= flat
    assert flat - set(v1.ExactDeviceRequest.__struct_fields__) == {"name", "first_available"}
    same = ("driver", "pool", "node_selector", "per_device_node_selection", "shared_counters")
    for f in same:
        assert f in v1beta1.ResourceSliceSpec.__struct_fields__
    assert msgspec.structs.fields(v1beta1.ResourceSliceSpec)[0].encode_name == "driver"


def test_every_v1_type_and_field_is_described_and_nothing_else() -> None:
    # kubectl explain reads these once the v1 rows are served
    prefix = "io.k8s.api.resource.v1."
    described = {k.removeprefix(prefix): v for k, v in DESCRIPTIONS.items()
                 if k.startswith(prefix)}
    models = {name: cls for name, cls in vars(v1).items() if isinstance(cls, type)
              and issubclass(cls, msgspec.Struct) and cls.__module__ == v1.__name__
              and not name.endswith("List")}
    assert set(described) == set(models)
    for name, cls in models.items():
        assert set(described[name]) == {"", *cls.__struct_encode_fields__}, name
        assert all(text.strip() for text in described[name].values()), name

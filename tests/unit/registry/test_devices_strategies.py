"""The resource.k8s.io/v1 strategies (k8s 1.34 ``pkg/registry/resource/*``): generation,
status reset, gate-dropped fields, the admin-access namespace label, field selectors."""

from __future__ import annotations

import dataclasses
from typing import Any

from kubedra.api import codec, kinds
from kubedra.api.features import FeatureGates
from kubedra.api.release import R1_34
from kubedra.api.resource import v1
from kubedra.api.scheme import RESOURCE
from kubedra.registry.strategies import devices

GATES = FeatureGates.for_release(R1_34)
ADMIN = "admin access to devices requires the `resource.kubernetes.io/admin-access: true` " \
    "label on the containing namespace"


def _strategy(plural: str, gates: FeatureGates = GATES) -> Any:
    return devices.strategies(gates)[(RESOURCE, "v1", plural)]


def _slice(**device: Any) -> v1.ResourceSlice:
    return codec.decode({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
        "spec": {"driver": "d.example.com", "nodeName": "n",
                 "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
                 "devices": [{"name": "dev", **device}]}}, v1.ResourceSlice)


def _claim(admin: bool | None = None, status: dict[str, Any] | None = None
           ) -> v1.ResourceClaim:
    exactly: dict[str, Any] = {"deviceClassName": "c"}
    if admin is not None:
        exactly["adminAccess"] = admin
    return codec.decode({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "ns", "generation": 7},
        "spec": {"devices": {"requests": [{"name": "r", "exactly": exactly}]}},
        "status": status or {}}, v1.ResourceClaim)


def _result(device: str, admin: bool | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"request": "r", "driver": "d", "pool": "p", "device": device}
    if admin is not None:
        out["adminAccess"] = admin
    return out


def test_slice_generation_is_1_on_create_and_bumps_on_spec_change_only() -> None:
    s = _strategy("resourceslices")
    obj = _slice()
    obj.metadata.generation = 9
    s.prepare_for_create(obj)
    assert obj.metadata.generation == 1
    labelled = codec.decode(codec.encode(obj), v1.ResourceSlice)
    labelled.metadata.labels = {"a": "b"}
    s.prepare_for_update(labelled, obj)
    assert labelled.metadata.generation == 1
    changed = codec.decode(codec.encode(obj), v1.ResourceSlice)
    changed.spec.pool.generation = 2
    s.prepare_for_update(changed, obj)
    assert changed.metadata.generation == 2


def test_device_class_tracks_generation() -> None:
    s = _strategy("deviceclasses")
    old = v1.DeviceClass(metadata=v1.ObjectMeta(name="c", generation=1))
    new = v1.DeviceClass(metadata=v1.ObjectMeta(name="c"), spec=v1.DeviceClassSpec(
        selectors=[v1.DeviceSelector(cel=v1.CELDeviceSelector(expression="true"))]))
    s.prepare_for_update(new, old)
    assert new.metadata.generation == 2


def test_claim_create_resets_status_and_updates_keep_it() -> None:
    s = _strategy("resourceclaims")
    status = {"reservedFor": [{"resource": "pods", "name": "p", "uid": "u"}]}
    obj = _claim(status=status)
    s.prepare_for_create(obj)
    assert obj.status == v1.ResourceClaimStatus()
    assert obj.metadata.generation == 7  # no generation tracking for claims
    stored = _claim(status=status)
    new = _claim()
    s.prepare_for_update(new, stored)
    assert new.status == stored.status


def test_claim_status_write_keeps_spec_and_drops_devices_of_deallocated_results() -> None:
    s = _strategy("resourceclaims")
    allocated = {"allocation": {"devices": {"results": [_result("a"), _result("b")]}},
                 "devices": [{"driver": "d", "pool": "p", "device": "a"},
                             {"driver": "d", "pool": "p", "device": "b"}]}
    old = _claim(status=allocated)
    new = _claim(status={"allocation": {"devices": {"results": [_result("b")]}},
                         "devices": allocated["devices"]})
    new.spec.devices.requests[0].name = "changed"
    s.prepare_for_status_update(new, old)
    assert new.spec == old.spec
    assert [d.device for d in new.status.devices or ()] == ["b"]


def test_fields_of_disabled_gates_are_dropped_unless_in_use() -> None:
    taint = {"taints": [{"key": "k", "effect": "NoSchedule"}]}
    s = _strategy("resourceslices")  # DRADeviceTaints is alpha, off in 1.34
    created = _slice(**taint)
    s.prepare_for_create(created)
    assert created.spec.devices[0].taints is None
    old, new = _slice(**taint), _slice(**taint)
    s.prepare_for_update(new, old)
    assert new.spec.devices[0].taints is not None
    on = _strategy("resourceslices", dataclasses.replace(GATES, dra_device_taints=True))
    kept = _slice(**taint)
    on.prepare_for_create(kept)
    assert kept.spec.devices[0].taints is not None


def test_every_place_of_a_disabled_feature_is_cleared() -> None:
    """Consumable capacity (alpha, off in 1.34) in two requests and in a constraint: each
    place is cleared on create, not only the first one found."""
    capacity = {"requests": {"memory": "1Gi"}}
    claim = codec.decode({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "ns"},
        "spec": {"devices": {
            "requests": [{"name": n, "exactly": {"deviceClassName": "c", "capacity": capacity}}
                         for n in ("a", "b")],
            "constraints": [{"distinctAttribute": "d.example.com/x"}]}}}, v1.ResourceClaim)
    _strategy("resourceclaims").prepare_for_create(claim)
    assert [r.exactly.capacity for r in claim.spec.devices.requests if r.exactly] == [None, None]
    assert [c.distinct_attribute for c in claim.spec.devices.constraints or ()] == [None]


def test_admin_access_dropped_when_its_gate_is_off() -> None:
    claims = _strategy("resourceclaims")
    beta_on = _claim(admin=True)
    claims.prepare_for_create(beta_on)
    assert beta_on.spec.devices.requests[0].exactly is not None
    assert beta_on.spec.devices.requests[0].exactly.admin_access is True
    off = _strategy("resourceclaims", dataclasses.replace(GATES, dra_admin_access=False))
    dropped = _claim(admin=True)
    off.prepare_for_create(dropped)
    assert dropped.spec.devices.requests[0].exactly is not None
    assert dropped.spec.devices.requests[0].exactly.admin_access is None


def test_admin_access_needs_the_namespace_label() -> None:
    claims = _strategy("resourceclaims")
    errs = claims.validate_namespace(_claim(admin=True), {})
    assert [str(e) for e in errs] == [
        f"spec.devices.requests[0].adminAccess: Forbidden: {ADMIN}"]
    assert claims.validate_namespace(
        _claim(admin=True), {devices.ADMIN_ACCESS_LABEL: "true"}) == []
    assert claims.validate_namespace(_claim(admin=False), {}) == []
    assert claims.validate_namespace(_claim(admin=True), None) == []  # offline: unknown
    templates = _strategy("resourceclaimtemplates")
    tpl = v1.ResourceClaimTemplate(
        metadata=v1.ObjectMeta(name="t", namespace="ns"),
        spec=v1.ResourceClaimTemplateSpec(spec=_claim(admin=True).spec))
    assert [str(e.field) for e in templates.validate_namespace(tpl, {"other": "x"})] == [
        "spec.spec.devices.requests[0].adminAccess"]


def test_admin_access_in_a_new_allocation_needs_the_label_too() -> None:
    claims = _strategy("resourceclaims")
    old = _claim()
    new = _claim(status={"allocation": {"devices": {"results": [_result("a", True)]}}})
    errs = claims.validate_status_namespace(new, old, {})
    assert [str(e.field) for e in errs] == [
        "status.allocation.devices.results[0].adminAccess"]
    assert claims.validate_status_namespace(new, new, {}) == []  # already had it


def test_resource_slice_field_selectors() -> None:
    s = _strategy("resourceslices")
    obj = {"metadata": {"name": "x"}, "spec": {"driver": "d", "nodeName": "n"}}
    assert s.selectable_fields(obj) == {"metadata.name": "x", "spec.nodeName": "n",
                                        "spec.driver": "d"}
    assert s.selectable_fields({"metadata": {"name": "y"}, "spec": {"allNodes": True}})[
        "spec.nodeName"] == ""
    assert s.field_label_error("nodeName") == (
        "field label not supported for resource.k8s.io/v1, Kind=ResourceSlice: nodeName")
    assert s.trigger_field == "spec.nodeName"


def test_the_v1_generation_is_stored_apart_from_v1alpha2() -> None:
    v1_claims = kinds.by_gvk(RESOURCE, "v1", "ResourceClaim")
    beta_claims = kinds.by_gvk(RESOURCE, "v1beta1", "ResourceClaim")
    alpha_claims = kinds.by_gvk(RESOURCE, "v1alpha2", "ResourceClaim")
    assert v1_claims is not None and beta_claims is not None and alpha_claims is not None
    assert v1_claims.resource.prefix == "/registry/resource.k8s.io@v1/resourceclaims/"
    assert beta_claims.resource is v1_claims.resource and not beta_claims.stored
    assert alpha_claims.resource.prefix == "/registry/resource.k8s.io/resourceclaims/"


def test_an_upper_case_driver_name_is_warned_about() -> None:
    s = _strategy("resourceslices")
    assert s.write_warnings({"spec": {"driver": "gpu.example.com"}}) == []
    assert s.write_warnings({"spec": {"driver": "GPU.example.com"}}) == [
        'spec.driver: driver names should be lowercase; "GPU.example.com" contains '
        "uppercase characters"]

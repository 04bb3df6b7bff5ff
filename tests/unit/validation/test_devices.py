"""Rules of validation/devices (k8s 1.34) the v1 vectors do not reach: Go's JSON syntax
errors, UIDs, interface addresses, map-key truncation, extended resource names."""

from __future__ import annotations

import msgspec
import pytest

from kubedra.api.goformat import go_json_syntax_error
from kubedra.api.meta import ObjectMeta
from kubedra.api.resource import v1
from kubedra.api.resource.v1alpha2 import ResourceClass
from kubedra.validation import devices
from kubedra.validation.devices._common import truncate_key, validate_raw_extension
from kubedra.validation.devices.claim import validate_interface_address, validate_uid
from kubedra.validation.devices.deviceclass import is_extended_resource_name
from kubedra.validation.field import Apimachinery, Path, apimachinery
from kubedra.validation.resource import validate_resource_class

P = Path("x")


@pytest.mark.parametrize(("data", "error"), [
    (b'{"a": 1}', None),
    (b"xxx", "invalid character 'x' looking for beginning of value"),
    (b"{", "unexpected end of JSON input"),
    (b'{"a" 1}', "invalid character '1' after object key"),
    (b'{"a": 1 "b": 2}', "invalid character '\"' after object key:value pair"),
    (b"[1 2]", "invalid character '2' after array element"),
    (b"{1: 2}", "invalid character '1' looking for beginning of object key string"),
    (b"{} {}", "invalid character '{' after top-level value"),
    (b"NaN", "invalid character 'N' looking for beginning of value"),
])
def test_go_json_syntax_errors(data: bytes, error: str | None) -> None:
    assert go_json_syntax_error(data) == error


def test_raw_extension_rules() -> None:
    with apimachinery(Apimachinery.V0_34):
        assert [e.detail for e in validate_raw_extension({"a": 1}, P, False, 10)] == []
        assert [e.type.value for e in validate_raw_extension(None, P, False, 10)] == [
            "FieldValueRequired"]
        assert [e.detail for e in validate_raw_extension([1], P, False, 10)] == [
            "must be a valid JSON object"]
        too_long = validate_raw_extension({"a": "x" * 20}, P, False, 10)
        assert [e.detail for e in too_long] == ["may not be more than 10 bytes"]
        assert validate_raw_extension({"a": "x" * 20}, P, True, 10) == []  # stored


def test_deviation_raw_extensions_count_compact_json() -> None:
    """A parsed value is measured as compact JSON; bytes as received
    (``msgspec.Raw``, as the vectors' ``$rawJSON``) are measured as they are."""
    value = {"a": "xxxx"}  # {"a":"xxxx"}: 12 bytes compact, 13 with a space
    with apimachinery(Apimachinery.V0_34):
        assert validate_raw_extension(value, P, False, 12) == []
        spaced = validate_raw_extension(msgspec.Raw(b'{"a": "xxxx"}'), P, False, 12)
    assert [e.detail for e in spaced] == ["may not be more than 12 bytes"]


@pytest.mark.parametrize(("uid", "detail"), [
    ("0b7f5e2a-7c34-4d3a-9a53-2f1a8d2b5c11", None),
    ("0B7F5E2A-7C34-4D3A-9A53-2F1A8D2B5C11",
     "uid must be in RFC 4122 normalized form, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` with "
     "lowercase hexadecimal characters"),
    ("0b7f5e2a7c344d3a9a532f1a8d2b5c11",
     "uid must be in RFC 4122 normalized form, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` with "
     "lowercase hexadecimal characters"),
    ("abc", "error validating uid: invalid UUID length: 3"),
    ("0b7f5e2a-7c34-4d3a-9a53-2f1a8d2b5c1z", "error validating uid: invalid UUID format"),
    ("{0b7f5e2a-7c34-4d3a-9a53-2f1a8d2b5c11]",
     "error validating uid: invalid bracketed UUID format"),
])
def test_share_ids(uid: str, detail: str | None) -> None:
    errors = validate_uid(uid, P)
    assert [e.detail for e in errors] == ([] if detail is None else [detail])


@pytest.mark.parametrize(("address", "detail"), [
    ("10.9.8.7/24", None),
    ("2001:db8::1/64", None),
    ("010.009.008.000/24", 'must be in canonical form ("10.9.8.0/24")'),
    ("2001:0db8::1/64", 'must be in canonical form ("2001:db8::1/64")'),
    ("300.9.8.0/24",
     "must be a valid address in CIDR form, (e.g. 10.9.8.7/24 or 2001:db8::1/64)"),
    ("10.9.8.7", "must be a valid address in CIDR form, (e.g. 10.9.8.7/24 or 2001:db8::1/64)"),
])
def test_interface_addresses(address: str, detail: str | None) -> None:
    errors = validate_interface_address(address, P)
    assert [e.detail for e in errors] == ([] if detail is None else [detail])


def test_long_map_keys_are_shortened_in_the_middle() -> None:
    key = "a" * 100 + "/" + "b" * 10
    short = truncate_key(key, 96)
    assert len(short) == 96 and short.startswith("a" * 47) and short.endswith("b" * 10)
    assert "..." in short
    assert truncate_key("short", 3) == "short"  # limits below 16 are raised to 16


@pytest.mark.parametrize(("name", "ok"), [
    ("example.com/gpu", True),
    ("example.com", False),  # no domain: a native resource name
    ("kubernetes.io/gpu", False),
    ("requests.example.com/gpu", False),
    ("example.com/g pu", False),
])
def test_extended_resource_names(name: str, ok: bool) -> None:
    assert is_extended_resource_name(name) is ok


def test_shared_checks_render_as_1_34_inside_the_v1_validators() -> None:
    """Object meta is validated by the code 1.30 uses too; in a v1 validator its errors
    are apimachinery v0.34's, and the 1.30 validators keep their texts."""
    big = {"a": "x" * (256 * 1024)}
    errors = devices.validate_device_class(
        v1.DeviceClass(metadata=ObjectMeta(name="c", annotations=big)))
    assert [(str(e.field), e.detail, e.bad_value) for e in errors] == [
        ("metadata.annotations", "may not be more than 262144 bytes", "<value omitted>")]
    old = validate_resource_class(ResourceClass(metadata=ObjectMeta(name="c", annotations=big),
                                                driver_name="d.example.com"))
    assert [e.detail for e in old] == ["must have at most 262144 bytes"]


def _claim_with_request(name: str) -> v1.ResourceClaim:
    return msgspec.convert({
        "metadata": {"name": "c", "namespace": "ns", "resourceVersion": "1"},
        "spec": {"devices": {"requests": [{"name": name, "exactly": {
            "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}}]}}},
        v1.ResourceClaim)


def test_deviation_an_unchanged_claim_spec_is_not_validated_again() -> None:
    """A stored spec that today's rules refuse (a request name no longer valid, say) still
    lets the claim's metadata change: its finalizer can go. A changed spec is immutable and
    validated again, as upstream 1.34 does."""
    old = _claim_with_request("Not_A_Label")
    new = _claim_with_request("Not_A_Label")
    new.metadata.finalizers = ["resource.kubernetes.io/delete-protection"]
    assert devices.validate_resource_claim_update(new, old) == []
    changed = _claim_with_request("Still_Not_A_Label")
    errors = devices.validate_resource_claim_update(changed, old)
    assert [(str(e.field), e.detail.split(" (")[0]) for e in errors][:1] == [
        ("spec", "field is immutable")]
    assert any(str(e.field) == "spec.devices.requests[0].name" for e in errors)

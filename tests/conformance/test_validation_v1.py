"""v1-validation-resourceslice/-deviceclass/-resourceclaim.json: the 1.34 validator tables,
error for error, through the validators of kubedra.validation.devices."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubedra.api.resource import v1
from kubedra.validation import devices as v
from kubedra.validation.field import FieldError
from tests.conformance.v1_validation_support import assert_errors, decode
from tests.vectors import load, vector_cases

Validator = Callable[..., list[FieldError]]

SLICES = "v1-validation-resourceslice.json"
CLASSES = "v1-validation-deviceclass.json"
CLAIMS = "v1-validation-resourceclaim.json"


def _gated(case: dict[str, Any]) -> dict[str, bool]:
    """The one gate the validators read (the strategy drops the fields of the others)."""
    return {"consumable_capacity": bool(case.get("featureGates", {}).get(
        "DRAConsumableCapacity", False))}


def run(case: dict[str, Any], model: type[Any], create: Validator, update: Validator,
        update_status: Validator | None = None, *, gated: bool = True) -> list[FieldError]:
    """The case through the validator its ``operation`` names."""
    obj = decode(case["object"], model)
    kwargs = _gated(case) if gated else {}
    if case["operation"] == "create":
        return create(obj, **kwargs)
    old = decode(case["oldObject"], model)
    if case["operation"] == "updateStatus":
        assert update_status is not None
        return update_status(obj, old)
    return update(obj, old, **kwargs)


@vector_cases(SLICES, load(SLICES)["cases"])
def test_resource_slice(case: dict[str, Any]) -> None:
    errors = run(case, v1.ResourceSlice, v.validate_resource_slice,
                 v.validate_resource_slice_update, gated=False)
    assert_errors(errors, case["errors"])


@vector_cases(CLASSES, load(CLASSES)["cases"])
def test_device_class(case: dict[str, Any]) -> None:
    errors = run(case, v1.DeviceClass, v.validate_device_class, v.validate_device_class_update)
    assert_errors(errors, case["errors"])


@vector_cases(CLAIMS, load(CLAIMS)["cases"])
def test_resource_claim(case: dict[str, Any]) -> None:
    errors = run(case, v1.ResourceClaim, v.validate_resource_claim,
                 v.validate_resource_claim_update, v.validate_resource_claim_status_update)
    assert_errors(errors, case["errors"])

"""v1-validation-resourceslice/-deviceclass/-resourceclaim.json: the 1.34 validator tables,
error for error. Each case runs

* through the validators of kubedra.validation.devices (every case);
* through ``kubedra validate -f -`` with the case's gates (creates: the server's create path
  without the store; not the cases whose ``$rawJSON`` bytes matter, which a manifest cannot
  carry verbatim);
* status writes whose answer the vector says depends on the server (``featureGates``):
  through the server's status-write path (``pipeline.before_status_update``, the v1
  ResourceClaim strategy under 1.34's gates with the case's on).

The server's answer is the vector's errors less those v1 defaulting removes (the cases'
notes) and the missing namespace a request's URL supplies."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from click.testing import CliRunner

from kubedra.api import codec, kinds
from kubedra.api.features import FeatureGates
from kubedra.api.release import R1_34
from kubedra.api.resource import v1
from kubedra.cli.validate import validate
from kubedra.registry import pipeline, resources
from kubedra.validation import devices as v
from kubedra.validation.field import FieldError
from tests.conformance.v1_validation_support import (
    assert_causes,
    assert_errors,
    cli_causes,
    cli_gates,
    decode,
    raw_paths,
    through_server,
)
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


def check_status_write(case: dict[str, Any]) -> None:
    """A status write whose answer depends on the gates, through the server's path."""
    if case["operation"] != "updateStatus" or not case.get("featureGates"):
        return
    gates = FeatureGates.for_release(R1_34).with_gates(case["featureGates"])
    kind = kinds.by_api_version(case["object"]["apiVersion"], case["object"]["kind"])
    assert kind is not None
    strategy = resources.strategies(gates)[kind.resource.storage_gvr]
    new, old = (codec.decode(case[k], kind.model) for k in ("object", "oldObject"))
    try:
        pipeline.before_status_update(strategy, kind, new, old)
        errors: list[FieldError] = []
    except pipeline.Invalid as err:
        errors = err.errors
    assert_causes([f"{e.field}: {e.body()}" for e in errors], through_server(case))


def check_cli(case: dict[str, Any]) -> None:
    """A create case through ``kubedra validate``, with the case's gates."""
    obj = case["object"]
    if case["operation"] != "create" or raw_paths(obj):
        return
    result = CliRunner().invoke(validate, ["-f", "-", *cli_gates(case)], input=json.dumps(obj),
                                catch_exceptions=False)
    kind, name = obj["kind"], obj["metadata"].get("name", "")
    want = through_server(case)
    if not want:
        assert (result.exit_code, result.stdout) == (0, f"{kind}/{name} valid\n"), result.stderr
        return
    assert result.exit_code == 1, result.stdout
    assert_causes(cli_causes(result.stderr, kind, name), want)


def _check(case: dict[str, Any], errors: list[FieldError]) -> None:
    assert_errors(errors, case["errors"])
    check_cli(case)
    check_status_write(case)


@vector_cases(SLICES, load(SLICES)["cases"])
def test_resource_slice(case: dict[str, Any]) -> None:
    errors = run(case, v1.ResourceSlice, v.validate_resource_slice,
                 v.validate_resource_slice_update, gated=False)
    _check(case, errors)


@vector_cases(CLASSES, load(CLASSES)["cases"])
def test_device_class(case: dict[str, Any]) -> None:
    errors = run(case, v1.DeviceClass, v.validate_device_class, v.validate_device_class_update)
    _check(case, errors)


@vector_cases(CLAIMS, load(CLAIMS)["cases"])
def test_resource_claim(case: dict[str, Any]) -> None:
    errors = run(case, v1.ResourceClaim, v.validate_resource_claim,
                 v.validate_resource_claim_update, v.validate_resource_claim_status_update)
    _check(case, errors)

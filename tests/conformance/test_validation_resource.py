"""validation-resourceslice/-resourceclaimparameters/-resourceclassparameters/-resourceclaim/
-podschedulingcontext-status.json: upstream's validator tables, error for error."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from kubedra.api.resource import v1alpha2 as r
from kubedra.validation import resource as v
from kubedra.validation.field import FieldError
from tests.conformance.validation_support import assert_errors, decode
from tests.vectors import case_id, load

Validator = Callable[..., list[FieldError]]


def _run(case: dict[str, Any], model: type[Any], create: Validator, update: Validator) -> None:
    obj = decode(case["object"], model)
    if case["operation"] == "create":
        errors = create(obj)
    else:
        errors = update(obj, decode(case["oldObject"], model))
    assert_errors(errors, case["errors"])


def _cases(name: str, section: str = "cases") -> list[Any]:
    cases = load(name)[section]
    return [pytest.param(c, id=case_id(c, i)) for i, c in enumerate(cases)]


@pytest.mark.vectors("validation-resourceslice.json")
@pytest.mark.parametrize("case", _cases("validation-resourceslice.json"))
def test_resource_slice(case: dict[str, Any]) -> None:
    _run(case, r.ResourceSlice, v.validate_resource_slice, v.validate_resource_slice_update)


@pytest.mark.vectors("validation-resourceclaimparameters.json")
@pytest.mark.parametrize("case", _cases("validation-resourceclaimparameters.json"))
def test_resource_claim_parameters(case: dict[str, Any]) -> None:
    _run(case, r.ResourceClaimParameters, v.validate_resource_claim_parameters,
         v.validate_resource_claim_parameters_update)


@pytest.mark.vectors("validation-resourceclassparameters.json")
@pytest.mark.parametrize("case", _cases("validation-resourceclassparameters.json"))
def test_resource_class_parameters(case: dict[str, Any]) -> None:
    _run(case, r.ResourceClassParameters, v.validate_resource_class_parameters,
         v.validate_resource_class_parameters_update)


@pytest.mark.vectors("validation-resourceclaim.json")
@pytest.mark.parametrize("case", _cases("validation-resourceclaim.json", "create"))
def test_resource_claim_create(case: dict[str, Any]) -> None:
    assert case["operation"] == "create"
    _run(case, r.ResourceClaim, v.validate_resource_claim, v.validate_resource_claim_update)


@pytest.mark.vectors("validation-resourceclaim.json")
@pytest.mark.parametrize("case", _cases("validation-resourceclaim.json", "update"))
def test_resource_claim_update(case: dict[str, Any]) -> None:
    assert case["operation"] == "update"
    _run(case, r.ResourceClaim, v.validate_resource_claim, v.validate_resource_claim_update)


@pytest.mark.vectors("validation-resourceclaim.json")
@pytest.mark.parametrize("case", _cases("validation-resourceclaim.json", "statusUpdate"))
def test_resource_claim_status_update(case: dict[str, Any]) -> None:
    assert case["operation"] == "update"
    _run(case, r.ResourceClaim, v.validate_resource_claim,
         v.validate_resource_claim_status_update)


@pytest.mark.vectors("validation-podschedulingcontext-status.json")
@pytest.mark.parametrize(
    "case", _cases("validation-podschedulingcontext-status.json", "statusUpdate")
)
def test_pod_scheduling_context_status_update(case: dict[str, Any]) -> None:
    assert case["operation"] == "update"
    _run(case, r.PodSchedulingContext, v.validate_pod_scheduling_context,
         v.validate_pod_scheduling_context_status_update)

"""validation-namedresources.json: TestValidateResources and TestValidateSelector, both at
function level (nil root path) and wrapped into objects."""

from __future__ import annotations

from typing import Any

import pytest

from kubedra.api.resource import v1alpha2 as r
from kubedra.validation import namedresources as nr
from kubedra.validation import resource as v
from kubedra.validation.field import ROOT
from tests.conformance.validation_support import assert_errors, decode
from tests.vectors import case_id, load

FILE = "validation-namedresources.json"


def _cases(section: str) -> list[Any]:
    return [pytest.param(c, id=case_id(c, i)) for i, c in enumerate(load(FILE)[section])]


@pytest.mark.vectors(FILE)
@pytest.mark.parametrize("case", _cases("resources"))
def test_resources(case: dict[str, Any]) -> None:
    resources = decode(case["functionInput"], r.NamedResourcesResources)
    assert_errors(nr.validate_resources(resources, ROOT), case["errors"], "functionLevelField")
    slice_ = decode(case["object"], r.ResourceSlice)
    assert_errors(v.validate_resource_slice(slice_), case["errors"])


@pytest.mark.vectors(FILE)
@pytest.mark.parametrize("case", _cases("selectors"))
def test_selectors(case: dict[str, Any]) -> None:
    errors = nr.validate_selector(case["selector"], False, ROOT)
    assert_errors(errors, case["errors"], "functionLevelField")
    if errors and "detailMatch" in case["errors"][0]:
        # cel-go's text; our CEL runtime reports the same undeclared reference.
        assert "undeclared reference to 'nosuchvar'" in errors[0].detail
    params = decode(case["object"], r.ResourceClaimParameters)
    assert_errors(v.validate_resource_claim_parameters(params), case["errors"])
    # Class-parameter filters run the same selector check at filters[i].namedResources.selector.
    cls = r.ResourceClassParameters(
        metadata=params.metadata,
        filters=[r.ResourceFilter(driver_name="test.example.com",
                                  named_resources=r.NamedResourcesFilter(selector=case["selector"]))],
    )
    filter_errors = [
        {**e, "field": e["field"].replace("driverRequests[0].requests[0]", "filters[0]")}
        for e in case["errors"]
    ]
    assert_errors(v.validate_resource_class_parameters(cls), filter_errors)

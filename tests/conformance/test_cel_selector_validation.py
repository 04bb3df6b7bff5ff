"""cel-selector-validation.json at function level: selector compile details
(kubedra.cel.validate_selector, NewExpressions as in the upstream test), the version-attribute
regex and value-member checks through the named-resources validator, and blang Parse on the
accepted versions."""

from __future__ import annotations

from typing import Any

import pytest

from kubedra.api.codec import decode
from kubedra.api.resource.v1alpha2 import NamedResourcesResources
from kubedra.api.semver import Version
from kubedra.cel import validate_selector
from kubedra.validation.field import Path
from kubedra.validation.namedresources import validate_resources
from kubedra.validation.namedresources import validate_selector as validate_selector_field
from tests.vectors import case_id, load

FILE = "cel-selector-validation.json"
V = load(FILE)


def _ids(cases: list[dict[str, Any]]) -> list[str]:
    return [case_id(c, i) for i, c in enumerate(cases)]


@pytest.mark.vectors(FILE)
@pytest.mark.parametrize("case", V["selector_cases"], ids=_ids(V["selector_cases"]))
def test_selector(case: dict[str, Any]) -> None:
    detail = validate_selector(case["selector"], stored=False)
    wants = case["want_failures"]
    if not wants:
        assert detail is None
        return
    (want,) = wants
    assert detail == want["detail"]
    errs = validate_selector_field(case["selector"], False, Path())
    assert [(e.type.value, e.detail) for e in errs] == [(want["type"], want["detail"])]
    if "bad_value" in want:
        assert errs[0].bad_value == want["bad_value"]


def _resources(attribute: dict[str, Any]) -> NamedResourcesResources:
    return decode(
        {"instances": [{"name": "instance", "attributes": [attribute]}]}, NamedResourcesResources
    )


@pytest.mark.vectors(FILE)
@pytest.mark.parametrize(
    "case", V["version_attribute_cases"], ids=_ids(V["version_attribute_cases"])
)
def test_version_attribute(case: dict[str, Any]) -> None:
    errs = validate_resources(_resources({"name": "name", "version": case["version"]}), Path())
    if case["valid"]:
        assert errs == []
        Version.parse(case["version"])  # what the scheduler does with it must work too
        return
    assert [(str(e.field), e.detail) for e in errs] == [(case["field"], case["detail"])]


@pytest.mark.vectors(FILE)
@pytest.mark.parametrize("case", V["attribute_value_cases"], ids=_ids(V["attribute_value_cases"]))
def test_attribute_value(case: dict[str, Any]) -> None:
    errs = validate_resources(_resources(case["attribute"]), Path())
    got = [(e.type.value, str(e.field), e.detail) for e in errs]
    assert got == [(w["type"], w["field"], w["detail"]) for w in case["want_failures"]]
    for e, w in zip(errs, case["want_failures"], strict=True):
        if "bad_value" in w:
            assert e.bad_value == w["bad_value"]

"""validation-nodeauthz-resourceslice.json: Node authorizer decisions and NodeRestriction
admission for ResourceSlices."""

from __future__ import annotations

from typing import Any

import pytest

from kubedra.api.release import R1_30
from kubedra.api.resource import v1alpha2 as r
from kubedra.validation import nodeauthz as na
from tests.conformance.validation_support import decode
from tests.vectors import case_id, load

FILE = "validation-nodeauthz-resourceslice.json"


def _cases(section: str) -> list[Any]:
    return [pytest.param(c, id=case_id(c, i)) for i, c in enumerate(load(FILE)[section])]


def _graph() -> na.SliceGraph:
    graph = na.SliceGraph()
    for s in load(FILE)["world"]["resourceSlices"]:
        graph.observe(s["name"], s["nodeName"])
    return graph


@pytest.mark.vectors(FILE)
@pytest.mark.parametrize("case", _cases("authorizer"))
def test_authorizer(case: dict[str, Any]) -> None:
    a = case["attributes"]
    attrs = na.RequestAttributes(
        verb=a["verb"], api_group=a.get("apiGroup", ""), resource=a.get("resource", ""),
        subresource=a.get("subresource", ""), name=a.get("name", ""),
        namespace=a.get("namespace", ""), resource_request=a.get("resourceRequest", True),
    )
    user = case["user"]
    verdict = na.authorize_node_request(user["name"], user["groups"], attrs, _graph(), R1_30)
    assert verdict is not None
    assert verdict.decision.value == case["decision"]
    assert verdict.reason == case.get("reason", "")


@pytest.mark.vectors(FILE)
@pytest.mark.parametrize("case", _cases("admission"))
def test_admission(case: dict[str, Any]) -> None:
    raw = case.get("object") or case["oldObject"]
    slice_ = decode(raw, r.ResourceSlice)
    user = case["user"]
    message = na.admit_resource_slice(user["name"], user["groups"], case["operation"],
                                      slice_.node_name)
    assert (message is None) == case["allowed"]
    assert message == case.get("message")

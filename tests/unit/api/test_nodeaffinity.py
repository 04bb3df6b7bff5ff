"""NodeSelector matching: OR of terms, AND inside a term, empty terms match nothing."""

from __future__ import annotations

from typing import Any

import pytest

from kubedra.api.codec import decode
from kubedra.api.core import NodeSelector
from kubedra.api.nodeaffinity import matches

LABELS = {"zone": "a", "gpus": "4", "kubernetes.io/hostname": "n1"}


def sel(*terms: dict[str, Any]) -> NodeSelector:
    return decode({"nodeSelectorTerms": list(terms)}, NodeSelector)


def expr(key: str, op: str, *values: str) -> dict[str, Any]:
    return {"matchExpressions": [{"key": key, "operator": op, "values": list(values)}]}


@pytest.mark.parametrize(("term", "want"), [
    (expr("zone", "In", "a", "b"), True),
    (expr("zone", "In", "b"), False),
    (expr("zone", "NotIn", "b"), True),
    (expr("missing", "NotIn", "b"), True),
    (expr("zone", "Exists"), True),
    (expr("zone", "DoesNotExist"), False),
    (expr("gpus", "Gt", "3"), True),
    (expr("gpus", "Lt", "3"), False),
    (expr("zone", "Gt", "3"), False),
    (expr("zone", "Bogus", "a"), False),
    ({"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}, True),
    ({"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n2"]}]}, False),
    ({}, False),
])
def test_single_term(term: dict[str, Any], want: bool) -> None:
    assert matches(sel(term), LABELS, "n1") is want


def test_terms_are_ored_and_requirements_anded() -> None:
    both = {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]},
                                 {"key": "gpus", "operator": "In", "values": ["8"]}]}
    assert not matches(sel(both), LABELS, "n1")
    assert matches(sel(both, expr("zone", "Exists")), LABELS, "n1")
    assert not matches(sel(), LABELS, "n1")

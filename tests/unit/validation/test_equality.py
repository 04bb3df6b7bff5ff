"""Semantic equality as apimachinery's ``Semantic.DeepEqual`` sees our models."""

from __future__ import annotations

from kubedra.api.quantity import Quantity
from kubedra.api.resource import v1alpha2 as r
from kubedra.validation.equality import semantic_equal


def test_nil_equals_empty() -> None:
    assert semantic_equal(r.AllocationResult(resource_handles=None),
                          r.AllocationResult(resource_handles=[]))
    assert semantic_equal(None, {}) and semantic_equal("", None)
    assert not semantic_equal(None, [1])


def test_quantities_compare_by_value() -> None:
    a = r.NamedResourcesAttribute(name="m", quantity=Quantity.parse("1000m"))
    b = r.NamedResourcesAttribute(name="m", quantity=Quantity.parse("1"))
    assert semantic_equal(a, b)
    assert not semantic_equal(a, r.NamedResourcesAttribute(name="m", quantity=Quantity.parse("2")))


def test_types_and_json_values() -> None:
    assert not semantic_equal(True, 1)
    assert not semantic_equal(r.ResourceClaimParametersReference(kind="k"),
                              r.ResourceClassParametersReference(kind="k"))
    assert semantic_equal({"a": [1, {"b": None}]}, {"a": [1, {"b": None}]})
    assert not semantic_equal({"a": 1}, {"b": 1})
    assert not semantic_equal([1, 2], [1])

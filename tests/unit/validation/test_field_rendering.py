"""apimachinery v0.34 field-error rendering (spec dra-v1 §4.1) beside the v0.30 texts."""

from __future__ import annotations

from kubedra.api.core import NodeSelector
from kubedra.validation import field
from kubedra.validation.field import Apimachinery, Path, apimachinery

P = Path("spec").child("x")


def test_v030_texts_are_the_default() -> None:
    assert str(field.too_long(P, "abc", 2)) == "spec.x: Too long: must have at most 2 bytes"
    assert field.too_long(P, "abc", 2).bad_value == "abc"
    assert str(field.too_long_max_length(P, 5, 4)) == "spec.x: Too long: may not be longer than 4"
    assert str(field.invalid(P, ["a", "b"], "bad")) == (
        'spec.x: Invalid value: []string{"a", "b"}: bad')
    assert str(field.too_many(P, 2, 1)) == "spec.x: Too many: 2: must have at most 1 items"


def test_v034_too_long_omits_the_value() -> None:
    with apimachinery(Apimachinery.V0_34):
        err = field.too_long(P, "abc", 2)
        one = field.too_long_max_length(P, "ab", 1)
    assert err.bad_value == "<value omitted>"
    assert str(err) == "spec.x: Too long: may not be more than 2 bytes"
    assert one.detail == "may not be more than 1 byte"


def test_v034_too_many_and_values_as_json() -> None:
    with apimachinery(Apimachinery.V0_34):
        many = field.too_many(P, 2, 1)
        strings = field.invalid(P, ["a", "b"], "bad")
        struct = field.invalid(P, NodeSelector(node_selector_terms=[]), "bad")
        html = field.invalid(P, {"k": "<&>"}, "bad")
        nil = field.invalid(P, None, "bad")
        scalar = field.invalid(P, 7, "bad")
    assert str(many) == "spec.x: Too many: 2: must have at most 1 item"
    assert str(strings) == 'spec.x: Invalid value: ["a","b"]: bad'
    assert str(struct) == 'spec.x: Invalid value: {"nodeSelectorTerms":[]}: bad'
    assert str(html) == 'spec.x: Invalid value: {"k":"\\u003c\\u0026\\u003e"}: bad'
    assert str(nil) == 'spec.x: Invalid value: "null": bad'
    assert str(scalar) == "spec.x: Invalid value: 7: bad"


def test_the_selection_ends_with_the_block() -> None:
    with apimachinery(Apimachinery.V0_34):
        pass
    assert field.too_long(P, "abc", 2).detail == "must have at most 2 bytes"

"""quantity_parse_apimachinery.json: ParseQuantity value/format (also with '-' and '+'
prefixes, as upstream checks), invalid inputs, canonical String()."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from typing import Any

import pytest

from kubedra.api.quantity import Quantity, QuantityError
from tests.vectors import case_id, load, vector_cases

FILE = "quantity_parse_apimachinery.json"
V = load(FILE)


def _exact(q: Quantity) -> Fraction:
    return Fraction(Decimal(q.value_key().replace("e", "E")))


def _parse_params() -> list[Any]:
    out = []
    for i, c in enumerate(V["parse"]):
        for prefix in ("", "-", "+"):
            out.append(pytest.param(prefix, c, id=f"{prefix or '_'}{case_id(c, i)}"))
    return out


@pytest.mark.vectors(FILE)
@pytest.mark.parametrize(("prefix", "case"), _parse_params())
def test_parse(prefix: str, case: dict[str, Any]) -> None:
    q = Quantity.parse(prefix + case["input"])
    want = Fraction(Decimal(case["value"]))
    assert _exact(q) == (-want if prefix == "-" else want)
    assert q.format == case["format"]


@pytest.mark.vectors(FILE)
@pytest.mark.parametrize("text", V["parse_invalid"], ids=lambda s: repr(s))
def test_parse_invalid(text: str) -> None:
    with pytest.raises(QuantityError):
        Quantity.parse(text)


@vector_cases(FILE, V["canonical"] + V["canonical_from_alternate"])
def test_canonical(case: dict[str, Any]) -> None:
    q = Quantity.parse(case["input"])
    assert str(q) == case["canonical"]
    # negative values print with a leading '-' and zero never as '-0'
    neg = Quantity.parse("-" + case["input"])
    want_neg = case["canonical"] if case["canonical"] == "0" else "-" + case["canonical"]
    assert str(neg) == want_neg

"""cel-quantity-lib.json: apiserver quantity library (quantity_test.go TestQuantity)."""

from __future__ import annotations

from typing import Any

from tests.conformance._cel_lib import run_case
from tests.vectors import load, vector_cases

FILE = "cel-quantity-lib.json"
CASES = load(FILE)["cases"]


@vector_cases(FILE, CASES)
def test_quantity_lib(case: dict[str, Any]) -> None:
    run_case(case)

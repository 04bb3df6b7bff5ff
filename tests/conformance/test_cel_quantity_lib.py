"""cel-quantity-lib.json: apiserver quantity library (quantity_test.go TestQuantity)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conformance._cel_lib import run_case
from tests.vectors import case_id, load

FILE = "cel-quantity-lib.json"
CASES = load(FILE)["cases"]


@pytest.mark.vectors(FILE)
@pytest.mark.parametrize("case", CASES, ids=[case_id(c, i) for i, c in enumerate(CASES)])
def test_quantity_lib(case: dict[str, Any]) -> None:
    run_case(case)

"""cel-semver-lib.json: DRA semver library (semver_test.go TestSemver)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conformance._cel_lib import run_case
from tests.vectors import case_id, load

FILE = "cel-semver-lib.json"
CASES = load(FILE)["cases"]


@pytest.mark.vectors(FILE)
@pytest.mark.parametrize("case", CASES, ids=[case_id(c, i) for i, c in enumerate(CASES)])
def test_semver_lib(case: dict[str, Any]) -> None:
    run_case(case)

"""cel-semver-lib.json: DRA semver library (semver_test.go TestSemver)."""

from __future__ import annotations

from typing import Any

from tests.conformance._cel_lib import run_case
from tests.vectors import load, vector_cases

FILE = "cel-semver-lib.json"
CASES = load(FILE)["cases"]


@vector_cases(FILE, CASES)
def test_semver_lib(case: dict[str, Any]) -> None:
    run_case(case)

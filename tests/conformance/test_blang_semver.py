"""cel-blang-semver.json: blang/semver v4 Parse (valid/invalid with exact texts), String(),
Compare in both directions, and the derived extra_* edge cases. (``tolerant_not_used`` is a
note, not cases: its list mixes inputs strict Parse also accepts, e.g. ``1.2.0-alpha``.)"""

from __future__ import annotations

from typing import Any

import pytest

from kubedra.api.semver import SemverError, Version
from tests.vectors import load, vector_cases

FILE = "cel-blang-semver.json"
V = load(FILE)
PARSE = V["parse_valid"] + V["parse_invalid"] + V["extra_parse"]
COMPARE = V["compare"] + V["extra_compare"]


@vector_cases(FILE, PARSE)
def test_parse(case: dict[str, Any]) -> None:
    if not case["valid"]:
        with pytest.raises(SemverError) as exc:
            Version.parse(case["input"])
        assert str(exc.value) == case["derived_error"]
        return
    v = Version.parse(case["input"])
    assert str(v) == case["string"]
    assert (v.major, v.minor, v.patch) == (case["major"], case["minor"], case["patch"])
    assert list(v.pre) == case["prerelease"]
    assert list(v.build) == case["build"]


@pytest.mark.vectors(FILE)
@pytest.mark.parametrize(
    "case", COMPARE, ids=[f"{i}-{c['a']}-{c['b']}" for i, c in enumerate(COMPARE)]
)
def test_compare(case: dict[str, Any]) -> None:
    a, b = Version.parse(case["a"]), Version.parse(case["b"])
    assert a.compare(b) == case["result"]
    assert b.compare(a) == -case["result"]
    assert (a == b) is (case["result"] == 0)


"""job-managedby-domain-prefixed-path.json: apimachinery IsDomainPrefixedPath values."""

from __future__ import annotations

import pytest

from kubedra.validation.field import ROOT
from kubedra.validation.job import is_domain_prefixed_path
from tests.vectors import load

FILE = "job-managedby-domain-prefixed-path.json"
DATA = load(FILE)
PATH = ROOT.child("spec", "managedBy")


def _id(value: str) -> str:
    return value if len(value) <= 40 else f"{value[:20]}...({len(value)} chars)"


@pytest.mark.vectors(FILE)
@pytest.mark.parametrize("value", DATA["valid"], ids=[_id(v) for v in DATA["valid"]])
def test_valid(value: str) -> None:
    assert is_domain_prefixed_path(PATH, value) == []


@pytest.mark.vectors(FILE)
@pytest.mark.parametrize("value", DATA["invalid"], ids=[_id(v) for v in DATA["invalid"]])
def test_invalid(value: str) -> None:
    errs = is_domain_prefixed_path(PATH, value)
    assert errs
    assert all(str(e.field) == "spec.managedBy" for e in errs)

"""job-managedby-strategy.json: PrepareForCreate / PrepareForUpdate / the status strategy."""

from __future__ import annotations

from typing import Any

from kubedra.api import codec
from kubedra.registry.strategies.job import (
    prepare_for_create,
    prepare_for_status_update,
    prepare_for_update,
)
from kubedra.validation.field import ROOT
from kubedra.validation.job import JobValidationOptions, validate_job_spec_update
from tests.conformance.job_support import errors, expected, gates, job
from tests.vectors import load, vector_cases

FILE = "job-managedby-strategy.json"
DATA = load(FILE)
CREATE = DATA["prepareForCreate"]
UPDATE = DATA["prepareForUpdate"]


@vector_cases(FILE, CREATE)
def test_prepare_for_create(case: dict[str, Any]) -> None:
    obj = job(case["input"])
    prepare_for_create(obj, gates(case["gates"]))
    # Compared as decoded objects: the vector leaves out keys Go always writes (resources: {}).
    assert codec.to_builtins(obj) == codec.to_builtins(job(case["expect"]))


@vector_cases(FILE, UPDATE)
def test_prepare_for_update(case: dict[str, Any]) -> None:
    new, old = job(case["new"]), job(case["old"])
    expect = case["expect"]
    if case["name"].startswith("status subresource"):
        prepare_for_status_update(new, old)
    else:
        prepare_for_update(new, old, gates(case["gates"]))
    if "new.spec.managedBy" in expect:
        assert new.spec.managed_by == expect["new.spec.managedBy"]
    if "managedByErrors" in expect:
        keys = ("type", "field", "detail")
        errs = validate_job_spec_update(
            new.spec, old.spec, ROOT.child("spec"), JobValidationOptions()
        )
        mine = [e for e in errors(errs, keys) if e["field"] == "spec.managedBy"]
        assert mine == expected(expect["managedByErrors"], keys)

"""job-managedby-validation.json: spec.managedBy on create and update (exact messages)."""

from __future__ import annotations

from typing import Any

from kubedra.validation.job import (
    JobValidationOptions,
    validate_job,
    validate_job_update_with_options,
    validate_job_with_options,
)
from tests.conformance.job_support import errors, expected, gates, job
from tests.vectors import load, vector_cases

FILE = "job-managedby-validation.json"
KEYS = ("type", "field", "detail", "message")
DATA = load(FILE)


@vector_cases(FILE, DATA["create"])
def test_create(case: dict[str, Any]) -> None:
    obj = job(case["job"])
    opts = JobValidationOptions(require_prefixed_labels=case["opts"]["requirePrefixedLabels"])
    want = expected(case["expect"]["errors"], KEYS)
    assert errors(validate_job_with_options(obj, opts), KEYS) == want
    assert case["expect"]["valid"] is (not want)
    # The server-level entry point derives the same options on create, and validation of the
    # field is not gated (the gate acts in the strategy, before validation).
    for managed_by in (True, False):
        got = validate_job(job(case["job"]), gates({"JobManagedBy": managed_by}))
        assert errors(got, KEYS) == want


@vector_cases(FILE, DATA["update"])
def test_update(case: dict[str, Any]) -> None:
    assert case["function"] == "ValidateJobUpdate(new, old, opts={})"
    got = validate_job_update_with_options(
        job(case["new"]), job(case["old"]), JobValidationOptions()
    )
    assert errors(got, KEYS) == expected(case["expect"]["errors"], KEYS)

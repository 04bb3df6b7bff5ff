"""job-status-validation.json: status subresource validation, with and without JobManagedBy."""

from __future__ import annotations

from typing import Any

from kubedra.registry.strategies.job import prepare_for_status_update
from kubedra.validation.job import (
    validate_job_status_update,
    validate_job_update_status_with_options,
)
from kubedra.validation.job_status import JobStatusValidationOptions
from tests.conformance.job_support import errors, expected, gates, job
from tests.vectors import load, vector_cases

FILE = "job-status-validation.json"
KEYS = ("type", "field", "detail")
DATA = load(FILE)
STRATEGY = DATA["strategyCases"]
BASIC = DATA["basicCases"]


@vector_cases(FILE, STRATEGY)
def test_strategy_validate_update(case: dict[str, Any]) -> None:
    new, old = job(case["new"]), job(case["old"])
    rv = new.metadata.resource_version
    got = validate_job_status_update(new, old, gates(case["gates"]))
    assert errors(got, KEYS) == expected(case["expect"]["errors"], KEYS)
    # The status strategy neither touches the incoming resourceVersion nor the status.
    before = job(case["new"]).status
    prepare_for_status_update(new, old)
    assert new.metadata.resource_version == rv
    assert new.status == before


@vector_cases(FILE, BASIC)
def test_validate_job_update_status(case: dict[str, Any]) -> None:
    assert case["function"] == "ValidateJobUpdateStatus(new, old, opts={})"
    got = validate_job_update_status_with_options(
        job(case["new"]), job(case["old"]), JobStatusValidationOptions()
    )
    assert errors(got, KEYS) == expected(case["expect"]["errors"], KEYS)

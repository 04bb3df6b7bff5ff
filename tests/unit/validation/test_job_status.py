"""Job status rules: index strings, overlap, messages and the gate-derived options."""

from __future__ import annotations

import pytest

from kubedra.api.batch import Job, JobCondition, UncountedTerminatedPods
from kubedra.api.features import FeatureGates
from kubedra.validation.job import validate_job_status_update
from kubedra.validation.job_status import (
    IndexFormatError,
    failed_overlapping_completed,
    status_validation_options,
    validate_indexes_format,
)
from tests.unit.validation.job_samples import copy, manifest, stored

ON = FeatureGates(job_managed_by=True)
T0, T1 = "2024-01-01T00:00:00Z", "2024-01-01T00:01:00Z"


@pytest.mark.parametrize(
    ("text", "total"), [("", 0), ("0", 1), ("0,2-4,7", 5), ("1-2,3", 3), ("+1", 1)]
)
def test_index_strings(text: str, total: int) -> None:
    assert validate_indexes_format(text, 8) == total


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("a", 'cannot convert string to integer for index: "a"'),
        ("1-b", 'cannot convert string to integer for index: "b"'),
        ("-1", 'cannot convert string to integer for index: ""'),
        (" 1", 'cannot convert string to integer for index: " 1"'),
        ("8", 'too large index: "8"'),
        ("1-8", 'too large index: "8"'),
        ("3-2", "non-increasing order, previous: 3, current: 2"),
        ("1-3,3", "non-increasing order, previous: 3, current: 3"),
        (
            "1-2-3",
            'the fragment "1-2-3" violates the requirement that an index interval can '
            "have at most two parts separated by '-'",
        ),
        ("1,,2", 'cannot convert string to integer for index: ""'),
    ],
)
def test_index_string_errors(text: str, error: str) -> None:
    with pytest.raises(IndexFormatError) as err:
        validate_indexes_format(text, 8)
    assert str(err.value) == error


@pytest.mark.parametrize(
    ("completed", "failed", "at"),
    [
        ("0-3", "4-5", None),
        ("0-3", "3", 3),
        ("1,5-7", "0,2-4,6", 6),
        ("x,2", "2", 2),
        ("1", "x,1", 1),
        ("", "1", None),
    ],
)
def test_overlap(completed: str, failed: str, at: int | None) -> None:
    assert failed_overlapping_completed(completed, failed, 10) == at


def finished_pair() -> tuple[Job, Job]:
    old = stored()
    old.status.start_time = T0
    new = copy(old)
    return new, old


def test_gate_off_means_no_transition_rules() -> None:
    new, old = finished_pair()
    new.status.conditions = [JobCondition(type="Complete", status="True")]
    new.status.active = 3
    assert validate_job_status_update(new, old, FeatureGates()) == []
    assert (
        status_validation_options(new, old, FeatureGates()).reject_decreasing_failed_counter
        is False
    )


def test_messages_render_values_like_go() -> None:
    new, old = finished_pair()
    new.status.completion_time = "2023-12-31T23:59:00Z"
    new.status.conditions = [JobCondition(type="Complete", status="True")]
    new.status.uncounted_terminated_pods = UncountedTerminatedPods(failed=["a"])
    got = [str(e) for e in validate_job_status_update(new, old, ON)]
    assert got == [
        "status.completionTime: Invalid value: 2023-12-31 23:59:00 +0000 UTC: completionTime "
        "cannot be set before startTime",
        "status.uncountedTerminatedPods: Invalid value: batch.UncountedTerminatedPods{Succeeded:"
        '[]types.UID(nil), Failed:[]types.UID{"a"}}: uncountedTerminatedPods needs to be empty '
        "for finished job",
    ]


def test_terminal_condition_cannot_be_removed() -> None:
    new, old = finished_pair()
    old.status.conditions = [JobCondition(type="Failed", status="True")]
    new.status.conditions = [JobCondition(type="Failed", status="False")]
    assert [str(e) for e in validate_job_status_update(new, old, ON)] == [
        "status.conditions: Invalid value: cannot disable the terminal Failed=True condition"
    ]


def test_same_instant_in_other_notation_is_not_a_change() -> None:
    new, old = finished_pair()
    old.status.completion_time = T1
    old.status.conditions = [JobCondition(type="Complete", status="True")]
    new.status.conditions = old.status.conditions
    new.status.completion_time = "2024-01-01T01:01:00+01:00"
    assert validate_job_status_update(new, old, ON) == []
    new.status.completion_time = "2024-01-01T00:02:00Z"
    assert [e.detail for e in validate_job_status_update(new, old, ON)] == [
        "completionTime cannot be mutated"
    ]


def test_unparsable_timestamps_compare_as_text() -> None:
    """Upstream rejects them when decoding; the status rules compare their text
    (docs/deviations.md)."""
    new, old = finished_pair()
    old.status.completion_time = "yesterday"
    old.status.conditions = [JobCondition(type="Complete", status="True")]
    new.status.conditions = old.status.conditions
    new.status.completion_time = "yesterday"
    assert validate_job_status_update(new, old, ON) == []  # and is never "before" startTime
    new.status.completion_time = "today"
    assert [e.detail for e in validate_job_status_update(new, old, ON)] == [
        "completionTime cannot be mutated"
    ]


def test_elastic_indexed_job_may_decrease_succeeded() -> None:
    old = stored(manifest(completionMode="Indexed", completions=4, parallelism=4))
    old.status.succeeded = 4
    new = copy(old)
    new.status.succeeded = 2
    assert validate_job_status_update(new, old, ON) == []
    new.spec.parallelism = 3
    assert [e.detail for e in validate_job_status_update(new, old, ON)] == [
        "cannot decrease the succeeded counter"
    ]


def test_status_update_checks_metadata_too() -> None:
    new, old = finished_pair()
    new.metadata.resource_version = ""
    assert [str(e.field) for e in validate_job_status_update(new, old, ON)] == [
        "metadata.resourceVersion"
    ]

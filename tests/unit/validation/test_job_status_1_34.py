"""Job status rules a 1.34 cluster adds (v1.31's, for the controller's two-step finish):
Failed needs FailureTarget, Complete needs SuccessCriteriaMet, a finished Job has no
terminating pods, ready never exceeds active, and SuccessCriteriaMet may mark any Job. Each
fires only when the fields it reads changed; a 1.30 cluster has none of them."""

from __future__ import annotations

from kubedra.api.batch import Job, JobCondition
from kubedra.api.features import FeatureGates
from kubedra.api.release import R1_34
from kubedra.validation.job import validate_job_status_update
from kubedra.validation.job_status import status_validation_options
from tests.unit.validation.job_samples import copy, stored

ON_1_30 = FeatureGates(job_managed_by=True)
ON_1_34 = FeatureGates.for_release(R1_34)
T0, T1 = "2024-01-01T00:00:00Z", "2024-01-01T00:01:00Z"


def pair() -> tuple[Job, Job]:
    old = stored(gates=ON_1_34)
    old.status.start_time = T0
    return copy(old), old


def true(*types: str) -> list[JobCondition]:
    return [JobCondition(type=t, status="True") for t in types]


def errors(new: Job, old: Job, gates: FeatureGates) -> list[str]:
    return [str(e) for e in validate_job_status_update(new, old, gates)]


def test_failed_needs_failure_target() -> None:
    new, old = pair()
    new.status.conditions = true("Failed")
    assert errors(new, old, ON_1_34) == [
        "status.conditions: Invalid value: cannot set Failed=True condition without the "
        "FailureTarget=true condition"]
    assert errors(new, old, ON_1_30) == []
    new.status.conditions = true("FailureTarget", "Failed")
    assert errors(new, old, ON_1_34) == []


def test_complete_needs_success_criteria_met() -> None:
    new, old = pair()
    new.status.completion_time = T1
    new.status.conditions = true("Complete")
    assert errors(new, old, ON_1_34) == [
        "status.conditions: Invalid value: cannot set Complete=True condition without the "
        "SuccessCriteriaMet=true condition"]
    assert errors(new, old, ON_1_30) == []
    new.status.conditions = true("SuccessCriteriaMet", "Complete")
    assert errors(new, old, ON_1_34) == []


def test_success_criteria_met_on_any_job_in_1_34_only() -> None:
    new, old = pair()  # NonIndexed, no successPolicy
    new.status.conditions = true("SuccessCriteriaMet")
    assert errors(new, old, ON_1_34) == []
    assert errors(new, old, ON_1_30) == [
        "status.conditions: Invalid value: cannot set SuccessCriteriaMet to NonIndexed Job",
        "status.conditions: Invalid value: cannot set SuccessCriteriaMet=True for Job without "
        "SuccessPolicy"]


def test_finished_job_with_terminating_pods() -> None:
    new, old = pair()
    old.status.conditions = true("FailureTarget")
    new.status.conditions = true("FailureTarget", "Failed")
    new.status.terminating = 2
    assert errors(new, old, ON_1_34) == [
        "status.terminating: Invalid value: 2: terminating>0 is invalid for finished job"]
    assert errors(new, old, ON_1_30) == []
    new.status.terminating = 0
    assert errors(new, old, ON_1_34) == []


def test_more_ready_than_active() -> None:
    new, old = pair()
    new.status.active, new.status.ready = 1, 3
    assert errors(new, old, ON_1_34) == [
        "status.ready: Invalid value: 3: cannot set more ready pods than active"]
    assert errors(new, old, ON_1_30) == []


def test_rules_ratchet_on_unchanged_fields() -> None:
    """A stored status that already breaks a rule does not block unrelated updates."""
    new, old = pair()
    old.status.active, old.status.ready, old.status.terminating = 1, 3, 1
    old.status.conditions = true("Failed")
    new.status = copy(old).status
    new.status.failed = 1
    assert errors(new, old, ON_1_34) == []
    new.status.active = 0
    assert errors(new, old, ON_1_34) == [
        "status.ready: Invalid value: 3: cannot set more ready pods than active"]


def test_upstream_order() -> None:
    new, old = pair()
    new.status.completion_time = T1
    new.status.conditions = true("Complete", "Failed")
    new.status.active, new.status.ready, new.status.terminating = 1, 2, 1
    assert [e.detail for e in validate_job_status_update(new, old, ON_1_34)] == [
        "cannot set Complete=True and Failed=true conditions",
        "cannot set Failed=True condition without the FailureTarget=true condition",
        "cannot set Complete=True condition without the SuccessCriteriaMet=true condition",
        "active>0 is invalid for finished job",
        "terminating>0 is invalid for finished job",
        "cannot set more ready pods than active",
    ]


def test_options_without_job_managed_by_on_1_34() -> None:
    """JobManagedBy off: only the wider SuccessCriteriaMet scope stays (JobPodReplacementPolicy
    is locked on in 1.34); on 1.30 nothing is on."""
    new, old = pair()
    off = ON_1_34.with_gates({"JobManagedBy": False})
    opts = status_validation_options(new, old, off)
    assert opts.allow_for_success_criteria_met_in_extended_scope
    assert not opts.reject_failed_job_without_failure_target
    assert not opts.reject_disabling_terminal_condition
    new.status.conditions = true("Failed")
    assert errors(new, old, off) == []
    plain = status_validation_options(new, old, FeatureGates())
    assert not plain.allow_for_success_criteria_met_in_extended_scope
    full = status_validation_options(new, old, ON_1_30)
    assert not (full.reject_failed_job_without_failure_target
                or full.allow_for_success_criteria_met_in_extended_scope)

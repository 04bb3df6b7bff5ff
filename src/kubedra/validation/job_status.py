"""Job status rules (``validateJobStatus`` / ``ValidateJobStatusUpdate``, v1.30 and v1.34).

The counter and uncounted-UID checks and the SuccessCriteriaMet rules always apply. The
strengthened transition rules apply only through :class:`JobStatusValidationOptions`, which the
API server fills from the old and new objects when the ``JobManagedBy`` gate is on: each rule
fires only when the status fields it looks at changed, so a corrupt old status does not block
unrelated updates (ratcheting). v1.34 adds the rules of the controller's two-step finish
(v1.31): Failed needs FailureTarget, Complete needs SuccessCriteriaMet, a finished Job has no
terminating pods, ready never exceeds active; and SuccessCriteriaMet may then mark any Job.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from kubedra.api import batch
from kubedra.api.batch import Job, UncountedTerminatedPods
from kubedra.api.features import FeatureGates
from kubedra.api.goformat import go_quote
from kubedra.api.release import R1_30
from kubedra.validation import gorepr
from kubedra.validation.field import (
    OMIT_VALUE,
    ROOT,
    ErrorList,
    Path,
    duplicate,
    invalid,
    required,
)


@dataclass(frozen=True, slots=True)
class JobStatusValidationOptions:
    """Which gated status rules run (upstream ``JobStatusValidationOptions``)."""

    reject_decreasing_succeeded_counter: bool = False
    reject_decreasing_failed_counter: bool = False
    reject_disabling_terminal_condition: bool = False
    reject_invalid_completed_indexes: bool = False
    reject_invalid_failed_indexes: bool = False
    reject_failed_indexes_overlapping_completed: bool = False
    reject_completed_indexes_for_non_indexed_job: bool = False
    reject_failed_indexes_for_no_backoff_limit_per_index: bool = False
    reject_finished_job_with_active_pods: bool = False
    reject_finished_job_without_start_time: bool = False
    reject_finished_job_with_uncounted_terminated_pods: bool = False
    reject_start_time_update_for_unsuspended_job: bool = False
    reject_completion_time_before_start_time: bool = False
    reject_mutating_completion_time: bool = False
    reject_complete_job_without_completion_time: bool = False
    reject_not_complete_job_with_completion_time: bool = False
    reject_complete_job_with_failed_condition: bool = False
    reject_complete_job_with_failure_target_condition: bool = False
    # v1.31 on (never set for a 1.30 cluster)
    reject_failed_job_without_failure_target: bool = False
    reject_complete_job_without_success_criteria_met: bool = False
    reject_finished_job_with_terminating_pods: bool = False
    reject_more_ready_than_active_pods: bool = False
    allow_for_success_criteria_met_in_extended_scope: bool = False


# --- timestamps ---------------------------------------------------------------------------------


def _instant(value: str | None) -> datetime | str | None:
    """A comparable instant for an RFC 3339 timestamp (the raw text if it does not parse)."""
    if value is None:
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return value


def _same_time(a: str | None, b: str | None) -> bool:
    return _instant(a) == _instant(b)


def _before(a: str, b: str) -> bool:
    x, y = _instant(a), _instant(b)
    return isinstance(x, datetime) and isinstance(y, datetime) and x < y


def _uncounted_equal(a: UncountedTerminatedPods | None, b: UncountedTerminatedPods | None) -> bool:
    """Semantic equality: nil and empty lists are equal, a nil struct is not an empty one."""
    if a is None or b is None:
        return a is b
    return (a.succeeded or []) == (b.succeeded or []) and (a.failed or []) == (b.failed or [])


# --- options from gates -------------------------------------------------------------------------


def status_validation_options(
    new: Job, old: Job, gates: FeatureGates
) -> JobStatusValidationOptions:
    """The options the status subresource uses (``getStatusValidationOptions``)."""
    if not gates.job_managed_by:
        if gates.release == R1_30:
            return JobStatusValidationOptions()
        # The controller may write SuccessCriteriaMet on any Job once it finishes in two
        # steps (always in v1.34, where JobPodReplacementPolicy is locked on).
        return JobStatusValidationOptions(
            allow_for_success_criteria_met_in_extended_scope=(
                gates.job_pod_replacement_policy or batch.is_success_criteria_met(old)
            )
        )
    ns, os = new.status, old.status
    finished_changed = batch.is_job_finished(old) != batch.is_job_finished(new)
    complete_changed = batch.is_job_complete(old) != batch.is_job_complete(new)
    failed_changed = batch.is_job_failed(old) != batch.is_job_failed(new)
    failure_target_changed = batch.is_failure_target(old) != batch.is_failure_target(new)
    completed_changed = os.completed_indexes != ns.completed_indexes
    failed_indexes_changed = os.failed_indexes != ns.failed_indexes
    active_changed = os.active != ns.active
    start_changed = not _same_time(os.start_time, ns.start_time)
    completion_changed = not _same_time(os.completion_time, ns.completion_time)
    uncounted_changed = not _uncounted_equal(
        os.uncounted_terminated_pods, ns.uncounted_terminated_pods
    )
    opts = JobStatusValidationOptions(
        # Elastic Indexed jobs (completions == parallelism) may scale down their succeeded count.
        reject_decreasing_succeeded_counter=(
            not batch.is_indexed(new) or new.spec.completions != new.spec.parallelism
        ),
        reject_decreasing_failed_counter=True,
        reject_disabling_terminal_condition=True,
        reject_invalid_completed_indexes=completed_changed,
        reject_invalid_failed_indexes=failed_indexes_changed,
        reject_completed_indexes_for_non_indexed_job=completed_changed,
        reject_failed_indexes_for_no_backoff_limit_per_index=failed_indexes_changed,
        reject_failed_indexes_overlapping_completed=failed_indexes_changed or completed_changed,
        reject_finished_job_with_active_pods=finished_changed or active_changed,
        reject_finished_job_without_start_time=finished_changed or start_changed,
        reject_finished_job_with_uncounted_terminated_pods=finished_changed or uncounted_changed,
        reject_start_time_update_for_unsuspended_job=start_changed,
        reject_completion_time_before_start_time=start_changed or completion_changed,
        reject_mutating_completion_time=True,
        reject_not_complete_job_with_completion_time=complete_changed or completion_changed,
        reject_complete_job_without_completion_time=complete_changed or completion_changed,
        reject_complete_job_with_failed_condition=complete_changed or failed_changed,
        reject_complete_job_with_failure_target_condition=(
            complete_changed or failure_target_changed
        ),
    )
    if gates.release == R1_30:
        return opts
    success_criteria_changed = batch.is_success_criteria_met(old) != batch.is_success_criteria_met(
        new
    )
    return replace(
        opts,
        reject_failed_job_without_failure_target=failed_changed or failed_indexes_changed,
        reject_complete_job_without_success_criteria_met=(
            complete_changed or success_criteria_changed
        ),
        reject_finished_job_with_terminating_pods=(
            finished_changed or os.terminating != ns.terminating
        ),
        reject_more_ready_than_active_pods=os.ready != ns.ready or active_changed,
        allow_for_success_criteria_met_in_extended_scope=True,
    )


# --- index strings ("1,3-5,7") --------------------------------------------------------------------


class IndexFormatError(ValueError):
    """A completedIndexes/failedIndexes/succeededIndexes string upstream cannot parse."""


def _atoi(text: str) -> int:
    """Go's ``strconv.Atoi``: optional sign, ASCII digits only."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not digits or not digits.isascii() or not digits.isdigit():
        raise IndexFormatError(f"cannot convert string to integer for index: {go_quote(text)}")
    return int(text)


def parse_index_interval(interval: str, completions: int) -> tuple[int, int]:
    limits = interval.split("-")
    if len(limits) > 2:
        raise IndexFormatError(
            f"the fragment {go_quote(interval)} violates the requirement that an index "
            "interval can have at most two parts separated by '-'"
        )
    x = _atoi(limits[0])
    if x >= completions:
        raise IndexFormatError(f"too large index: {go_quote(limits[0])}")
    if len(limits) == 1:
        return x, x
    y = _atoi(limits[1])
    if y >= completions:
        raise IndexFormatError(f"too large index: {go_quote(limits[1])}")
    if x >= y:
        raise IndexFormatError(f"non-increasing order, previous: {x}, current: {y}")
    return x, y


def validate_indexes_format(indexes: str, completions: int) -> int:
    """The number of indexes in ``indexes``; raises :class:`IndexFormatError` if malformed."""
    if not indexes:
        return 0
    last: int | None = None
    total = 0
    for interval in indexes.split(","):
        x, y = parse_index_interval(interval, completions)
        if last is not None and last >= x:
            raise IndexFormatError(f"non-increasing order, previous: {last}, current: {x}")
        total += y - x + 1
        last = y
    return total


def _parse_or_none(interval: str, completions: int) -> tuple[int, int] | None:
    try:
        return parse_index_interval(interval, completions)
    except IndexFormatError:
        return None


def failed_overlapping_completed(completed: str, failed: str, completions: int) -> int | None:
    """The first index present in both sets; unparsable intervals are skipped (the format
    rule reports them)."""
    if not completed or not failed:
        return None
    cs, fs = completed.split(","), failed.split(",")
    ci = fi = 0
    c = _parse_or_none(cs[0], completions)
    f = _parse_or_none(fs[0], completions)
    while ci < len(cs) and fi < len(fs):
        if c is None:
            ci += 1
            c = _parse_or_none(cs[ci], completions) if ci < len(cs) else None
        elif f is None:
            fi += 1
            f = _parse_or_none(fs[fi], completions) if fi < len(fs) else None
        else:
            if c[0] <= f[1] and f[0] <= c[1]:
                return max(c[0], f[0])
            if c[0] <= f[0]:
                ci += 1
                c = _parse_or_none(cs[ci], completions) if ci < len(cs) else None
            else:
                fi += 1
                f = _parse_or_none(fs[fi], completions) if fi < len(fs) else None
    return None


# --- the rules ------------------------------------------------------------------------------------


def _nonnegative(value: int, path: Path) -> ErrorList:
    return [] if value >= 0 else [invalid(path, value, "must be greater than or equal to 0")]


def _validate_uncounted(pods: UncountedTerminatedPods, path: Path) -> ErrorList:
    errs: ErrorList = []
    seen: set[str] = set()
    for name in ("succeeded", "failed"):
        for i, uid in enumerate(getattr(pods, name) or []):
            p = path.child(name).index(i)
            if uid == "":
                errs.append(invalid(p, uid, "must not be empty"))
            elif uid in seen:
                errs.append(duplicate(p, uid))
            else:
                seen.add(uid)
    return errs


def validate_job_status(job: Job, path: Path, opts: JobStatusValidationOptions) -> ErrorList:
    """``validateJobStatus``: the rules on one status, in upstream order."""
    st = job.status
    errs = _nonnegative(st.active, path.child("active"))
    errs += _nonnegative(st.succeeded, path.child("succeeded"))
    errs += _nonnegative(st.failed, path.child("failed"))
    if st.ready is not None:
        errs += _nonnegative(st.ready, path.child("ready"))
    if st.terminating is not None:
        errs += _nonnegative(st.terminating, path.child("terminating"))
    if st.uncounted_terminated_pods is not None:
        errs += _validate_uncounted(
            st.uncounted_terminated_pods, path.child("uncountedTerminatedPods")
        )
    conditions = path.child("conditions")
    complete = batch.is_job_complete(job)
    if opts.reject_complete_job_with_failed_condition and complete and batch.is_job_failed(job):
        errs.append(
            invalid(conditions, OMIT_VALUE, "cannot set Complete=True and Failed=true conditions")
        )
    if (
        opts.reject_complete_job_with_failure_target_condition
        and complete
        and batch.is_failure_target(job)
    ):
        errs.append(
            invalid(
                conditions, OMIT_VALUE, "cannot set Complete=True and FailureTarget=true conditions"
            )
        )
    completion = path.child("completionTime")
    if (
        opts.reject_not_complete_job_with_completion_time
        and st.completion_time is not None
        and not complete
    ):
        errs.append(
            invalid(
                completion,
                gorepr.go_time(st.completion_time),
                "cannot set completionTime when there is no Complete=True condition",
            )
        )
    if opts.reject_complete_job_without_completion_time and st.completion_time is None and complete:
        errs.append(required(completion, "completionTime is required for Complete jobs"))
    if (
        opts.reject_completion_time_before_start_time
        and st.start_time is not None
        and st.completion_time is not None
        and _before(st.completion_time, st.start_time)
    ):
        errs.append(
            invalid(
                completion,
                gorepr.go_time(st.completion_time),
                "completionTime cannot be set before startTime",
            )
        )
    if opts.reject_failed_job_without_failure_target and (
        batch.is_job_failed(job) and not batch.is_failure_target(job)
    ):
        errs.append(
            invalid(
                conditions,
                OMIT_VALUE,
                "cannot set Failed=True condition without the FailureTarget=true condition",
            )
        )
    if opts.reject_complete_job_without_success_criteria_met and (
        complete and not batch.is_success_criteria_met(job)
    ):
        errs.append(
            invalid(
                conditions,
                OMIT_VALUE,
                "cannot set Complete=True condition without the SuccessCriteriaMet=true condition",
            )
        )
    finished = batch.is_job_finished(job)
    if opts.reject_finished_job_with_active_pods and st.active > 0 and finished:
        errs.append(
            invalid(path.child("active"), st.active, "active>0 is invalid for finished job")
        )
    if opts.reject_finished_job_without_start_time and st.start_time is None and finished:
        errs.append(required(path.child("startTime"), "startTime is required for finished job"))
    uncounted = st.uncounted_terminated_pods
    if (
        opts.reject_finished_job_with_uncounted_terminated_pods
        and finished
        and uncounted is not None
        and (uncounted.succeeded or uncounted.failed)
    ):
        errs.append(
            invalid(
                path.child("uncountedTerminatedPods"),
                gorepr.uncounted_terminated_pods(uncounted),
                "uncountedTerminatedPods needs to be empty for finished job",
            )
        )
    errs += _validate_indexes(job, path, opts)
    if (
        opts.reject_finished_job_with_terminating_pods
        and st.terminating is not None
        and st.terminating > 0
        and finished
    ):
        errs.append(
            invalid(
                path.child("terminating"),
                st.terminating,
                "terminating>0 is invalid for finished job",
            )
        )
    if opts.reject_more_ready_than_active_pods and st.ready is not None and st.ready > st.active:
        errs.append(
            invalid(path.child("ready"), st.ready, "cannot set more ready pods than active")
        )
    errs += _validate_success_criteria(job, conditions, opts)
    return errs


def _validate_indexes(job: Job, path: Path, opts: JobStatusValidationOptions) -> ErrorList:
    errs: ErrorList = []
    st, spec = job.status, job.spec
    completed_path, failed_path = path.child("completedIndexes"), path.child("failedIndexes")
    if opts.reject_invalid_completed_indexes and spec.completions is not None:
        try:
            validate_indexes_format(st.completed_indexes, spec.completions)
        except IndexFormatError as e:
            errs.append(
                invalid(
                    completed_path, st.completed_indexes, f"error parsing completedIndexes: {e}"
                )
            )
    if (
        opts.reject_invalid_failed_indexes
        and spec.completions is not None
        and spec.backoff_limit_per_index is not None
        and st.failed_indexes is not None
    ):
        try:
            validate_indexes_format(st.failed_indexes, spec.completions)
        except IndexFormatError as e:
            errs.append(
                invalid(failed_path, st.failed_indexes, f"error parsing failedIndexes: {e}")
            )
    if (
        opts.reject_completed_indexes_for_non_indexed_job
        and st.completed_indexes
        and not batch.is_indexed(job)
    ):
        errs.append(
            invalid(
                completed_path,
                st.completed_indexes,
                "cannot set non-empty completedIndexes when non-indexed completion mode",
            )
        )
    if (
        opts.reject_failed_indexes_for_no_backoff_limit_per_index
        and spec.backoff_limit_per_index is None
        and st.failed_indexes is not None
    ):
        errs.append(
            invalid(
                failed_path,
                st.failed_indexes,
                "cannot set non-null failedIndexes when backoffLimitPerIndex is null",
            )
        )
    if (
        opts.reject_failed_indexes_overlapping_completed
        and spec.completions is not None
        and st.failed_indexes is not None
    ):
        at = failed_overlapping_completed(st.completed_indexes, st.failed_indexes, spec.completions)
        if at is not None:
            errs.append(
                invalid(
                    failed_path,
                    st.failed_indexes,
                    f"failedIndexes and completedIndexes overlap at index: {at}",
                )
            )
    return errs


def _validate_success_criteria(
    job: Job, conditions: Path, opts: JobStatusValidationOptions
) -> ErrorList:
    met = batch.is_success_criteria_met(job)
    narrow = not opts.allow_for_success_criteria_met_in_extended_scope
    rules = (
        (
            narrow and met and not batch.is_indexed(job),
            "cannot set SuccessCriteriaMet to NonIndexed Job",
        ),
        (
            met and batch.is_job_failed(job),
            "cannot set SuccessCriteriaMet=True and Failed=true conditions",
        ),
        (
            met and batch.is_failure_target(job),
            "cannot set SuccessCriteriaMet=True and FailureTarget=true conditions",
        ),
        (
            narrow and met and job.spec.success_policy is None,
            "cannot set SuccessCriteriaMet=True for Job without SuccessPolicy",
        ),
        (
            job.spec.success_policy is not None and not met and batch.is_job_complete(job),
            "cannot set Complete=True for Job with SuccessPolicy unless SuccessCriteriaMet=True",
        ),
    )
    return [invalid(conditions, OMIT_VALUE, detail) for fires, detail in rules if fires]


def validate_job_status_transition(
    new: Job, old: Job, opts: JobStatusValidationOptions
) -> ErrorList:
    """``ValidateJobStatusUpdate``: the status rules plus the old-to-new transition rules."""
    status = ROOT.child("status")
    errs = validate_job_status(new, status, opts)
    ns, os = new.status, old.status
    conditions = status.child("conditions")
    if opts.reject_disabling_terminal_condition:
        for ctype in (batch.JOB_FAILED, batch.JOB_COMPLETE, batch.JOB_FAILURE_TARGET):
            if batch.is_condition_true(os.conditions, ctype) and not batch.is_condition_true(
                ns.conditions, ctype
            ):
                errs.append(
                    invalid(
                        conditions,
                        OMIT_VALUE,
                        f"cannot disable the terminal {ctype}=True condition",
                    )
                )
    if opts.reject_decreasing_failed_counter and ns.failed < os.failed:
        errs.append(
            invalid(status.child("failed"), ns.failed, "cannot decrease the failed counter")
        )
    if opts.reject_decreasing_succeeded_counter and ns.succeeded < os.succeeded:
        errs.append(
            invalid(
                status.child("succeeded"), ns.succeeded, "cannot decrease the succeeded counter"
            )
        )
    if (
        opts.reject_mutating_completion_time
        and ns.completion_time is not None
        and os.completion_time is not None
        and not _same_time(ns.completion_time, os.completion_time)
    ):
        errs.append(
            invalid(
                status.child("completionTime"),
                gorepr.go_time(ns.completion_time),
                "completionTime cannot be mutated",
            )
        )
    if (
        opts.reject_start_time_update_for_unsuspended_job
        and os.start_time is not None
        and not _same_time(os.start_time, ns.start_time)
        and not new.spec.suspend
    ):
        errs.append(
            required(status.child("startTime"), "startTime cannot be removed for unsuspended job")
        )
    if batch.is_success_criteria_met(old) and not batch.is_success_criteria_met(new):
        errs.append(
            invalid(conditions, OMIT_VALUE, "cannot disable the SuccessCriteriaMet=True condition")
        )
    if (
        batch.is_job_complete(old)
        and not batch.is_success_criteria_met(old)
        and batch.is_success_criteria_met(new)
    ):
        errs.append(
            invalid(
                conditions,
                OMIT_VALUE,
                "cannot set SuccessCriteriaMet=True for Job already has Complete=true conditions",
            )
        )
    return errs

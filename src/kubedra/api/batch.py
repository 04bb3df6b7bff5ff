"""batch/v1: Job and JobList, field for field as ``k8s.io/api/batch/v1`` at v0.30.0.

``spec`` and ``status`` are always written (Go encodes struct fields even when empty), so a
freshly created Job reads back with ``"status": {}`` as upstream does.
"""

from __future__ import annotations

import msgspec

from kubedra.api.base import Int32, Int64, Model, always, required_list
from kubedra.api.core import PodTemplateSpec
from kubedra.api.meta import LabelSelector, ListMeta, TypedObject

# Reserved spec.managedBy value: "the built-in Job controller" (same as leaving it unset).
JOB_CONTROLLER_NAME = "kubernetes.io/job-controller"

# Labels the API server puts on the pod template (and selector) of a Job.
LEGACY_JOB_NAME_LABEL = "job-name"
LEGACY_CONTROLLER_UID_LABEL = "controller-uid"
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
CONTROLLER_UID_LABEL = "batch.kubernetes.io/controller-uid"
JOB_TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
JOB_COMPLETION_INDEX_ANNOTATION = "batch.kubernetes.io/job-completion-index"

# completionMode
NON_INDEXED_COMPLETION = "NonIndexed"
INDEXED_COMPLETION = "Indexed"

# podReplacementPolicy
TERMINATING_OR_FAILED = "TerminatingOrFailed"
FAILED = "Failed"

# JobCondition types
JOB_SUSPENDED = "Suspended"
JOB_COMPLETE = "Complete"
JOB_FAILED = "Failed"
JOB_FAILURE_TARGET = "FailureTarget"
JOB_SUCCESS_CRITERIA_MET = "SuccessCriteriaMet"

# podFailurePolicy actions and exit-code operators
POD_FAILURE_POLICY_ACTIONS = ("Count", "FailIndex", "FailJob", "Ignore")
POD_FAILURE_POLICY_OPERATORS = ("In", "NotIn")


class PodFailurePolicyOnExitCodesRequirement(Model):
    container_name: str | None = None
    operator: str = always("")
    values: list[Int32] = required_list()


class PodFailurePolicyOnPodConditionsPattern(Model):
    type: str = always("")
    status: str = always("")


class PodFailurePolicyRule(Model):
    action: str = always("")
    on_exit_codes: PodFailurePolicyOnExitCodesRequirement | None = None
    on_pod_conditions: list[PodFailurePolicyOnPodConditionsPattern] | None = None


class PodFailurePolicy(Model):
    rules: list[PodFailurePolicyRule] = required_list()


class SuccessPolicyRule(Model):
    succeeded_indexes: str | None = None
    succeeded_count: Int32 | None = None


class SuccessPolicy(Model):
    rules: list[SuccessPolicyRule] = required_list()


class JobSpec(Model):
    parallelism: Int32 | None = None
    completions: Int32 | None = None
    active_deadline_seconds: Int64 | None = None
    pod_failure_policy: PodFailurePolicy | None = None
    success_policy: SuccessPolicy | None = None
    backoff_limit: Int32 | None = None
    backoff_limit_per_index: Int32 | None = None
    max_failed_indexes: Int32 | None = None
    selector: LabelSelector | None = None
    manual_selector: bool | None = None
    template: PodTemplateSpec = msgspec.field(default_factory=PodTemplateSpec)
    ttl_seconds_after_finished: Int32 | None = None
    completion_mode: str | None = None
    suspend: bool | None = None
    pod_replacement_policy: str | None = None
    managed_by: str | None = None


class JobCondition(Model):
    type: str = always("")
    status: str = always("")
    last_probe_time: str | None = None
    last_transition_time: str | None = None
    reason: str | None = None
    message: str | None = None


class UncountedTerminatedPods(Model):
    succeeded: list[str] | None = None
    failed: list[str] | None = None


class JobStatus(Model):
    conditions: list[JobCondition] | None = None
    start_time: str | None = None
    completion_time: str | None = None
    active: Int32 = 0
    succeeded: Int32 = 0
    failed: Int32 = 0
    terminating: Int32 | None = None
    completed_indexes: str = ""
    failed_indexes: str | None = None
    uncounted_terminated_pods: UncountedTerminatedPods | None = None
    ready: Int32 | None = None


class Job(TypedObject):
    spec: JobSpec = msgspec.field(default_factory=JobSpec)
    status: JobStatus = msgspec.field(default_factory=JobStatus)


class JobList(Model):
    api_version: str = ""
    kind: str = ""
    metadata: ListMeta = msgspec.field(default_factory=ListMeta)
    items: list[Job] = required_list()


# --- conditions and modes (shared by validation and the controllers) -----------------------


def is_condition_true(conditions: list[JobCondition] | None, ctype: str) -> bool:
    return any(c.type == ctype and c.status == "True" for c in conditions or ())


def is_job_complete(job: Job) -> bool:
    return is_condition_true(job.status.conditions, JOB_COMPLETE)


def is_job_failed(job: Job) -> bool:
    return is_condition_true(job.status.conditions, JOB_FAILED)


def is_job_finished(job: Job) -> bool:
    """``Complete=True`` or ``Failed=True``: the controllers leave a finished Job alone."""
    return is_job_complete(job) or is_job_failed(job)


def is_failure_target(job: Job) -> bool:
    return is_condition_true(job.status.conditions, JOB_FAILURE_TARGET)


def is_success_criteria_met(job: Job) -> bool:
    return is_condition_true(job.status.conditions, JOB_SUCCESS_CRITERIA_MET)


def is_indexed(job: Job) -> bool:
    return (job.spec.completion_mode or NON_INDEXED_COMPLETION) == INDEXED_COMPLETION

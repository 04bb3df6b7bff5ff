"""How the Job controller judges one pod of one Job under the feature gates
(``isPodFailed``, ``onlyReplaceFailedPods``, ``trackTerminatingPods``, ``isIndexFailed``,
``delayTerminalCondition`` and the pod failure policy gate of ``job_controller.go``)."""

from __future__ import annotations

from kubedra.api import batch
from kubedra.api.batch import Job
from kubedra.api.core import Pod
from kubedra.api.features import FeatureGates
from kubedra.api.release import R1_30
from kubedra.controllers.job import failure_policy
from kubedra.controllers.job import pods as podutil


class JobRules:
    def __init__(self, gates: FeatureGates) -> None:
        self.gates = gates

    def only_replace_failed(self, job: Job) -> bool:
        if self.gates.job_pod_replacement_policy and (
                job.spec.pod_replacement_policy == batch.FAILED):
            return True
        return self.gates.job_pod_failure_policy and job.spec.pod_failure_policy is not None

    @property
    def delays_terminal_condition(self) -> bool:
        """``delayTerminalCondition`` (v1.31 on): the Job first gets ``FailureTarget`` /
        ``SuccessCriteriaMet`` and only gets ``Failed`` / ``Complete`` once none of its pods
        is terminating; v1.30 writes the final condition at once."""
        return self.gates.release != R1_30 and (
            self.gates.job_managed_by or self.gates.job_pod_replacement_policy)

    def tracks_terminating(self, job: Job) -> bool:
        return self.delays_terminal_condition or self.gates.job_pod_replacement_policy or (
            self.gates.job_pod_failure_policy and job.spec.pod_failure_policy is not None)

    def is_pod_failed(self, pod: Pod, job: Job) -> bool:
        """Failed phase; without a failure policy (or with podReplacementPolicy Failed) a pod
        being deleted before it succeeded counts as failed too."""
        if pod.status.phase == "Failed":
            return True
        if job.spec.pod_failure_policy is not None or self.only_replace_failed(job):
            return False
        return pod.metadata.deletion_timestamp is not None and pod.status.phase != "Succeeded"

    def policy(self, job: Job, pod: Pod) -> failure_policy.Match:
        if not self.gates.job_pod_failure_policy:
            return failure_policy.Match()
        return failure_policy.match(job.spec.pod_failure_policy, pod, self.gates)

    @staticmethod
    def valid_index(job: Job, pod: Pod) -> bool:
        ix = podutil.completion_index(pod)
        return ix != podutil.UNKNOWN_INDEX and ix < (job.spec.completions or 0)

    def index_failed(self, job: Job, pod: Pod) -> bool:
        """``isIndexFailed``: FailIndex matched, or the index used up backoffLimitPerIndex."""
        if not self.is_pod_failed(pod, job):
            return False
        verdict = self.policy(job, pod)
        if verdict.action == failure_policy.FAIL_INDEX:
            return True
        return verdict.count_failed and (
            podutil.index_failure_count(pod) >= (job.spec.backoff_limit_per_index or 0))


def absolute_failures(pod: Pod) -> int:
    """Failures of the pod's index so far, counted or ignored by the failure policy."""
    return podutil.index_failure_count(pod) + podutil.index_ignored_failure_count(pod)

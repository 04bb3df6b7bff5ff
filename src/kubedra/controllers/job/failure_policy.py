"""``spec.podFailurePolicy`` matching (``pkg/controller/job/pod_failure_policy.go``, v1.30):
the first rule whose exit codes or pod conditions match a failed pod decides its action."""

from __future__ import annotations

from dataclasses import dataclass

from kubedra.api.batch import PodFailurePolicy, PodFailurePolicyOnExitCodesRequirement
from kubedra.api.core import ContainerStatus, Pod
from kubedra.api.features import FeatureGates
from kubedra.controllers.job.pods import terminated_state

FAIL_JOB, IGNORE, COUNT, FAIL_INDEX = "FailJob", "Ignore", "Count", "FailIndex"


@dataclass(frozen=True, slots=True)
class Match:
    count_failed: bool = True
    """Whether the failure counts against backoffLimit (false for ``Ignore``)."""
    action: str | None = None
    fail_job_message: str | None = None


_NO_RULE = Match()


def _exit_code(status: ContainerStatus) -> int | None:
    terminated = terminated_state(status.state)
    code = terminated.get("exitCode") if terminated else None
    return code if isinstance(code, int) else None


def _matching_container(statuses: list[ContainerStatus] | None,
                        req: PodFailurePolicyOnExitCodesRequirement) -> ContainerStatus | None:
    for status in statuses or ():
        code = _exit_code(status)
        if code is None or code == 0:
            continue
        if req.container_name is not None and req.container_name != status.name:
            continue
        if (code in req.values) == (req.operator == "In"):
            return status
    return None


def match(policy: PodFailurePolicy | None, pod: Pod, gates: FeatureGates) -> Match:
    """``matchPodFailurePolicy``: the action of the first matching rule for a failed pod."""
    if policy is None:
        return _NO_RULE
    ns, name = pod.metadata.namespace, pod.metadata.name
    for index, rule in enumerate(policy.rules):
        what: str | None = None
        if rule.on_exit_codes is not None:
            container = (_matching_container(pod.status.container_statuses, rule.on_exit_codes)
                         or _matching_container(pod.status.init_container_statuses,
                                                rule.on_exit_codes))
            if container is not None:
                what = (f"Container {container.name} for pod {ns}/{name} failed with exit code "
                        f"{_exit_code(container)} matching {rule.action} rule at index {index}")
        elif rule.on_pod_conditions is not None:
            cond = next((c for c in pod.status.conditions or () for p in rule.on_pod_conditions
                         if c.type == p.type and c.status == p.status), None)
            if cond is not None:
                what = (f"Pod {ns}/{name} has condition {cond.type} matching {rule.action} rule "
                        f"at index {index}")
        if what is None:
            continue
        if rule.action == IGNORE:
            return Match(False, IGNORE)
        if rule.action == FAIL_INDEX and gates.job_backoff_limit_per_index:
            return Match(True, FAIL_INDEX)
        if rule.action == COUNT:
            return Match(True, COUNT)
        if rule.action == FAIL_JOB:
            return Match(True, FAIL_JOB, what)
    return _NO_RULE

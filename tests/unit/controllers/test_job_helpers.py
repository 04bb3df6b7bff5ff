"""Pure pieces of the Job controller: index strings, pod re-creation back-off, pod failure
policy matching, conditions."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from kubedra.api import codec
from kubedra.api.batch import PodFailurePolicy
from kubedra.api.core import Pod
from kubedra.api.features import FeatureGates
from kubedra.controllers.job import conditions, failure_policy, indexed
from kubedra.controllers.job.backoff import remaining_for_failures
from kubedra.controllers.job.pods import removal_order

NOW = datetime(2024, 1, 1, tzinfo=UTC)


def test_index_strings() -> None:
    assert indexed.format_indexes([5, 0, 1, 2, 7, 8]) == "0-2,5,7-8"
    assert indexed.format_indexes([]) == ""
    assert indexed.parse_indexes("0-2,5,7-8", 10) == {0, 1, 2, 5, 7, 8}
    assert indexed.parse_indexes("1,x,3-2,9", 5) == {1}  # malformed and too large skipped
    assert indexed.first_pending(3, 6, {0, 2}) == [1, 3, 4]
    assert indexed.first_pending(3, 2, {0}) == [1]
    assert indexed.generate_name("job", 3) == "job-3-"
    assert len(indexed.generate_name("j" * 70, 12)) == indexed.MAX_GENERATED_NAME_LENGTH


def test_backoff_doubles_and_caps() -> None:
    def wait(failures: int, ago: float) -> float:
        return remaining_for_failures(NOW, 10, 600, failures, NOW - timedelta(seconds=ago))

    assert wait(0, 0) == 0
    assert wait(1, 0) == 10
    assert wait(2, 5) == 15
    assert wait(4, 0) == 80
    assert wait(20, 0) == 600
    assert wait(1, 11) == 0


def _failed_pod(code: int, conds: list[dict[str, str]] | None = None) -> Pod:
    return codec.decode({"metadata": {"name": "p", "namespace": "ns"}, "status": {
        "phase": "Failed", "conditions": conds or [],
        "containerStatuses": [{"name": "main", "state": {"terminated": {"exitCode": code}}}]}},
        Pod)


def test_failure_policy_first_matching_rule() -> None:
    policy = codec.decode({"rules": [
        {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget",
                                                  "status": "True"}]},
        {"action": "FailJob", "onExitCodes": {"containerName": "main", "operator": "In",
                                              "values": [42]}},
        {"action": "Count", "onExitCodes": {"operator": "NotIn", "values": [1, 2]}},
    ]}, PodFailurePolicy)
    gates = FeatureGates()
    fail = failure_policy.match(policy, _failed_pod(42), gates)
    assert (fail.action, fail.count_failed) == ("FailJob", True)
    assert fail.fail_job_message == ("Container main for pod ns/p failed with exit code 42 "
                                     "matching FailJob rule at index 1")
    disrupted = _failed_pod(42, [{"type": "DisruptionTarget", "status": "True"}])
    assert failure_policy.match(policy, disrupted, gates) == failure_policy.Match(False, "Ignore")
    assert failure_policy.match(policy, _failed_pod(7), gates).action == "Count"
    assert failure_policy.match(policy, _failed_pod(1), gates) == failure_policy.Match()
    assert failure_policy.match(None, _failed_pod(42), gates) == failure_policy.Match()


def test_ensure_condition_status() -> None:
    conds, changed = conditions.ensure_status(None, "Suspended", "False", "JobResumed",
                                              "Job resumed", NOW)
    assert (conds, changed) == (None, False)  # a missing condition is not added as False
    conds, changed = conditions.ensure_status(None, "Suspended", "True", "JobSuspended",
                                              "Job suspended", NOW)
    assert changed and conds is not None and conds[0].last_transition_time == "2024-01-01T00:00:00Z"
    again, changed = conditions.ensure_status(conds, "Suspended", "True", "JobSuspended",
                                              "Job suspended", NOW)
    assert again is conds and not changed


def test_pods_cheapest_to_lose_are_removed_first() -> None:
    """A subset of ``controller.ActivePods``: unscheduled, then Pending < Unknown < Running,
    not ready, most restarts, newest; no ready-time or rank tie-breakers
    (docs/deviations.md)."""
    def pod(name: str, node: str = "n", phase: str = "Running", ready: bool = True,
            restarts: int = 0, created: str = "2024-01-01T00:00:00Z") -> Pod:
        return codec.decode({
            "metadata": {"name": name, "creationTimestamp": created},
            "spec": {"nodeName": node},
            "status": {"phase": phase,
                       "conditions": [{"type": "Ready", "status": str(ready)}],
                       "containerStatuses": [{"name": "c", "restartCount": restarts}]}}, Pod)

    pods = [pod("old"), pod("new", created="2024-01-02T00:00:00Z"), pod("restarted", restarts=2),
            pod("unready", ready=False), pod("unknown", phase="Unknown"),
            pod("pending", phase="Pending"), pod("unscheduled", node="", phase="Pending")]
    assert [p.metadata.name for p in sorted(pods, key=removal_order)] == [
        "unscheduled", "pending", "unknown", "unready", "restarted", "new", "old"]

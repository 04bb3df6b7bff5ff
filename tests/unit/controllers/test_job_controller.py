"""The Job controller against a real in-process API server, the test playing the kubelet:
completions/parallelism, back-off limit and pod re-creation back-off, pod failure policy,
Indexed mode, suspend/resume, deadline, per-index back-off, deletion clean-up, TTL."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

from kubedra.api import batch
from kubedra.api.batch import Job
from kubedra.api.core import Event, Pod
from kubedra.client.errors import ApiError, is_not_found
from kubedra.client.rest import Client
from kubedra.controllers.job.pods import parse_time
from tests.job_env import (
    FAST,
    api,
    finish_pod,
    job_controller,
    job_manifest,
    job_pods,
    run_pod,
    wait_for,
)


async def _get(client: Client, name: str) -> Job:
    return await client.get(Job, name, "default")


async def _condition(client: Client, name: str, ctype: str) -> batch.JobCondition | None:
    job = await _get(client, name)
    return next((c for c in job.status.conditions or ()
                 if c.type == ctype and c.status == "True"), None)


async def _running(client: Client, job: Job, n: int) -> list[Pod]:
    """Wait for ``n`` active pods of ``job`` and return them."""
    async def active() -> list[Pod] | None:
        pods = [p for p in await job_pods(client, job)
                if p.status.phase not in ("Succeeded", "Failed")
                and p.metadata.deletion_timestamp is None]
        return pods if len(pods) == n else None
    pods: list[Pod] = await wait_for(f"{n} active pods", active)
    return pods


async def _events(client: Client, reason: str) -> list[Event]:
    return [e for e in (await client.list(Event, "default")).items if e.reason == reason]


async def test_completions_and_parallelism(tmp_path: Path) -> None:
    async with api(tmp_path) as client, job_controller(client):
        job = await client.create(job_manifest("work", completions=3, parallelism=2))
        first = await _running(client, job, 2)
        await asyncio.sleep(0.3)
        assert len(await job_pods(client, job)) == 2, "never more than parallelism"
        await run_pod(client, first[0])
        await wait_for("ready counted", lambda: _ready(client, "work", 1))
        for pod in first:
            await finish_pod(client, pod)
        (last,) = await _running(client, job, 1)
        await finish_pod(client, last)
        done = await wait_for("Complete", lambda: _condition(client, "work", "Complete"))
        job = await _get(client, "work")
        st = job.status
        assert (st.succeeded, st.failed, st.active) == (3, 0, 0)
        assert done.reason is None and done.message is None  # empty in v1.30
        assert st.completion_time == done.last_transition_time
        start, end = parse_time(st.start_time), parse_time(st.completion_time)
        assert start is not None and end is not None and start <= end
        assert not (st.uncounted_terminated_pods and (st.uncounted_terminated_pods.succeeded
                                                      or st.uncounted_terminated_pods.failed))
        for pod in await job_pods(client, job):
            assert batch.JOB_TRACKING_FINALIZER not in (pod.metadata.finalizers or ())
            ref = pod.metadata.owner_references[0]  # type: ignore[index]
            assert (ref.kind, ref.controller, ref.block_owner_deletion) == ("Job", True, True)
            assert (pod.metadata.generate_name or "").startswith("work-")
        await wait_for("events", lambda: _events(client, "Completed"))
        assert len(await _events(client, "SuccessfulCreate")) == 3


async def _ready(client: Client, name: str, n: int) -> bool:
    return (await _get(client, name)).status.ready == n


async def test_backoff_limit_and_recreation_backoff(tmp_path: Path) -> None:
    # Finish times have whole seconds, so the back-off (1.5 s) is seen as at least 0.5 s.
    config = dataclasses.replace(FAST, pod_backoff_base=1.5)
    async with api(tmp_path) as client, job_controller(client, config):
        job = await client.create(job_manifest("flaky", backoffLimit=1))
        (pod,) = await _running(client, job, 1)
        await finish_pod(client, pod, exit_code=1)
        failed_at = asyncio.get_running_loop().time()
        (second,) = await _running(client, job, 1)
        waited = asyncio.get_running_loop().time() - failed_at
        assert waited >= 0.5, "the replacement waits for the pod failure back-off"
        await finish_pod(client, second, exit_code=1)
        cond = await wait_for("Failed", lambda: _condition(client, "flaky", "Failed"))
        assert cond.reason == "BackoffLimitExceeded"
        assert cond.message == "Job has reached the specified backoff limit"
        job = await _get(client, "flaky")
        assert (job.status.failed, job.status.succeeded, job.status.active) == (2, 0, 0)
        assert job.status.completion_time is None
        await wait_for("warning event", lambda: _events(client, "BackoffLimitExceeded"))


async def test_pod_failure_policy_fail_job(tmp_path: Path) -> None:
    policy = {"rules": [{"action": "FailJob",
                         "onExitCodes": {"operator": "In", "values": [42]}}]}
    async with api(tmp_path) as client, job_controller(client):
        job = await client.create(job_manifest("policy", completions=2, parallelism=2,
                                               podFailurePolicy=policy))
        pods = await _running(client, job, 2)
        await finish_pod(client, pods[0], exit_code=42)
        cond = await wait_for("Failed", lambda: _condition(client, "policy", "Failed"))
        assert cond.reason == "PodFailurePolicy"
        assert cond.message == (f"Container main for pod default/{pods[0].metadata.name} failed "
                                "with exit code 42 matching FailJob rule at index 0")
        job = await _get(client, "policy")
        target = [c for c in job.status.conditions or () if c.type == "FailureTarget"]
        assert target and target[0].reason == "PodFailurePolicy"
        assert job.status.failed == 2  # the other pod was deleted and counted as failed
        assert job.status.active == 0


async def test_pod_failure_policy_ignore_does_not_count(tmp_path: Path) -> None:
    policy = {"rules": [{"action": "Ignore",
                         "onExitCodes": {"operator": "In", "values": [3]}}]}
    async with api(tmp_path) as client, job_controller(client):
        job = await client.create(job_manifest("ignored", backoffLimit=0,
                                               podFailurePolicy=policy))
        (pod,) = await _running(client, job, 1)
        await finish_pod(client, pod, exit_code=3)
        (again,) = await _running(client, job, 1)
        assert again.metadata.uid != pod.metadata.uid
        await finish_pod(client, again)
        await wait_for("Complete", lambda: _condition(client, "ignored", "Complete"))
        assert (await _get(client, "ignored")).status.failed == 0


async def test_indexed_job(tmp_path: Path) -> None:
    async with api(tmp_path) as client, job_controller(client):
        job = await client.create(job_manifest("idx", completions=3, parallelism=3,
                                               completionMode="Indexed"))
        pods = await _running(client, job, 3)
        seen = {}
        for pod in pods:
            ix = (pod.metadata.annotations or {})[batch.JOB_COMPLETION_INDEX_ANNOTATION]
            assert (pod.metadata.labels or {})[batch.JOB_COMPLETION_INDEX_ANNOTATION] == ix
            assert pod.spec.hostname == f"idx-{ix}"
            assert (pod.metadata.generate_name or "") == f"idx-{ix}-"
            env = {e.name: e.value_from for e in pod.spec.containers[0].env or ()}
            assert env["JOB_COMPLETION_INDEX"] == {"fieldRef": {
                "apiVersion": "v1",
                "fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}
            seen[ix] = pod
        assert sorted(seen) == ["0", "1", "2"]
        await finish_pod(client, seen["1"])
        await wait_for("index 1", lambda: _completed(client, "idx", "1"))
        await finish_pod(client, seen["0"], exit_code=1)
        replacement = await _running(client, job, 2)
        assert sorted((p.metadata.annotations or {})[batch.JOB_COMPLETION_INDEX_ANNOTATION]
                      for p in replacement) == ["0", "2"]
        for pod in replacement:
            await finish_pod(client, pod)
        await wait_for("Complete", lambda: _condition(client, "idx", "Complete"))
        job = await _get(client, "idx")
        assert job.status.completed_indexes == "0-2"
        assert (job.status.succeeded, job.status.failed) == (3, 1)


async def _completed(client: Client, name: str, indexes: str) -> bool:
    return (await _get(client, name)).status.completed_indexes == indexes


async def test_backoff_limit_per_index(tmp_path: Path) -> None:
    async with api(tmp_path) as client, job_controller(client):
        job = await client.create(job_manifest(
            "perindex", completions=2, parallelism=2, completionMode="Indexed",
            backoffLimitPerIndex=0, maxFailedIndexes=0))
        pods = await _running(client, job, 2)
        await finish_pod(client, pods[0], exit_code=1)
        cond = await wait_for("Failed", lambda: _condition(client, "perindex", "Failed"))
        assert cond.reason == "MaxFailedIndexesExceeded"
        job = await _get(client, "perindex")
        failed_ix = (pods[0].metadata.annotations or {})[batch.JOB_COMPLETION_INDEX_ANNOTATION]
        assert job.status.failed_indexes == failed_ix


async def test_suspend_and_resume(tmp_path: Path) -> None:
    async with api(tmp_path) as client, job_controller(client):
        job = await client.create(job_manifest("paused", suspend=True))
        cond = await wait_for("Suspended", lambda: _condition(client, "paused", "Suspended"))
        assert (cond.reason, cond.message) == ("JobSuspended", "Job suspended")
        assert await job_pods(client, job) == []
        assert (await _get(client, "paused")).status.start_time is None
        await client.patch(Job, "paused", {"spec": {"suspend": False}}, namespace="default")
        (pod,) = await _running(client, job, 1)

        async def resumed() -> Job | None:
            got = await _get(client, "paused")
            cond = next(c for c in got.status.conditions or () if c.type == "Suspended")
            return got if (cond.status, cond.reason, cond.message) == (
                "False", "JobResumed", "Job resumed") else None
        job = await wait_for("resumed", resumed)
        assert job.status.start_time is not None
        await client.patch(Job, "paused", {"spec": {"suspend": True}}, namespace="default")
        await wait_for("pod deleted", lambda: _gone(client, pod))
        await wait_for("active 0", lambda: _active(client, "paused", 0))
        assert (await _get(client, "paused")).status.failed == 0  # not counted as failures


async def _active(client: Client, name: str, n: int) -> bool:
    return (await _get(client, name)).status.active == n


async def _gone(client: Client, pod: Pod) -> bool:
    try:
        await client.get(Pod, pod.metadata.name or "", pod.metadata.namespace)
    except ApiError as e:
        return is_not_found(e)
    return False


async def test_active_deadline(tmp_path: Path) -> None:
    async with api(tmp_path) as client, job_controller(client):
        # long enough that the pod is seen running under load before the deadline ends it
        job = await client.create(job_manifest("late", activeDeadlineSeconds=3))
        (pod,) = await _running(client, job, 1)
        cond = await wait_for("Failed", lambda: _condition(client, "late", "Failed"))
        assert (cond.reason, cond.message) == (
            "DeadlineExceeded", "Job was active longer than specified deadline")
        await wait_for("pod deleted", lambda: _gone(client, pod))
        assert (await _get(client, "late")).status.failed == 1


async def test_deleted_job_leaves_no_tracking_finalizer(tmp_path: Path) -> None:
    async with api(tmp_path) as client, job_controller(client):
        job = await client.create(job_manifest("doomed", completions=4, parallelism=4))
        pods = await _running(client, job, 4)
        await finish_pod(client, pods[0])
        await client.delete(Job, "doomed", "default", propagation_policy="Background")

        async def clean() -> bool:
            return all(batch.JOB_TRACKING_FINALIZER not in (p.metadata.finalizers or ())
                       for p in (await client.list(Pod, "default")).items)
        await wait_for("no pod with the tracking finalizer", clean)
        await wait_for("pods collected", lambda: _no_pods(client))


async def _no_pods(client: Client) -> bool:
    return not (await client.list(Pod, "default")).items


async def test_ttl_after_finished(tmp_path: Path) -> None:
    async with api(tmp_path) as client, job_controller(client, ttl=True):
        job = await client.create(job_manifest("short", ttlSecondsAfterFinished=0))
        (pod,) = await _running(client, job, 1)
        await finish_pod(client, pod)

        async def deleted() -> bool:
            try:
                await _get(client, "short")
            except ApiError as e:
                return is_not_found(e)
            return False
        await wait_for("TTL deletion", deleted)


async def test_work_queue_and_sync_metrics(tmp_path: Path) -> None:
    async with api(tmp_path) as client, job_controller(client) as running:
        job = await client.create(job_manifest("counted"))
        (pod,) = await _running(client, job, 1)
        await finish_pod(client, pod)
        await wait_for("Complete", lambda: _condition(client, "counted", "Complete"))
        assert running.metric("workqueue_adds_total", name="job") > 0
        assert running.metric("workqueue_work_duration_seconds_count", name="job") > 0
        assert running.metric("workqueue_queue_duration_seconds_count", name="job") > 0
        assert running.metric("workqueue_depth", name="job_orphan_pod") == 0
        assert running.metric("job_controller_job_syncs_total", completion_mode="NonIndexed",
                              result="success", action="podsCreated") >= 1
        assert running.metric("job_controller_jobs_finished_total", completion_mode="NonIndexed",
                              result="succeeded", reason="") == 1
        assert running.metric("job_controller_job_pods_finished_total",
                              completion_mode="NonIndexed", result="succeeded") == 1
        assert running.metric("controller_sync_duration_seconds_count", controller="job",
                              result="success") > 0


async def test_pod_replacement_policy(tmp_path: Path) -> None:
    async with api(tmp_path) as client, job_controller(client):
        eager = await client.create(job_manifest("eager"))
        patient = await client.create(job_manifest("patient", podReplacementPolicy="Failed"))
        (first_eager,) = await _running(client, eager, 1)
        (first_patient,) = await _running(client, patient, 1)
        for pod in (first_eager, first_patient):
            await client.delete(Pod, pod.metadata.name or "", "default")
        # TerminatingOrFailed: a pod being deleted is replaced at once and counts as failed.
        (replacement,) = await _running(client, eager, 1)
        assert replacement.metadata.uid != first_eager.metadata.uid
        await wait_for("failure counted", lambda: _failed(client, "eager", 1))
        # Failed: no replacement while the old pod is terminating; it shows in `terminating`.
        await wait_for("terminating 1", lambda: _terminating(client, "patient", 1))
        assert len(await job_pods(client, patient)) == 1
        await finish_pod(client, first_patient, exit_code=1)
        (second,) = await _running(client, patient, 1)
        assert second.metadata.uid != first_patient.metadata.uid


async def _failed(client: Client, name: str, n: int) -> bool:
    return (await _get(client, name)).status.failed == n


async def _terminating(client: Client, name: str, n: int) -> bool:
    return (await _get(client, name)).status.terminating == n

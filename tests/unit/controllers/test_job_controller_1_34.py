"""The Job controller's finish on a 1.34 cluster (against a real in-process API server that
applies 1.34's status rules): ``SuccessCriteriaMet`` before ``Complete``, ``FailureTarget``
before ``Failed``, and the final condition only once no pod is terminating. On 1.30 the
final condition comes at once, as before."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

from kubedra.api import batch
from kubedra.api.batch import Job
from kubedra.api.core import Pod
from kubedra.api.features import FeatureGates
from kubedra.api.release import R1_34
from kubedra.client.rest import Client
from tests.job_env import (
    FAST,
    MANAGED_BY_ON,
    api,
    finish_pod,
    job_controller,
    job_manifest,
    job_pods,
    run_pod,
    wait_for,
)

ON_1_34 = FeatureGates.for_release(R1_34)
FAST_1_34 = dataclasses.replace(FAST, gates=ON_1_34)
HOLD = "example.com/hold"


def _true(job: Job) -> list[batch.JobCondition]:
    return [c for c in job.status.conditions or () if c.status == "True"]


async def _with(client: Client, name: str, ctype: str) -> Job | None:
    job = await client.get(Job, name, "default")
    return job if any(c.type == ctype for c in _true(job)) else None


async def _active_pods(client: Client, job: Job, n: int) -> list[Pod]:
    async def active() -> list[Pod] | None:
        pods = [p for p in await job_pods(client, job)
                if p.status.phase not in ("Succeeded", "Failed")
                and p.metadata.deletion_timestamp is None]
        return pods if len(pods) == n else None
    pods: list[Pod] = await wait_for(f"{n} active pods", active)
    return pods


async def _set_finalizers(client: Client, pod: Pod, finalizers: list[str]) -> None:
    await client.patch(Pod, pod.metadata.name or "", {"metadata": {"finalizers": finalizers}},
                       namespace="default")


async def _released(client: Client, pod: Pod) -> bool:
    """The controller removed its tracking finalizer (only ours is left)."""
    current = await client.get(Pod, pod.metadata.name or "", "default")
    return batch.JOB_TRACKING_FINALIZER not in (current.metadata.finalizers or ())


async def _complete_job(client: Client) -> Job:
    job = await client.create(job_manifest("work", completions=1))
    (pod,) = await _active_pods(client, job, 1)
    await run_pod(client, pod)
    await finish_pod(client, pod)
    done: Job = await wait_for("Complete", lambda: _with(client, "work", "Complete"))
    return done


async def _failing_job_with_held_pod(client: Client) -> tuple[Job, Pod]:
    """Two running pods, backoffLimit 0; the second pod carries a finalizer of ours so it
    stays terminating once the controller deletes it; the first one fails."""
    job = await client.create(job_manifest("doomed", completions=2, parallelism=2,
                                           backoffLimit=0))
    first, second = await _active_pods(client, job, 2)
    await _set_finalizers(client, second, [*(second.metadata.finalizers or ()), HOLD])
    await run_pod(client, second)
    await finish_pod(client, first, exit_code=1)
    return job, second


async def test_complete_after_success_criteria_met_on_1_34(tmp_path: Path) -> None:
    async with api(tmp_path, ON_1_34) as client, job_controller(client, FAST_1_34):
        done = await _complete_job(client)
        met, complete = _true(done)
        assert (met.type, complete.type) == ("SuccessCriteriaMet", "Complete")
        for cond in (met, complete):
            assert (cond.reason, cond.message) == (
                "CompletionsReached", "Reached expected number of succeeded pods")
        assert done.status.completion_time == complete.last_transition_time
        assert (done.status.succeeded, done.status.active, done.status.terminating) == (1, 0, 0)


async def test_failed_waits_for_terminating_pods_on_1_34(tmp_path: Path) -> None:
    async with api(tmp_path, ON_1_34) as client, job_controller(client, FAST_1_34):
        _, held = await _failing_job_with_held_pod(client)
        target = await wait_for("FailureTarget", lambda: _with(client, "doomed", "FailureTarget"))
        (cond,) = _true(target)
        assert (cond.reason, cond.message) == (
            "BackoffLimitExceeded", "Job has reached the specified backoff limit")

        async def one_terminating() -> Job | None:
            job = await client.get(Job, "doomed", "default")
            return job if job.status.terminating == 1 else None
        await wait_for("terminating 1", one_terminating)
        await wait_for("finalizer released", lambda: _released(client, held))
        await asyncio.sleep(0.5)  # several sync periods: still no Failed
        job = await client.get(Job, "doomed", "default")
        assert [c.type for c in _true(job)] == ["FailureTarget"]
        assert job.status.terminating == 1
        await _set_finalizers(client, held, [])  # the pod goes away
        failed = await wait_for("Failed", lambda: _with(client, "doomed", "Failed"))
        assert [(c.type, c.reason) for c in _true(failed)] == [
            ("FailureTarget", "BackoffLimitExceeded"), ("Failed", "BackoffLimitExceeded")]
        assert (failed.status.terminating, failed.status.active) == (0, 0)
        assert failed.status.failed == 2
        assert failed.status.completion_time is None


async def test_final_conditions_at_once_on_1_30(tmp_path: Path) -> None:
    async with api(tmp_path, MANAGED_BY_ON) as client, job_controller(client, FAST):
        done = await _complete_job(client)
        assert [(c.type, c.reason) for c in _true(done)] == [("Complete", None)]
        _, held = await _failing_job_with_held_pod(client)
        failed = await wait_for("Failed", lambda: _with(client, "doomed", "Failed"))
        assert [c.type for c in _true(failed)] == ["Failed"]
        current = await client.get(Pod, held.metadata.name or "", "default")
        assert current.metadata.deletion_timestamp is not None, "Failed while terminating"
        await _set_finalizers(client, held, [])

"""Finalizer-based tracking of a Job's finished pods (``trackJobStatusAndRemoveFinalizers``,
``flushUncountedAndRemoveFinalizers``, ``enactJobFinished`` of ``job_controller.go``).

A finished pod's UID goes to ``status.uncountedTerminatedPods`` first, the status is written,
only then is its finalizer removed, and UIDs whose finalizer is gone move into
``succeeded``/``failed``; the terminal condition comes once nothing is left uncounted (and,
when the controller delays terminal conditions, once no pod is terminating). A crash at any
point therefore neither loses nor double-counts a pod.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime

from kubedra.api import batch
from kubedra.api.batch import Job, JobCondition, JobStatus
from kubedra.api.core import Pod
from kubedra.controllers.job import conditions, indexed
from kubedra.controllers.job import pods as podutil
from kubedra.controllers.job.backoff import BackoffRecord, BackoffStore
from kubedra.controllers.job.expectations import FinalizerExpectations
from kubedra.controllers.job.podcontrol import PodControl, Record, run_bounded
from kubedra.controllers.job.rules import JobRules
from kubedra.controllers.metrics import ControllerMetrics

MAX_UNCOUNTED_PODS = 500


@dataclass(slots=True)
class SyncContext:
    """``syncJobCtx``: what one sync knows about its Job."""

    job: Job
    pods: list[Pod]
    active: list[Pod]
    ready: int
    terminating: int | None
    uncounted_succeeded: set[str]
    uncounted_failed: set[str]
    expected_rm: frozenset[str]
    succeeded: int = 0
    failed: int = 0
    finished: JobCondition | None = None
    backoff: BackoffRecord | None = None
    prev_succeeded_indexes: set[int] = field(default_factory=set)
    succeeded_indexes: set[int] = field(default_factory=set)
    failed_indexes: set[int] | None = None
    delayed_deletion: dict[int, Pod] | None = None


class Tracker:
    def __init__(self, rules: JobRules, pod_control: PodControl,
                 update_status: Callable[[Job], Awaitable[Job]], record: Record,
                 metrics: ControllerMetrics, backoff: BackoffStore,
                 now: Callable[[], datetime]) -> None:
        self.rules = rules
        self.pod_control = pod_control
        self.update_status = update_status
        self.record = record
        self.metrics = metrics
        self.backoff = backoff
        self.now = now
        self.finalizer_expectations = FinalizerExpectations()

    async def track(self, key: str, ctx: SyncContext, needs_flush: bool) -> None:
        """Count finished pods through their finalizers; add the terminal condition once
        nothing is left uncounted."""
        job = ctx.job
        st = job.status
        uncounted = st.uncounted_terminated_pods
        assert uncounted is not None
        is_indexed = batch.is_indexed(job)
        pods = sorted(ctx.pods, key=podutil.completion_index) if is_indexed else ctx.pods
        with_finalizer = {p.metadata.uid or "" for p in pods if podutil.has_tracking_finalizer(p)
                          and (p.metadata.uid or "") not in ctx.expected_rm}
        old_counts = (st.succeeded, st.failed)
        needs_flush |= count_released(st, with_finalizer)
        to_release: list[Pod] = []
        new_indexes: list[int] = []
        by_action: dict[str, int] = {}
        hit_cap = False
        for pod in pods:
            uid = pod.metadata.uid or ""
            if not podutil.has_tracking_finalizer(pod) or uid in ctx.expected_rm:
                continue
            failed = self.rules.is_pod_failed(pod, job)
            if not self._can_release(ctx, pod, failed):
                continue
            to_release.append(pod)
            if pod.status.phase == "Succeeded" and uid not in ctx.uncounted_failed:
                if is_indexed:
                    ix = podutil.completion_index(pod)
                    if (self.rules.valid_index(job, pod) and ix not in ctx.prev_succeeded_indexes
                            and ix not in (ctx.failed_indexes or ())):
                        new_indexes.append(ix)
                elif uid not in ctx.uncounted_succeeded:
                    ctx.uncounted_succeeded.add(uid)
                    uncounted.succeeded = [*(uncounted.succeeded or ()), uid]
            elif self._newly_failed(ctx, pod, failed):
                verdict = self.rules.policy(job, pod)
                if verdict.action is not None:
                    by_action[verdict.action] = by_action.get(verdict.action, 0) + 1
                if verdict.count_failed:
                    ctx.uncounted_failed.add(uid)
                    uncounted.failed = [*(uncounted.failed or ()), uid]
            if (len(new_indexes) + len(uncounted.succeeded or ())
                    + len(uncounted.failed or ())) >= MAX_UNCOUNTED_PODS:
                hit_cap = True
                break
        if is_indexed:
            ctx.succeeded_indexes = ctx.prev_succeeded_indexes | set(new_indexes)
            completed = indexed.format_indexes(ctx.succeeded_indexes)
            needs_flush |= completed != st.completed_indexes
            st.succeeded = len(ctx.succeeded_indexes)
            st.completed_indexes = completed
            failed_text = (indexed.format_indexes(ctx.failed_indexes)
                           if ctx.failed_indexes is not None else None)
            if failed_text != st.failed_indexes:
                st.failed_indexes = failed_text
                needs_flush = True
        if ctx.finished is not None and ctx.finished.type == batch.JOB_FAILURE_TARGET:
            st.conditions = [*(st.conditions or ()), ctx.finished]
            needs_flush = True
            ctx.finished = conditions.new_condition(batch.JOB_FAILED, "True",
                                                    ctx.finished.reason or "",
                                                    ctx.finished.message or "", self.now())
        if ctx.finished is not None and ctx.finished.type == batch.JOB_SUCCESS_CRITERIA_MET:
            if conditions.find(st.conditions, batch.JOB_SUCCESS_CRITERIA_MET) is None:
                st.conditions = [*(st.conditions or ()), ctx.finished]
                needs_flush = True
            ctx.finished = conditions.new_condition(batch.JOB_COMPLETE, "True",
                                                    ctx.finished.reason or "",
                                                    ctx.finished.message or "", self.now())
        needs_flush, old_counts = await self._flush_and_release(
            key, ctx, to_release, with_finalizer, old_counts, by_action, needs_flush)
        finished = not hit_cap and self._enact_finished(ctx)
        if needs_flush or finished:
            ctx.job = await self.update_status(ctx.job)
            if finished:
                self._record_finished(ctx.job, ctx.finished)
            self._record_pods_finished(ctx.job, old_counts)

    def _newly_failed(self, ctx: SyncContext, pod: Pod, failed: bool) -> bool:
        """A failed pod, or any unfinished one of a failing Job, not yet uncounted."""
        failing = ctx.finished is not None and ctx.finished.type != batch.JOB_SUCCESS_CRITERIA_MET
        return ((failed or failing) and (pod.metadata.uid or "") not in ctx.uncounted_failed
                and (not batch.is_indexed(ctx.job) or self.rules.valid_index(ctx.job, pod)))

    def _can_release(self, ctx: SyncContext, pod: Pod, failed: bool) -> bool:
        if failed or ctx.finished is not None:
            return True
        if not podutil.is_terminal(pod):
            return False
        held = (ctx.delayed_deletion or {}).get(podutil.completion_index(pod))
        return held is None or held.metadata.uid != pod.metadata.uid

    async def _flush_and_release(self, key: str, ctx: SyncContext, to_release: list[Pod],
                                 with_finalizer: set[str], old_counts: tuple[int, int],
                                 by_action: dict[str, int],
                                 needs_flush: bool) -> tuple[bool, tuple[int, int]]:
        """Write the uncounted UIDs, then remove finalizers; returns whether the status
        still needs a write, and the counters last written."""
        if needs_flush:
            ctx.job = await self.update_status(ctx.job)
            assert ctx.backoff is not None
            self.backoff.update(ctx.backoff)
            self._record_pods_finished(ctx.job, old_counts)
            old_counts = (ctx.job.status.succeeded, ctx.job.status.failed)
            needs_flush = False
        for action, n in by_action.items():
            self.metrics.pod_failures_by_policy.labels(action).inc(n)
        error: Exception | None = None
        if to_release:
            self.finalizer_expectations.expect_removed(
                key, [p.metadata.uid or "" for p in to_release])

            async def release(pod: Pod) -> None:
                try:
                    await self.pod_control.remove_finalizer(pod)
                except Exception:
                    self.finalizer_expectations.removal_observed(key, pod.metadata.uid or "")
                    raise

            results = await run_bounded(release(p) for p in to_release)
            for pod, result in zip(to_release, results, strict=True):
                if result is None:
                    with_finalizer.discard(pod.metadata.uid or "")
                elif error is None:
                    error = result
        if count_released(ctx.job.status, with_finalizer):
            needs_flush = True
        if error is not None:
            if needs_flush:
                ctx.job = await self.update_status(ctx.job)
            raise error
        return needs_flush, old_counts

    def _enact_finished(self, ctx: SyncContext) -> bool:
        cond = ctx.finished
        if cond is None:
            return False
        st = ctx.job.status
        uncounted = st.uncounted_terminated_pods
        if uncounted is not None and (uncounted.succeeded or uncounted.failed):
            return False
        if self.rules.delays_terminal_condition and (ctx.terminating or 0) > 0:
            return False
        st.conditions, _ = conditions.ensure_status(st.conditions, cond.type, cond.status,
                                                    cond.reason or "", cond.message or "",
                                                    self.now())
        if cond.type == batch.JOB_COMPLETE:
            done = conditions.find(st.conditions, batch.JOB_COMPLETE)
            st.completion_time = done.last_transition_time if done else None
        return True

    def _record_finished(self, job: Job, cond: JobCondition | None) -> None:
        mode = job.spec.completion_mode or batch.NON_INDEXED_COMPLETION
        if cond is None:
            return
        if cond.type == batch.JOB_COMPLETE:
            self.record(job, "Normal", "Completed", "Job completed")
            self.metrics.jobs_finished.labels(mode, "succeeded", cond.reason or "").inc()
            if job.spec.completions is not None and job.status.succeeded > job.spec.completions:
                self.record(job, "Warning", "TooManySucceededPods",
                            "Too many succeeded pods running after completion count reached")
        else:
            self.record(job, "Warning", cond.reason or "", cond.message or "")
            self.metrics.jobs_finished.labels(mode, "failed", cond.reason or "").inc()

    def _record_pods_finished(self, job: Job, old: tuple[int, int]) -> None:
        mode = job.spec.completion_mode or batch.NON_INDEXED_COMPLETION
        succeeded, failed = job.status.succeeded - old[0], job.status.failed - old[1]
        if succeeded > 0:
            self.metrics.job_pods_finished.labels(mode, "succeeded").inc(succeeded)
        if failed > 0:
            self.metrics.job_pods_finished.labels(mode, "failed").inc(failed)


def count_released(st: JobStatus, with_finalizer: set[str]) -> bool:
    """``cleanUncountedPodsWithoutFinalizers``: uncounted UIDs whose finalizer is gone move
    into the counters."""
    uncounted = st.uncounted_terminated_pods
    assert uncounted is not None
    changed = False
    kept = [u for u in uncounted.succeeded or () if u in with_finalizer]
    if len(kept) != len(uncounted.succeeded or ()):
        st.succeeded += len(uncounted.succeeded or ()) - len(kept)
        uncounted.succeeded = kept or None
        changed = True
    kept = [u for u in uncounted.failed or () if u in with_finalizer]
    if len(kept) != len(uncounted.failed or ()):
        st.failed += len(uncounted.failed or ()) - len(kept)
        uncounted.failed = kept or None
        changed = True
    return changed

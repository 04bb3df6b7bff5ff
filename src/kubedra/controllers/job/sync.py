"""One reconciliation of a built-in-managed Job (``syncJob`` and ``manageJob`` of
``pkg/controller/job/job_controller.go``): count its pods, detect failure (pod failure
policy, backoffLimit, deadline, failed indexes) or success (completions, success policy),
create or delete pods (slow start, re-creation back-off, suspend), then hand the counting of
finished pods to :mod:`~kubedra.controllers.job.tracking`. v1.30 writes ``Failed`` /
``Complete`` directly; from v1.31 (:attr:`JobRules.delays_terminal_condition`) every finish
goes through ``FailureTarget`` / ``SuccessCriteriaMet`` first.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime

from kubedra.api import batch, codec
from kubedra.api.batch import Job, JobCondition, UncountedTerminatedPods
from kubedra.api.core import Pod, PodTemplateSpec
from kubedra.api.features import FeatureGates
from kubedra.controllers.job import conditions, indexed
from kubedra.controllers.job import pods as podutil
from kubedra.controllers.job.backoff import BackoffStore, remaining_for_failures
from kubedra.controllers.job.expectations import ControllerExpectations
from kubedra.controllers.job.podcontrol import (
    PodControl,
    Record,
    job_template,
    pod_from_template,
    run_bounded,
)
from kubedra.controllers.job.rules import JobRules, absolute_failures
from kubedra.controllers.job.tracking import SyncContext, Tracker
from kubedra.controllers.metrics import ControllerMetrics

MAX_POD_CREATE_DELETE_PER_SYNC = 500
SLOW_START_INITIAL_BATCH = 1


@dataclass(frozen=True, slots=True)
class SyncSettings:
    gates: FeatureGates = field(default_factory=FeatureGates)
    pod_backoff_base: float = 10.0
    pod_backoff_max: float = 600.0


class JobSync:
    def __init__(self, pod_control: PodControl, update_status: Callable[[Job], Awaitable[Job]],
                 requeue: Callable[[str, float], None], record: Record,
                 metrics: ControllerMetrics, settings: SyncSettings,
                 now: Callable[[], datetime]) -> None:
        self.pod_control = pod_control
        self.update_status = update_status
        self.requeue = requeue
        self.record = record
        self.metrics = metrics
        self.settings = settings
        self.gates = settings.gates
        self.now = now
        self.rules = JobRules(settings.gates)
        self.expectations = ControllerExpectations()
        self.backoff = BackoffStore()
        self.tracker = Tracker(self.rules, pod_control, update_status, record, metrics,
                               self.backoff, now)
        self.finalizer_expectations = self.tracker.finalizer_expectations

    def forget(self, key: str) -> None:
        """The Job is gone: drop everything kept for it."""
        self.expectations.delete(key)
        self.finalizer_expectations.delete(key)
        self.backoff.remove(key)

    # --- syncJob --------------------------------------------------------------------------------

    async def reconcile(self, key: str, shared: Job, pods: list[Pod]) -> str:
        """Reconcile ``shared`` (not modified) against its pods; returns the sync action."""
        job = codec.decode(codec.encode(shared), Job)
        st = job.status
        if st.uncounted_terminated_pods is None:
            st.uncounted_terminated_pods = UncountedTerminatedPods()
        satisfied = self.expectations.satisfied(key)
        active = [p for p in pods if podutil.is_active(p)]
        uncounted = st.uncounted_terminated_pods
        ctx = SyncContext(
            job=job, pods=pods, active=active,
            ready=sum(1 for p in active if podutil.is_ready(p)),
            terminating=(sum(1 for p in pods if podutil.is_terminating(p))
                         if self.rules.tracks_terminating(job) else None),
            uncounted_succeeded=set(uncounted.succeeded or ()),
            uncounted_failed=set(uncounted.failed or ()),
            expected_rm=self.finalizer_expectations.expected(key))
        n_active = len(active)
        new_succeeded = self._new_finished(ctx, ctx.uncounted_succeeded,
                                           lambda p: p.status.phase == "Succeeded")
        new_failed = self._new_finished(ctx, ctx.uncounted_failed,
                                        lambda p: self.rules.is_pod_failed(p, job))
        ctx.succeeded = st.succeeded + len(new_succeeded) + len(ctx.uncounted_succeeded)
        counted = sum(1 for p in new_failed if self.rules.policy(job, p).count_failed)
        ctx.failed = st.failed + counted + len(ctx.uncounted_failed)
        now = self.now()
        if st.start_time is None and not job.spec.suspend:
            st.start_time = podutil.format_time(now)
        ctx.backoff = self.backoff.new_record(key, new_succeeded, new_failed)
        self._detect_failure(key, ctx, now)
        if batch.is_indexed(job):
            self._indexed_progress(ctx, now)
        action = "reconciling"
        manage_error: Exception | None = None
        suspend_changed = False
        if ctx.finished is not None:
            ready_deleted, deleted, manage_error = await self._delete_active(job, ctx.active)
            if deleted != n_active or not satisfied:
                ctx.finished = None  # pods may still hold finalizers or be unseen
            n_active -= deleted
            if ctx.terminating is not None:
                ctx.terminating += deleted
            ctx.ready -= ready_deleted
        else:
            managed = False
            if satisfied and job.metadata.deletion_timestamp is None:
                n_active, action, manage_error = await self._manage(key, ctx)
                managed = True
            if job.spec.completions is None:
                complete = ctx.succeeded > 0 and n_active == 0
            else:
                complete = ctx.succeeded >= job.spec.completions and n_active == 0
            if complete:
                ctx.finished = self._success(now)
            elif managed:
                suspend_changed = self._suspend_condition(job, now)
        needs_flush = (suspend_changed or n_active != st.active or ctx.ready != st.ready
                       or ctx.terminating != st.terminating)
        st.active, st.ready, st.terminating = n_active, ctx.ready, ctx.terminating
        await self.tracker.track(key, ctx, needs_flush)
        if manage_error is not None:
            raise manage_error
        return action

    def _new_finished(self, ctx: SyncContext, uncounted: set[str],
                      keep: Callable[[Pod], bool]) -> list[Pod]:
        """``getValidPodsWithFilter``: pods still holding the finalizer, not yet uncounted."""
        job = ctx.job
        out = []
        for p in ctx.pods:
            uid = p.metadata.uid or ""
            if (not podutil.has_tracking_finalizer(p) or uid in uncounted
                    or uid in ctx.expected_rm):
                continue
            if batch.is_indexed(job) and not self.rules.valid_index(job, p):
                continue
            if keep(p):
                out.append(p)
        return out

    def _failure(self, reason: str, message: str, now: datetime) -> JobCondition:
        """``newFailureCondition``: the interim ``FailureTarget`` when terminal conditions
        are delayed, else ``Failed``."""
        ctype = (batch.JOB_FAILURE_TARGET if self.rules.delays_terminal_condition
                 else batch.JOB_FAILED)
        return conditions.new_condition(ctype, "True", reason, message, now)

    def _success(self, now: datetime) -> JobCondition:
        """``newSuccessCondition``: the interim ``SuccessCriteriaMet`` when terminal
        conditions are delayed, else ``Complete`` (v1.30: without reason)."""
        if not self.rules.delays_terminal_condition:
            return conditions.new_condition(batch.JOB_COMPLETE, "True", "", "", now)
        reason, message = (("CompletionsReached", "Reached expected number of succeeded pods")
                           if self.gates.job_success_policy else ("", ""))
        return conditions.new_condition(batch.JOB_SUCCESS_CRITERIA_MET, "True", reason,
                                        message, now)

    def _detect_failure(self, key: str, ctx: SyncContext, now: datetime) -> None:
        job = ctx.job
        if self.rules.delays_terminal_condition and self.gates.job_success_policy:
            # Success was already decided in an earlier sync: no failure check may undo it.
            met = conditions.find(job.status.conditions, batch.JOB_SUCCESS_CRITERIA_MET)
            if met is not None and met.status == "True":
                ctx.finished = met
                return
        if self.gates.job_pod_failure_policy:
            target = conditions.find(job.status.conditions, batch.JOB_FAILURE_TARGET)
            if target is not None and target.status == "True":
                ctx.finished = conditions.new_condition(
                    batch.JOB_FAILED, "True", target.reason or "", target.message or "", now)
                return
            message = self._fail_job_message(job, ctx.pods)
            if message is not None:
                ctx.finished = conditions.new_condition(
                    batch.JOB_FAILURE_TARGET, "True", "PodFailurePolicy", message, now)
                return
        backoff_limit = job.spec.backoff_limit if job.spec.backoff_limit is not None else 6
        if ctx.failed > backoff_limit or self._past_backoff_on_failure(job, ctx.pods):
            ctx.finished = self._failure("BackoffLimitExceeded",
                                         "Job has reached the specified backoff limit", now)
        elif self._past_deadline(job, now):
            ctx.finished = self._failure("DeadlineExceeded",
                                         "Job was active longer than specified deadline", now)
        elif job.spec.active_deadline_seconds is not None and not job.spec.suspend:
            start = podutil.parse_time(job.status.start_time) or now
            left = job.spec.active_deadline_seconds - (now - start).total_seconds()
            self.requeue(key, max(left, 0.0))

    def _fail_job_message(self, job: Job, pods: list[Pod]) -> str | None:
        if job.spec.pod_failure_policy is None:
            return None
        for p in pods:
            if self.rules.is_pod_failed(p, job):
                message = self.rules.policy(job, p).fail_job_message
                if message is not None:
                    return message
        return None

    @staticmethod
    def _past_backoff_on_failure(job: Job, pods: list[Pod]) -> bool:
        """restartPolicy OnFailure: container restarts of running pods count as failures."""
        if job.spec.template.spec.restart_policy != "OnFailure":
            return False
        restarts = sum(podutil.restart_count(p) for p in pods
                       if p.status.phase in ("Running", "Pending"))
        limit = job.spec.backoff_limit if job.spec.backoff_limit is not None else 6
        return restarts > 0 if limit == 0 else restarts >= limit

    @staticmethod
    def _past_deadline(job: Job, now: datetime) -> bool:
        start = podutil.parse_time(job.status.start_time)
        if job.spec.active_deadline_seconds is None or start is None or job.spec.suspend:
            return False
        return (now - start).total_seconds() >= job.spec.active_deadline_seconds

    def _indexed_progress(self, ctx: SyncContext, now: datetime) -> None:
        """Succeeded/failed index sets, per-index back-off state, the success policy."""
        job = ctx.job
        completions = job.spec.completions or 0
        ctx.prev_succeeded_indexes = indexed.parse_indexes(job.status.completed_indexes,
                                                           completions)
        ctx.succeeded_indexes = ctx.prev_succeeded_indexes | {
            podutil.completion_index(p) for p in ctx.pods
            if p.status.phase == "Succeeded" and self.rules.valid_index(job, p)
            and podutil.has_tracking_finalizer(p)}
        ctx.succeeded = len(ctx.succeeded_indexes)
        if job.spec.backoff_limit_per_index is not None and self.gates.job_backoff_limit_per_index:
            ctx.failed_indexes = indexed.parse_indexes(job.status.failed_indexes, completions) | {
                podutil.completion_index(p) for p in ctx.pods
                if self.rules.valid_index(job, p) and self.rules.index_failed(job, p)}
            if ctx.finished is None:
                n_failed = len(ctx.failed_indexes)
                if job.spec.max_failed_indexes is not None and (
                        n_failed > job.spec.max_failed_indexes):
                    ctx.finished = self._failure(
                        "MaxFailedIndexesExceeded",
                        "Job has exceeded the specified maximal number of failed indexes", now)
                elif n_failed and n_failed + len(ctx.succeeded_indexes) >= completions:
                    ctx.finished = self._failure("FailedIndexes", "Job has failed indexes", now)
            ctx.delayed_deletion = self._delayed_deletion(ctx)
        if self.gates.job_success_policy and ctx.finished is None:
            met = conditions.find(job.status.conditions, batch.JOB_SUCCESS_CRITERIA_MET)
            if met is not None and met.status == "True":
                ctx.finished = conditions.new_condition(
                    batch.JOB_COMPLETE, "True", met.reason or "", met.message or "", now)
            else:
                message = self._success_policy_message(job, ctx.succeeded_indexes)
                if message is not None:
                    ctx.finished = conditions.new_condition(
                        batch.JOB_SUCCESS_CRITERIA_MET, "True", "SuccessPolicy", message, now)

    def _delayed_deletion(self, ctx: SyncContext) -> dict[int, Pod]:
        """Per pending index, the last failed pod: its finalizer is held until its
        replacement exists, since the replacement's failure count is derived from it."""
        job = ctx.job
        busy = {podutil.completion_index(p) for p in ctx.active}
        held: dict[int, Pod] = {}
        for p in self._new_finished(ctx, set(), lambda q: self.rules.is_pod_failed(q, job)):
            ix = podutil.completion_index(p)
            if ix in ctx.succeeded_indexes or ix in (ctx.failed_indexes or ()) or ix in busy:
                continue
            last = held.get(ix)
            if last is None or (absolute_failures(last) <= absolute_failures(p)
                                and podutil.finished_time(p) >= podutil.finished_time(last)):
                held[ix] = p
        return held

    @staticmethod
    def _success_policy_message(job: Job, succeeded: set[int]) -> str | None:
        policy = job.spec.success_policy
        if policy is None or not succeeded:
            return None
        completions = job.spec.completions or 0
        for index, rule in enumerate(policy.rules):
            if rule.succeeded_indexes is not None:
                required = indexed.parse_indexes(rule.succeeded_indexes, completions)
                if not required:
                    continue
                done = len(required & succeeded)
                if (done >= rule.succeeded_count if rule.succeeded_count is not None
                        else done == len(required)):
                    return f"Matched rules at index {index}"
            elif rule.succeeded_count is not None and len(succeeded) >= rule.succeeded_count:
                return f"Matched rules at index {index}"
        return None

    def _suspend_condition(self, job: Job, now: datetime) -> bool:
        """``Suspended`` True while suspended; on resume False and startTime reset to now."""
        st = job.status
        if job.spec.suspend:
            st.conditions, changed = conditions.ensure_status(
                st.conditions, batch.JOB_SUSPENDED, "True", "JobSuspended", "Job suspended", now)
            if changed:
                self.record(job, "Normal", "Suspended", "Job suspended")
            return changed
        st.conditions, changed = conditions.ensure_status(
            st.conditions, batch.JOB_SUSPENDED, "False", "JobResumed", "Job resumed", now)
        if changed:
            self.record(job, "Normal", "Resumed", "Job resumed")
            st.start_time = podutil.format_time(now)
        return changed

    # --- manageJob ------------------------------------------------------------------------------

    async def _manage(self, key: str, ctx: SyncContext) -> tuple[int, str, Exception | None]:
        job = ctx.job
        active = len(ctx.active)
        parallelism = job.spec.parallelism if job.spec.parallelism is not None else 1
        if job.spec.suspend:
            removed, error = await self._delete_pods(key, ctx, ctx.active)
            return active - removed, "podsDeleted", error
        if job.spec.completions is None:
            want = active if ctx.succeeded > 0 else parallelism
        else:
            want = max(min(job.spec.completions - ctx.succeeded, parallelism), 0)
        doomed = self._for_removal(job, ctx.active, max(active - want, 0))
        doomed = doomed[:MAX_POD_CREATE_DELETE_PER_SYNC]
        if doomed:
            removed, error = await self._delete_pods(key, ctx, doomed)
            return active - removed, "podsDeleted", error
        if active >= want:
            return active, "trackingStatus", None
        assert ctx.backoff is not None
        wait = ctx.backoff.remaining(self.now(), self.settings.pod_backoff_base,
                                     self.settings.pod_backoff_max)
        if wait > 0:
            self.requeue(key, wait)
            return 0, "podsCreated", None
        terminating = 0
        if self.rules.only_replace_failed(job):
            terminating = (ctx.terminating if ctx.terminating is not None
                           else sum(1 for p in ctx.pods if podutil.is_terminating(p)))
        diff = min(want - terminating - active, MAX_POD_CREATE_DELETE_PER_SYNC)
        if diff <= 0:
            return active, "trackingStatus", None
        indexes: list[int | None] = [None] * diff
        if batch.is_indexed(job):
            chosen = self._pending_indexes(ctx, diff)
            if job.spec.backoff_limit_per_index is not None and ctx.delayed_deletion is not None:
                chosen, wait = self._ready_indexes(chosen, ctx.delayed_deletion)
                if wait > 0:
                    self.requeue(key, wait)
                    return 0, "podsCreated", None
            indexes = list(chosen)
        created, error = await self._create_pods(key, ctx, indexes)
        return active + created, "podsCreated", error

    def _for_removal(self, job: Job, active: list[Pod], at_least: int) -> list[Pod]:
        """``activePodsForRemoval``: duplicate or out-of-range indexes first, then the
        cheapest pods."""
        remove: list[Pod] = []
        left = active
        if batch.is_indexed(job):
            left = []
            seen: set[int] = set()
            for p in sorted(active, key=podutil.removal_order, reverse=True):
                ix = podutil.completion_index(p)
                if not self.rules.valid_index(job, p) or ix in seen:
                    remove.append(p)
                else:
                    seen.add(ix)
                    left.append(p)
        if len(remove) < at_least:
            remove += sorted(left, key=podutil.removal_order)[:at_least - len(remove)]
        return remove

    def _pending_indexes(self, ctx: SyncContext, count: int) -> list[int]:
        busy = ctx.succeeded_indexes | {podutil.completion_index(p) for p in ctx.active}
        busy |= ctx.failed_indexes or set()
        return indexed.first_pending(count, ctx.job.spec.completions or 0, busy)

    def _ready_indexes(self, chosen: list[int], held: dict[int, Pod]) -> tuple[list[int], float]:
        """Indexes whose per-index back-off is over; else the shortest remaining wait."""
        now = self.now()
        ready: list[int] = []
        waits: list[float] = []
        for ix in chosen:
            last = held.get(ix)
            wait = 0.0 if last is None else remaining_for_failures(
                now, self.settings.pod_backoff_base, self.settings.pod_backoff_max,
                absolute_failures(last) + 1, podutil.finished_time(last))
            if wait == 0:
                ready.append(ix)
            else:
                waits.append(wait)
        return (ready, 0.0) if ready else ([], min(waits, default=0.0))

    async def _create_pods(self, key: str, ctx: SyncContext,
                           indexes: list[int | None]) -> tuple[int, Exception | None]:
        """Create in slow-start batches (1, 2, 4, ...); stop at the first failing batch."""
        job = ctx.job
        name = job.metadata.name or ""
        template = job_template(job)
        if batch.is_indexed(job):
            indexed.add_index_env(template)
        self.expectations.expect_creations(key, len(indexes))
        created = 0
        batch_size = min(len(indexes), SLOW_START_INITIAL_BATCH)
        pending = list(indexes)
        while pending:
            wave, pending = pending[:batch_size], pending[batch_size:]
            results = await asyncio.gather(
                *(self._create_one(job, template, name, ix, ctx) for ix in wave),
                return_exceptions=True)
            errors = [r for r in results if isinstance(r, BaseException)]
            for _ in errors:
                self.expectations.creation_observed(key)
            created += len(wave) - len(errors)
            if errors:
                for _ in pending:
                    self.expectations.creation_observed(key)
                first = errors[0]
                return created, first if isinstance(first, Exception) else None
            batch_size = min(2 * batch_size, len(pending))
        return created, None

    async def _create_one(self, job: Job, template: PodTemplateSpec, name: str,
                          index: int | None, ctx: SyncContext) -> None:
        if index is None:
            await self.pod_control.create(job, pod_from_template(job, template, f"{name}-"))
            return
        own = codec.decode(codec.encode(template), PodTemplateSpec)
        indexed.mark_index(own, name, index, self.gates.pod_index_label)
        if job.spec.backoff_limit_per_index is not None and ctx.delayed_deletion is not None:
            self._add_failure_counts(job, own, ctx.delayed_deletion.get(index))
        await self.pod_control.create(job, pod_from_template(
            job, own, indexed.generate_name(name, index)))

    def _add_failure_counts(self, job: Job, template: PodTemplateSpec,
                            replaced: Pod | None) -> None:
        """The index's failure counts, carried from the pod being replaced."""
        failures = ignored = 0
        if replaced is not None:
            failures = podutil.index_failure_count(replaced)
            ignored = podutil.index_ignored_failure_count(replaced)
            if self.rules.policy(job, replaced).count_failed:
                failures += 1
            else:
                ignored += 1
        notes = dict(template.metadata.annotations or {})
        notes[podutil.INDEX_FAILURE_COUNT_ANNOTATION] = str(failures)
        if ignored:
            notes[podutil.INDEX_IGNORED_FAILURE_COUNT_ANNOTATION] = str(ignored)
        template.metadata.annotations = notes

    async def _delete_pods(self, key: str, ctx: SyncContext,
                           doomed: list[Pod]) -> tuple[int, Exception | None]:
        """``deleteJobPods``: drop the finalizer first (these pods are not failures), then
        delete. Returns how many went and the first error."""
        self.expectations.expect_deletions(key, len(doomed))
        job = ctx.job

        async def one(pod: Pod) -> None:
            try:
                await self.pod_control.remove_finalizer(pod)
                await self.pod_control.delete(job, pod)
            except Exception:
                self.expectations.deletion_observed(key)
                raise

        results = await run_bounded(one(p) for p in doomed)
        removed = [p for p, r in zip(doomed, results, strict=True) if r is None]
        if ctx.terminating is not None:
            ctx.terminating += len(removed)
        ctx.ready -= sum(1 for p in removed if podutil.is_ready(p))
        errors = [r for r in results if r is not None]
        return len(removed), errors[0] if errors else None

    async def _delete_active(self, job: Job,
                             active: list[Pod]) -> tuple[int, int, Exception | None]:
        """``deleteActivePods`` of a finishing Job: the finalizers stay, so these pods are
        counted as failed."""
        results = await run_bounded(self.pod_control.delete(job, p) for p in active)
        deleted = [p for p, r in zip(active, results, strict=True) if r is None]
        errors = [r for r in results if r is not None]
        return (sum(1 for p in deleted if podutil.is_ready(p)), len(deleted),
                errors[0] if errors else None)



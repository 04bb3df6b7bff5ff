"""The Job controller (``pkg/controller/job/job_controller.go``, v1.30): informers on Jobs and
Pods, a rate-limited queue of Jobs and one of orphan pods, and the three places where
``spec.managedBy`` makes it step aside (spec §5.2):

* :meth:`JobController.sync_job` skips an externally managed Job, decided on the object read
  at sync time (a queued key may now name a recreated Job);
* :meth:`JobController.sync_orphan_pod` keeps the tracking finalizer of pods whose Job is
  externally managed, but removes it once that Job is gone;
* the Job add handler counts externally managed Jobs in
  ``job_controller_jobs_by_external_controller_total``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from kubedra.api import batch
from kubedra.api.batch import Job
from kubedra.api.core import Pod
from kubedra.api.features import FeatureGates
from kubedra.api.meta import OwnerReference, TypedObject
from kubedra.client.events import EventRecorder
from kubedra.client.informer import Informer, object_key, run_informed
from kubedra.client.mutationcache import MutationCache
from kubedra.client.rest import Client
from kubedra.client.workqueue import WorkQueue
from kubedra.controllers.job import pods as podutil
from kubedra.controllers.job.podcontrol import PodControl
from kubedra.controllers.job.sync import JobSync, SyncSettings
from kubedra.controllers.metrics import ControllerMetrics, controller_metrics

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class JobControllerConfig:
    gates: FeatureGates = field(default_factory=FeatureGates)
    workers: int = 5
    sync_batch_period: float = 1.0
    """Pod events and status-only Job updates are folded into one sync this much later."""
    pod_backoff_base: float = 10.0
    pod_backoff_max: float = 600.0
    api_backoff_base: float = 1.0
    api_backoff_max: float = 60.0


def managed_by_external_controller(job: Job, gates: FeatureGates) -> str | None:
    """``managedByExternalController``: the external controller's name, or None when the
    built-in controller reconciles (gate off, field unset or the reserved value)."""
    managed_by = job.spec.managed_by
    if gates.job_managed_by and managed_by is not None and (
            managed_by != batch.JOB_CONTROLLER_NAME):
        return managed_by
    return None


def _now() -> datetime:
    return datetime.now(UTC)


class JobController:
    def __init__(self, client: Client, config: JobControllerConfig | None = None, *,
                 jobs: Informer[Job] | None = None, pods: Informer[Pod] | None = None,
                 metrics: ControllerMetrics | None = None,
                 now: Callable[[], datetime] = _now) -> None:
        self.client = client
        self.config = config or JobControllerConfig()
        self.gates = self.config.gates
        self.metrics = metrics or controller_metrics()
        self.jobs = jobs if jobs is not None else Informer(client, Job)
        self.pods = pods if pods is not None else Informer(client, Pod)
        cfg = self.config
        self.queue = WorkQueue("job", base_delay=cfg.api_backoff_base,
                               max_delay=cfg.api_backoff_max, metrics=self.metrics.queue)
        self.orphan_queue = WorkQueue("job_orphan_pod", base_delay=cfg.api_backoff_base,
                                      max_delay=cfg.api_backoff_max, metrics=self.metrics.queue)
        self.events = EventRecorder(client, "job-controller")
        self._event_tasks: set[asyncio.Task[None]] = set()
        self._pods_by_job: dict[str, dict[str, Pod]] = {}  # controller uid -> key -> pod
        self._owner_of: dict[str, str] = {}  # pod key -> controller uid
        self._written: MutationCache[Job] = MutationCache()  # our status writes, until watched
        self.syncer = JobSync(
            PodControl(client, self.record), self._update_status,
            self.queue.add_after, self.record, self.metrics,
            SyncSettings(cfg.gates, cfg.pod_backoff_base, cfg.pod_backoff_max), now)
        self._wire()

    def record(self, obj: TypedObject, event_type: str, reason: str, message: str) -> None:
        """Record an event without making the sync wait for it."""
        task = asyncio.get_running_loop().create_task(
            self.events.record(obj, event_type, reason, message))
        self._event_tasks.add(task)
        task.add_done_callback(self._event_tasks.discard)

    async def _update_status(self, job: Job) -> Job:
        return await self._written.write(job, self.client.update_status)

    # --- informer handlers ----------------------------------------------------------------

    def _wire(self) -> None:
        self.jobs.add_handler(on_add=self._add_job, on_update=self._update_job,
                              on_delete=self._delete_job)
        self.pods.add_handler(on_add=self._add_pod, on_update=self._update_pod,
                              on_delete=lambda pod: self._delete_pod(pod, final=True))

    def _add_job(self, job: Job) -> None:
        self.queue.add(object_key(job))
        name = managed_by_external_controller(job, self.gates)
        if name is not None:
            self.metrics.jobs_by_external_controller.labels(name).inc()

    def _update_job(self, old: Job, cur: Job) -> None:
        key = object_key(cur)
        self._written.observed(cur)
        if cur.metadata.generation == old.metadata.generation:
            self.queue.add_after(key, self.config.sync_batch_period)
        else:
            self.queue.add(key)
        if batch.is_job_finished(cur):
            self._cleanup_pod_finalizers(cur)
        start = podutil.parse_time(cur.status.start_time)
        ads = cur.spec.active_deadline_seconds
        if start is not None and ads is not None and ads != old.spec.active_deadline_seconds:
            self.queue.add_after(key, ads - (_now() - start).total_seconds())

    def _delete_job(self, job: Job) -> None:
        self._written.forget(job)
        self.queue.add(object_key(job))
        self._cleanup_pod_finalizers(job)

    def _cleanup_pod_finalizers(self, job: Job) -> None:
        for pod in self.pods_of(job):
            if podutil.has_tracking_finalizer(pod):
                self.orphan_queue.add(object_key(pod))

    def _resolve(self, namespace: str | None, ref: OwnerReference) -> Job | None:
        """The Job a controller reference names, if it is the same (UID) Job."""
        if not podutil.is_job_ref(ref):
            return None
        job = self.jobs.get(ref.name, namespace)
        return job if job is not None and job.metadata.uid == ref.uid else None

    def _index(self, pod: Pod, present: bool) -> None:
        """Keep the pods-by-controlling-Job index current (the sync lists from it)."""
        key = object_key(pod)
        old_uid = self._owner_of.pop(key, None)
        if old_uid is not None:
            owned = self._pods_by_job.get(old_uid, {})
            owned.pop(key, None)
            if not owned:
                self._pods_by_job.pop(old_uid, None)
        ref = podutil.controller_ref(pod)
        if present and ref is not None and podutil.is_job_ref(ref):
            self._owner_of[key] = ref.uid
            self._pods_by_job.setdefault(ref.uid, {})[key] = pod

    def pods_of(self, job: Job) -> list[Pod]:
        return list(self._pods_by_job.get(job.metadata.uid or "", {}).values())

    def _add_pod(self, pod: Pod) -> None:
        self._index(pod, True)
        if pod.metadata.deletion_timestamp is not None:
            self._delete_pod(pod, final=False)
            return
        ref = podutil.controller_ref(pod)
        job = self._resolve(pod.metadata.namespace, ref) if ref is not None else None
        if job is None:
            if podutil.has_tracking_finalizer(pod):
                self.orphan_queue.add(object_key(pod))
            return
        self.syncer.expectations.creation_observed(object_key(job))
        self.queue.add_after(object_key(job), self.config.sync_batch_period)

    def _update_pod(self, old: Pod, cur: Pod) -> None:
        if cur.metadata.resource_version == old.metadata.resource_version:
            return
        self._index(cur, True)
        if cur.metadata.deletion_timestamp is not None:
            self._delete_pod(cur, final=False)
            return
        released = not podutil.has_tracking_finalizer(cur)
        old_ref, cur_ref = podutil.controller_ref(old), podutil.controller_ref(cur)
        if old_ref is not None and old_ref != cur_ref:
            self._pod_changed_for(old_ref, cur, released)
        if cur_ref is None:
            if podutil.has_tracking_finalizer(cur):
                self.orphan_queue.add(object_key(cur))
            return
        if not self._pod_changed_for(cur_ref, cur, released) and (
                podutil.has_tracking_finalizer(cur)):
            self.orphan_queue.add(object_key(cur))

    def _pod_changed_for(self, ref: OwnerReference, pod: Pod, released: bool) -> bool:
        job = self._resolve(pod.metadata.namespace, ref)
        if job is None:
            return False
        key = object_key(job)
        if released:
            self.syncer.finalizer_expectations.removal_observed(key, pod.metadata.uid or "")
        self.queue.add_after(key, self.config.sync_batch_period)
        return True

    def _delete_pod(self, pod: Pod, *, final: bool) -> None:
        if final:
            self._index(pod, False)
        has_finalizer = podutil.has_tracking_finalizer(pod)
        ref = podutil.controller_ref(pod)
        job = self._resolve(pod.metadata.namespace, ref) if ref is not None else None
        if job is None or batch.is_job_finished(job):
            if has_finalizer:
                self.orphan_queue.add(object_key(pod))
            return
        key = object_key(job)
        self.syncer.expectations.deletion_observed(key)
        if final or not has_finalizer:
            self.syncer.finalizer_expectations.removal_observed(key, pod.metadata.uid or "")
        self.queue.add_after(key, self.config.sync_batch_period)

    # --- syncs ------------------------------------------------------------------------------

    async def sync_job(self, key: str) -> None:
        namespace, _, name = key.partition("/")
        job = self.jobs.get(name, namespace)
        if job is None:
            self.syncer.forget(key)
            return
        newest = self._written.newest(job)
        if newest is None:
            return  # a conflict showed a newer Job: its watch event queues it again
        job = newest
        external = managed_by_external_controller(job, self.gates)
        if external is not None:
            log.info("Skip syncing the job as it is managed by an external controller "
                     "key=%s uid=%s controllerName=%s", key, job.metadata.uid, external)
            return
        if batch.is_job_finished(job):
            self.syncer.backoff.remove(key)
            return
        mode = job.spec.completion_mode
        if mode is not None and mode not in (batch.NON_INDEXED_COMPLETION,
                                             batch.INDEXED_COMPLETION):
            self.record(job, "Warning", "UnknownCompletionMode",
                        "Skipped Job sync because completion mode is unknown")
            return
        pods = self.pods_of(job)
        start = time.perf_counter()
        result, action = "success", "reconciling"
        try:
            action = await self.syncer.reconcile(key, job, pods)
        except Exception:
            result = "error"
            raise
        finally:
            labels = (mode or batch.NON_INDEXED_COMPLETION, result, action)
            self.metrics.job_sync_duration.labels(*labels).observe(time.perf_counter() - start)
            self.metrics.job_syncs.labels(*labels).inc()

    async def sync_orphan_pod(self, key: str) -> None:
        namespace, _, name = key.partition("/")
        pod = self.pods.get(name, namespace)
        if pod is None:
            return
        ref = podutil.controller_ref(pod)
        if ref is not None:
            if not podutil.is_job_ref(ref):
                return  # owned by something else: not our finalizer to drop
            job = self._resolve(namespace, ref)
            if job is not None and managed_by_external_controller(job, self.gates) is not None:
                log.info("Skip cleanup of the job finalizer for a pod owned by a job that is "
                         "managed by an external controller key=%s podUID=%s jobUID=%s",
                         key, pod.metadata.uid, job.metadata.uid)
                return
            if job is not None and not batch.is_job_finished(job):
                return  # the pod belongs to a running Job
        await self.syncer.pod_control.remove_finalizer(pod)

    # --- running ----------------------------------------------------------------------------

    async def run(self) -> None:
        # Jobs are listed before pods, so a Job is never newer than its pods in the caches:
        # a status write still landing from a previous (killed) instance can then make this
        # one undercount (and retry on the 409), never count a pod twice. An informer that
        # cannot recover ends the run (and so the process), as every component's does.
        workers = self.config.workers

        async def work() -> None:
            await asyncio.gather(self.queue.run_workers(self.sync_job, workers),
                                 self.orphan_queue.run_workers(self.sync_orphan_pod, workers))

        await run_informed([self.jobs], lambda: run_informed([self.pods], work))

    async def stop(self) -> None:
        await self.jobs.stop()
        await self.pods.stop()
        for task in list(self._event_tasks):
            task.cancel()

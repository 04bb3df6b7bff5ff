"""The TTL-after-finished controller (``pkg/controller/ttlafterfinished``, v1.30): a finished
Job with ``spec.ttlSecondsAfterFinished`` is deleted (foreground propagation, UID
precondition) that many seconds after its terminal condition's transition time. The expiry is
re-checked on a fresh read before deleting, since the TTL may have been changed meanwhile."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime

from kubedra.api import batch
from kubedra.api.batch import Job
from kubedra.client.errors import ApiError, is_not_found
from kubedra.client.informer import Informer, object_key
from kubedra.client.rest import Client
from kubedra.client.workqueue import WorkQueue
from kubedra.controllers.job.pods import parse_time
from kubedra.controllers.metrics import ControllerMetrics, controller_metrics

log = logging.getLogger(__name__)


def needs_cleanup(job: Job) -> bool:
    return job.spec.ttl_seconds_after_finished is not None and batch.is_job_finished(job)


def finish_time(job: Job) -> datetime | None:
    for c in job.status.conditions or ():
        if c.type in (batch.JOB_COMPLETE, batch.JOB_FAILED) and c.status == "True":
            return parse_time(c.last_transition_time)
    return None


def seconds_left(job: Job, now: datetime) -> float | None:
    """Seconds until ``job`` expires (<= 0: expired); None if it is not due for clean-up."""
    finished = finish_time(job)
    ttl = job.spec.ttl_seconds_after_finished
    if finished is None or ttl is None or not batch.is_job_finished(job):
        return None
    return ttl - (now - finished).total_seconds()


class TTLAfterFinishedController:
    def __init__(self, client: Client, jobs: Informer[Job], *, workers: int = 5,
                 metrics: ControllerMetrics | None = None,
                 now: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        self.client = client
        self.jobs = jobs
        self.workers = workers
        self.now = now
        self.queue = WorkQueue("ttl_jobs_to_delete", base_delay=0.005, max_delay=1000.0,
                               metrics=(metrics or controller_metrics()).queue)
        jobs.add_handler(on_add=self._changed, on_update=lambda _old, new: self._changed(new))

    def _changed(self, job: Job) -> None:
        if job.metadata.deletion_timestamp is None and needs_cleanup(job):
            self.queue.add(object_key(job))

    async def sync(self, key: str) -> None:
        namespace, _, name = key.partition("/")
        cached = self.jobs.get(name, namespace)
        if cached is None or cached.metadata.deletion_timestamp is not None:
            return
        left = seconds_left(cached, self.now())
        if left is None:
            return
        if left > 0:
            self.queue.add_after(key, left)
            return
        try:
            fresh = await self.client.get(Job, name, namespace)
        except ApiError as e:
            if is_not_found(e):
                return
            raise
        left = seconds_left(fresh, self.now())
        if left is None or fresh.metadata.deletion_timestamp is not None:
            return
        if left > 0:
            self.queue.add_after(key, left)
            return
        log.info("Cleaning up Job %s: its TTL after finishing expired", key)
        try:
            await self.client.delete(Job, name, namespace, uid=fresh.metadata.uid,
                                     propagation_policy="Foreground")
        except ApiError as e:
            if not is_not_found(e):
                raise

    async def run(self) -> None:
        """Runs on the shared Job informer, which the Job controller starts."""
        await self.jobs.wait_synced()
        await self.queue.run_workers(self.sync, self.workers)



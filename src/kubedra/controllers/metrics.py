"""Prometheus metrics of the controller manager: client-go's work-queue metrics (label
``name``), a sync-duration histogram per controller, and the Job controller's own
(``pkg/controller/job/metrics/metrics.go`` at v1.30).

The families are made once per registry (:func:`controller_metrics`), so several controllers,
or several controller managers in one test process, share them without double registration.
"""

from __future__ import annotations

import threading

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram

# client-go's workqueue buckets: 10 ns .. 10 s, decades.
_QUEUE_BUCKETS = tuple(10e-9 * 10**i for i in range(10))
# Job controller sync buckets: ExponentialBuckets(0.004, 2, 15).
_SYNC_BUCKETS = tuple(0.004 * 2**i for i in range(15))


class ControllerMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        r = registry
        self.depth = Gauge("workqueue_depth", "Current depth of workqueue", ["name"],
                           registry=r)
        self.adds = Counter("workqueue_adds_total", "Total number of adds handled by workqueue",
                            ["name"], registry=r)
        self.queue_duration = Histogram(
            "workqueue_queue_duration_seconds",
            "How long in seconds an item stays in workqueue before being requested.",
            ["name"], buckets=_QUEUE_BUCKETS, registry=r)
        self.work_duration = Histogram(
            "workqueue_work_duration_seconds",
            "How long in seconds processing an item from workqueue takes.",
            ["name"], buckets=_QUEUE_BUCKETS, registry=r)
        self.unfinished_work = Gauge(
            "workqueue_unfinished_work_seconds",
            "How many seconds of work has done that is in progress and hasn't been observed by "
            "work_duration. Large values indicate stuck threads. One can deduce the number of "
            "stuck threads by observing the rate at which this increases.", ["name"], registry=r)
        self.longest_running = Gauge(
            "workqueue_longest_running_processor_seconds",
            "How many seconds has the longest running processor for workqueue been running.",
            ["name"], registry=r)
        self.retries = Counter("workqueue_retries_total",
                               "Total number of retries handled by workqueue", ["name"],
                               registry=r)
        self.sync_duration = Histogram(
            "controller_sync_duration_seconds",
            "How long one sync of a controller takes, by controller and result.",
            ["controller", "result"], buckets=_SYNC_BUCKETS, registry=r)
        self.jobs_by_external_controller = Counter(
            "job_controller_jobs_by_external_controller_total",
            "The number of Jobs managed by an external controller", ["controller_name"],
            registry=r)
        self.job_sync_duration = Histogram(
            "job_controller_job_sync_duration_seconds", "The time it took to sync a job",
            ["completion_mode", "result", "action"], buckets=_SYNC_BUCKETS, registry=r)
        self.job_syncs = Counter("job_controller_job_syncs_total",
                                 "The number of job syncs",
                                 ["completion_mode", "result", "action"], registry=r)
        self.jobs_finished = Counter(
            "job_controller_jobs_finished_total", "The number of finished jobs",
            ["completion_mode", "result", "reason"], registry=r)
        self.job_pods_finished = Counter(
            "job_controller_job_pods_finished_total",
            "The number of finished Pods that are fully tracked",
            ["completion_mode", "result"], registry=r)
        self.pod_failures_by_policy = Counter(
            "job_controller_pod_failures_handled_by_failure_policy_total",
            "The number of failed Pods handled by failure policy with respect to the failure "
            "policy action applied based on the matched rule.", ["action"], registry=r)


_lock = threading.Lock()
_by_registry: dict[int, tuple[CollectorRegistry, ControllerMetrics]] = {}


def controller_metrics(registry: CollectorRegistry = REGISTRY) -> ControllerMetrics:
    """The metric families registered on ``registry`` (made on first use)."""
    with _lock:
        entry = _by_registry.get(id(registry))
        if entry is None or entry[0] is not registry:
            entry = _by_registry[id(registry)] = (registry, ControllerMetrics(registry))
        return entry[1]

"""Prometheus metrics of the controller manager: the work queues' (client-go's work-queue
metrics and each sync's duration, :mod:`kubedra.client.metrics`) and the Job controller's own
(``pkg/controller/job/metrics/metrics.go`` at v1.30).

The families are made once per registry (:func:`controller_metrics`), so several controllers,
or several controller managers in one test process, share them without double registration.
"""

from __future__ import annotations

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Histogram

from kubedra.client.metrics import SYNC_BUCKETS, QueueMetrics, once_per_registry, queue_metrics


class ControllerMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        r = registry
        self.queue: QueueMetrics = queue_metrics(registry)
        self.jobs_by_external_controller = Counter(
            "job_controller_jobs_by_external_controller_total",
            "The number of Jobs managed by an external controller", ["controller_name"],
            registry=r)
        self.job_sync_duration = Histogram(
            "job_controller_job_sync_duration_seconds", "The time it took to sync a job",
            ["completion_mode", "result", "action"], buckets=SYNC_BUCKETS, registry=r)
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


def controller_metrics(registry: CollectorRegistry = REGISTRY) -> ControllerMetrics:
    """The metric families registered on ``registry`` (made on first use)."""
    return once_per_registry(ControllerMetrics, registry)

"""Prometheus metric families of the client machinery: client-go's work-queue metrics (label
``name``) and the duration of each sync a work queue runs.

Families are made once per registry (:func:`once_per_registry`), so several queues, or
several components in one test process, share them without double registration; the
components make their own families the same way.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar, cast

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram

T = TypeVar("T")

# client-go's workqueue buckets: 10 ns .. 10 s, decades.
_QUEUE_BUCKETS = tuple(10e-9 * 10**i for i in range(10))
# ExponentialBuckets(0.004, 2, 15), as the Job controller's sync histograms.
SYNC_BUCKETS = tuple(0.004 * 2**i for i in range(15))

_lock = threading.RLock()  # reentrant: a set of families may be made of other sets
_made: dict[tuple[int, Callable[..., Any]], tuple[CollectorRegistry, Any]] = {}


def once_per_registry(make: Callable[[CollectorRegistry], T],
                      registry: CollectorRegistry = REGISTRY) -> T:
    """``make(registry)``, made on first use and the same object afterwards."""
    with _lock:
        key = (id(registry), make)
        entry = _made.get(key)
        if entry is None or entry[0] is not registry:
            entry = _made[key] = (registry, make(registry))
        return cast(T, entry[1])


class QueueMetrics:
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
            ["controller", "result"], buckets=SYNC_BUCKETS, registry=r)


def queue_metrics(registry: CollectorRegistry = REGISTRY) -> QueueMetrics:
    """The work-queue families registered on ``registry`` (made on first use)."""
    return once_per_registry(QueueMetrics, registry)

"""The scheduler's Prometheus metrics, named, labelled and bucketed as kube-scheduler's
(``pkg/scheduler/metrics/metrics.go``), on a registry of the scheduler's own.

Plugin execution time is observed, as upstream, only in a sample of scheduling cycles
(:data:`PLUGIN_METRICS_SAMPLE_PERCENT`; every tenth cycle, starting with the first, where
upstream draws at random): those run a :func:`timed_profile`, the others the plain one, so
timing never weighs on the filter hot path of the others.
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import inspect
import itertools
import time
import types
from collections.abc import Callable, Collection, Iterator, Sequence
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.metrics_core import HistogramMetricFamily, Metric
from prometheus_client.utils import floatToGoString

from kubedra.scheduler.framework import NodeByNode, Profile, Status
from kubedra.scheduler.queue import SchedulingQueue

PLUGIN_METRICS_SAMPLE_PERCENT = 10
_le_text: Callable[[float], str] = floatToGoString  # a bucket bound as the ``le`` label shows it
PENDING_QUEUES = ("active", "backoff", "unschedulable", "gated")
SCHEDULED, UNSCHEDULABLE, ERROR = "scheduled", "unschedulable", "error"

# method name -> upstream extension point name
EXTENSION_POINTS = {
    "pre_enqueue": "PreEnqueue", "pre_filter": "PreFilter", "filter": "Filter",
    "post_filter": "PostFilter", "score": "Score", "reserve": "Reserve",
    "unreserve": "Unreserve", "pre_bind": "PreBind", "post_bind": "PostBind",
}


def _exponential(start: float, factor: float, count: int) -> tuple[float, ...]:
    return tuple(start * factor**i for i in range(count))


class _Series:
    """One label set of a :class:`PlainHistogram`: a count per bucket (not cumulative; the
    last is +Inf) and the sum."""

    __slots__ = ("_bounds", "counts", "sum")

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self._bounds = bounds
        self.counts = [0] * (len(bounds) + 1)
        self.sum = 0.0

    def observe(self, amount: float) -> None:
        self.counts[bisect.bisect_left(self._bounds, amount)] += 1
        self.sum += amount


class PlainHistogram:
    """A histogram of plain counters, exposed as prometheus_client's (same name, help, label
    names, ``le`` texts; no ``_created`` series, as kube-scheduler's Go client has none), for
    a metric observed hundreds of times in one cycle: prometheus_client's observation takes a
    lock and walks the buckets (2.4 us against 0.4 here). The scheduler's one event loop
    observes and serves the scrape, so no lock is needed."""

    def __init__(self, name: str, documentation: str, labelnames: Sequence[str],
                 buckets: Sequence[float], registry: CollectorRegistry) -> None:
        self._name, self._documentation = name, documentation
        self._labelnames = list(labelnames)
        self._bounds = tuple(sorted(buckets))
        self._series: dict[tuple[str, ...], _Series] = {}
        registry.register(self)

    def labels(self, *values: str) -> _Series:
        series = self._series.get(values)
        if series is None:
            if len(values) != len(self._labelnames):
                raise ValueError(f"{self._name}: expected labels {self._labelnames}")
            series = self._series[values] = _Series(self._bounds)
        return series

    def describe(self) -> list[Metric]:
        return [HistogramMetricFamily(self._name, self._documentation,
                                      labels=self._labelnames)]

    def collect(self) -> Iterator[Metric]:
        family = HistogramMetricFamily(self._name, self._documentation,
                                       labels=self._labelnames)
        les = [_le_text(b) for b in self._bounds] + ["+Inf"]
        for values, series in self._series.items():
            running, buckets = 0, []
            for le, count in zip(les, series.counts, strict=True):
                running += count
                buckets.append((le, float(running)))
            family.add_metric(list(values), buckets, series.sum)
        yield family


class SchedulerMetrics:
    def __init__(self, queue: SchedulingQueue, registry: CollectorRegistry | None = None,
                 ) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        self._cycles = itertools.count()
        self.attempts = Counter(
            "scheduler_schedule_attempts_total",
            "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod "
            "could not be scheduled, while 'error' means an internal scheduler problem.",
            ["result", "profile"], registry=self.registry)
        self.attempt_duration = Histogram(
            "scheduler_scheduling_attempt_duration_seconds",
            "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
            ["result", "profile"], buckets=_exponential(0.001, 2, 15), registry=self.registry)
        self.plugin_duration = PlainHistogram(
            "scheduler_plugin_execution_duration_seconds",
            "Duration for running a plugin at a specific extension point.",
            ["plugin", "extension_point", "status"], buckets=_exponential(0.00001, 1.5, 20),
            registry=self.registry)
        pending = Gauge(
            "scheduler_pending_pods",
            "Number of pending pods, by the queue type. 'active' means number of pods in "
            "activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means "
            "number of pods in unschedulablePods that the scheduler attempted to schedule "
            "and failed; 'gated' is the number of unschedulable pods that the scheduler "
            "never attempted to schedule because they are gated.",
            ["queue"], registry=self.registry)
        for name in PENDING_QUEUES:
            pending.labels(name).set_function(
                functools.partial(lambda n: queue.pending_counts()[n], name))

    def attempt(self, result: str, profile: str, seconds: float | None) -> None:
        """An attempt ended; ``seconds`` since its cycle started (``None``: unknown)."""
        self.attempts.labels(result, profile).inc()
        if seconds is not None:
            self.attempt_duration.labels(result, profile).observe(seconds)

    def sampled(self) -> bool:
        """Whether the cycle starting now has its plugin calls timed."""
        return next(self._cycles) % (100 // PLUGIN_METRICS_SAMPLE_PERCENT) == 0


def timed_profile(profile: Profile, metrics: SchedulerMetrics, plugins: Collection[Any],
                  ) -> Profile:
    """``profile`` with ``plugins`` timed, for the sampled cycles: the other cycles run the
    plain profile, so timing costs nothing on their filter hot path."""
    timed = {id(p): TimedPlugin(p, metrics) for p in plugins}
    stages: dict[str, Any] = {
        f.name: [timed.get(id(p), p) for p in getattr(profile, f.name)]
        for f in dataclasses.fields(profile) if isinstance(getattr(profile, f.name), Sequence)}
    return dataclasses.replace(profile, **stages)


class TimedPlugin(NodeByNode):
    """A plugin whose extension-point calls are observed in
    ``scheduler_plugin_execution_duration_seconds``; everything else is the plugin's own,
    except ``scores``: node by node through the timed ``score``, so each Score call is
    observed, as upstream observes them."""

    def __init__(self, plugin: Any, metrics: SchedulerMetrics) -> None:
        self._plugin = plugin
        self._histogram = metrics.plugin_duration
        self.name: str = plugin.name

    def __getattr__(self, attr: str) -> Any:
        value = getattr(self._plugin, attr)
        point = EXTENSION_POINTS.get(attr)
        if point is None:
            return value
        timed = self.__dict__[attr] = types.MethodType(self._timed(value, point), self)
        return timed  # kept: the next lookup (a Filter per node) finds it without this

    def _timed(self, call: Callable[..., Any], point: str) -> Callable[..., Any]:
        labels = self._histogram.labels
        children: dict[str, Any] = {}  # by status: one label lookup per status

        def child(status: str) -> Any:
            found = children.get(status)
            if found is None:
                found = children[status] = labels(self.name, point, status)
            return found

        def status_of(result: object) -> str:
            return result.code.value if isinstance(result, Status) else "Success"

        if inspect.iscoroutinefunction(call):
            async def timed_async(_self: TimedPlugin, *args: Any) -> Any:
                start = time.perf_counter()
                result = await call(*args)
                child(status_of(result)).observe(
                    time.perf_counter() - start)
                return result

            return timed_async

        def timed(_self: TimedPlugin, *args: Any) -> Any:
            start = time.perf_counter()
            result = call(*args)
            child(status_of(result)).observe(time.perf_counter() - start)
            return result

        return timed

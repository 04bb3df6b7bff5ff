"""Prometheus metrics of the API server (a registry per server, so tests can run several).

The request counts are kept in plain dicts on the event loop and made metric families only
when scraped (:class:`RequestCounts`): prometheus_client's children lock per increment."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterator
from typing import ClassVar

from aiohttp import web
from prometheus_client import CollectorRegistry, Counter, Gauge, generate_latest
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.registry import Collector

# Labels a request carries for its metrics, set while it is routed.
VERB = web.RequestKey("verb", str)
GROUP = web.RequestKey("group", str)
RESOURCE = web.RequestKey("resource", str)

_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0)
_BUCKET_LABELS = (*(repr(b) for b in _BUCKETS), "+Inf")


class RequestCounts(Collector):
    """``apiserver_request_total`` and ``apiserver_request_duration_seconds``, counted in
    plain dicts on the event loop and made metric families when scraped: prometheus_client's
    children take a lock per increment, several microseconds of every request."""

    def __init__(self) -> None:
        self.counts: dict[tuple[str, str, str, int], int] = {}
        # per (verb, group, resource): a count per bucket (the last is +Inf), then the sum
        self.latency: dict[tuple[str, str, str], list[float]] = {}

    def observe(self, verb: str, group: str, resource: str, code: int, seconds: float) -> None:
        key = (verb, group, resource, code)
        self.counts[key] = self.counts.get(key, 0) + 1
        spread = self.latency.get(key[:3])
        if spread is None:
            spread = self.latency[key[:3]] = [0.0] * (len(_BUCKETS) + 2)
        spread[bisect_left(_BUCKETS, seconds)] += 1
        spread[-1] += seconds

    def collect(self) -> Iterator[Metric]:
        total = CounterMetricFamily(
            "apiserver_request",
            "Counter of apiserver requests broken out by verb, group, resource and code.",
            labels=["verb", "group", "resource", "code"])
        for (verb, group, resource, code), n in list(self.counts.items()):
            total.add_metric([verb, group, resource, str(code)], n)
        yield total
        latency = HistogramMetricFamily(
            "apiserver_request_duration_seconds",
            "Response latency distribution in seconds by verb, group and resource.",
            labels=["verb", "group", "resource"])
        for labels, spread in list(self.latency.items()):
            cumulative, buckets = 0.0, []
            for le, count in zip(_BUCKET_LABELS, spread, strict=False):
                cumulative += count
                buckets.append((le, cumulative))
            latency.add_metric(list(labels), buckets, spread[-1])
        yield latency


class Metrics:
    content_type: ClassVar[str] = CONTENT_TYPE_LATEST

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = RequestCounts()
        self.registry.register(self.requests)
        self.inflight = Gauge(
            "apiserver_current_inflight_requests",
            "Requests being served now (long-running watches excluded), read-only and "
            "mutating.", ["request_kind"], registry=self.registry,
        )
        self.watchers = Gauge(
            "apiserver_registered_watchers", "Open watch streams.", registry=self.registry
        )
        self.rejected = Counter(
            "apiserver_dropped_requests_total",
            "Requests refused with 429 because too many were in flight.",
            ["request_kind"], registry=self.registry,
        )

    def track_watch_cache(self, nbytes: Callable[[], int], events: Callable[[], int]) -> None:
        """The watch cache's window, read at each scrape."""
        Gauge("apiserver_watch_cache_window_bytes",
              "Bytes held by the events in the watch cache window (bounded).",
              registry=self.registry).set_function(nbytes)
        Gauge("apiserver_watch_cache_window_events", "Events in the watch cache window.",
              registry=self.registry).set_function(events)

    def observe(self, verb: str, group: str, resource: str, code: int, seconds: float) -> None:
        self.requests.observe(verb, group, resource, code, seconds)

    def render(self) -> bytes:
        return generate_latest(self.registry)

"""Prometheus metrics of the API server (a registry per server, so tests can run several)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aiohttp import web
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

# Labels a request carries for its metrics, set while it is routed.
VERB = web.RequestKey("verb", str)
GROUP = web.RequestKey("group", str)
RESOURCE = web.RequestKey("resource", str)

_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0)


class Metrics:
    content_type = CONTENT_TYPE_LATEST

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self._children: dict[tuple[str, str, str, int], tuple[Any, Any]] = {}
        self.requests = Counter(
            "apiserver_request_total",
            "Counter of apiserver requests broken out by verb, group, resource and code.",
            ["verb", "group", "resource", "code"], registry=self.registry,
        )
        self.latency = Histogram(
            "apiserver_request_duration_seconds",
            "Response latency distribution in seconds by verb, group and resource.",
            ["verb", "group", "resource"], buckets=_BUCKETS, registry=self.registry,
        )
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
        key = (verb, group, resource, code)
        children = self._children.get(key)
        if children is None:
            children = self._children[key] = (
                self.requests.labels(verb, group, resource, str(code)),
                self.latency.labels(verb, group, resource),
            )
        children[0].inc()
        children[1].observe(seconds)

    def render(self) -> bytes:
        return generate_latest(self.registry)

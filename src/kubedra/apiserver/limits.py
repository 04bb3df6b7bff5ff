"""Limits on each request at the door, as upstream's handler chain: in-flight bounds for
read-only and mutating requests (``WithMaxInFlightLimit``) and the request deadline
(``WithRequestDeadline`` with ``?timeout=``, ``WithTimeoutForNonLongRunningRequests``).

A request that outlives its deadline is answered 504 (and its connection closed) while its
handler runs on to the end, as upstream's timeout filter lets the handler goroutine finish:
a write is never cut off between its read and its compare-and-swap, so it is applied whole
or not at all. The handler keeps its in-flight seat until it ends, so timed-out work still
counts.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Final

from aiohttp import web

from kubedra.api.goformat import parse_duration
from kubedra.apiserver import errors
from kubedra.apiserver.connections import canned_response
from kubedra.apiserver.deadlines import DeadlineSlots
from kubedra.apiserver.metrics import Metrics

log = logging.getLogger(__name__)

Handler = Callable[[web.BaseRequest], Awaitable[web.StreamResponse]]

READ_ONLY: Final = "readOnly"
MUTATING: Final = "mutating"
# the verbs get, list and watch (upstream's nonMutatingRequestVerbs) arrive by these methods
_READ_ONLY_METHODS: Final = frozenset({"GET", "HEAD", "OPTIONS"})
# probes and scrapes are never refused or queued behind the API's own load
_UNCOUNTED: Final = ("/healthz", "/livez", "/readyz", "/metrics")
_TRUE: Final = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_INVALID_TIMEOUT: Final = "invalid timeout specified in the request URL"

# how late past its deadline a request may be answered (DeadlineSlots)
_DEADLINE_PRECISION = 0.25


@dataclass(frozen=True, slots=True)
class Limits:
    """``--max-requests-inflight``, ``--max-mutating-requests-inflight``,
    ``--request-timeout`` (seconds), with upstream's defaults."""

    max_requests_inflight: int = 400
    max_mutating_requests_inflight: int = 200
    request_timeout: float = 60.0


def is_long_running(request: web.BaseRequest) -> bool:
    """Watches and pod logs (``pods/<name>/log``, which ``follow`` streams): neither counted
    in flight nor given the request deadline (a watch's own ``timeoutSeconds`` and the
    server's longest watch end it; a log stream ends with its container)."""
    if request.method != "GET":
        return False
    return ("/watch/" in request.path or _query_value(request, "watch") in _TRUE
            or _is_log(request.path))


def _is_log(path: str) -> bool:
    """``.../pods/<name>/log`` (upstream's long-running ``log`` subresource)."""
    parts = path.rstrip("/").rsplit("/", 3)
    return len(parts) == 4 and parts[1] == "pods" and parts[3] == "log"


def _query_value(request: web.BaseRequest, name: str) -> str | None:
    """A query parameter, looked for in the (decoded) query text first: most requests have
    no query to parse."""
    return request.query.get(name) if name in request.query_string else None


class Door:
    """Admits, times and counts the requests :meth:`serve` is given."""

    def __init__(self, limits: Limits, metrics: Metrics) -> None:
        self.limits = limits
        self.metrics = metrics
        self.inflight = {READ_ONLY: 0, MUTATING: 0}
        self._bounds = {READ_ONLY: limits.max_requests_inflight,
                        MUTATING: limits.max_mutating_requests_inflight}
        for kind in self.inflight:
            metrics.inflight.labels(kind).set_function(self._count_of(kind))
        self._deadlines = DeadlineSlots[web.BaseRequest](self._expired, _DEADLINE_PRECISION)
        self._late: set[int] = set()  # requests answered 504 while still running

    def _count_of(self, kind: str) -> Callable[[], float]:
        return lambda: self.inflight[kind]

    async def serve(self, request: web.BaseRequest, handler: Handler,
                    long_running: bool | None = None) -> web.StreamResponse:
        """``long_running``: :func:`is_long_running` when the caller already knows it."""
        if long_running is None:
            long_running = is_long_running(request)
        if long_running:
            self.metrics.watchers.inc()
            try:
                return await handler(request)
            finally:
                self.metrics.watchers.dec()
        timeout = self._deadline(request)
        kind = None
        if not request.path.startswith(_UNCOUNTED):
            kind = READ_ONLY if request.method in _READ_ONLY_METHODS else MUTATING
            bound = self._bounds[kind]
            if bound > 0 and self.inflight[kind] >= bound:
                self.metrics.rejected.labels(kind).inc()
                raise errors.too_many_requests()
            self.inflight[kind] += 1
        # The handler runs in this task to its end; at the deadline the client is answered
        # on the side (no second task: this is on every request's path).
        slot = self._deadlines.enter(request, timeout)
        try:
            resp = await handler(request)
        except Exception as err:
            if not self._answered_late(request):
                raise
            if not isinstance(err, errors.ApiError | ConnectionError):
                log.error("%s %s finished after its timeout with %s: %s", request.method,
                          request.path, type(err).__name__, err)
            raise errors.request_timeout() from None
        finally:
            slot.pop(id(request), None)
            if kind is not None:
                self.inflight[kind] -= 1
        if self._answered_late(request):
            raise errors.request_timeout()  # what the client got, for the audit and metrics
        return resp

    def _expired(self, request: web.BaseRequest) -> None:
        if _answer_late(request):
            self._late.add(id(request))

    def _answered_late(self, request: web.BaseRequest) -> bool:
        """Whether the deadline answered ``request`` (asked once, when its handler ends)."""
        if id(request) not in self._late:
            return False
        self._late.discard(id(request))
        return True

    def _deadline(self, request: web.BaseRequest) -> float:
        """The server's request timeout, or the client's ``?timeout=`` when shorter."""
        longest = self.limits.request_timeout
        value = _query_value(request, "timeout")
        if not value:
            return longest
        try:
            asked = parse_duration(value)
        except ValueError as err:
            raise errors.bad_request(f"{_INVALID_TIMEOUT} - {err}") from None
        return min(asked, longest)


_LATE = canned_response(errors.request_timeout())


def _answer_late(request: web.BaseRequest) -> bool:
    """The deadline passed: answer 504 and close the connection (nothing of the response
    has been written yet; what the handler answers later has nowhere to go). False when
    the client is gone already."""
    transport = request.transport
    if transport is None or transport.is_closing():
        return False
    transport.write(_LATE)
    transport.close()
    return True

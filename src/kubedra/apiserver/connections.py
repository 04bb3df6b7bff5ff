"""Connections at the door, below HTTP requests: how many may be open, how long one may sit
idle or take to send a request head (upstream serves with ``IdleTimeout`` 90 s and
``ReadHeaderTimeout`` 32 s against slowloris clients), and clean answers to request heads
over the size limits (414 for a request line, 431 for header fields, as Go's server
answers rather than dropping the connection).

Built on aiohttp's low-level server: a :class:`Server` whose connections are
:class:`Connection` handlers (aiohttp 3.14 is pinned; ``_waiter`` and ``_messages`` are its
handler's idle state and parsed heads).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

import aiohttp.web_server
from aiohttp import web
from aiohttp.http_exceptions import BadHttpMessage, LineTooLong
from aiohttp.web_protocol import RequestHandler
from mypy_extensions import mypyc_attr

from kubedra.apiserver import errors, objects
from kubedra.apiserver.deadlines import DeadlineSlots, Slot

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    max_connections: int = 10_000
    idle_timeout: float = 90.0
    header_timeout: float = 32.0
    # the request line (upstream's 1 MiB header budget, where the URL counts)
    max_url_bytes: int = 1 << 20
    # each header field, and how many: about 1 MiB of header fields in all
    max_field_bytes: int = 8190
    max_headers: int = 128


# a subclass of a library class; its base named by its own module, where mypyc's
# generated code looks it up
@mypyc_attr(native_class=False)
class Server(aiohttp.web_server.Server):
    """aiohttp's low-level server that counts its connections and serves each through a
    :class:`Connection`."""

    def __init__(self, handler: Any, limits: ConnectionLimits, **kwargs: Any) -> None:
        super().__init__(handler, keepalive_timeout=limits.idle_timeout,
                         max_line_size=limits.max_url_bytes,
                         max_field_size=limits.max_field_bytes,
                         max_headers=limits.max_headers, **kwargs)
        self.limits = limits
        self.open = 0
        # when a connection's request head is due (32 s by default: a quarter second late is
        # as good)
        self.heads = DeadlineSlots[Connection](Connection.head_late, 0.25)

    def __call__(self) -> RequestHandler:
        return Connection(self, loop=self._loop, **self._kwargs)

    def connection_made(self, handler: RequestHandler, transport: asyncio.Transport) -> None:
        super().connection_made(handler, transport)
        self.open += 1

    def connection_lost(self, handler: RequestHandler, exc: BaseException | None = None
                        ) -> None:
        super().connection_lost(handler, exc)
        self.open -= 1


def canned_response(err: errors.ApiError) -> bytes:
    """The whole HTTP answer of a Status, written straight to a transport where aiohttp's
    response machinery is not in the way; the connection closes after it."""
    body = objects.encode(err.status)
    head = [f"HTTP/1.1 {err.code} {HTTPStatus(err.code).phrase}",
            "Content-Type: application/json", *(f"{k}: {v}" for k, v in err.headers.items()),
            "Connection: close", f"Content-Length: {len(body)}", "", ""]
    return "\r\n".join(head).encode() + body


# what a connection over the limit is told before it is closed (client-go retries a 429
# after its Retry-After, as for too many requests in flight)
_BUSY_RESPONSE = canned_response(errors.too_many_requests())


@mypyc_attr(native_class=False)  # a subclass of a library class
class Connection(RequestHandler):
    """One client connection: refused when too many are open, closed when its request head
    does not arrive in time, answered 414/431 when the head is too large."""

    _server: Server
    _head_slot: Slot[Connection] | None = None

    def __init__(self, manager: Server, **kwargs: Any) -> None:
        super().__init__(manager, **kwargs)
        self._server = manager

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        if self._server.open > self._server.limits.max_connections:
            assert isinstance(transport, asyncio.Transport)
            transport.write(_BUSY_RESPONSE)
            self.force_close()
            return
        self._await_head()

    def data_received(self, data: bytes) -> None:
        starting = self._head_slot is None and self._waiter is not None  # idle till now
        super().data_received(data)
        if self._messages:
            if self._head_slot is not None:
                self._head_arrived()
        elif starting:
            self._await_head()  # the first bytes of a request, not yet its whole head

    def connection_lost(self, exc: BaseException | None) -> None:
        if self._head_slot is not None:
            self._head_arrived()
        super().connection_lost(exc)

    def _await_head(self) -> None:
        self._head_slot = self._server.heads.enter(self, self._server.limits.header_timeout)

    def _head_arrived(self) -> None:
        assert self._head_slot is not None
        self._head_slot.pop(id(self), None)
        self._head_slot = None

    def head_late(self) -> None:
        """The request head is overdue: a connection still waiting for it is closed."""
        self._head_slot = None
        if not self._messages and self._waiter is not None and not self._waiter.done():
            log.debug("closing a connection whose request head did not arrive in time")
            self.force_close()

    def handle_error(self, request: web.BaseRequest, status: int = 500,
                     exc: BaseException | None = None, message: str | None = None
                     ) -> web.StreamResponse:
        """A request head aiohttp could not parse: answered without a traceback in the log
        (it is the client's error), over-long ones with Go's 414/431."""
        if status >= 500 or request.writer.output_size > 0:
            return super().handle_error(request, status, exc, message)
        code = _head_error_code(exc, self.max_line_size) or status
        log.debug("bad request head from %s: %s", request.remote, exc)
        text = message if code == status and message else f"{code} {HTTPStatus(code).phrase}"
        resp = web.Response(status=code, text=text)
        resp.force_close()
        return resp


def _head_error_code(exc: BaseException | None, max_line: int) -> int | None:
    if isinstance(exc, LineTooLong):
        return 414 if exc.args[1] == max_line else 431
    if isinstance(exc, BadHttpMessage) and "Too many headers" in exc.message:
        return 431
    return None

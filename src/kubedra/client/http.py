"""HTTP/1.1 to one API server: a pool of keep-alive connections for whole answers, and a
connection of its own for each streamed answer (a watch).

Only what talking to an API server needs: requests with bodies in hand, answers with a
``Content-Length`` or chunked body (or one that ends with the connection). A general client
library spent about as much CPU per request as the server spent answering it, in every
component (bench/README.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import time
from collections import deque
from collections.abc import AsyncIterator
from typing import cast
from urllib.parse import urlsplit

REQUEST_TIMEOUT = 300.0
"""Seconds a whole request may take (connecting included), as aiohttp's default."""
CONNECT_TIMEOUT = 30.0
IDLE_SECONDS = 15.0
"""A connection idle longer is closed rather than reused (the server's idle timeout is 90 s)."""
_REPLAYABLE = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE"})
_PAUSE_AT = 4 << 20  # streamed bytes waiting for the reader before reading pauses
_NO_BODY = frozenset({204, 304})
_READ_SIZE = 64 << 10
"""Bytes a connection reads at a time, into a buffer of its own."""


class HttpConnectionError(ConnectionError):
    """The server could not be reached, or closed the connection inside an answer."""


class _Answer:
    """Where the parse of one response stands: its head, then its body."""

    __slots__ = (
        "chunk_left",
        "chunked",
        "close",
        "content_type",
        "head_done",
        "length",
        "started",
        "status",
        "trailer",
    )

    def __init__(self) -> None:
        self.status = 0
        self.close = False
        self.length = -1  # bytes of body still due; -1: until the connection ends
        self.chunked = False
        self.started = False  # any byte of it arrived
        self.head_done = False
        self.chunk_left = -1  # bytes left of the current chunk; -1: a size line is due
        self.trailer = False
        self.content_type = ""

    def parse_head(self, head: bytes) -> None:
        lines = head.split(b"\r\n")
        first = lines[0]
        if not first.startswith(b"HTTP/1.") or len(first) < 12:
            raise HttpConnectionError(f"not an HTTP/1.1 answer: {first[:80]!r}")
        self.status = int(first[9:12])
        self.close = first[7:8] == b"0"
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                self.length = int(value)
                if self.length < 0:
                    raise HttpConnectionError(f"negative Content-Length: {value!r}")
            elif name == b"content-type":
                self.content_type = value.strip().decode("latin-1")
            elif name == b"transfer-encoding":
                self.chunked = b"chunked" in value.lower()
            elif name == b"connection":
                token = value.strip().lower()
                if token == b"close":
                    self.close = True
                elif token == b"keep-alive":
                    self.close = False
        if self.chunked:
            self.length = -1
        elif self.status in _NO_BODY or 100 <= self.status < 200:
            self.length = 0
        if self.length < 0 and not self.chunked:
            self.close = True
        self.head_done = True


class _Connection(asyncio.BufferedProtocol):
    """One connection; answers are parsed as their bytes arrive. Whole answers resolve
    ``answered``; a streamed answer's body goes to ``chunks`` as it comes. Bytes are read
    into the connection's own buffer: given a plain Protocol, uvloop's TLS transport
    allocates 256 KiB for every read (glibc maps and unmaps it: three system calls per
    watch event or answer)."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self._read = memoryview(bytearray(_READ_SIZE))
        self.buffer = bytearray()
        self.answer: _Answer | None = None
        self.streaming = False
        self.body: list[bytes] = []
        self.answered: asyncio.Future[tuple[int, bytes]] | None = None
        self.head_seen: asyncio.Future[tuple[int, str]] | None = None
        self.chunks: deque[bytes] = deque()
        self.queued = 0
        self.wakeup: asyncio.Future[None] | None = None
        self.ended = False  # the streamed body is complete
        self.lost: Exception | None = None
        self.used = 0
        self.idle_since = 0.0

    # --- asyncio.Protocol ---------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's TLS one is no subclass

    def get_buffer(self, sizehint: int) -> memoryview:
        return self._read

    def buffer_updated(self, nbytes: int) -> None:
        if self.answer is None:
            self.lost = HttpConnectionError("the server sent bytes nobody asked for")
            self.shut()
            return
        self.answer.started = True
        self.buffer += self._read[:nbytes]
        try:
            self._parse()
        except (ValueError, HttpConnectionError) as err:
            self._fail(err if isinstance(err, HttpConnectionError)
                       else HttpConnectionError(f"malformed answer: {err}"))
            self.shut()

    def eof_received(self) -> bool:
        self._ended_by_server()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._ended_by_server(exc)

    # --- requests -----------------------------------------------------------------------

    @property
    def usable(self) -> bool:
        return self.lost is None and self.transport is not None and not self.transport.is_closing()

    def send(self, data: bytes, loop: asyncio.AbstractEventLoop, *, stream: bool) -> None:
        assert self.transport is not None and self.answer is None
        self.answer = _Answer()
        self.streaming = stream
        self.body = []
        if stream:
            self.head_seen = loop.create_future()
        else:
            self.answered = loop.create_future()
        self.used += 1
        self.transport.write(data)

    def shut(self) -> None:
        if self.transport is not None:
            self.transport.close()

    # --- the streamed body --------------------------------------------------------------

    async def next_chunk(self) -> bytes | None:
        """The next piece of a streamed body; None at its end."""
        while not self.chunks:
            if self.ended:
                return None
            if self.lost is not None:
                raise self.lost
            self.wakeup = asyncio.get_running_loop().create_future()
            await self.wakeup
        data = self.chunks.popleft()
        self.queued -= len(data)
        if self.queued < _PAUSE_AT // 4 and self.transport is not None:
            with contextlib.suppress(RuntimeError):
                self.transport.resume_reading()
        return data

    # --- parsing ------------------------------------------------------------------------

    def _parse(self) -> None:
        answer = self.answer
        assert answer is not None
        buf = self.buffer
        if not answer.head_done:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                if len(buf) > 1 << 20:
                    raise HttpConnectionError("answer head over 1 MiB")
                return
            answer.parse_head(bytes(buf[:end]))
            del buf[:end + 4]
            if self.head_seen is not None and not self.head_seen.done():
                self.head_seen.set_result((answer.status, answer.content_type))
        if answer.chunked:
            self._parse_chunks(answer)
        elif answer.length >= 0:
            if len(buf) == answer.length:
                self._take(bytes(buf))
                buf.clear()
                self._complete()
            elif len(buf) > answer.length:
                self._take(bytes(buf[:answer.length]))
                del buf[:answer.length]
                self._complete()
            elif self.streaming and buf:
                answer.length -= len(buf)
                self._take(bytes(buf))
                buf.clear()
        elif buf:  # until the connection ends
            self._take(bytes(buf))
            buf.clear()

    def _parse_chunks(self, answer: _Answer) -> None:
        buf = self.buffer
        while True:
            if answer.trailer:  # after the last chunk: trailer lines up to an empty one
                end = buf.find(b"\r\n")
                if end < 0:
                    return
                del buf[:end + 2]
                if end == 0:
                    self._complete()
                    return
                continue
            if answer.chunk_left < 0:
                end = buf.find(b"\r\n")
                if end < 0:
                    if len(buf) > 4096:
                        raise HttpConnectionError("chunk size line too long")
                    return
                size = int(bytes(buf[:end]).split(b";", 1)[0], 16)
                if size < 0:
                    raise HttpConnectionError("negative chunk size")
                del buf[:end + 2]
                if size == 0:
                    answer.trailer = True
                    continue
                answer.chunk_left = size
            if answer.chunk_left:
                if len(buf) < answer.chunk_left:
                    if self.streaming and buf:  # a watch reader wants bytes as they come
                        answer.chunk_left -= len(buf)
                        self._take(bytes(buf))
                        buf.clear()
                    return
                self._take(bytes(buf[:answer.chunk_left]))
                del buf[:answer.chunk_left]
                answer.chunk_left = 0
            if len(buf) < 2:
                return
            if buf[:2] != b"\r\n":
                raise HttpConnectionError("chunk not followed by CRLF")
            del buf[:2]
            answer.chunk_left = -1

    def _take(self, data: bytes) -> None:
        if not data:
            return
        if not self.streaming:
            self.body.append(data)
            return
        self.chunks.append(data)
        self.queued += len(data)
        if self.queued > _PAUSE_AT and self.transport is not None:
            self.transport.pause_reading()
        self._wake()

    def _complete(self) -> None:
        answer = self.answer
        assert answer is not None
        if self.streaming:
            self.ended = True
            self._wake()
        elif self.answered is not None and not self.answered.done():
            self.answered.set_result((answer.status, b"".join(self.body)))
        self.body = []
        if answer.close or self.buffer:  # bytes past the answer: nothing to trust after it
            self.lost = HttpConnectionError("closed by the server")
            self.shut()
        self.answer = None

    def _ended_by_server(self, exc: Exception | None = None) -> None:
        answer = self.answer
        if answer is not None and answer.head_done and answer.length < 0 and not answer.chunked:
            self._complete()  # a body that lasts until the connection ends
        if self.lost is None:
            reason = f": {exc}" if exc else ""
            self.lost = HttpConnectionError(f"the server closed the connection{reason}")
        if self.answer is not None:
            self._fail(self.lost)

    def _fail(self, err: Exception) -> None:
        self.lost = err
        for fut in (self.answered, self.head_seen):
            if fut is not None and not fut.done():
                fut.set_exception(err)
                fut.exception()  # whoever awaits it still gets it; a cancelled one need not
        self._wake()

    def _wake(self) -> None:
        if self.wakeup is not None and not self.wakeup.done():
            self.wakeup.set_result(None)


class Stream:
    """A streamed answer: its status and Content-Type, and its body as it arrives."""

    def __init__(self, conn: _Connection, status: int, content_type: str) -> None:
        self._conn = conn
        self.status = status
        self.content_type = content_type

    async def read(self) -> bytes:
        """The whole body (for an error answer)."""
        return b"".join([piece async for piece in self.iter_chunks()])

    async def iter_chunks(self) -> AsyncIterator[bytes]:
        while (piece := await self._conn.next_chunk()) is not None:
            yield piece


class Pool:
    """Keep-alive connections to the server at ``server`` (``https://host:port``): at most
    ``limit`` requests at once; more wait for a connection to come back."""

    def __init__(self, server: str, tls: ssl.SSLContext | None, headers: dict[str, str],
                 limit: int = 64) -> None:
        parts = urlsplit(server)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) server address: {server!r}")
        self._host = parts.hostname
        self._port = parts.port or (443 if parts.scheme == "https" else 80)
        self._tls = (tls or ssl.create_default_context()) if parts.scheme == "https" else None
        fixed = "".join(f"{k}: {v}\r\n" for k, v in {"Host": parts.netloc, **headers}.items())
        self._fixed = fixed
        self._limit = limit
        self._idle: list[_Connection] = []
        self._open: set[_Connection] = set()
        self._busy = 0
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._closed = False

    def _head(self, method: str, target: str, body: bytes | None, content_type: str) -> bytes:
        head = f"{method} {target} HTTP/1.1\r\n{self._fixed}"
        if body is not None:
            head += f"Content-Type: {content_type}\r\nContent-Length: {len(body)}\r\n"
        data = (head + "\r\n").encode("latin-1")
        return data + body if body else data

    async def request(self, method: str, target: str, body: bytes | None = None,
                      content_type: str = "application/json") -> tuple[int, bytes]:
        """Send one request and return the status and the whole body."""
        data = self._head(method, target, body, content_type)
        async with asyncio.timeout(REQUEST_TIMEOUT):
            await self._slot()
            try:
                return await self._exchange(method, data)
            finally:
                self._release_slot()

    async def _exchange(self, method: str, data: bytes) -> tuple[int, bytes]:
        loop = asyncio.get_running_loop()
        for attempt in (0, 1):
            conn = self._reuse() if attempt == 0 else None
            if conn is None:
                conn = await self._connect()
            conn.send(data, loop, stream=False)
            assert conn.answered is not None
            try:
                status, body = await conn.answered
            except HttpConnectionError:
                self._drop(conn)
                answer = conn.answer
                # a reused connection the server closed before answering: once more, when
                # sending the request twice does no harm (as aiohttp and Go's client do)
                if (attempt == 0 and conn.used > 1 and method in _REPLAYABLE
                        and (answer is None or not answer.started)):
                    continue
                raise
            except BaseException:  # cancelled mid-answer: the connection's state is unknown
                self._drop(conn)
                raise
            if conn.usable:
                conn.idle_since = time.monotonic()
                self._idle.append(conn)
            else:
                self._drop(conn)
            return status, body
        raise AssertionError("unreachable")

    @contextlib.asynccontextmanager
    async def stream(self, target: str) -> AsyncIterator[Stream]:
        """GET ``target`` on a connection of its own, closed when the block ends."""
        conn = await self._connect()
        try:
            conn.send(self._head("GET", target, None, ""), asyncio.get_running_loop(),
                      stream=True)
            assert conn.head_seen is not None
            async with asyncio.timeout(REQUEST_TIMEOUT):
                status, content_type = await conn.head_seen
            yield Stream(conn, status, content_type)
        finally:
            self._drop(conn)

    async def close(self) -> None:
        self._closed = True
        for conn in list(self._open):
            self._drop(conn)
        self._idle.clear()

    # --- connections --------------------------------------------------------------------

    async def _slot(self) -> None:
        if self._busy >= self._limit:
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            except BaseException:
                if waiter.done() and not waiter.cancelled():
                    self._release_slot()  # handed a slot, then cancelled: pass it on
                else:
                    with contextlib.suppress(ValueError):
                        self._waiters.remove(waiter)
                raise
            return  # the request that released the slot handed it over
        self._busy += 1

    def _release_slot(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return
        self._busy -= 1

    def _reuse(self) -> _Connection | None:
        now = time.monotonic()
        while self._idle:
            conn = self._idle.pop()
            if conn.usable and now - conn.idle_since < IDLE_SECONDS:
                return conn
            self._drop(conn)
        return None

    async def _connect(self) -> _Connection:
        if self._closed:
            raise HttpConnectionError("the client is closed")
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(CONNECT_TIMEOUT):
                _, conn = await loop.create_connection(
                    _Connection, self._host, self._port, ssl=self._tls,
                    server_hostname=self._host if self._tls is not None else None)
        except TimeoutError:
            raise HttpConnectionError(
                f"connecting to {self._host}:{self._port} timed out") from None
        except OSError as err:  # refused, unreachable, a TLS handshake that failed
            raise HttpConnectionError(
                f"cannot connect to {self._host}:{self._port}: {err}") from err
        self._open.add(conn)
        return conn

    def _drop(self, conn: _Connection) -> None:
        self._open.discard(conn)
        conn.shut()

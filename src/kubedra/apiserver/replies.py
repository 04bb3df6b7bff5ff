"""Whole responses written whole: a :class:`Reply` whose body is in hand goes out as one
transport write, head and body together, with the headers aiohttp's general path gives it;
:func:`write_chunk` does the same for each chunk of a watch.

aiohttp prepares every response for streaming (payload writer, chunking, compression and
length checks, three awaited stages); for the API's answers, all complete bytes, that path
cost a GET as much as its handler. Anything the short path does not cover (HEAD, bodiless
codes, compression, chunking, cookies, a payload object) takes aiohttp's own.

aiohttp 3.14 is pinned: the short path sets the response's and the payload writer's state
(``_eof_sent``, ``_keep_alive``, ``output_size``) as their own path would.
"""

from __future__ import annotations

from aiohttp import hdrs, web
from aiohttp.abc import AbstractStreamWriter
from aiohttp.helpers import rfc822_formatted_time
from aiohttp.http import SERVER_SOFTWARE, HttpVersion10, HttpVersion11
from aiohttp.http_writer import StreamWriter, _serialize_headers
from aiohttp.web_response import Response
from mypy_extensions import mypyc_attr

JSON = "application/json"


# a subclass of a library class; its base imported from its own module, where mypyc's
# generated code looks it up
@mypyc_attr(native_class=False)
class Reply(Response):
    """A response with all its bytes: sent by :meth:`prepare` in one write."""

    async def prepare(self, request: web.BaseRequest) -> AbstractStreamWriter | None:
        writer = request._payload_writer
        body = self._body
        if (self._eof_sent or self._payload_writer is not None or not isinstance(body, bytes)
                or not isinstance(writer, StreamWriter) or request.method == hdrs.METH_HEAD
                or self.status < 200 or self.status in (204, 304) or self._compression
                or self._chunked or self._cookies):
            return await super().prepare(request)
        self._req = request
        self._payload_writer = writer
        keep_alive = self._keep_alive
        if keep_alive is None:
            keep_alive = self._keep_alive = request.keep_alive
        headers = self._headers
        if hdrs.CONTENT_LENGTH not in headers:
            headers[hdrs.CONTENT_LENGTH] = str(len(body))
        if body:
            headers.setdefault(hdrs.CONTENT_TYPE, "application/octet-stream")
        if hdrs.DATE not in headers:
            headers[hdrs.DATE] = rfc822_formatted_time()
        headers.setdefault(hdrs.SERVER, SERVER_SOFTWARE)
        version = request.version
        if hdrs.CONNECTION not in headers:
            if keep_alive:
                if version == HttpVersion10:
                    headers[hdrs.CONNECTION] = "keep-alive"
            elif version == HttpVersion11:
                headers[hdrs.CONNECTION] = "close"
        await request._prepare_hook(self)
        head = _serialize_headers(
            f"HTTP/{version[0]}.{version[1]} {self._status} {self._reason}", headers)
        writer._write(head + body)  # raises ConnectionError on a closed transport, as theirs
        self._eof_sent = True
        self._req = None
        self._body_length = writer.output_size
        await writer.drain()
        return writer


# aiohttp's own bound on what a stream writes before it waits for the transport to drain
_DRAIN_AFTER = 0x10000


async def write_chunk(resp: web.StreamResponse, data: bytes) -> None:
    """``resp.write(data)`` on a prepared chunked stream (a watch), the chunk framed here and
    given to the transport in one write: aiohttp's general path (length clipping,
    compression, header coalescing, reshaping) ran for every event of every watcher, and a
    watch event needs none of it. The first write, which carries the buffered head, and
    anything unusual take aiohttp's own path."""
    writer = resp._payload_writer
    if (not isinstance(writer, StreamWriter) or not writer.chunked or not data
            or writer._compress is not None or writer._headers_buf is not None
            or writer.length is not None or writer.on_body_write is not None
            or resp._eof_sent):
        await resp.write(data)
        return
    writer._write(b"%x\r\n%b\r\n" % (len(data), data))  # ConnectionError when closed
    if writer.buffer_size > _DRAIN_AFTER:  # as aiohttp's write: wait for a slow reader
        writer.buffer_size = 0
        await writer.drain()


def json_reply(data: bytes, code: int = 200) -> Reply:
    """Encoded JSON as the answer."""
    return Reply(body=data, status=code, content_type=JSON)

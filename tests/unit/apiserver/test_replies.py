"""Replies written in one piece carry what aiohttp's own response path would have sent,
byte for byte but for the Date, and so do the chunks of a stream written one write each;
the request counts render as Prometheus counters and cumulative histograms."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from aiohttp import web

from kubedra.apiserver.metrics import Metrics
from kubedra.apiserver.replies import Reply, write_chunk

BODY = b'{"kind":"Status"}'


def _answers(kind: Callable[..., web.Response]
             ) -> Callable[[web.BaseRequest], Awaitable[web.Response]]:
    async def handler(request: web.BaseRequest) -> web.Response:
        resp = kind(body=BODY, status=int(request.query.get("code", "200")),
                    content_type="application/json")
        resp.headers.add("Warning", '299 - "first"')
        resp.headers.add("Warning", '299 - "second"')
        return resp
    return handler


@pytest.fixture
async def ports() -> AsyncIterator[tuple[int, int]]:
    runners = []
    bound = []
    for kind in (web.Response, Reply):
        runner = web.ServerRunner(web.Server(_answers(kind)), handle_signals=False)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        assert site._server is not None
        bound.append(site._server.sockets[0].getsockname()[1])  # type: ignore[attr-defined]
        runners.append(runner)
    yield bound[0], bound[1]
    for runner in runners:
        await runner.cleanup()


async def _exchange(port: int, request: bytes) -> bytes:
    """The raw bytes answered to ``request``, up to the server closing or a pause."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request)
    chunks = []
    try:
        while chunk := await asyncio.wait_for(reader.read(65536), 0.5):
            chunks.append(chunk)
    except TimeoutError:
        pass
    writer.close()
    return b"".join(chunks)


def _without_date(raw: bytes) -> bytes:
    return b"\r\n".join(line for line in raw.split(b"\r\n") if not line.startswith(b"Date: "))


@pytest.mark.parametrize("request_head", [
    b"GET /?code=200 HTTP/1.1\r\nHost: x\r\n\r\n",
    b"GET /?code=404 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    b"GET /?code=201 HTTP/1.0\r\nHost: x\r\nConnection: keep-alive\r\n\r\n",
    b"GET /?code=200 HTTP/1.0\r\nHost: x\r\n\r\n",
    b"HEAD /?code=200 HTTP/1.1\r\nHost: x\r\n\r\n",
    b"GET /?code=204 HTTP/1.1\r\nHost: x\r\n\r\n",
    b"GET /?code=304 HTTP/1.1\r\nHost: x\r\n\r\n",
    # two pipelined requests: the connection serves both, in order
    b"GET /?code=200 HTTP/1.1\r\nHost: x\r\n\r\nGET /?code=409 HTTP/1.1\r\nHost: x\r\n\r\n",
])
async def test_reply_sends_what_aiohttp_sends(ports: tuple[int, int],
                                               request_head: bytes) -> None:
    theirs, ours = [await _exchange(port, request_head) for port in ports]
    assert b"HTTP/1." in ours
    assert _without_date(ours) == _without_date(theirs)


EVENTS = [b'{"type":"ADDED","object":{}}\n', b"x" * 70_000, b'{"type":"DELETED"}\n' * 3]


def _streams(write: Callable[[web.StreamResponse, bytes], Awaitable[None]]
             ) -> Callable[[web.BaseRequest], Awaitable[web.StreamResponse]]:
    async def handler(request: web.BaseRequest) -> web.StreamResponse:
        resp = web.StreamResponse()
        resp.content_type = "application/json"
        resp.enable_chunked_encoding()
        await resp.prepare(request)
        for event in EVENTS:  # the first carries the buffered head; one is past the drain mark
            await write(resp, event)
        await resp.write_eof()
        return resp
    return handler


async def test_write_chunk_sends_what_aiohttp_sends() -> None:
    """A watch's chunks, framed by write_chunk, are aiohttp's own on the wire, each in one
    transport write after the first (which carries the head)."""
    answers = []
    for write in (web.StreamResponse.write, write_chunk):
        runner = web.ServerRunner(web.Server(_streams(write)), handle_signals=False)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        assert site._server is not None
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]
        answers.append(await _exchange(port, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
        await runner.cleanup()
    theirs, ours = answers
    assert ours.endswith(b"0\r\n\r\n") and b"%x\r\n" % 70_000 + b"x" * 70_000 in ours
    assert _without_date(ours) == _without_date(theirs)


async def test_reply_to_a_closed_connection_is_a_connection_error() -> None:
    """What aiohttp's request handler expects of a client gone before the answer."""
    class Gone:
        def is_closing(self) -> bool:
            return True

    class Protocol:
        transport = Gone()

    from aiohttp.http_writer import StreamWriter
    from aiohttp.test_utils import make_mocked_request

    writer = StreamWriter(Protocol(), asyncio.get_running_loop())  # type: ignore[arg-type]
    request = make_mocked_request("GET", "/", writer=writer)
    with pytest.raises(ConnectionError):
        await Reply(body=BODY).prepare(request)


def test_request_counts_render_as_counters_and_cumulative_buckets() -> None:
    metrics = Metrics()
    for seconds in (0.001, 0.005, 0.3, 100.0):
        metrics.observe("get", "", "pods", 200, seconds)
    metrics.observe("list", "resource.k8s.io", "resourceslices", 500, 0.02)
    text = metrics.render().decode()
    assert 'apiserver_request_total{code="200",group="",resource="pods",verb="get"} 4.0' in text
    assert ('apiserver_request_total{code="500",group="resource.k8s.io",'
            'resource="resourceslices",verb="list"} 1.0') in text
    bucket = ('apiserver_request_duration_seconds_bucket'
              '{group="",le="%s",resource="pods",verb="get"}')
    # an observation on a bound counts in that bound's bucket (le: less or equal)
    assert f"{bucket % '0.005'} 2.0" in text
    assert f"{bucket % '0.4'} 3.0" in text
    assert f"{bucket % '60.0'} 3.0" in text
    assert f"{bucket % '+Inf'} 4.0" in text
    assert 'apiserver_request_duration_seconds_count{group="",resource="pods",verb="get"} 4.0' \
        in text
    assert 'apiserver_request_duration_seconds_sum{group="",resource="pods",verb="get"} 100.306' \
        in text

"""The client's HTTP/1.1 connections against a real server on 127.0.0.1 that answers each
request with scripted bytes: lengths, chunks, bodies ended by the connection, keep-alive and
its loss, streamed answers, limits and broken peers."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import pytest

from kubedra.client.http import HttpConnectionError, Pool


@dataclass
class Peer:
    """What the server saw: each request's head and body, and the connection it came on."""

    requests: list[tuple[bytes, bytes, int]] = field(default_factory=list)
    connections: int = 0


async def _read_request(reader: asyncio.StreamReader) -> tuple[bytes, bytes] | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    length = 0
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.lower() == b"content-length":
            length = int(value)
    body = await reader.readexactly(length) if length else b""
    return head, body


@contextlib.asynccontextmanager
async def serve(answer: Callable[[int, bytes, asyncio.StreamWriter], object],
                headers: dict[str, str] | None = None, limit: int = 64,
                ) -> AsyncIterator[tuple[Pool, Peer]]:
    """A server calling ``answer(n, head, writer)`` for the n-th request (it writes the
    answer; a coroutine result is awaited), and a pool of connections to it."""
    peer = Peer()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer.connections += 1
        conn = peer.connections
        try:
            while (got := await _read_request(reader)) is not None:
                head, body = got
                peer.requests.append((head, body, conn))
                result = answer(len(peer.requests), head, writer)
                if asyncio.iscoroutine(result):
                    await result
                if writer.is_closing():
                    return
                await writer.drain()
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    pool = Pool(f"http://127.0.0.1:{port}", None, headers or {}, limit=limit)
    try:
        yield pool, peer
    finally:
        server.close()


def ok(body: bytes, extra: str = "") -> bytes:
    return (f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n{extra}"
            f"Content-Length: {len(body)}\r\n\r\n").encode() + body


def chunked(*pieces: bytes, trailer: bytes = b"") -> bytes:
    out = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    for piece in pieces:
        out += f"{len(piece):x};ext=1\r\n".encode() + piece + b"\r\n"
    return out + b"0\r\n" + trailer + b"\r\n"


async def test_lengths_keep_one_connection_and_send_the_fixed_headers() -> None:
    async with serve(lambda n, head, w: w.write(ok(b'{"n":%d}' % n)),
                     headers={"User-Agent": "t", "Authorization": "Bearer x"}) as (pool, peer):
        for n in (1, 2, 3):
            assert await pool.request("GET", f"/api/v1/x?n={n}") == (200, b'{"n":%d}' % n)
        status, body = await pool.request("POST", "/api/v1/y", b'{"a":1}',
                                          "application/merge-patch+json")
    assert (status, body) == (200, b'{"n":4}')
    assert peer.connections == 1
    head, sent, _ = peer.requests[3]
    assert head.startswith(b"POST /api/v1/y HTTP/1.1\r\nHost: 127.0.0.1:")
    assert b"\r\nUser-Agent: t\r\nAuthorization: Bearer x\r\n" in head
    assert b"Content-Type: application/merge-patch+json\r\nContent-Length: 7\r\n" in head
    assert sent == b'{"a":1}'
    assert peer.requests[0][0].startswith(b"GET /api/v1/x?n=1 HTTP/1.1\r\n")


async def test_chunked_bodies_with_extensions_and_trailers_arrive_whole() -> None:
    def answer(n: int, head: bytes, w: asyncio.StreamWriter) -> object:
        data = chunked(b'{"items":', b"[1,2", b"]}", trailer=b"X-T: 1\r\n")

        async def dribble() -> None:  # a byte at a time: every state of the parse is met
            for i in range(len(data)):
                w.write(data[i:i + 1])
                await w.drain()
        return dribble()

    async with serve(answer) as (pool, peer):
        assert await pool.request("GET", "/a") == (200, b'{"items":[1,2]}')
        assert await pool.request("GET", "/b") == (200, b'{"items":[1,2]}')
    assert peer.connections == 1


async def test_a_body_without_length_ends_with_the_connection() -> None:
    def answer(n: int, head: bytes, w: asyncio.StreamWriter) -> None:
        w.write(b"HTTP/1.1 500 Internal Server Error\r\n\r\nsomething broke")
        w.close()

    async with serve(answer) as (pool, peer):
        assert await pool.request("GET", "/") == (500, b"something broke")
        assert await pool.request("GET", "/") == (500, b"something broke")
    assert peer.connections == 2


async def test_connection_close_and_http_1_0_answers_are_not_reused() -> None:
    answers = [ok(b"1", "Connection: close\r\n"),
               b"HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\n2",
               b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\n3",
               ok(b"4")]
    async with serve(lambda n, head, w: w.write(answers[n - 1])) as (pool, peer):
        got = [await pool.request("GET", "/") for _ in range(4)]
    assert [b for _, b in got] == [b"1", b"2", b"3", b"4"]
    assert [conn for _, _, conn in peer.requests] == [1, 2, 3, 3]


async def test_a_reused_connection_lost_before_the_answer_is_retried_only_when_safe() -> None:
    def answer(n: int, head: bytes, w: asyncio.StreamWriter) -> None:
        if n in (2, 4):  # the server drops the kept-alive connection instead of answering
            w.close()
        else:
            w.write(ok(b"%d" % n))

    async with serve(answer) as (pool, peer):
        assert await pool.request("GET", "/") == (200, b"1")
        assert await pool.request("GET", "/") == (200, b"3")  # sent again on a new one
        with pytest.raises(HttpConnectionError):  # a create is not sent twice
            await pool.request("POST", "/", b"{}")
        assert await pool.request("POST", "/", b"{}") == (200, b"5")
    assert [conn for _, _, conn in peer.requests] == [1, 1, 2, 2, 3]


async def test_an_answer_cut_short_is_an_error_not_a_hang() -> None:
    def answer(n: int, head: bytes, w: asyncio.StreamWriter) -> None:
        w.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly this")
        w.close()

    async with serve(answer) as (pool, _):
        with pytest.raises(HttpConnectionError, match="closed"):
            await pool.request("POST", "/", b"{}")


@pytest.mark.parametrize("reply", [b"SSH-2.0-OpenSSH\r\n\r\n",
                                   b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n",
                                   b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
                                   b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"])
async def test_a_malformed_answer_is_an_error(reply: bytes) -> None:
    async with serve(lambda n, head, w: w.write(reply)) as (pool, _):
        with pytest.raises(HttpConnectionError):
            await pool.request("GET", "/")


async def test_no_server_is_a_connection_error() -> None:
    server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    server.close()
    await server.wait_closed()
    pool = Pool(f"http://127.0.0.1:{port}", None, {})
    with pytest.raises(HttpConnectionError, match="cannot connect"):
        await pool.request("GET", "/")
    with pytest.raises(ValueError):
        Pool("unix:///run/x.sock", None, {})


async def test_at_most_limit_requests_at_once_and_a_cancelled_one_frees_its_place() -> None:
    release = asyncio.Event()

    async def answer(n: int, head: bytes, w: asyncio.StreamWriter) -> None:
        await release.wait()
        w.write(ok(b"x"))

    async with serve(answer, limit=2) as (pool, peer):
        first = [asyncio.ensure_future(pool.request("GET", "/")) for _ in range(5)]
        await asyncio.sleep(0.2)
        assert peer.connections == 2 and len(peer.requests) == 2
        first[2].cancel()  # waiting for a place: it leaves the queue
        first[0].cancel()  # being answered: its connection is dropped, its place passed on
        await asyncio.sleep(0.2)
        release.set()
        results = await asyncio.gather(*first, return_exceptions=True)
        # every place came back: more requests than the limit, one after the other
        for _ in range(3):
            assert await asyncio.wait_for(pool.request("GET", "/"), 5) == (200, b"x")
    assert isinstance(results[0], asyncio.CancelledError)
    assert isinstance(results[2], asyncio.CancelledError)
    assert results[1] == results[3] == results[4] == (200, b"x")
    assert peer.connections == 3


async def test_a_streamed_answer_comes_piece_by_piece_and_ends_with_its_last_chunk() -> None:
    step = asyncio.Event()

    async def answer(n: int, head: bytes, w: asyncio.StreamWriter) -> None:
        w.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        w.write(b"6\r\nline1\n\r\n")
        await step.wait()
        w.write(b"c\r\nline2\nline3\n\r\n0\r\n\r\n")

    async with serve(answer) as (pool, peer), pool.stream("/watch?watch=true") as resp:
        assert resp.status == 200
        chunks = resp.iter_chunks()
        assert await anext(chunks) == b"line1\n"  # before the rest is sent
        step.set()
        assert b"".join([c async for c in chunks]) == b"line2\nline3\n"
    assert peer.requests[0][0].startswith(b"GET /watch?watch=true HTTP/1.1\r\n")


async def test_a_stream_cut_by_the_server_raises_after_what_arrived() -> None:
    def answer(n: int, head: bytes, w: asyncio.StreamWriter) -> None:
        w.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")
        w.close()

    async with serve(answer) as (pool, _):
        got = b""
        with pytest.raises(HttpConnectionError):
            async with pool.stream("/w") as resp:
                async for piece in resp.iter_chunks():
                    got += piece
    assert got == b"hello"


async def test_an_error_answer_to_a_stream_is_read_whole() -> None:
    gone = b'{"kind":"Status","code":410}'
    answer = (b"HTTP/1.1 410 Gone\r\nContent-Length: %d\r\n\r\n" % len(gone)) + gone
    async with serve(lambda n, head, w: w.write(answer)) as (pool, _), \
            pool.stream("/w") as resp:
        assert (resp.status, await resp.read()) == (410, gone)


async def test_a_large_streamed_body_pauses_reading_until_it_is_read() -> None:
    line = b"x" * 65535 + b"\n"
    count = 200  # 12.5 MiB: above the pause threshold

    async def answer(n: int, head: bytes, w: asyncio.StreamWriter) -> None:
        w.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        for _ in range(count):
            w.write(f"{len(line):x}\r\n".encode() + line + b"\r\n")
            await w.drain()
        w.write(b"0\r\n\r\n")

    async with serve(answer) as (pool, _), pool.stream("/w") as resp:
        await asyncio.sleep(0.5)  # the server writes while nobody reads
        conn = resp._conn
        assert conn.queued <= 5 << 20
        total = sum([len(c) async for c in resp.iter_chunks()])
    assert total == len(line) * count

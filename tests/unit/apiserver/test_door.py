"""Limits at the door, with raw sockets against a server on 127.0.0.1 where aiohttp's client
would hide the behaviour: body size, in-flight bounds, request deadline, head sizes, slow
watchers, connection limits. Each abuse leaves the store unchanged and the server
answering."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from typing import Any

import pytest

from kubedra.apiserver.connections import ConnectionLimits
from kubedra.apiserver.limits import MUTATING, Limits
from kubedra.storage.contract import KeyValue
from tests.unit.apiserver.conftest import Env, MakeEnv

PODS = "/api/v1/namespaces/default/pods"
LEASES = "/apis/coordination.k8s.io/v1/namespaces/default/leases"


def _lease(name: str, size: int = 0) -> bytes:
    return json.dumps(_lease_obj(name, size)).encode()


def _lease_obj(name: str, size: int = 0) -> dict[str, Any]:
    return {"metadata": {"name": name, "annotations": {"k": "x" * size}}}


class Raw:
    """One HTTP/1.1 connection written byte for byte."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, env: Env) -> Raw:
        host, port = env.server.address.split(":")
        return cls(*await asyncio.open_connection(host, int(port)))

    async def send(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def response(self, timeout: float = 10.0) -> tuple[int, dict[str, str], bytes]:
        """The next response: status, headers (lower-case names), body."""
        head = await asyncio.wait_for(self.reader.readuntil(b"\r\n\r\n"), timeout)
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {k.lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:]
                                                         if ln)}
        body = b""
        if "content-length" in headers:
            body = await self.reader.readexactly(int(headers["content-length"]))
        return status, headers, body

    async def closed(self, timeout: float = 10.0) -> bool:
        """The server closed the connection (EOF or reset) within ``timeout``."""
        try:
            while await asyncio.wait_for(self.reader.read(65536), timeout):
                pass
        except (ConnectionResetError, BrokenPipeError):
            return True
        except TimeoutError:
            return False
        return True

    def close(self) -> None:
        self.writer.close()


def _post_head(path: str, length: int | None = None, chunked: bool = False) -> bytes:
    head = f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    if chunked:
        head += "Transfer-Encoding: chunked\r\n"
    elif length is not None:
        head += f"Content-Length: {length}\r\n"
    return head.encode() + b"\r\n"


async def _responsive(env: Env) -> None:
    status, _ = await asyncio.wait_for(env.call("GET", "/api/v1/namespaces/default"), 2)
    assert status == 200


async def _absent(env: Env, name: str) -> None:
    assert (await env.call("GET", f"{LEASES}/{name}"))[0] == 404


def _status(body: bytes) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(body)
    assert out["kind"] == "Status"
    return out


# --- request bodies ---------------------------------------------------------------------------


async def test_oversized_bodies_get_413_and_store_nothing(env: Env) -> None:
    big = _lease("big", 4 << 20)
    raw = await Raw.open(env)
    await raw.send(_post_head(LEASES, len(big)))  # declared too large: refused before reading
    status, _, body = await raw.response()
    assert status == 413
    assert _status(body)["message"] == "Request entity too large: limit is 3145728"
    raw.close()

    raw = await Raw.open(env)  # chunked, no Content-Length: refused once over the limit
    await raw.send(_post_head(LEASES, chunked=True))
    chunk = 1 << 20
    try:
        for i in range(0, len(big), chunk):
            part = big[i:i + chunk]
            await raw.send(f"{len(part):x}\r\n".encode() + part + b"\r\n")
        await raw.send(b"0\r\n\r\n")
    except ConnectionResetError:
        pass  # the server may close before reading the rest
    status, _, body = await raw.response()
    assert status == 413 and _status(body)["reason"] == "RequestEntityTooLarge"
    raw.close()
    await _absent(env, "big")
    await _responsive(env)


async def test_lying_content_length_stores_nothing(make_env: MakeEnv) -> None:
    env = await make_env(limits=Limits(request_timeout=1.0))
    body = _lease("liar")
    raw = await Raw.open(env)  # says less than it sends: the rest is no request
    await raw.send(_post_head(LEASES, 10) + body)
    status, _, _ = await raw.response()
    assert status == 400
    raw.close()
    raw = await Raw.open(env)  # says more than it sends: the deadline answers
    await raw.send(_post_head(LEASES, len(body) + 100) + body)
    assert (await raw.response())[0] == 504
    raw.close()
    await _absent(env, "liar")
    await _responsive(env)


# --- in flight ----------------------------------------------------------------------------------


async def test_mutating_requests_in_flight_are_bounded_separately(make_env: MakeEnv) -> None:
    env = await make_env(limits=Limits(max_requests_inflight=1,
                                       max_mutating_requests_inflight=1))
    body = _lease("held")
    held = await Raw.open(env)  # a create whose body has not arrived holds the one seat
    await held.send(_post_head(LEASES, len(body)))
    while env.server.door.inflight[MUTATING] == 0:
        await asyncio.sleep(0.01)
    raw = await Raw.open(env)
    await raw.send(_post_head(LEASES, len(_lease("next"))) + _lease("next"))
    status, headers, answer = await raw.response()
    assert status == 429 and headers["retry-after"] == "1"
    err = _status(answer)
    assert err["message"] == "Too many requests, please try again later."
    assert err["reason"] == "TooManyRequests" and err["details"] == {"retryAfterSeconds": 1}
    raw.close()
    await _responsive(env)  # read-only requests have their own seats
    await held.send(body)
    assert (await held.response())[0] == 201
    assert (await env.call("POST", LEASES, {"metadata": {"name": "next"}}))[0] == 201
    held.close()


# --- deadline -----------------------------------------------------------------------------------


async def test_request_deadline(make_env: MakeEnv) -> None:
    env = await make_env(limits=Limits(request_timeout=0.5))
    raw = await Raw.open(env)  # a body that never comes
    await raw.send(_post_head(LEASES, 50) + b'{"metadata":')
    status, _, body = await raw.response()
    assert status == 504
    assert _status(body) == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "Timeout: request did not complete within the allotted timeout",
        "reason": "Timeout", "details": {}, "code": 504}
    assert await raw.closed()  # what the handler might still answer has nowhere to go
    raw.close()
    status, err = await env.call("GET", f"{PODS}?timeout=soon")
    assert status == 400 and err["message"] == (
        'invalid timeout specified in the request URL - time: invalid duration "soon"')
    assert (await env.call("GET", "/api?timeout=32s"))[0] == 200  # kubectl's discovery


async def test_a_write_past_its_deadline_is_applied_whole(
    make_env: MakeEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The deadline answers 504 while the compare-and-swap goes on (it is never cut
    midway): the write lands whole, and keeps its in-flight seat until then."""
    env = await make_env()
    assert (await env.call("POST", LEASES, {"metadata": {"name": "cas"}}))[0] == 201
    update = env.store.update

    async def slow_update(key: str, value: bytes, expected_revision: int, *,
                          ttl: int = 0) -> KeyValue:
        await asyncio.sleep(1.0)
        return await update(key, value, expected_revision, ttl=ttl)

    monkeypatch.setattr(env.store, "update", slow_update)
    status, err = await env.call(
        "PATCH", f"{LEASES}/cas?timeout=200ms", {"spec": {"holderIdentity": "v"}},
        "application/merge-patch+json")
    assert status == 504 and err["reason"] == "Timeout"
    assert env.server.door.inflight[MUTATING] == 1
    while env.server.door.inflight[MUTATING]:
        await asyncio.sleep(0.05)
    status, cm = await env.call("GET", f"{LEASES}/cas")
    assert status == 200 and cm["spec"]["holderIdentity"] == "v"


# --- request heads ------------------------------------------------------------------------------


async def test_oversized_heads_are_answered_414_and_431(env: Env) -> None:
    cases = [
        (b"GET /api/v1/" + b"a" * (2 << 20) + b" HTTP/1.1\r\nHost: x\r\n\r\n", 414),
        (b"GET /api/v1 HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 20_000 + b"\r\n\r\n", 431),
        (b"GET /api/v1 HTTP/1.1\r\nHost: x\r\n"
         + b"".join(b"X-%d: v\r\n" % i for i in range(300)) + b"\r\n", 431),
    ]
    for request, code in cases:
        raw = await Raw.open(env)
        with contextlib.suppress(ConnectionResetError):
            await raw.send(request)
        status, _, body = await raw.response()
        assert status == code, body
        assert await raw.closed()
        raw.close()
    await _responsive(env)


# --- connections --------------------------------------------------------------------------------


async def test_connections_are_bounded_and_slow_heads_closed(make_env: MakeEnv) -> None:
    env = await make_env(connection_limits=ConnectionLimits(
        max_connections=20, header_timeout=0.5, idle_timeout=1.0))
    slow = await Raw.open(env)
    await slow.send(b"GET /api/v1 HTTP/1.1\r\nHo")  # a head that never ends
    idle = await Raw.open(env)
    await idle.send(b"GET /api/v1 HTTP/1.1\r\nHost: x\r\n\r\n")
    assert (await idle.response())[0] == 200
    assert await slow.closed(3)
    assert await idle.closed(3)  # idle after its answer
    held = [await Raw.open(env) for _ in range(20)]
    await asyncio.sleep(0.1)
    extra = await Raw.open(env)
    status, headers, body = await extra.response()
    assert status == 429 and headers["retry-after"] == "1"
    assert _status(body)["reason"] == "TooManyRequests"
    for raw in held:
        raw.close()
    await asyncio.sleep(0.2)
    await _responsive(env)


# --- slow watchers ------------------------------------------------------------------------------


async def test_a_watcher_that_does_not_read_is_dropped(make_env: MakeEnv) -> None:
    env = await make_env(watch_buffer_bytes=256 << 10)
    hub = env.server.hub
    others = set(hub.subs)  # the server's own followers of the hub
    host, port = env.server.address.split(":")
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect((host, int(port)))
    sock.sendall(f"GET {LEASES}?watch=true HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    while hub.subs <= others:
        await asyncio.sleep(0.01)
    for i in range(120):  # about 6 MB of events the watcher never reads
        status, _ = await env.call("POST", LEASES, _lease_obj(f"c{i}", 50_000))
        assert status == 201
    for _ in range(100):
        if hub.subs <= others:
            break
        await asyncio.sleep(0.05)
    assert hub.subs <= others
    sock.setblocking(False)
    reader, writer = await asyncio.open_connection(sock=sock)
    drained = Raw(reader, writer)
    assert await drained.closed(5)  # what it had not read is gone with the connection
    drained.close()
    await _responsive(env)

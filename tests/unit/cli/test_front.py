"""The front of several API server replicas (:mod:`kubedra.cli.front`) over real sockets on
127.0.0.1: connections take turns among ready replicas, a replica that refuses connections is
passed over at once, an unready one (``/readyz`` not 200) leaves the rotation until it is
ready again, and with no replica a connection ends instead of hanging."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable

import aiohttp
import pytest
from aiohttp import web

from kubedra.cli.front import Front


class Replica:
    def __init__(self, name: str) -> None:
        self.name = name
        self.ready = True
        self.runner: web.AppRunner | None = None
        self.url = ""

    async def start(self, port: int = 0) -> None:
        app = web.Application()
        app.router.add_get("/readyz", self._readyz)
        app.router.add_get("/who", self._who)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", port)
        await site.start()
        server = site._server
        assert isinstance(server, asyncio.Server)
        self.url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"

    async def stop(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()

    async def _readyz(self, _: web.Request) -> web.Response:
        return web.Response(text="ok", status=200 if self.ready else 500)

    async def _who(self, _: web.Request) -> web.Response:
        return web.Response(text=self.name)


@pytest.fixture
async def replicas() -> AsyncIterator[list[Replica]]:
    out = [Replica("a"), Replica("b")]
    for r in out:
        await r.start()
    yield out
    for r in out:
        await r.stop()


@pytest.fixture
async def front(replicas: list[Replica]) -> AsyncIterator[Front]:
    f = Front([r.url for r in replicas], True)
    await f.start()
    yield f
    await f.stop()


async def answers(front: Front, n: int) -> list[str]:
    """``n`` requests, each on a new connection through the front."""
    out = []
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as s:
        for _ in range(n):
            async with s.get(front.url + "/who") as resp:
                out.append(await resp.text())
    return out


async def until(what: str, check: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.05)


async def test_connections_take_turns(front: Front) -> None:
    assert sorted(await answers(front, 4)) == ["a", "a", "b", "b"]


async def test_a_replica_that_refuses_is_passed_over_at_once(
        front: Front, replicas: list[Replica]) -> None:
    await replicas[0].stop()
    assert await answers(front, 6) == ["b"] * 6
    assert not front.backends[0].ready
    await replicas[0].start(int(replicas[0].url.rsplit(":", 1)[1]))  # back where it was
    await until("a ready again", lambda: front.backends[0].ready)
    assert sorted(set(await answers(front, 4))) == ["a", "b"]


async def test_an_unready_replica_leaves_the_rotation(
        front: Front, replicas: list[Replica]) -> None:
    replicas[1].ready = False
    await until("b out", lambda: not front.backends[1].ready)
    assert await answers(front, 6) == ["a"] * 6
    replicas[1].ready = True
    await until("b in", lambda: front.backends[1].ready)
    assert sorted(set(await answers(front, 4))) == ["a", "b"]


async def test_without_replicas_a_connection_ends(front: Front,
                                                  replicas: list[Replica]) -> None:
    for r in replicas:
        await r.stop()
    with pytest.raises(aiohttp.ClientError):
        await asyncio.wait_for(answers(front, 1), 10)


async def test_a_dead_replica_ends_its_connections(front: Front,
                                                   replicas: list[Replica]) -> None:
    """A client whose connection went to a replica that then stops sees it end, and its
    next connection reaches the other replica."""
    reader, writer = await asyncio.open_connection("127.0.0.1", int(front.url.rsplit(":")[-1]))
    writer.write(b"GET /who HTTP/1.1\r\nHost: x\r\n\r\n")
    head = await reader.readuntil(b"\r\n\r\n")
    body = await reader.readexactly(int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0]))
    victim = next(r for r in replicas if r.name == body.decode())
    await victim.stop()
    assert await asyncio.wait_for(reader.read(), 10) == b""
    writer.close()
    assert set(await answers(front, 3)) == {"ab".replace(victim.name, "")}

"""Abuse at the door of the session's real ``kubedra apiserver`` process: thousands of
slowloris clients must not keep a normal client from being served."""

from __future__ import annotations

import asyncio
import contextlib
import time
from urllib.parse import urlsplit

import aiohttp

from kubedra.client import kubeconfig
from tests.e2e.conftest import Server

SLOW_CLIENTS = 2000
ABUSE_SECONDS = 4.0


async def _slowloris(host: str, port: int, stop: asyncio.Event, opened: list[int]) -> None:
    """A request head sent a byte at a time, never finished."""
    try:
        _, writer = await asyncio.open_connection(host, port)
    except OSError:
        return
    opened[0] += 1
    try:
        writer.write(b"GET /api/v1/namespaces HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        while not stop.is_set():
            writer.write(b"a")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), 0.5)
    except OSError:
        pass
    finally:
        writer.close()


async def test_slow_clients_do_not_stop_a_normal_client(apiserver: Server) -> None:
    cfg = kubeconfig.load(apiserver.kubeconfig)
    url = urlsplit(cfg.server)
    assert url.hostname is not None and url.port is not None
    stop = asyncio.Event()
    opened = [0]
    slow = [asyncio.create_task(_slowloris(url.hostname, url.port, stop, opened))
            for _ in range(SLOW_CLIENTS)]
    deadline = time.monotonic() + 30
    while opened[0] < SLOW_CLIENTS and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    assert opened[0] == SLOW_CLIENTS
    latencies = []
    headers = {"Authorization": f"Bearer {cfg.token}"} if cfg.token else {}
    async with aiohttp.ClientSession(cfg.server, headers=headers,
                                     connector=aiohttp.TCPConnector(force_close=True)) as http:
        end = time.monotonic() + ABUSE_SECONDS
        while time.monotonic() < end:
            began = time.monotonic()
            async with http.get("/api/v1/namespaces/default") as resp:
                assert resp.status == 200
            latencies.append(time.monotonic() - began)
            await asyncio.sleep(0.2)
    stop.set()
    await asyncio.gather(*slow)
    assert max(latencies) < 1.0, latencies

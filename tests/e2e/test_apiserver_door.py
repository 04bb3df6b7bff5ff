"""Abuse at the door of the session's real ``kubedra apiserver`` process: a thousand
slowloris clients (TLS handshake done, then a request head a byte at a time) must not keep a
normal client from being served."""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import time
from urllib.parse import urlsplit

import aiohttp
import pytest

from kubedra.client import kubeconfig
from tests.e2e.conftest import Server
from tests.timing import check

SLOW_CLIENTS = 1000
ABUSE_SECONDS = 4.0


async def _slowloris(host: str, port: int, tls: ssl.SSLContext | None, stop: asyncio.Event,
                     opened: list[int]) -> None:
    """A request head sent a byte at a time, never finished."""
    try:
        _, writer = await asyncio.open_connection(host, port, ssl=tls)
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


@pytest.mark.timing
async def test_slow_clients_do_not_stop_a_normal_client(apiserver: Server) -> None:
    cfg = kubeconfig.load(apiserver.kubeconfig)
    url = urlsplit(cfg.server)
    assert url.hostname is not None and url.port is not None
    stop = asyncio.Event()
    opened = [0]
    tls = cfg.ssl_context()
    tls = tls if isinstance(tls, ssl.SSLContext) else None
    slow = [asyncio.create_task(_slowloris(url.hostname, url.port, tls, stop, opened))
            for _ in range(SLOW_CLIENTS)]
    deadline = time.monotonic() + 30
    while opened[0] < SLOW_CLIENTS and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    assert opened[0] == SLOW_CLIENTS
    latencies = []
    # a new connection (and handshake) per request: the server must still accept them
    async with aiohttp.ClientSession(cfg.server, connector=aiohttp.TCPConnector(
            ssl=cfg.ssl_context(), force_close=True)) as http:
        end = time.monotonic() + ABUSE_SECONDS
        while time.monotonic() < end:
            began = time.monotonic()
            async with http.get("/api/v1/namespaces/default") as resp:
                assert resp.status == 200
            latencies.append(time.monotonic() - began)
            await asyncio.sleep(0.2)
    stop.set()
    await asyncio.gather(*slow)
    check(max(latencies), 1.0, f"a GET among {latencies}")

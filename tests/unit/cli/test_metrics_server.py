"""The shared metrics endpoint serves a registry's samples as Prometheus text over HTTP."""

from __future__ import annotations

import aiohttp
import prometheus_client
import pytest

from kubedra.cli.metrics import bound_port, serve_metrics


async def test_serves_registry_as_prometheus_text() -> None:
    registry = prometheus_client.CollectorRegistry()
    counter = prometheus_client.Counter("demo_events_total", "Demo.", ["result"],
                                        registry=registry)
    counter.labels("ok").inc(3)
    runner = await serve_metrics(0, registry)
    try:
        url = f"http://127.0.0.1:{bound_port(runner)}/metrics"
        async with aiohttp.ClientSession() as session, session.get(url) as resp:
            assert resp.status == 200
            assert resp.headers["Content-Type"].startswith("text/plain")
            text = await resp.text()
            async with session.get(url.replace("/metrics", "/other")) as missing:
                assert missing.status == 404
    finally:
        await runner.cleanup()
    assert 'demo_events_total{result="ok"} 3.0' in text


async def test_port_in_use_fails_and_leaves_nothing_running() -> None:
    runner = await serve_metrics(0, prometheus_client.CollectorRegistry())
    try:
        with pytest.raises(OSError):
            await serve_metrics(bound_port(runner), prometheus_client.CollectorRegistry())
    finally:
        await runner.cleanup()

"""Serving a component's Prometheus metrics: ``GET /metrics`` on 127.0.0.1, as
kube-scheduler and kube-controller-manager expose theirs on their secure port."""

from __future__ import annotations

import prometheus_client
from aiohttp import web
from prometheus_client.exposition import CONTENT_TYPE_LATEST


async def serve_metrics(
    port: int, registry: prometheus_client.CollectorRegistry = prometheus_client.REGISTRY
) -> web.AppRunner:
    """Start serving ``registry`` on 127.0.0.1:``port`` (0 picks a free port; read it from
    the runner's addresses). The caller stops it with ``await runner.cleanup()``."""

    async def metrics(_: web.Request) -> web.Response:
        body = prometheus_client.generate_latest(registry)
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})

    app = web.Application()
    app.router.add_get("/metrics", metrics)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, "127.0.0.1", port).start()
    except BaseException:
        await runner.cleanup()
        raise
    return runner


def bound_port(runner: web.AppRunner) -> int:
    """The port a runner from :func:`serve_metrics` listens on."""
    address = runner.addresses[0]
    return int(address[1])

"""A component whose informer cannot recover exits non-zero (so its supervisor restarts it)
instead of staying up with a dead cache: ``kubedra controller-manager`` against a server
whose Pod lists cannot be decoded."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
import yaml
from aiohttp import web


async def broken_server() -> web.AppRunner:
    """Lists answer with an item whose metadata is not an object; watches never start."""

    async def answer(request: web.Request) -> web.Response:
        if request.query.get("watch"):
            return web.json_response({"kind": "Status", "code": 500}, status=500)
        return web.json_response({"kind": "List", "metadata": {"resourceVersion": "1"},
                                  "items": [{"metadata": 5}]})

    app = web.Application()
    app.router.add_route("GET", "/{tail:.*}", answer)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    return runner


@pytest.mark.timeout(120)
async def test_controller_manager_exits_when_an_informer_cannot_recover(tmp_path: Path) -> None:
    runner = await broken_server()
    try:
        port = runner.addresses[0][1]
        config = tmp_path / "kubeconfig"  # plain HTTP: a stand-in server, not kubedra's
        config.write_text(yaml.safe_dump({
            "apiVersion": "v1", "kind": "Config", "current-context": "c",
            "clusters": [{"name": "c", "cluster": {"server": f"http://127.0.0.1:{port}"}}],
            "users": [{"name": "u", "user": {}}],
            "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}))
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-c", "from kubedra.cli.main import main; main()",
            "controller-manager", "--kubeconfig", str(config),
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
        out, _ = await asyncio.wait_for(proc.communicate(), 90)
    finally:
        await runner.cleanup()
    log = out.decode()
    assert proc.returncode != 0, log
    assert "informer failed unexpectedly; listing again" in log
    assert "giving up" in log and "InformerFailed" in log

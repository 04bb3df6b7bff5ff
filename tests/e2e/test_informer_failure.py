"""A component whose informer cannot recover exits non-zero (so its supervisor restarts it)
instead of staying up with a dead cache: ``kubedra controller-manager`` against a server
whose Pod lists cannot be decoded."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from aiohttp import web

from tests.e2e.conftest import stand_in_server


async def broken(request: web.Request) -> web.Response:
    """Lists answer with an item whose metadata is not an object; watches never start."""
    if request.query.get("watch"):
        return web.json_response({"kind": "Status", "code": 500}, status=500)
    return web.json_response({"kind": "List", "metadata": {"resourceVersion": "1"},
                              "items": [{"metadata": 5}]})


@pytest.mark.timeout(120)
async def test_controller_manager_exits_when_an_informer_cannot_recover(tmp_path: Path) -> None:
    async with stand_in_server(broken, tmp_path / "kubeconfig") as config:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-c", "from kubedra.cli.main import main; main()",
            "controller-manager", "--kubeconfig", str(config), "--no-leader-elect",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
        out, _ = await asyncio.wait_for(proc.communicate(), 90)
    log = out.decode()
    assert proc.returncode != 0, log
    assert "informer failed unexpectedly; listing again" in log
    assert "giving up" in log and "InformerFailed" in log

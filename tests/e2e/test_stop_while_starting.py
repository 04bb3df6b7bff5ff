"""A component stops on SIGTERM whatever it is doing, including while it is still starting:
here its informers never sync, because every request is answered 401 (a revoked token), so
it never reaches its main loop. Its supervisor's death arrives as the same SIGTERM."""

from __future__ import annotations

import asyncio
import signal
import sys
import time
from pathlib import Path

import pytest
import yaml
from aiohttp import web

#: run_until_signalled's grace for a clean stop, plus start-up and slack
STOP_WITHIN = 15.0


async def unauthorized_server() -> web.AppRunner:
    async def answer(request: web.Request) -> web.Response:
        return web.json_response({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                  "message": "Unauthorized", "reason": "Unauthorized",
                                  "code": 401}, status=401)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", answer)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    return runner


@pytest.mark.timeout(90)
@pytest.mark.parametrize("component", [["controller-manager"], ["scheduler"]])
async def test_sigterm_stops_a_component_whose_informers_never_sync(
        tmp_path: Path, component: list[str]) -> None:
    runner = await unauthorized_server()
    try:
        port = runner.addresses[0][1]
        config = tmp_path / "kubeconfig"
        config.write_text(yaml.safe_dump({
            "apiVersion": "v1", "kind": "Config", "current-context": "c",
            "clusters": [{"name": "c", "cluster": {"server": f"http://127.0.0.1:{port}"}}],
            "users": [{"name": "u", "user": {"token": "revoked"}}],
            "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}))
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-c", "from kubedra.cli.main import main; main()",
            *component, "--kubeconfig", str(config),
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
        try:
            await asyncio.sleep(3.0)  # well into its retries
            assert proc.returncode is None
            proc.send_signal(signal.SIGTERM)
            started = time.monotonic()
            out, _ = await asyncio.wait_for(proc.communicate(), STOP_WITHIN)
            took = time.monotonic() - started
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
    finally:
        await runner.cleanup()
    assert proc.returncode is not None and took < STOP_WITHIN, out.decode()[-3000:]

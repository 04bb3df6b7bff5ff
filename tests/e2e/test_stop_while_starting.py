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
from aiohttp import web

from tests.e2e.conftest import stand_in_server
from tests.timing import bound, check

#: run_until_signalled's grace for a clean stop, plus start-up and slack (tests/timing.py)
STOP_WITHIN = 15.0


async def unauthorized(request: web.Request) -> web.Response:
    return web.json_response({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                              "message": "Unauthorized", "reason": "Unauthorized",
                              "code": 401}, status=401)


@pytest.mark.timing
@pytest.mark.timeout(90)
@pytest.mark.parametrize("component", [["controller-manager"], ["scheduler"]])
async def test_sigterm_stops_a_component_whose_informers_never_sync(
        tmp_path: Path, component: list[str]) -> None:
    async with stand_in_server(unauthorized, tmp_path / "kubeconfig") as config:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-c", "from kubedra.cli.main import main; main()",
            *component, "--kubeconfig", str(config),
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
        try:
            await asyncio.sleep(3.0)  # well into its retries
            assert proc.returncode is None
            proc.send_signal(signal.SIGTERM)
            started = time.monotonic()
            out, _ = await asyncio.wait_for(proc.communicate(), bound(STOP_WITHIN))
            took = time.monotonic() - started
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
    assert proc.returncode is not None, out.decode()[-3000:]
    check(took, STOP_WITHIN, f"stopping ({out.decode()[-3000:]})")

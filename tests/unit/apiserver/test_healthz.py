"""The health endpoints as kube-apiserver's healthz package answers them: ``ok``, the
verbose list, exclusions, one check by path, and a failing store or blocked logging."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from kubedra.apiserver import healthz
from tests.unit.apiserver.conftest import Env

ENDPOINTS = ("healthz", "livez", "readyz")


async def _get(env: Env, path: str) -> tuple[int, str, Any]:
    async with env.http.get(path) as resp:
        return resp.status, await resp.text(), resp.headers


async def test_verbose_and_plain(env: Env) -> None:
    for name in ENDPOINTS:
        status, text, headers = await _get(env, f"/{name}")
        assert (status, text) == (200, "ok")
        assert headers["Content-Type"] == "text/plain; charset=utf-8"
        assert headers["X-Content-Type-Options"] == "nosniff"
        assert (await _get(env, f"/{name}?verbose"))[:2] == (200, (
            f"[+]ping ok\n[+]log ok\n[+]etcd ok\n{name} check passed\n"))
    assert (await _get(env, "/readyz?verbose=1&exclude=etcd&exclude=nope&exclude=gone"))[:2] == (
        200, '[+]ping ok\n[+]log ok\n[+]etcd excluded: ok\nwarn: some health checks cannot be '
        'excluded: no matches for "gone","nope"\nreadyz check passed\n')
    assert (await _get(env, "/livez/etcd"))[:2] == (200, "ok")
    assert (await _get(env, "/readyz/ping"))[:2] == (200, "ok")
    assert (await _get(env, "/readyz/nothing"))[0] == 404


async def test_a_closed_store_fails_the_checks(env: Env,
                                               caplog: pytest.LogCaptureFixture) -> None:
    await env.store.close()
    status, text, _ = await _get(env, "/readyz")
    assert (status, text) == (
        500, "[+]ping ok\n[+]log ok\n[-]etcd failed: reason withheld\nreadyz check failed\n")
    assert "readyz check etcd failed: " in caplog.text
    status, text, _ = await _get(env, "/livez/etcd")
    assert status == 500 and text.startswith("internal server error: ")
    assert (await _get(env, "/readyz?exclude=etcd"))[:2] == (200, "ok")


async def test_a_hung_check_fails_within_the_timeout(env: Env) -> None:
    async def hung() -> None:
        await asyncio.sleep(3600)

    env.server.health.checks["etcd"] = hung
    env.server.health.timeout = 0.2
    started = time.monotonic()
    assert (await _get(env, "/livez/etcd"))[:2] == (500, "internal server error: TimeoutError\n")
    assert (await _get(env, "/livez"))[:2] == (
        500, "[+]ping ok\n[+]log ok\n[-]etcd failed: reason withheld\nlivez check failed\n")
    assert time.monotonic() - started < 10


async def test_blocked_logging_fails_the_log_check(env: Env,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    assert (await _get(env, "/healthz/log"))[:2] == (200, "ok")  # starts the flusher
    log_check = healthz.LogCheck()  # as if its flusher had been stuck for over two minutes
    monkeypatch.setattr(log_check, "_flushed", time.monotonic() - 121)
    with pytest.raises(RuntimeError, match="logging blocked"):
        await log_check.check()

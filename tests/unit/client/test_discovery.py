"""Learning what a server serves: 404 is "not served"; a server that refuses or does not
answer is asked again; the release follows from the DRA versions."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from aiohttp import web

from kubedra.api.release import R1_30, R1_34
from kubedra.client.discovery import discover_release, dra_served, served_versions
from kubedra.client.kubeconfig import ClientConfig
from kubedra.client.rest import Client

Answer = Callable[[str], tuple[int, object]]
Serve = Callable[[Answer], Awaitable[Client]]


@pytest.fixture
async def serve() -> AsyncIterator[Serve]:
    """Stand-in servers answering ``answer(path)``; a client of each."""
    runners: list[web.AppRunner] = []

    async def start(answer: Answer) -> Client:
        async def handle(request: web.Request) -> web.Response:
            status, body = answer(request.path)
            return web.Response(status=status, body=json.dumps(body),
                                content_type="application/json")
        app = web.Application()
        app.router.add_route("GET", "/{tail:.*}", handle)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        runners.append(runner)
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        return Client(ClientConfig(server=f"http://127.0.0.1:{port}"))

    yield start
    for runner in runners:
        await runner.cleanup()


def _status(code: int) -> dict[str, object]:
    return {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code}


def _server(served: set[str], version: str = "30") -> Answer:
    def answer(path: str) -> tuple[int, object]:
        if path == "/version":
            return 200, {"major": "1", "minor": version}
        return (200, {}) if path in served else (404, _status(404))
    return answer


async def test_404_is_not_served_and_the_order_is_kept(serve: Serve) -> None:
    client = await serve(_server({"/apis/resource.k8s.io/v1", "/api/v1"}))
    async with client:
        assert await served_versions(client, "resource.k8s.io",
                                     ("v1alpha2", "v1", "v1beta1")) == ["v1"]
        assert await served_versions(client, "", ("v1",)) == ["v1"]


async def test_the_release_follows_the_dra_versions(serve: Serve) -> None:
    old = await serve(_server({"/apis/resource.k8s.io/v1alpha2"}))
    new = await serve(_server({"/apis/resource.k8s.io/v1"}))
    none = await serve(_server(set(), version="34"))
    async with old, new, none:
        assert await discover_release(old) is R1_30
        assert await discover_release(new) is R1_34
        assert await discover_release(none) is R1_34  # DRA off: /version says
        assert await dra_served(old, "test") is True
        assert await dra_served(new, "test") is False


@pytest.mark.parametrize("refusals", [[503, 429], [401, 403]])
async def test_a_server_that_refuses_is_asked_again(serve: Serve, refusals: list[int]) -> None:
    codes = [*refusals, 200]

    def answer(path: str) -> tuple[int, object]:
        code = codes.pop(0)
        return code, ({} if code == 200 else _status(code))
    client = await serve(answer)
    async with client:
        assert await served_versions(client, "batch", ("v1",), retry=0.01) == ["v1"]
    assert codes == []


async def test_an_unreachable_server_is_asked_again() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    async with Client(ClientConfig(server=f"http://127.0.0.1:{port}")) as client:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(served_versions(client, "batch", ("v1",), retry=0.01), 0.5)


async def test_dra_served_asks_for_the_version_given_and_names_it(
        serve: Serve, caplog: pytest.LogCaptureFixture) -> None:
    new = await serve(_server({"/apis/resource.k8s.io/v1"}, version="34"))
    off = await serve(_server(set(), version="34"))
    async with new, off:
        assert await dra_served(new, "test", version="v1") is True
        assert await dra_served(off, "controller-manager", "the resourceclaim-controller",
                                "v1") is False
    assert [r.getMessage() for r in caplog.records if r.levelname == "WARNING"] == [
        "controller-manager: the API server emulates Kubernetes v1.34.0 and does not serve "
        "resource.k8s.io/v1: running without the resourceclaim-controller"]

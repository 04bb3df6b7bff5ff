"""A misbehaving kubelet never crashes ``kubedra example-driver`` or leaks its sockets:
disconnects mid-stream, reconnects, malformed and oversized requests, 100 claims at once,
SIGTERM during a prepare, stale and live-held socket files."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from tests.e2e.example_driver import (
    DriverProcess,
    WireModules,
    get_info,
    running_driver,
    short_root,
    start_driver,
    wire,
)
from tests.e2e.test_example_driver_wire import structured_claim

pytestmark = pytest.mark.timeout(120)
__all__ = ["wire"]
PREPARE = "/v1alpha3.Node/NodePrepareResources"


@pytest.fixture
def driver() -> Iterator[DriverProcess]:
    with running_driver(instances=100) as d:
        yield d


async def _instance_names(w: WireModules, path: Path) -> list[str]:
    async with grpc.aio.insecure_channel(f"unix:{path}") as channel:
        stream = w.dra_grpc.NodeStub(channel).NodeListAndWatchResources(
            w.dra.NodeListAndWatchResourcesRequest()
        )
        message = await stream.read()
        stream.cancel()
        return [i.name for i in message.resources[0].namedResources.instances]


async def test_disconnect_mid_stream_and_reconnect(
    wire: WireModules, driver: DriverProcess
) -> None:
    for _ in range(3):
        channel = grpc.aio.insecure_channel(f"unix:{driver.dra_socket}")
        stream = wire.dra_grpc.NodeStub(channel).NodeListAndWatchResources(
            wire.dra.NodeListAndWatchResourcesRequest()
        )
        await stream.read()
        await channel.close(grace=None)  # the kubelet goes away without cancelling
    names = await _instance_names(wire, driver.dra_socket)
    assert len(names) == 100
    assert driver.process.poll() is None


async def test_malformed_and_oversized_requests(wire: WireModules, driver: DriverProcess) -> None:
    async with grpc.aio.insecure_channel(f"unix:{driver.dra_socket}") as channel:
        raw = channel.unary_unary(PREPARE)  # bytes in, bytes out
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await raw(b"\x0a\xff\xff\xff\xff\x0f garbage", timeout=10)
        # grpc.aio answers an undecodable request with UNKNOWN and the parser's text
        assert err.value.code() == grpc.StatusCode.UNKNOWN
        assert "Error parsing message with type 'v1alpha3.NodePrepareResourcesRequest'" in (
            err.value.details() or ""
        )
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await raw(b"\x0a" + b"\x80" * 5 * 1024 * 1024, timeout=10)
        assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        no_uid = wire.dra.Claim(name="x")
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await wire.dra_grpc.NodeStub(channel).NodePrepareResources(
                wire.dra.NodePrepareResourcesRequest(claims=[no_uid]), timeout=10
            )
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert err.value.details() == "claims[0].uid: must be set"
        unknown = channel.unary_unary("/v1alpha3.Node/NoSuchMethod")
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await unknown(b"", timeout=10)
        assert err.value.code() == grpc.StatusCode.UNIMPLEMENTED
    assert len(await _instance_names(wire, driver.dra_socket)) == 100


async def test_100_claims_at_once(wire: WireModules, driver: DriverProcess) -> None:
    claims = [structured_claim(wire, f"uid-{i}", [f"instance-{i:02d}"]) for i in range(100)]
    async with grpc.aio.insecure_channel(f"unix:{driver.dra_socket}") as channel:
        node = wire.dra_grpc.NodeStub(channel)
        batch = await node.NodePrepareResources(
            wire.dra.NodePrepareResourcesRequest(claims=claims[:50]), timeout=30
        )
        singles = await asyncio.gather(
            *(
                node.NodePrepareResources(
                    wire.dra.NodePrepareResourcesRequest(claims=[c]), timeout=30
                )
                for c in claims[50:]
            )
        )
        answers = dict(batch.claims)
        for response in singles:
            answers.update(response.claims)
        assert sorted(answers) == sorted(c.uid for c in claims)
        assert all(a.error == "" and len(a.cdi_devices) == 1 for a in answers.values())
        repeat = await asyncio.gather(
            *(
                node.NodePrepareResources(
                    wire.dra.NodePrepareResourcesRequest(claims=claims), timeout=30
                )
                for _ in range(2)
            )
        )
        assert all(r.claims == answers for r in repeat)
    assert len(list(driver.cdi_dir.iterdir())) == 100


async def test_sigterm_during_prepare(wire: WireModules, driver: DriverProcess) -> None:
    claims = [structured_claim(wire, f"uid-{i}", [f"instance-{i:02d}"]) for i in range(100)]
    async with grpc.aio.insecure_channel(f"unix:{driver.dra_socket}") as channel:
        call = wire.dra_grpc.NodeStub(channel).NodePrepareResources(
            wire.dra.NodePrepareResourcesRequest(claims=claims), timeout=30
        )
        await asyncio.sleep(0.01)
        exit_code = await asyncio.to_thread(driver.terminate)
        try:
            response = await call
            assert all(r.error == "" for r in response.claims.values())
        except grpc.aio.AioRpcError as err:  # the call was cut off: a clear status, no hang
            assert err.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED)
    assert exit_code == 0
    assert not driver.registration_socket.exists()
    assert not driver.dra_socket.exists()


def test_stale_socket_is_replaced() -> None:
    with short_root() as root:
        stale = root / "plugins_registry" / "gpu.example.com-reg.sock"
        stale.parent.mkdir(parents=True)
        with socket.socket(socket.AF_UNIX) as s:
            s.bind(str(stale))  # bound, never listening: what a crashed run leaves behind
        driver = start_driver(root, "--instances", "1")
        try:
            assert b"DRAPlugin" in get_info(stale)
        finally:
            assert driver.terminate() == 0
        assert not stale.exists()


def test_live_held_socket_is_an_error() -> None:
    with short_root() as root:
        first = start_driver(root, "--instances", "1")
        try:
            second = start_driver(root, "--instances", "1", wait=False)
            code = second.process.wait(30)
            assert code != 0
            assert "is in use by a live process" in second.log_tail()
            assert first.registration_socket.exists() and first.dra_socket.exists()
            assert b"DRAPlugin" in get_info(first.registration_socket)
        finally:
            assert first.terminate() == 0

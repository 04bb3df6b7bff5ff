"""The SDK's Driver against the fake kubelet: registration, publishing, prepare semantics."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from collections.abc import Sequence
from pathlib import Path

import grpc
import pytest

from kubedra.api.resource import v1alpha2 as api
from kubedra.driver import Claim, ClaimError, Driver, RegistrationStatus
from kubedra.driver.testing import FakeKubelet, RegistrationRejected
from kubedra.proto.generated import dra_v1alpha3_pb2 as dra_pb2
from kubedra.proto.generated import pluginregistration_v1_pb2 as reg_pb2
from kubedra.proto.generated import pluginregistration_v1_pb2_grpc as reg_grpc
from tests.unit.driver.helpers import DRIVER, claim_yaml

pytestmark = pytest.mark.timeout(60)


class Recorder:
    """Callbacks that record calls, optionally slow, failing or concurrent-counting."""

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay
        self.prepared: list[str] = []
        self.unprepared: list[str] = []
        self.active = 0
        self.max_active = 0
        self.claims: list[Claim] = []

    async def prepare(self, claim: Claim) -> Sequence[str]:
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        try:
            await asyncio.sleep(self.delay)
            self.claims.append(claim)
            self.prepared.append(claim.uid)
            if claim.uid.startswith("fail"):
                raise ClaimError(f"no device for {claim.uid}")
            if claim.uid.startswith("crash"):
                raise RuntimeError("driver bug")
            if claim.uid.startswith("badname"):
                return ["not a cdi name"]
            return [f"{DRIVER}/gpu={name}" for name in claim.instance_names]
        finally:
            self.active -= 1

    async def unprepare(self, claim: Claim) -> None:
        self.unprepared.append(claim.uid)


def instance(name: str) -> api.NamedResourcesInstance:
    return api.NamedResourcesInstance(name=name)


def make_driver(root: Path, rec: Recorder, **kw: object) -> Driver:
    return Driver(DRIVER, prepare=rec.prepare, unprepare=rec.unprepare, root_dir=root, **kw)  # type: ignore[arg-type]


async def test_default_paths_and_registration(short_dir: Path) -> None:
    rec = Recorder()
    driver = make_driver(short_dir, rec)
    assert driver.registration_socket == short_dir / "plugins_registry" / f"{DRIVER}-reg.sock"
    assert driver.dra_socket == short_dir / "plugins" / DRIVER / "dra.sock"
    async with driver:
        assert driver.registration_status is None and not driver.registered.is_set()
        async with FakeKubelet(driver.registration_socket) as kubelet:
            assert kubelet.info is not None
            assert kubelet.info.endpoint == str(driver.dra_socket)
            status = await driver.wait_registered(timeout=5)
            assert status == RegistrationStatus(plugin_registered=True)
    assert not driver.registration_socket.exists() and not driver.dra_socket.exists()


async def test_rejected_registration_gets_upstream_error(short_dir: Path) -> None:
    driver = make_driver(short_dir, Recorder(), kubelet_dra_socket="/var/lib/kubelet/x.sock")
    async with driver:
        async with grpc.aio.insecure_channel(f"unix:{driver.registration_socket}") as channel:
            stub = reg_grpc.RegistrationStub(channel)
            info = await stub.GetInfo(reg_pb2.InfoRequest())
            assert info.endpoint == "/var/lib/kubelet/x.sock"
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await stub.NotifyRegistrationStatus(
                    reg_pb2.RegistrationStatus(plugin_registered=False, error="boom")
                )
            assert err.value.code() == grpc.StatusCode.UNKNOWN
            assert err.value.details() == "failed registration process: boom"
        assert driver.registration_status == RegistrationStatus(False, "boom")
        assert not driver.registered.is_set()
        with pytest.raises(RegistrationRejected):
            await FakeKubelet(driver.registration_socket, accept=False).register()


async def test_publish_reaches_every_open_stream_immediately(short_dir: Path) -> None:
    driver = make_driver(short_dir, Recorder(), instances=[instance("a")])
    async with (
        driver,
        FakeKubelet(driver.registration_socket) as k1,
        FakeKubelet(driver.registration_socket) as k2,
    ):
        assert [i.name for i in await k1.resources()] == ["a"]
        assert [i.name for i in await k2.resources()] == ["a"]
        driver.publish([instance("a"), instance("b")])
        assert [i.name for i in await k1.resources()] == ["a", "b"]
        assert [i.name for i in await k2.resources()] == ["a", "b"]
        driver.publish([])
        assert await k1.resources() == []
        with pytest.raises(ValueError, match="exactly one value"):
            driver.publish(
                [
                    api.NamedResourcesInstance(
                        name="x", attributes=[api.NamedResourcesAttribute(name="empty")]
                    )
                ]
            )
        big = [instance(f"{'n' * 200}-{i}") for i in range(25_000)]
        with pytest.raises(ValueError, match="gRPC message limit"):
            driver.publish(big)
        # the stream ends when the driver stops: the kubelet sees EOF
        await driver.stop()
        with pytest.raises(EOFError):
            await k1.resources(timeout=5)


async def test_opt_out_is_unimplemented(short_dir: Path) -> None:
    driver = make_driver(short_dir, Recorder(), publish_resources=False)
    async with driver, FakeKubelet(driver.registration_socket) as kubelet:
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await kubelet.resources()
        assert err.value.code() == grpc.StatusCode.UNIMPLEMENTED
        with pytest.raises(RuntimeError):
            driver.publish([])


async def test_typed_claims_and_per_claim_errors(
    short_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    rec = Recorder()
    driver = make_driver(short_dir, rec)
    caplog.set_level(logging.INFO, logger="kubedra.driver")
    ok = claim_yaml(
        "u1", ["gpu-0", "gpu-1"], class_params='{"x": "y"}', request_params='{"mem": "1Gi"}'
    )
    async with driver, FakeKubelet(driver.registration_socket) as kubelet:
        result = await kubelet.prepare(
            ok,
            claim_yaml("fail-1", ["gpu-2"]),
            claim_yaml("crash-1", []),
            claim_yaml("badname-1", []),
        )
        assert result["u1"].cdi_devices == [f"{DRIVER}/gpu=gpu-0", f"{DRIVER}/gpu=gpu-1"]
        assert result["fail-1"].error == "no device for fail-1"
        assert result["crash-1"].error == "driver bug"
        # an unexpected failure is logged on one line; its traceback only at debug level
        crash = [r for r in caplog.records if "crash-1" in r.getMessage()]
        assert [(r.levelno, r.getMessage(), r.exc_info) for r in crash] == [
            (logging.ERROR, "claim crash-1: driver callback failed: driver bug", None)]
        assert result["badname-1"].error.startswith("driver returned invalid CDI device name")
        claim = next(c for c in rec.claims if c.uid == "u1")
        assert (claim.namespace, claim.name, claim.node_name) == ("default", "claim-u1", "worker")
        assert claim.structured is not None
        assert claim.structured.vendor_class_parameters == {"x": "y"}
        assert claim.structured.vendor_claim_parameters is None
        assert claim.structured.results[0].vendor_request_parameters == {"mem": "1Gi"}
        assert driver.prepared == {"u1": result["u1"].cdi_devices}
        # failed claims are retried (the kubelet does), prepared ones are not
        await kubelet.prepare(ok, claim_yaml("fail-1", ["gpu-2"]))
        assert rec.prepared.count("u1") == 1 and rec.prepared.count("fail-1") == 2
        assert await kubelet.unprepare(ok) == {"u1": ""}
        assert driver.prepared == {}
        await kubelet.prepare(ok)
        assert rec.prepared.count("u1") == 2


async def test_concurrent_and_shared_prepares(short_dir: Path) -> None:
    rec = Recorder(delay=0.2)
    driver = make_driver(short_dir, rec)
    claims = [claim_yaml(f"c{i}", [f"gpu-{i}"]) for i in range(100)]
    async with driver, FakeKubelet(driver.registration_socket) as kubelet:
        first, second = await asyncio.gather(kubelet.prepare(*claims), kubelet.prepare(*claims))
        assert first == second and len(first) == 100
        # all at once (not one after the other), and once per uid
        assert rec.max_active == 100 and len(rec.prepared) == 100
        # unprepare waits for a prepare in progress of the same claim
        slow = claim_yaml("late", ["gpu-x"])
        prep = asyncio.create_task(kubelet.prepare(slow))
        while not rec.active:  # the prepare is in progress in the driver
            await asyncio.sleep(0.01)
        assert await kubelet.unprepare(slow) == {"late": ""}
        assert (await prep)["late"].error == ""
        assert rec.unprepared[-1] == "late" and "late" not in driver.prepared


async def test_abandoned_call_keeps_the_work(short_dir: Path) -> None:
    rec = Recorder(delay=0.5)
    driver = make_driver(short_dir, rec)
    async with driver, FakeKubelet(driver.registration_socket) as kubelet:
        request = kubelet.claims_request([claim_yaml("slow", ["gpu-0"])])
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await kubelet.node.NodePrepareResources(
                dra_pb2.NodePrepareResourcesRequest(claims=request), timeout=0.1
            )
        assert err.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        await asyncio.sleep(0.6)
        assert (await kubelet.prepare(claim_yaml("slow", ["gpu-0"])))["slow"].error == ""
        assert rec.prepared == ["slow"]


async def test_too_many_structured_handles_is_a_claim_error(short_dir: Path) -> None:
    rec = Recorder()
    driver = make_driver(short_dir, rec)
    async with driver, FakeKubelet(driver.registration_socket) as kubelet:
        [claim] = kubelet.claims_request([claim_yaml("two", ["gpu-0"])])
        claim.structured_resource_handle.append(claim.structured_resource_handle[0])
        claim.structured_resource_handle[0].vendorClassParameters.raw = b"{not json"
        response = await kubelet.node.NodePrepareResources(
            dra_pb2.NodePrepareResourcesRequest(claims=[claim])
        )
        assert response.claims["two"].error == (
            "invalid length of NodePrepareResourceRequest.StructuredResourceHandle: 2"
        )
        del claim.structured_resource_handle[1]
        response = await kubelet.node.NodePrepareResources(
            dra_pb2.NodePrepareResourcesRequest(claims=[claim])
        )
        assert response.claims["two"].error.startswith(
            "decoding structured resource handle: vendorClassParameters: "
        )
        assert rec.prepared == []


async def test_sigterm_during_prepare_finishes_and_removes_sockets(short_dir: Path) -> None:
    rec = Recorder(delay=0.5)
    driver = make_driver(short_dir, rec)
    runner = asyncio.create_task(driver.run())
    while not driver.dra_socket.exists():
        await asyncio.sleep(0.01)
    async with FakeKubelet(driver.registration_socket) as kubelet:
        call = asyncio.create_task(kubelet.prepare(claim_yaml("u", ["gpu-0"])))
        while not rec.active:  # the call is in the driver's hands (not merely sent)
            await asyncio.sleep(0.01)
        os.kill(os.getpid(), signal.SIGTERM)
        while driver.registration_socket.exists() and rec.active:
            await asyncio.sleep(0.01)
        # the kubelet learns it at once: the registration socket is gone mid-prepare
        assert not driver.registration_socket.exists() and rec.active
        assert (await call)["u"].cdi_devices == [f"{DRIVER}/gpu=gpu-0"]
    await asyncio.wait_for(runner, 10)
    assert not driver.dra_socket.exists()


def test_driver_name_is_required() -> None:
    with pytest.raises(ValueError, match="driver name must be set"):
        Driver("", prepare=Recorder().prepare, unprepare=Recorder().unprepare)

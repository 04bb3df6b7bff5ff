"""``kubedra example-driver`` over its unix sockets, driven by a client compiled in the test
from our .proto files: registration handshake, stream content, prepare with a structured handle
-> CDI devices and file, idempotent repeat, unprepare, per-claim errors."""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from tests.e2e.example_driver import DriverProcess, WireModules, running_driver, wire

pytestmark = pytest.mark.timeout(120)
__all__ = ["wire"]


@pytest.fixture
def driver() -> Iterator[DriverProcess]:
    with running_driver(instances=4) as d:
        yield d


def structured_claim(w: WireModules, uid: str, instances: list[str], node: str = "worker") -> Any:
    claim = w.dra.Claim(namespace="default", uid=uid, name=f"claim-{uid}")
    handle = claim.structured_resource_handle.add()
    handle.vendorClassParameters.raw = b'{"x":"y"}'
    handle.vendorClaimParameters.raw = b'{"a":"b"}'
    handle.nodeName = node
    for name in instances:
        result = handle.results.add()
        result.vendorRequestParameters.raw = b'{"request_foo":"bar"}'
        result.allocationResultModel.namedResources.name = name
    return claim


async def test_registration_stream_prepare_unprepare(
    wire: WireModules, driver: DriverProcess
) -> None:
    async with grpc.aio.insecure_channel(f"unix:{driver.registration_socket}") as reg_channel:
        registration = wire.reg_grpc.RegistrationStub(reg_channel)
        info = await registration.GetInfo(wire.reg.InfoRequest(), timeout=5)
        assert (info.type, info.name) == ("DRAPlugin", driver.name)
        assert info.endpoint == str(driver.dra_socket)
        assert list(info.supported_versions) == ["1.0.0"]
        await registration.NotifyRegistrationStatus(
            wire.reg.RegistrationStatus(plugin_registered=True), timeout=5
        )

    async with grpc.aio.insecure_channel(f"unix:{info.endpoint}") as channel:
        node = wire.dra_grpc.NodeStub(channel)
        stream = node.NodeListAndWatchResources(wire.dra.NodeListAndWatchResourcesRequest())
        first = await stream.read()
        [model] = first.resources
        names = [i.name for i in model.namedResources.instances]
        assert names == ["instance-00", "instance-01", "instance-02", "instance-03"]
        attrs = {a.name: a.attributeValue for a in model.namedResources.instances[0].attributes}
        assert attrs["memory"].quantity.string == "16Gi"
        assert attrs["mig-capable"].HasField("bool")
        stream.cancel()

        request = wire.dra.NodePrepareResourcesRequest(
            claims=[
                structured_claim(wire, "uid-1", ["instance-00", "instance-01"]),
                structured_claim(wire, "uid-2", ["instance-09"]),
                structured_claim(wire, "uid-3", ["instance-02"], node="elsewhere"),
            ]
        )
        response = await node.NodePrepareResources(request, timeout=10)
        ok = response.claims["uid-1"]
        assert ok.error == ""
        assert list(ok.cdi_devices) == [
            f"{driver.name}/test=claim-uid-1-instance-00",
            f"{driver.name}/test=claim-uid-1-instance-01",
        ]
        assert response.claims["uid-2"].error == 'unknown allocated instance "instance-09"'
        assert response.claims["uid-3"].error == (
            'claim was allocated for "elsewhere", cannot be prepared on "worker"'
        )

        spec_file = driver.cdi_dir / f"{driver.name}-uid-1.json"
        spec = json.loads(spec_file.read_text())
        assert spec["cdiVersion"] == "0.3.0" and spec["kind"] == f"{driver.name}/test"
        env = ["admin_x=y", "user_a=b", "user_request_foo=bar"]
        assert spec["devices"] == [
            {"name": f"claim-uid-1-{n}", "containerEdits": {"env": env}}
            for n in ("instance-00", "instance-01")
        ]
        before = spec_file.stat().st_mtime_ns

        again = await node.NodePrepareResources(
            wire.dra.NodePrepareResourcesRequest(claims=[request.claims[0]]), timeout=10
        )
        assert again.claims["uid-1"] == ok
        assert spec_file.stat().st_mtime_ns == before

        twice = await node.NodePrepareResources(
            wire.dra.NodePrepareResourcesRequest(
                claims=[structured_claim(wire, "uid-4", ["instance-01"])]
            ),
            timeout=10,
        )
        assert twice.claims["uid-4"].error == 'resource instance "instance-01" used more than once'

        un = await node.NodeUnprepareResources(
            wire.dra.NodeUnprepareResourcesRequest(
                claims=[request.claims[0], structured_claim(wire, "never", [])]
            ),
            timeout=10,
        )
        assert {uid: r.error for uid, r in un.claims.items()} == {"uid-1": "", "never": ""}
        assert not spec_file.exists()
        reuse = await node.NodePrepareResources(
            wire.dra.NodePrepareResourcesRequest(
                claims=[structured_claim(wire, "uid-4", ["instance-01"])]
            ),
            timeout=10,
        )
        assert reuse.claims["uid-4"].error == ""

    assert driver.terminate() == 0
    assert not driver.registration_socket.exists() and not driver.dra_socket.exists()


async def test_classic_resource_handle(wire: WireModules, driver: DriverProcess) -> None:
    handle = '{"EnvVars":{"DRA_PARAM1":"PARAM1_VALUE"},"NodeName":""}'
    claim = wire.dra.Claim(namespace="default", uid="uid-c", name="c", resource_handle=handle)
    async with grpc.aio.insecure_channel(f"unix:{driver.dra_socket}") as channel:
        node = wire.dra_grpc.NodeStub(channel)
        response = await node.NodePrepareResources(
            wire.dra.NodePrepareResourcesRequest(claims=[claim]), timeout=10
        )
        assert list(response.claims["uid-c"].cdi_devices) == [f"{driver.name}/test=claim-uid-c"]
        spec = json.loads((driver.cdi_dir / f"{driver.name}-uid-c.json").read_text())
        assert spec["devices"] == [
            {"name": "claim-uid-c", "containerEdits": {"env": ["DRA_PARAM1=PARAM1_VALUE"]}}
        ]
        bad = wire.dra.Claim(uid="uid-bad", resource_handle="{not json")
        response = await node.NodePrepareResources(
            wire.dra.NodePrepareResourcesRequest(claims=[bad]), timeout=10
        )
        assert response.claims["uid-bad"].error.startswith("unmarshal resource handle: ")


def test_opt_out_answers_unimplemented(wire: WireModules) -> None:
    with (
        running_driver(instances=-1) as driver,
        grpc.insecure_channel(f"unix:{driver.dra_socket}") as channel,
    ):
        node = wire.dra_grpc.NodeStub(channel)
        stream = node.NodeListAndWatchResources(wire.dra.NodeListAndWatchResourcesRequest())
        with pytest.raises(grpc.RpcError) as err:
            next(stream)
        assert err.value.code() == grpc.StatusCode.UNIMPLEMENTED
        assert err.value.details() == "node resource support disabled"


def test_config_file_and_sighup_reload(wire: WireModules, tmp_path: Path) -> None:

    config = tmp_path / "devices.yaml"
    config.write_text("instances:\n- name: gpu-a\n  attributes:\n  - {name: numa, int: 1}\n")
    with running_driver("--config", str(config), instances=0) as driver:
        with grpc.insecure_channel(f"unix:{driver.dra_socket}") as channel:
            node = wire.dra_grpc.NodeStub(channel)
            stream = node.NodeListAndWatchResources(wire.dra.NodeListAndWatchResourcesRequest())
            first = next(stream).resources[0].namedResources.instances
            assert [(i.name, i.attributes[0].attributeValue.int) for i in first] == [("gpu-a", 1)]
            config.write_text("instances: [{name: gpu-a}, {name: gpu-b}]\n")
            driver.process.send_signal(signal.SIGHUP)
            second = next(stream).resources[0].namedResources.instances
            assert [i.name for i in second] == ["gpu-a", "gpu-b"]
            config.write_text("instances: [{name: 12}")  # broken: the old list stays
            driver.process.send_signal(signal.SIGHUP)
            stream.cancel()
            prepared = node.NodePrepareResources(
                wire.dra.NodePrepareResourcesRequest(
                    claims=[structured_claim(wire, "u", ["gpu-b"])]
                ),
                timeout=10,
            )
            assert prepared.claims["u"].error == ""
        assert driver.terminate() == 0
        assert "keeping the current instances" in driver.log_tail()

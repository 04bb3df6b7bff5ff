"""The 1.34 adapter against real gRPC servers on unix sockets: each service's methods are
called under its own package name, claims go as namespace/uid/name, answers come back as
devices or per-claim errors, and a failed call is worded as grpc-go words it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from kubedra.kubelet.draclient.channel import DriverCallError
from kubedra.kubelet.draclient.devices import SERVICES, ClaimRef, DevicesClient
from kubedra.kubelet.ledger import PreparedDevice
from kubedra.kubelet.plugins import Plugin
from kubedra.proto.generated import dra_v1beta1_pb2 as pb
from kubedra.proto.generated import dra_v1beta1_pb2_grpc as pb_grpc


class Beta(pb_grpc.DRAPluginServicer):
    def __init__(self) -> None:
        self.seen: list[Any] = []

    async def NodePrepareResources(self, request: Any, context: Any) -> Any:
        self.seen.append(request)
        if request.claims[0].name == "boom":
            await context.abort(grpc.StatusCode.UNAVAILABLE, "driver busy")
        return pb.NodePrepareResourcesResponse(claims={
            "u1": pb.NodePrepareResourceResponse(devices=[pb.Device(
                request_names=["r"], pool_name="p", device_name="d", cdi_device_ids=["v/c=d"])]),
            "u2": pb.NodePrepareResourceResponse(error="no such device")})


@pytest.fixture
async def beta(tmp_path: Path) -> AsyncIterator[tuple[Beta, str]]:
    servicer = Beta()
    server = grpc.aio.server()
    pb_grpc.add_DRAPluginServicer_to_server(servicer, server)
    path = str(tmp_path / "dra.sock")
    server.add_insecure_port(f"unix://{path}")
    await server.start()
    yield servicer, path
    await server.stop(None)


async def test_v1beta1_calls(beta: tuple[Beta, str]) -> None:
    servicer, path = beta
    client = DevicesClient(Plugin("d.example.com", path, None, service="v1beta1.DRAPlugin"))
    try:
        got = await client.prepare([ClaimRef("ns", "u1", "c1"), ClaimRef("ns", "u2", "c2")])
        assert got["u1"].devices == (PreparedDevice("p", "d", ("r",), ("v/c=d",)),)
        assert got["u1"].cdi_devices == ["v/c=d"] and got["u2"].error == "no such device"
        assert [(c.namespace, c.uid, c.name) for c in servicer.seen[0].claims] == [
            ("ns", "u1", "c1"), ("ns", "u2", "c2")]
        with pytest.raises(DriverCallError,
                           match=r"^rpc error: code = Unavailable desc = driver busy$"):
            await client.prepare([ClaimRef("ns", "u3", "boom")])
    finally:
        await client.close()


async def test_v1_is_not_served_by_a_v1beta1_driver(beta: tuple[Beta, str]) -> None:
    _, path = beta
    client = DevicesClient(Plugin("d.example.com", path, None, service="v1.DRAPlugin"))
    try:
        with pytest.raises(DriverCallError, match=r"^rpc error: code = Unimplemented"):
            await client.prepare([ClaimRef("ns", "u1", "c1")])
    finally:
        await client.close()


def test_services_are_the_registration_strings() -> None:
    for name, service in SERVICES.items():
        version = name.split(".")[0]
        full = service.messages.DESCRIPTOR.services_by_name["DRAPlugin"].full_name
        assert full == f"k8s.io.kubelet.pkg.apis.dra.{version}.DRAPlugin"

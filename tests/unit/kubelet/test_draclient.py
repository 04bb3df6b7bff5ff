"""The kubelet's DRA client against real gRPC servers on unix sockets: the batched v1alpha3
calls, and the v1alpha2 per-claim fallback after UNIMPLEMENTED (kubelet-manager-prepare.json
``v1alpha2Fallback``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from kubedra.kubelet.plugins import GenericVersion, Plugin
from kubedra.kubelet.registration import DraClient
from kubedra.proto.generated import dra_v1alpha2_pb2 as v1alpha2
from kubedra.proto.generated import dra_v1alpha2_pb2_grpc as v1alpha2_grpc
from kubedra.proto.generated import dra_v1alpha3_pb2 as v1alpha3
from kubedra.proto.generated import resource_v1alpha2_pb2 as resource_pb

FILE = "kubelet-manager-prepare.json"


class OldDriver(v1alpha2_grpc.NodeServicer):
    def __init__(self) -> None:
        self.seen: list[Any] = []

    async def NodePrepareResource(self, request: Any, context: Any) -> Any:
        self.seen.append(("prepare", request))
        if request.claim_uid == "bad":
            await context.abort(grpc.StatusCode.INTERNAL, "no such device")
        return v1alpha2.NodePrepareResourceResponse(cdi_devices=[f"v/c={request.claim_uid}"])

    async def NodeUnprepareResource(self, request: Any, context: Any) -> Any:
        self.seen.append(("unprepare", request))
        return v1alpha2.NodeUnprepareResourceResponse()


@pytest.fixture
async def old_driver(tmp_path: Path) -> AsyncIterator[tuple[OldDriver, str]]:
    servicer = OldDriver()
    server = grpc.aio.server()
    v1alpha2_grpc.add_NodeServicer_to_server(servicer, server)
    path = str(tmp_path / "dra.sock")
    server.add_insecure_port(f"unix://{path}")
    await server.start()
    yield servicer, path
    await server.stop(None)


def claim(uid: str) -> Any:
    c = v1alpha3.Claim(namespace="ns", uid=uid, name=f"claim-{uid}", resource_handle="opaque")
    c.structured_resource_handle.append(resource_pb.StructuredResourceHandle(nodeName="n"))
    return c


@pytest.mark.vectors(FILE)
async def test_v1alpha2_fallback_per_claim(old_driver: tuple[OldDriver, str]) -> None:
    servicer, path = old_driver
    plugin = Plugin("old.example.com", path, GenericVersion((1, 0, 0)))
    client = DraClient(plugin)
    try:
        results = await client.prepare([claim("u1"), claim("bad")])
        assert plugin.version == "v1alpha2"  # switched for this registration
        assert results["u1"].cdi_devices == ["v/c=u1"] and not results["u1"].error
        # the call's error as grpc-go words it (upstream: result.Error = err.Error())
        assert results["bad"].error == "rpc error: code = Internal desc = no such device"
        kind, first = servicer.seen[0]
        assert (kind, first.namespace, first.claim_uid, first.claim_name) == (
            "prepare", "ns", "u1", "claim-u1")
        assert first.resource_handle == "opaque"
        assert [h.nodeName for h in first.structured_resource_handle] == ["n"]
        await client.unprepare([claim("u1")])
        kind, last = servicer.seen[-1]
        assert kind == "unprepare" and last.claim_uid == "u1"
        assert len(last.structured_resource_handle) == 0  # not forwarded on unprepare
    finally:
        await client.close()

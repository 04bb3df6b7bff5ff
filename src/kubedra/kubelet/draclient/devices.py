"""The 1.34 DRA services, ``v1.DRAPlugin`` and ``v1beta1.DRAPlugin`` (k8s.io/kubelet
pkg/apis/dra/v1 and v1beta1): the kubelet sends each claim's namespace, uid and name, and a
driver answers per claim with its devices (request names, pool, device, CDI ids) or an error.
The two services carry the same messages in different packages, so one adapter serves both,
one row of :data:`SERVICES` each.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Any, Final

import grpc

from kubedra.kubelet.draclient.channel import DriverCallError, DriverChannel
from kubedra.kubelet.ledger import ClaimResult, PreparedDevice
from kubedra.kubelet.plugins import Plugin
from kubedra.proto.generated import (
    dra_v1_pb2,
    dra_v1_pb2_grpc,
    dra_v1beta1_pb2,
    dra_v1beta1_pb2_grpc,
)


@dataclass(frozen=True, slots=True)
class ClaimRef:
    """What the kubelet tells a driver about a claim; the driver reads the rest itself."""

    namespace: str
    uid: str
    name: str


@dataclass(frozen=True, slots=True)
class Service:
    messages: ModuleType
    stub: Any


#: ``servicesSupportedByKubelet``, newest first: the registration string of each service and
#: its generated modules.
SERVICES: Final[dict[str, Service]] = {
    "v1.DRAPlugin": Service(dra_v1_pb2, dra_v1_pb2_grpc.DRAPluginStub),
    "v1beta1.DRAPlugin": Service(dra_v1beta1_pb2, dra_v1beta1_pb2_grpc.DRAPluginStub),
}


def _device(d: Any) -> PreparedDevice:
    return PreparedDevice(pool=d.pool_name, device=d.device_name,
                          request_names=tuple(d.request_names), cdi_ids=tuple(d.cdi_device_ids))


class DevicesClient(DriverChannel):
    """A driver registered with one of :data:`SERVICES` (``plugin.service``)."""

    def __init__(self, plugin: Plugin) -> None:
        super().__init__(plugin)
        service = SERVICES[plugin.service]
        self._pb = service.messages
        self._stub = service.stub(self.channel)

    def _claims(self, claims: list[ClaimRef]) -> list[Any]:
        return [self._pb.Claim(namespace=c.namespace, uid=c.uid, name=c.name) for c in claims]

    async def prepare(self, claims: list[ClaimRef]) -> dict[str, ClaimResult]:
        await self.ready()
        try:
            resp = await self._stub.NodePrepareResources(
                self._pb.NodePrepareResourcesRequest(claims=self._claims(claims)),
                timeout=self.plugin.client_timeout)
        except grpc.aio.AioRpcError as e:
            raise DriverCallError(e) from None
        out: dict[str, ClaimResult] = {}
        for uid, r in resp.claims.items():
            devices = tuple(_device(d) for d in r.devices)
            out[uid] = ClaimResult(cdi_devices=[i for d in devices for i in d.cdi_ids],
                                   error=r.error, devices=devices)
        return out

    async def unprepare(self, claims: list[ClaimRef]) -> dict[str, ClaimResult]:
        await self.ready()
        try:
            resp = await self._stub.NodeUnprepareResources(
                self._pb.NodeUnprepareResourcesRequest(claims=self._claims(claims)),
                timeout=self.plugin.client_timeout)
        except grpc.aio.AioRpcError as e:
            raise DriverCallError(e) from None
        return {uid: ClaimResult(error=r.error) for uid, r in resp.claims.items()}

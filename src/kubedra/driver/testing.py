"""A fake kubelet for a driver's own pytest: no cluster, real gRPC over the driver's sockets.

It plays the kubelet's part as the v1.30 plugin manager and DRA manager do it
(pkg/kubelet/pluginmanager/operationexecutor/operation_generator.go,
pkg/kubelet/cm/dra/manager.go): dial the registration socket, ``GetInfo``, check the plugin type
and versions, ``NotifyRegistrationStatus(true)``, dial the returned endpoint; then watch the
published resources and send prepare/unprepare for claims given as ordinary ResourceClaim YAML
(or models) with their allocation, one ``Claim`` per resource handle of this driver::

    async with FakeKubelet(driver.registration_socket) as kubelet:
        assert [i.name for i in await kubelet.resources()] == ["gpu-0"]
        result = await kubelet.prepare(CLAIM_YAML)
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import grpc

from kubedra.api import codec
from kubedra.api.resource import v1alpha2 as api
from kubedra.driver.registration import PLUGIN_TYPE
from kubedra.proto import convert
from kubedra.proto.generated import dra_v1alpha3_pb2 as dra_pb2
from kubedra.proto.generated import dra_v1alpha3_pb2_grpc as dra_grpc
from kubedra.proto.generated import pluginregistration_v1_pb2 as reg_pb2
from kubedra.proto.generated import pluginregistration_v1_pb2_grpc as reg_grpc
from kubedra.tasks import cancel_and_wait

# Timeouts of the v1.30 kubelet (operation_generator.go, plugin/client.go).
GET_INFO_TIMEOUT = 1.0
NOTIFY_TIMEOUT = 5.0
PREPARE_TIMEOUT = 45.0

ClaimInput = str | api.ResourceClaim


class RegistrationRejected(AssertionError):
    """The plugin's GetInfo answer is not one the kubelet would register."""


@dataclasses.dataclass(frozen=True)
class PluginInfo:
    type: str
    name: str
    endpoint: str
    supported_versions: list[str]


@dataclasses.dataclass(frozen=True)
class PrepareResult:
    cdi_devices: list[str]
    error: str = ""


def _parse_claims(claims: Sequence[ClaimInput]) -> list[api.ResourceClaim]:
    out: list[api.ResourceClaim] = []
    for c in claims:
        if isinstance(c, api.ResourceClaim):
            out.append(c)
            continue
        out += [codec.decode(doc, api.ResourceClaim) for doc in codec.load_documents(c) if doc]
    return out


class FakeKubelet:
    def __init__(self, registration_socket: Path | str, *, accept: bool = True) -> None:
        self._registration_socket = Path(registration_socket)
        self._accept = accept
        self._reg_channel: grpc.aio.Channel | None = None
        self._dra_channel: grpc.aio.Channel | None = None
        self.node: Any = None
        """The raw ``v1alpha3.Node`` stub, for requests the helpers below do not build."""
        self._stream: Any = None
        self._messages: asyncio.Queue[list[api.NamedResourcesInstance] | BaseException] = (
            asyncio.Queue()
        )
        self._reader: asyncio.Task[None] | None = None
        self.info: PluginInfo | None = None

    async def __aenter__(self) -> FakeKubelet:
        await self.register()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def register(self) -> PluginInfo:
        """The registration handshake; raises :class:`RegistrationRejected` (after telling the
        plugin, as the kubelet does) when the plugin is not a v1 DRA plugin."""
        self._reg_channel = grpc.aio.insecure_channel(f"unix:{self._registration_socket}")
        registration = reg_grpc.RegistrationStub(self._reg_channel)
        pb = await registration.GetInfo(reg_pb2.InfoRequest(), timeout=GET_INFO_TIMEOUT)
        info = PluginInfo(pb.type, pb.name, pb.endpoint, list(pb.supported_versions))
        problem = _registration_problem(info, self._registration_socket)
        if problem or not self._accept:
            error = problem or "rejected by the test"
            with contextlib.suppress(grpc.aio.AioRpcError):  # the plugin answers with an error
                await registration.NotifyRegistrationStatus(
                    reg_pb2.RegistrationStatus(plugin_registered=False, error=error),
                    timeout=NOTIFY_TIMEOUT,
                )
            await self.close()
            raise RegistrationRejected(error)
        endpoint = info.endpoint or str(self._registration_socket)
        self._dra_channel = grpc.aio.insecure_channel(f"unix:{endpoint}")
        self.node = dra_grpc.NodeStub(self._dra_channel)
        await registration.NotifyRegistrationStatus(
            reg_pb2.RegistrationStatus(plugin_registered=True), timeout=NOTIFY_TIMEOUT
        )
        self.info = info
        return info

    async def close(self) -> None:
        if self._reader is not None:
            await cancel_and_wait(self._reader, ignore=(Exception,))
        for channel in (self._dra_channel, self._reg_channel):
            if channel is not None:
                await channel.close()

    # --- NodeListAndWatchResources -------------------------------------------------------

    async def resources(self, timeout: float = 5.0) -> list[api.NamedResourcesInstance]:
        """The next list the driver sends (the first call opens the stream and returns the
        initial list); raises ``grpc.aio.AioRpcError`` when the stream fails (UNIMPLEMENTED for
        a driver that opted out) or ``EOFError`` when the driver ends it."""
        if self._reader is None:
            self._reader = asyncio.create_task(self._read_stream())
        item = await asyncio.wait_for(self._messages.get(), timeout)
        if isinstance(item, BaseException):
            raise item
        return item

    async def _read_stream(self) -> None:
        stream = self.node.NodeListAndWatchResources(dra_pb2.NodeListAndWatchResourcesRequest())
        try:
            async for message in stream:
                instances: list[api.NamedResourcesInstance] = []
                for model in message.resources:
                    named = convert.instances_from_model(model)
                    instances += named.instances if named is not None else []
                self._messages.put_nowait(instances)
            self._messages.put_nowait(EOFError("the driver closed the stream"))
        except grpc.aio.AioRpcError as err:
            self._messages.put_nowait(err)

    # --- prepare / unprepare -------------------------------------------------------------

    def claims_request(self, claims: Sequence[ClaimInput]) -> list[Any]:
        """The ``v1alpha3.Claim`` messages the kubelet would send for ``claims``."""
        assert self.info is not None, "register() first"
        out = []
        for claim in _parse_claims(claims):
            batch = convert.claim_batches(claim).get(self.info.name)
            if not batch:
                raise ValueError(
                    f"claim {claim.metadata.name!r} has no allocation for driver {self.info.name}"
                )
            out += batch
        return out

    async def prepare(self, *claims: ClaimInput) -> dict[str, PrepareResult]:
        """``NodePrepareResources`` for the claims; claim UID -> result."""
        request = dra_pb2.NodePrepareResourcesRequest(claims=self.claims_request(claims))
        response = await self.node.NodePrepareResources(request, timeout=PREPARE_TIMEOUT)
        return {
            uid: PrepareResult(list(r.cdi_devices), r.error) for uid, r in response.claims.items()
        }

    async def unprepare(self, *claims: ClaimInput) -> dict[str, str]:
        """``NodeUnprepareResources`` for the claims; claim UID -> error (``""`` = success)."""
        request = dra_pb2.NodeUnprepareResourcesRequest(claims=self.claims_request(claims))
        response = await self.node.NodeUnprepareResources(request, timeout=PREPARE_TIMEOUT)
        return {uid: r.error for uid, r in response.claims.items()}


def _registration_problem(info: PluginInfo, socket: Path) -> str:
    """The kubelet's objection to ``info`` (its error text), ``""`` when it would register.
    The version check is the gist of HighestSupportedVersion: some ``[v]1.x[.y]`` entry."""
    if info.type != PLUGIN_TYPE:
        return (
            "RegisterPlugin error -- no handler registered for plugin type: "
            f"{info.type} at socket {socket}"
        )
    if not any(_major_is_one(v) for v in info.supported_versions):
        return (
            "RegisterPlugin error -- plugin validation failed with err: none of the versions "
            f"{info.supported_versions} are supported"
        )
    return ""


def _major_is_one(version: str) -> bool:
    parts = version.strip().removeprefix("v").split(".")
    return len(parts) >= 2 and parts[0] == "1" and all(p.isdigit() for p in parts[:2])

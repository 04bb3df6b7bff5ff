"""The gRPC side of DRA plugins: the registration handshake on a socket found in
``plugins_registry`` (upstream operation_generator.go ``GenerateRegisterPluginFunc``) and the
client of a registered driver's DRA socket (plugin/client.go and plugin.go), including the
v1alpha2 per-claim fallback when the driver answers the batched calls with UNIMPLEMENTED.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

import grpc

from kubedra.kubelet.draclient.channel import DriverCallError, DriverChannel, target
from kubedra.kubelet.ledger import ClaimResult
from kubedra.kubelet.noderesources import ResourceModel, ResourcesUnsupported
from kubedra.kubelet.plugins import PLUGIN_TYPE, Plugin, PluginError, PluginStore
from kubedra.proto.convert import instances_from_model
from kubedra.proto.generated import dra_v1alpha2_pb2 as v1alpha2
from kubedra.proto.generated import dra_v1alpha2_pb2_grpc as v1alpha2_grpc
from kubedra.proto.generated import dra_v1alpha3_pb2 as v1alpha3
from kubedra.proto.generated import dra_v1alpha3_pb2_grpc as v1alpha3_grpc
from kubedra.proto.generated import pluginregistration_v1_pb2 as reg
from kubedra.proto.generated import pluginregistration_v1_pb2_grpc as reg_grpc

log = logging.getLogger(__name__)

DIAL_TIMEOUT = 10.0
GET_INFO_TIMEOUT = 1.0
NOTIFY_TIMEOUT = 5.0


class DraClient(DriverChannel):
    """A 1.30 driver's DRA API (v1alpha3, or v1alpha2 per claim). Satisfies both
    ``ledger.DriverClient`` and ``noderesources.ResourceSource``."""

    def __init__(self, plugin: Plugin) -> None:
        super().__init__(plugin)
        self._v3 = v1alpha3_grpc.NodeStub(self.channel)
        self._v2 = v1alpha2_grpc.NodeStub(self.channel)

    async def prepare(self, claims: list[Any]) -> dict[str, ClaimResult]:
        return await self._batch(claims, prepare=True)

    async def unprepare(self, claims: list[Any]) -> dict[str, ClaimResult]:
        return await self._batch(claims, prepare=False)

    async def _batch(self, claims: list[Any], *, prepare: bool) -> dict[str, ClaimResult]:
        await self.ready()
        timeout = self.plugin.client_timeout
        if self.plugin.version == "v1alpha3":
            try:
                if prepare:
                    resp = await self._v3.NodePrepareResources(
                        v1alpha3.NodePrepareResourcesRequest(claims=claims), timeout=timeout)
                    return {uid: ClaimResult(list(r.cdi_devices), r.error)
                            for uid, r in resp.claims.items()}
                uresp = await self._v3.NodeUnprepareResources(
                    v1alpha3.NodeUnprepareResourcesRequest(claims=claims), timeout=timeout)
                return {uid: ClaimResult(error=r.error) for uid, r in uresp.claims.items()}
            except grpc.aio.AioRpcError as e:
                if e.code() != grpc.StatusCode.UNIMPLEMENTED:
                    raise DriverCallError(e) from None
                log.info("driver %s has no v1alpha3 batch API; using v1alpha2",
                         self.plugin.name)
                self.plugin.version = "v1alpha2"
        if self.plugin.version != "v1alpha2":
            raise PluginError(f"unsupported plugin version: {self.plugin.version}")
        return {c.uid: await self._one_v2(c, prepare, timeout) for c in claims}

    async def _one_v2(self, c: Any, prepare: bool, timeout: float) -> ClaimResult:
        """v1alpha2 mode: every failure becomes that claim's error."""
        try:
            if prepare:
                resp = await self._v2.NodePrepareResource(v1alpha2.NodePrepareResourceRequest(
                    namespace=c.namespace, claim_uid=c.uid, claim_name=c.name,
                    resource_handle=c.resource_handle,
                    structured_resource_handle=list(c.structured_resource_handle)),
                    timeout=timeout)
                return ClaimResult(list(resp.cdi_devices))
            await self._v2.NodeUnprepareResource(v1alpha2.NodeUnprepareResourceRequest(
                namespace=c.namespace, claim_uid=c.uid, claim_name=c.name,
                resource_handle=c.resource_handle), timeout=timeout)
            return ClaimResult()
        except grpc.aio.AioRpcError as e:
            return ClaimResult(error=str(DriverCallError(e)))

    async def watch_resources(self) -> AsyncIterator[list[ResourceModel]]:
        call = self._v3.NodeListAndWatchResources(v1alpha3.NodeListAndWatchResourcesRequest())
        try:
            async for resp in call:
                yield [instances_from_model(m) for m in resp.resources]
        except grpc.aio.AioRpcError as e:
            if e.code() == grpc.StatusCode.UNIMPLEMENTED:
                raise ResourcesUnsupported(str(e.details())) from None
            raise DriverCallError(e) from None
        finally:
            call.cancel()


async def register_socket(path: str, store: PluginStore) -> Plugin:
    """The handshake: GetInfo, validate, register, then tell the driver how it went. A failure
    is reported to the driver and raised, so the watcher retries with backoff."""
    async with grpc.aio.insecure_channel(target(path)) as channel:
        await asyncio.wait_for(channel.channel_ready(), DIAL_TIMEOUT)
        stub = reg_grpc.RegistrationStub(channel)
        info = await stub.GetInfo(reg.InfoRequest(), timeout=GET_INFO_TIMEOUT)

        async def notify(ok: bool, error: str = "") -> None:
            await stub.NotifyRegistrationStatus(
                reg.RegistrationStatus(plugin_registered=ok, error=error), timeout=NOTIFY_TIMEOUT)

        async def fail(error: str) -> PluginError:
            try:
                await notify(False, error)
            except grpc.aio.AioRpcError as e:  # the driver answers a failure with an error
                log.debug("driver at %s acknowledged failure: %s", path, e.details())
            return PluginError(error)

        if info.type != PLUGIN_TYPE:
            raise await fail("RegisterPlugin error -- no handler registered for plugin type: "
                             f"{info.type} at socket {path}")
        endpoint = info.endpoint or path
        versions = list(info.supported_versions)
        try:
            store.validate_plugin(info.name, endpoint, versions)
        except PluginError as e:
            error = f"RegisterPlugin error -- plugin validation failed with err: {e}"
            raise await fail(error) from None
        try:
            plugin = store.register_plugin(info.name, endpoint, versions)
        except PluginError as e:
            error = f"RegisterPlugin error -- plugin registration failed with err: {e}"
            raise await fail(error) from None
        try:
            await notify(True)
        except grpc.aio.AioRpcError as e:
            log.warning("RegisterPlugin error -- failed to send registration status at socket "
                        "%s, err: %s", path, e.details())
        return plugin


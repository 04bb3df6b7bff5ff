"""The plugin registration service a driver serves on its socket in ``plugins_registry``.

Mirrors kubeletplugin/noderegistrar.go and registrationserver.go: ``GetInfo`` answers type
``DRAPlugin`` with the DRA endpoint and the versions offered: ``["1.0.0"]`` in 1.30 (v0.30.0),
the gRPC services in 1.34 (v0.34: ``["v1.DRAPlugin", "v1beta1.DRAPlugin"]``);
``NotifyRegistrationStatus`` records the kubelet's verdict and answers a failure with the error
``failed registration process: <error>`` (gRPC code UNKNOWN, as a plain Go error maps).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Sequence
from typing import Any

import grpc

from kubedra.proto.generated import pluginregistration_v1_pb2 as reg_pb2
from kubedra.proto.generated import pluginregistration_v1_pb2_grpc as reg_grpc

PLUGIN_TYPE = "DRAPlugin"
SUPPORTED_VERSIONS = ("1.0.0",)

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class RegistrationStatus:
    plugin_registered: bool
    error: str = ""


class Registrar(reg_grpc.RegistrationServicer):  # type: ignore[misc]
    def __init__(self, driver_name: str, endpoint: str,
                 versions: Sequence[str] = SUPPORTED_VERSIONS) -> None:
        self._info = reg_pb2.PluginInfo(
            type=PLUGIN_TYPE,
            name=driver_name,
            endpoint=endpoint,
            supported_versions=list(versions),
        )
        self.status: RegistrationStatus | None = None
        self.registered = asyncio.Event()

    def offer(self, versions: Sequence[str]) -> None:
        """What ``GetInfo`` answers as ``supported_versions`` (set before serving)."""
        del self._info.supported_versions[:]
        self._info.supported_versions.extend(versions)

    async def GetInfo(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
        return self._info

    async def NotifyRegistrationStatus(
        self, request: Any, context: grpc.aio.ServicerContext
    ) -> Any:
        self.status = RegistrationStatus(request.plugin_registered, request.error)
        if not request.plugin_registered:
            self.registered.clear()
            log.error("kubelet rejected the registration of %s: %s", self._info.name, request.error)
            await context.abort(
                grpc.StatusCode.UNKNOWN, f"failed registration process: {request.error}"
            )
        log.info("registered with the kubelet as %s", self._info.name)
        self.registered.set()
        return reg_pb2.RegistrationStatusResponse()

"""The 1.34 DRA gRPC services, ``v1.DRAPlugin`` and ``v1beta1.DRAPlugin``, around a driver's
batch callbacks (k8s.io/dynamic-resource-allocation@v0.34 kubeletplugin/draplugin.go).

Prepare first GETs every claim from the API (outside the lock: slow calls do not hold up
others) and fails the whole call when one cannot be read, is not allocated or is no longer the
claim the kubelet named (uid); then the driver prepares the batch, serialized with every other
prepare and unprepare unless the driver opted out. The kubelet learns each claim's outcome from
the response map; a driver's exception fails the call as a whole, as a Go error does. The two
services carry the same messages in different packages: one class, one instance per package.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from types import ModuleType
from typing import Any

import grpc

from kubedra.api.resource import v1
from kubedra.client.errors import ApiError
from kubedra.client.rest import Client
from kubedra.driver.claims import (
    ClaimRef,
    PrepareClaimsFunc,
    PrepareResult,
    UnprepareClaimsFunc,
)
from kubedra.proto.generated import (
    dra_v1_pb2,
    dra_v1_pb2_grpc,
    dra_v1beta1_pb2,
    dra_v1beta1_pb2_grpc,
)

#: The registration strings of the services, in the order the helper offers them.
V1_SERVICE = "v1.DRAPlugin"
V1BETA1_SERVICE = "v1beta1.DRAPlugin"

log = logging.getLogger(__name__)


class CallError(Exception):
    """Fails a whole call: the kubelet gets gRPC code UNKNOWN with this text, as for a plain
    Go error."""


def base_request(name: str) -> str:
    """``resourceclaim.BaseRequestRef``: the request of a ``<request>/<subrequest>`` name."""
    return name.partition("/")[0]


def _error_text(err: BaseException) -> str:
    if isinstance(err, ApiError):
        return err.status.message or str(err)
    return str(err) or type(err).__name__


class Batches:
    """What both services share: the client, the driver's callbacks and the lock."""

    def __init__(self, client: Client, prepare: PrepareClaimsFunc,
                 unprepare: UnprepareClaimsFunc, serialize: bool = True) -> None:
        self._client = client
        self._prepare = prepare
        self._unprepare = unprepare
        self._lock = asyncio.Lock() if serialize else None

    @contextlib.asynccontextmanager
    async def _serialized(self) -> AsyncIterator[None]:
        if self._lock is None:
            yield
            return
        async with self._lock:
            yield

    async def claims(self, refs: list[ClaimRef]) -> list[v1.ResourceClaim]:
        """``getResourceClaims``: the claims as the API has them, or :class:`CallError`."""
        out = []
        for ref in refs:
            what = f"{ref.namespace}/{ref.name}"
            try:
                claim = await self._client.get(v1.ResourceClaim, ref.name, ref.namespace)
            except (ApiError, OSError, TimeoutError) as err:
                raise CallError(
                    f"get resource claims: retrieve claim {what}: {_error_text(err)}") from None
            if claim.status.allocation is None:
                raise CallError(f"get resource claims: claim {what} not allocated")
            if claim.metadata.uid != ref.uid:
                raise CallError(f"get resource claims: claim {what} got replaced")
            out.append(claim)
        return out

    async def prepare(self, refs: list[ClaimRef]) -> dict[str, PrepareResult]:
        claims = await self.claims(refs)
        async with self._serialized():
            try:
                results = await self._prepare(claims)
            except Exception as err:
                log.error("prepare resource claims: %s", err, exc_info=err)
                raise CallError(f"prepare resource claims: {err}") from None
        out: dict[str, PrepareResult] = {}
        for uid, result in results.items():
            if isinstance(result, Exception):
                result = PrepareResult(error=str(result) or type(result).__name__)
            out[uid] = result
            if result.error:
                log.warning("claim %s: %s", uid, result.error)
            else:
                log.info("prepared claim %s: %s", uid, ", ".join(
                    i for d in result.devices for i in d.cdi_device_ids) or "no CDI devices")
        return out

    async def unprepare(self, refs: list[ClaimRef]) -> dict[str, str]:
        async with self._serialized():
            try:
                results = await self._unprepare(refs)
            except Exception as err:
                log.error("unprepare resource claims: %s", err, exc_info=err)
                raise CallError(f"unprepare resource claims: {err}") from None
        out = {uid: "" if err is None else str(err) or type(err).__name__
               for uid, err in results.items()}
        for uid, text in out.items():
            if text:
                log.warning("claim %s: %s", uid, text)
            else:
                log.info("unprepared claim %s", uid)
        return out


def _refs(request: Any) -> list[ClaimRef]:
    return [ClaimRef(c.namespace, c.uid, c.name) for c in request.claims]


class DRAPluginService:
    """One package's ``DRAPlugin`` servicer (``pb`` is its generated messages module)."""

    def __init__(self, batches: Batches, pb: ModuleType) -> None:
        self._batches = batches
        self._pb = pb

    async def NodePrepareResources(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
        try:
            results = await self._batches.prepare(_refs(request))
        except CallError as err:
            await context.abort(grpc.StatusCode.UNKNOWN, str(err))
        response = self._pb.NodePrepareResourcesResponse()
        for uid, result in results.items():
            entry = response.claims[uid]
            entry.error = result.error
            for d in result.devices:
                entry.devices.add(request_names=[base_request(r) for r in d.requests],
                                  pool_name=d.pool_name, device_name=d.device_name,
                                  cdi_device_ids=list(d.cdi_device_ids))
        return response

    async def NodeUnprepareResources(self, request: Any,
                                     context: grpc.aio.ServicerContext) -> Any:
        try:
            results = await self._batches.unprepare(_refs(request))
        except CallError as err:
            await context.abort(grpc.StatusCode.UNKNOWN, str(err))
        response = self._pb.NodeUnprepareResourcesResponse()
        for uid, text in results.items():
            response.claims[uid].error = text
        return response


def add_services(batches: Batches, server: grpc.aio.Server, services: list[str]) -> None:
    """Register the ``services`` (registration strings) on ``server``."""
    table = {V1_SERVICE: (dra_v1_pb2, dra_v1_pb2_grpc),
             V1BETA1_SERVICE: (dra_v1beta1_pb2, dra_v1beta1_pb2_grpc)}
    for name in services:
        pb, pb_grpc = table[name]
        pb_grpc.add_DRAPluginServicer_to_server(DRAPluginService(batches, pb), server)

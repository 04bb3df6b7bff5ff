"""The DRA ``v1alpha3.Node`` service around a driver author's callbacks.

Each claim of a batched call runs concurrently as its own task. Prepare is idempotent per claim
UID (the kubelet retries until every claim of a pod is prepared): a prepared claim answers its
devices again without calling the author, and a claim whose prepare is still running shares that
run. A call the kubelet abandons (deadline, disconnect) does not cancel the author's work, so the
retry finds it done. Per-claim failures go into the response map, as the API asks.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

import grpc

from kubedra.driver import cdi
from kubedra.driver.claims import Claim, ClaimError, claim_from_proto
from kubedra.driver.publisher import Publisher
from kubedra.proto.generated import dra_v1alpha3_pb2 as dra_pb2
from kubedra.proto.generated import dra_v1alpha3_pb2_grpc as dra_grpc

PrepareFunc = Callable[[Claim], Awaitable[Sequence[str]]]
UnprepareFunc = Callable[[Claim], Awaitable[None]]
RESOURCES_DISABLED = "node resource support disabled"

log = logging.getLogger(__name__)


def _error_text(claim_uid: str, err: BaseException) -> str:
    """The claim's error for the kubelet; an unexpected failure is also logged, on one line
    (its traceback at debug level, ``-v``)."""
    if isinstance(err, ClaimError):
        log.warning("claim %s: %s", claim_uid, err)
        return str(err)
    text = str(err) or type(err).__name__
    log.error("claim %s: driver callback failed: %s", claim_uid, text)
    log.debug("claim %s: driver callback traceback", claim_uid, exc_info=err)
    return text


class NodeService(dra_grpc.NodeServicer):  # type: ignore[misc]
    def __init__(
        self, prepare: PrepareFunc, unprepare: UnprepareFunc, publisher: Publisher | None
    ) -> None:
        self._prepare_cb = prepare
        self._unprepare_cb = unprepare
        self._publisher = publisher
        self._prepared: dict[str, list[str]] = {}
        self._running: dict[str, asyncio.Task[list[str]]] = {}

    @property
    def prepared(self) -> dict[str, list[str]]:
        """Claim UID -> CDI devices of every claim prepared and not unprepared since."""
        return dict(self._prepared)

    async def NodePrepareResources(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
        await _require_uids(request, context)
        answers = await asyncio.gather(*(self._prepare(c) for c in request.claims))
        response = dra_pb2.NodePrepareResourcesResponse()
        for claim, answer in zip(request.claims, answers, strict=True):
            response.claims[claim.uid].CopyFrom(answer)
        return response

    async def NodeUnprepareResources(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
        await _require_uids(request, context)
        answers = await asyncio.gather(*(self._unprepare(c) for c in request.claims))
        response = dra_pb2.NodeUnprepareResourcesResponse()
        for claim, answer in zip(request.claims, answers, strict=True):
            response.claims[claim.uid].CopyFrom(answer)
        return response

    async def NodeListAndWatchResources(
        self, request: Any, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[Any]:
        if self._publisher is None:
            await context.abort(grpc.StatusCode.UNIMPLEMENTED, RESOURCES_DISABLED)
            return
        async for message in self._publisher.stream():
            yield message

    async def _prepare(self, pb: Any) -> Any:
        try:
            claim = claim_from_proto(pb)
            devices = self._prepared.get(claim.uid)
            if devices is None:
                devices = await asyncio.shield(self._prepare_task(claim))
        except Exception as err:
            return dra_pb2.NodePrepareResourceResponse(error=_error_text(pb.uid, err))
        return dra_pb2.NodePrepareResourceResponse(cdi_devices=devices)

    def _prepare_task(self, claim: Claim) -> asyncio.Task[list[str]]:
        task = self._running.get(claim.uid)
        if task is None:
            task = asyncio.create_task(self._run_prepare(claim))
            self._running[claim.uid] = task
            task.add_done_callback(functools.partial(self._forget, claim.uid))
        return task

    def _forget(self, uid: str, task: asyncio.Task[list[str]]) -> None:
        if self._running.get(uid) is task:
            del self._running[uid]
        if not task.cancelled():
            task.exception()  # retrieved here: the awaiting call may be gone

    async def _run_prepare(self, claim: Claim) -> list[str]:
        devices = list(await self._prepare_cb(claim))
        for name in devices:
            try:
                cdi.parse_qualified_name(name)
            except cdi.CDIError as err:
                raise ClaimError(f"driver returned {err}") from None
        self._prepared[claim.uid] = devices
        log.info("prepared claim %s/%s (%s): %s", claim.namespace, claim.name, claim.uid,
                 ", ".join(devices) or "no CDI devices")
        return devices

    async def _unprepare(self, pb: Any) -> Any:
        try:
            claim = claim_from_proto(pb)
            running = self._running.get(claim.uid)
            if running is not None:
                await asyncio.wait([running])  # a prepare in progress ends first
            await self._unprepare_cb(claim)
        except Exception as err:
            return dra_pb2.NodeUnprepareResourceResponse(error=_error_text(pb.uid, err))
        self._prepared.pop(claim.uid, None)
        log.info("unprepared claim %s/%s (%s)", claim.namespace, claim.name, claim.uid)
        return dra_pb2.NodeUnprepareResourceResponse()

    def cancel_running(self) -> None:
        """Cancel prepares still running at shutdown (after the server's grace period)."""
        for task in list(self._running.values()):
            task.cancel()


async def _require_uids(request: Any, context: grpc.aio.ServicerContext) -> None:
    for i, claim in enumerate(request.claims):
        if not claim.uid:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"claims[{i}].uid: must be set")

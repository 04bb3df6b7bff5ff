"""The scheduler's claim writes over the API, each a compare-and-swap on resourceVersion
that is re-read and retried on conflict, and never applied to a re-created claim (UID check).
:class:`ClientClaimWriter` writes v1alpha2 claims, :class:`DeviceClaimWriter` v1 ones (what
differs: the kinds and finalizer, from the generation's ``ClaimAPI``, and which status fields
an allocation sets).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import msgspec

from kubedra.allocation.engine import ClaimAllocation
from kubedra.allocation.podclaims import IN_USE
from kubedra.api.core import Pod
from kubedra.api.resource import v1
from kubedra.api.resource.v1alpha2 import ResourceClaimStatus
from kubedra.api.resourceclaim import (
    V1_CLAIMS,
    V1ALPHA2_CLAIMS,
    ClaimAPI,
    can_be_reserved,
    consumer_ref,
    is_reserved_for_pod,
)
from kubedra.client.errors import ApiError, is_conflict
from kubedra.client.informer import object_key
from kubedra.client.rest import Client

ATTEMPTS = 8
T = TypeVar("T")
log = logging.getLogger(__name__)


class ClaimWriteError(Exception):
    pass


class ClientClaimWriter:
    api: ClaimAPI = V1ALPHA2_CLAIMS

    def __init__(self, client: Client) -> None:
        self.client = client

    @staticmethod
    def allocated(status: Any, allocation: Any) -> Any:
        """``status`` with ``allocation`` (an engine ``ClaimAllocation``) written."""
        assert isinstance(status, ResourceClaimStatus) and isinstance(allocation,
                                                                      ClaimAllocation)
        return msgspec.structs.replace(status, driver_name=allocation.driver_name,
                                       allocation=allocation.allocation)

    @staticmethod
    def deallocated(status: Any) -> Any:
        return msgspec.structs.replace(status, reserved_for=None, allocation=None,
                                       driver_name="")

    async def _fresh(self, claim: Any) -> Any:
        current = await self.client.get(self.api.claim, claim.metadata.name or "",
                                        claim.metadata.namespace)
        if current.metadata.uid != claim.metadata.uid:
            raise ClaimWriteError(f"resourceclaim {claim.metadata.namespace}/"
                                  f"{claim.metadata.name} was re-created")
        return current

    async def _retrying(self, claim: Any, write: Callable[[Any], Awaitable[T]]) -> T:
        """Run ``write`` on the claim, re-reading it after every lost compare-and-swap."""
        current = claim
        for _ in range(ATTEMPTS):
            try:
                return await write(current)
            except ApiError as e:
                if not is_conflict(e):
                    raise
            current = await self._fresh(claim)
        raise ClaimWriteError(f"resourceclaim {claim.metadata.name}: too many conflicts")

    async def bind_claim(self, claim: Any, pod: Pod, allocation: Any | None) -> Any:
        return await self._retrying(claim, lambda c: self._bind_once(c, pod, allocation))

    async def _bind_once(self, current: Any, pod: Pod, allocation: Any | None) -> Any:
        if current.metadata.deletion_timestamp is not None:
            raise ClaimWriteError("claim has been marked for deletion")
        status = current.status
        reserved = list(status.reserved_for or ())
        already = is_reserved_for_pod(pod, current)
        if already and (allocation is None or status.allocation is not None):
            return current
        if allocation is not None:
            if status.allocation is not None:
                raise ClaimWriteError(f"resourceclaim {current.metadata.name} was allocated "
                                      "by someone else in the meantime")
            finalizers = list(current.metadata.finalizers or ())
            if self.api.finalizer not in finalizers:
                meta = msgspec.structs.replace(current.metadata,
                                               finalizers=[*finalizers, self.api.finalizer])
                current = await self.client.update(
                    msgspec.structs.replace(current, metadata=meta))
            status = self.allocated(current.status, allocation)
        else:
            if status.allocation is None:
                raise ClaimWriteError(f"resourceclaim {current.metadata.name} is not allocated")
            if not can_be_reserved(current):
                raise ClaimWriteError(IN_USE)
        status = msgspec.structs.replace(status,
                                         reserved_for=[*reserved, consumer_ref(pod, self.api)])
        written = await self.client.update_status(msgspec.structs.replace(current, status=status))
        if allocation is not None:
            log.info("Allocated claim", {"claim": object_key(written), "pod": object_key(pod)})
        return written

    async def unreserve_claim(self, claim: Any, pod: Pod) -> None:
        async def write(current: Any) -> None:
            before = current.status.reserved_for or []
            reserved = [r for r in before if r.uid != pod.metadata.uid]
            if len(reserved) == len(before):
                return
            status = msgspec.structs.replace(current.status, reserved_for=reserved or None)
            await self.client.update_status(msgspec.structs.replace(current, status=status))

        await self._retrying(claim, write)

    async def deallocate(self, claim: Any, pod: Pod) -> None:
        """Clear the allocation (and reservedFor, the rest of :meth:`deallocated`) unless,
        after a conflict, someone other than ``pod`` reserved the claim in the meantime."""

        async def write(current: Any) -> None:
            if current.status.allocation is None:
                return
            if any(r.uid != pod.metadata.uid for r in current.status.reserved_for or ()):
                raise ClaimWriteError(IN_USE)
            status = self.deallocated(current.status)
            await self.client.update_status(msgspec.structs.replace(current, status=status))
            log.info("Deallocated claim", {"claim": object_key(current),
                                           "pod": object_key(pod)})

        await self._retrying(claim, write)


class DeviceClaimWriter(ClientClaimWriter):
    """The writes of 1.34's plugin on ``resource.k8s.io/v1`` claims: the allocation is the
    allocated copy of the claim (``status.allocation``); deallocation also clears the
    drivers' ``status.devices``."""

    api = V1_CLAIMS

    @staticmethod
    def allocated(status: Any, allocation: Any) -> Any:
        assert isinstance(status, v1.ResourceClaimStatus) and isinstance(allocation,
                                                                         v1.ResourceClaim)
        return msgspec.structs.replace(status, allocation=allocation.status.allocation)

    @staticmethod
    def deallocated(status: Any) -> Any:
        return msgspec.structs.replace(status, reserved_for=None, allocation=None, devices=None)

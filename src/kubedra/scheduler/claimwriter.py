"""The scheduler's claim writes over the API, each a compare-and-swap on resourceVersion
that is re-read and retried on conflict, and never applied to a re-created claim (UID check).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

import msgspec

from kubedra.allocation.engine import ClaimAllocation
from kubedra.allocation.podclaims import IN_USE
from kubedra.api.core import Pod
from kubedra.api.resource.v1alpha2 import FINALIZER, ResourceClaim
from kubedra.api.resourceclaim import can_be_reserved, consumer_ref, is_reserved_for_pod
from kubedra.client.errors import ApiError, is_conflict
from kubedra.client.informer import object_key
from kubedra.client.rest import Client

ATTEMPTS = 8
T = TypeVar("T")
log = logging.getLogger(__name__)


class ClaimWriteError(Exception):
    pass


class ClientClaimWriter:
    def __init__(self, client: Client) -> None:
        self.client = client

    async def _fresh(self, claim: ResourceClaim) -> ResourceClaim:
        current = await self.client.get(ResourceClaim, claim.metadata.name or "",
                                        claim.metadata.namespace)
        if current.metadata.uid != claim.metadata.uid:
            raise ClaimWriteError(f"resourceclaim {claim.metadata.namespace}/"
                                  f"{claim.metadata.name} was re-created")
        return current

    async def _retrying(self, claim: ResourceClaim,
                        write: Callable[[ResourceClaim], Awaitable[T]]) -> T:
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

    async def bind_claim(self, claim: ResourceClaim, pod: Pod,
                         allocation: ClaimAllocation | None) -> ResourceClaim:
        return await self._retrying(claim, lambda c: self._bind_once(c, pod, allocation))

    async def _bind_once(self, current: ResourceClaim, pod: Pod,
                         allocation: ClaimAllocation | None) -> ResourceClaim:
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
            if FINALIZER not in finalizers:
                meta = msgspec.structs.replace(current.metadata,
                                               finalizers=[*finalizers, FINALIZER])
                current = await self.client.update(
                    msgspec.structs.replace(current, metadata=meta))
            status = msgspec.structs.replace(current.status, driver_name=allocation.driver_name,
                                             allocation=allocation.allocation)
        else:
            if status.allocation is None:
                raise ClaimWriteError(f"resourceclaim {current.metadata.name} is not allocated")
            if not can_be_reserved(current):
                raise ClaimWriteError(IN_USE)
        status = msgspec.structs.replace(status, reserved_for=[*reserved, consumer_ref(pod)])
        written = await self.client.update_status(msgspec.structs.replace(current, status=status))
        if allocation is not None:
            log.info("Allocated claim", {"claim": object_key(written), "pod": object_key(pod),
                                         "driver": allocation.driver_name})
        return written

    async def unreserve_claim(self, claim: ResourceClaim, pod: Pod) -> None:
        async def write(current: ResourceClaim) -> None:
            before = current.status.reserved_for or []
            reserved = [r for r in before if r.uid != pod.metadata.uid]
            if len(reserved) == len(before):
                return
            status = msgspec.structs.replace(current.status, reserved_for=reserved or None)
            await self.client.update_status(msgspec.structs.replace(current, status=status))

        await self._retrying(claim, write)

    async def deallocate(self, claim: ResourceClaim, pod: Pod) -> None:
        """Clear the allocation (and reservedFor, status.driverName) unless, after a
        conflict, someone other than ``pod`` reserved the claim in the meantime."""

        async def write(current: ResourceClaim) -> None:
            if current.status.allocation is None:
                return
            if any(r.uid != pod.metadata.uid for r in current.status.reserved_for or ()):
                raise ClaimWriteError(IN_USE)
            status = msgspec.structs.replace(current.status, reserved_for=None,
                                             allocation=None, driver_name="")
            await self.client.update_status(msgspec.structs.replace(current, status=status))
            log.info("Deallocated claim", {"claim": object_key(current),
                                           "pod": object_key(pod)})

        await self._retrying(claim, write)

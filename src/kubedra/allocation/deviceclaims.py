"""The scheduler's ``resource.k8s.io/v1`` claims and the devices they hold (upstream's
``allocateddevices.go`` over the claim copies of :class:`~.claimcopies.ClaimCopies`).

The devices of every claim's allocation, except results with admin access, are kept as a
multiset that is updated per change, so PreFilter hands the allocator the allocated set
without a pass over all claims.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from kubedra.allocation.changelog import ChangeLog
from kubedra.allocation.claimcopies import ClaimCopies, claim_key
from kubedra.allocation.model.devices import DeviceKey, claim_uses
from kubedra.api.resource.v1 import ResourceClaim

__all__ = ["DeviceClaims", "claim_key"]


class DeviceClaims(ClaimCopies[ResourceClaim]):
    """Claims by ``namespace/name`` and UID, their copies, and the allocated devices."""

    def __init__(self) -> None:
        super().__init__()
        self._by_name: dict[str, ResourceClaim] = {}  # "ns/name" -> informer copy
        self._uses: dict[str, list[DeviceKey]] = {}
        self._allocated: dict[DeviceKey, int] = {}
        self._pool_versions: dict[tuple[str, str], int] = {}
        self.pool_changes: ChangeLog[tuple[str, str]] = ChangeLog()
        """The pools, in the order their versions moved."""

    def upsert_claim(self, claim: ResourceClaim) -> None:
        self._by_name[f"{claim.metadata.namespace}/{claim.metadata.name}"] = claim
        super().upsert_claim(claim)

    def delete_claim(self, claim: ResourceClaim) -> None:
        self._by_name.pop(f"{claim.metadata.namespace}/{claim.metadata.name}", None)
        super().delete_claim(claim)

    def lookup(self, namespace: str, name: str) -> ResourceClaim | None:
        found = self._by_name.get(f"{namespace}/{name}")
        return None if found is None else self.current(found)

    @property
    def pool_versions(self) -> Mapping[tuple[str, str], int]:
        """Per (driver, pool), a number that changes whenever a device of the pool starts or
        stops being in use (absent: none ever was): what was decided about the pool's
        devices holds while it stays the same."""
        return self._pool_versions

    def allocated(self) -> Collection[DeviceKey]:
        """The devices in use (a live view: in-flight allocations count at once)."""
        return self._allocated.keys()

    def _refresh(self, key: str) -> None:
        claim = self.claim(key)
        new = claim_uses(claim) if claim is not None else []
        old = self._uses.get(key, [])
        if new == old:
            return
        versions, changes = self._pool_versions, self.pool_changes
        for pool in {(driver, pool) for driver, pool, _ in (*old, *new)}:
            versions[pool] = versions.get(pool, 0) + 1
            changes.add(pool)
        for device in old:
            left = self._allocated[device] - 1
            if left:
                self._allocated[device] = left
            else:
                del self._allocated[device]
        for device in new:
            self._allocated[device] = self._allocated.get(device, 0) + 1
        if new:
            self._uses[key] = new
        else:
            self._uses.pop(key, None)

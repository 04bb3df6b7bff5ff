"""The scheduler's ``resource.k8s.io/v1`` claims and the devices they hold (upstream's claim
assume cache with its in-flight allocations, and ``allocateddevices.go``).

A claim counts in its newest copy: in flight (Reserve until PreBind wrote it), else our own
written copy until the informer shows it (assumed), else the informer's. The devices of every
claim's allocation, except results with admin access, are kept as a multiset that is updated
per change, so PreFilter hands the allocator the allocated set without a pass over all claims.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from kubedra.allocation.model.devices import DeviceKey, claim_uses
from kubedra.api.meta import revision
from kubedra.api.resource.v1 import ResourceClaim


def claim_key(claim: ResourceClaim) -> str:
    """UID, or ``namespace/name`` for objects that have none yet."""
    meta = claim.metadata
    return meta.uid or f"{meta.namespace or ''}/{meta.name or ''}"


class DeviceClaims:
    """Claims by ``namespace/name`` and UID, their copies, and the allocated devices."""

    def __init__(self) -> None:
        self._by_name: dict[str, ResourceClaim] = {}  # "ns/name" -> informer copy
        self._informer: dict[str, ResourceClaim] = {}
        self._assumed: dict[str, ResourceClaim] = {}
        self._in_flight: dict[str, ResourceClaim] = {}
        self._uses: dict[str, list[DeviceKey]] = {}
        self._allocated: dict[DeviceKey, int] = {}
        self._pool_versions: dict[tuple[str, str], int] = {}

    # --- informer ------------------------------------------------------------------------------

    def upsert(self, claim: ResourceClaim) -> None:
        """Informer add/update. A copy as new as the assumed one replaces it."""
        key = claim_key(claim)
        self._by_name[f"{claim.metadata.namespace}/{claim.metadata.name}"] = claim
        self._informer[key] = claim
        assumed = self._assumed.get(key)
        if assumed is not None and revision(claim) >= revision(assumed):
            del self._assumed[key]
        self._refresh(key)

    def delete(self, claim: ResourceClaim) -> None:
        key = claim_key(claim)
        self._by_name.pop(f"{claim.metadata.namespace}/{claim.metadata.name}", None)
        self._informer.pop(key, None)
        self._assumed.pop(key, None)
        self._refresh(key)

    # --- reading --------------------------------------------------------------------------------

    def claim(self, key: str) -> ResourceClaim | None:
        """The newest copy: in flight, else assumed, else the informer's."""
        return self._in_flight.get(key) or self._assumed.get(key) or self._informer.get(key)

    def current(self, claim: ResourceClaim) -> ResourceClaim:
        """Our own written copy over the informer's (not an in-flight one: it is not written)."""
        return self._assumed.get(claim_key(claim)) or claim

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

    # --- our own writes --------------------------------------------------------------------------

    def set_in_flight(self, claim: ResourceClaim) -> None:
        """A tentative allocation (Reserve until PreBind ends): its devices count at once."""
        key = claim_key(claim)
        self._in_flight[key] = claim
        self._refresh(key)

    def clear_in_flight(self, key: str) -> None:
        if self._in_flight.pop(key, None) is not None:
            self._refresh(key)

    def is_in_flight(self, key: str) -> bool:
        return key in self._in_flight

    def assume(self, stored: ResourceClaim) -> None:
        """Keep ``stored`` (our write's answer) until the informer shows it; ValueError when
        the informer already has a newer copy."""
        key = claim_key(stored)
        current = self._informer.get(key)
        if current is not None and revision(stored) < revision(current):
            raise ValueError(f"claim {stored.metadata.namespace}/{stored.metadata.name} is out "
                             "of sync")
        self._assumed[key] = stored
        self._refresh(key)

    def commit(self, stored: ResourceClaim) -> bool:
        """``stored`` was written: assume it, then stop counting it as in flight (in that
        order, so its devices never look free). False: the informer has a newer copy."""
        try:
            self.assume(stored)
            return True
        except ValueError:
            return False
        finally:
            self.clear_in_flight(claim_key(stored))

    def _refresh(self, key: str) -> None:
        claim = self.claim(key)
        new = claim_uses(claim) if claim is not None else []
        old = self._uses.get(key, [])
        if new == old:
            return
        versions = self._pool_versions
        for driver, pool, _ in {*old, *new}:
            versions[driver, pool] = versions.get((driver, pool), 0) + 1
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

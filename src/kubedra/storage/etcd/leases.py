"""Leases for writes with a time to live, shared as kube-apiserver's lease manager shares them
(``storage/etcd3/lease_manager.go``): a write with ``ttl`` attaches to a lease granted for
``ttl`` plus a reuse window (5 % of ``ttl``, at most 60 s), reused while it still outlives
``ttl`` and has fewer than 1000 keys. So 4,000 Events written within a minute share a few
leases, and each expires no earlier than asked and at most the reuse window later."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

REUSE_PERCENT = 0.05
REUSE_MAX_SECONDS = 60
MAX_KEYS = 1000


@dataclass(slots=True)
class _Lease:
    id: int
    expires: float
    """Loop time at which etcd lets it go (at the earliest)."""
    keys: int = 0


class Leases:
    """``grant(ttl)`` asks etcd for a new lease and returns its id."""

    def __init__(self, grant: Callable[[int], Awaitable[int]]) -> None:
        self._grant = grant
        self._current: dict[int, _Lease] = {}  # by the ttl asked
        self._lock = asyncio.Lock()

    async def get(self, ttl: int) -> int:
        """A lease for a key that must live ``ttl`` seconds from now."""
        async with self._lock:
            loop = asyncio.get_running_loop()
            now = loop.time()
            reuse = min(int(ttl * REUSE_PERCENT), REUSE_MAX_SECONDS)
            lease = self._current.get(ttl)
            if lease is None or lease.keys >= MAX_KEYS or not (
                now + ttl < lease.expires <= now + ttl + reuse
            ):
                granted = await self._grant(ttl + reuse)
                lease = self._current[ttl] = _Lease(granted, now + ttl + reuse)
            lease.keys += 1
            return lease.id

    def forget(self, lease_id: int) -> None:
        """etcd no longer has the lease (it expired early, or was revoked): grant anew."""
        for ttl, lease in list(self._current.items()):
            if lease.id == lease_id:
                del self._current[ttl]

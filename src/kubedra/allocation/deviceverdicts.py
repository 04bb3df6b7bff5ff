"""Filter verdicts of the devices allocator, shared by pods that ask for the same thing (the
devices model's use of :class:`~.verdictcache.VerdictCache`).

An allocation on a node depends on what the pending claims ask (their specs and the specs of
the classes they name), on the slices the node sees (:meth:`SliceIndex.view`: one tuple object
until a slice changes; with slices not bound to one node, also the node's labels) and on
which devices of those slices' pools are in use (:attr:`DeviceClaims.pool_versions`). While
those stay the same, the allocator's answer, the results it chose and the free devices the
packing score counts are the same, so a pod's Filter runs the allocator only on the nodes
that changed since the last pod that asked the same. Errors are not kept: they name the claim.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence

import msgspec

from kubedra.allocation.deviceclaims import DeviceClaims
from kubedra.allocation.model.devices import SliceIndex
from kubedra.allocation.verdictcache import VerdictCache
from kubedra.api.core import Node
from kubedra.api.resource.v1 import AllocationResult, DeviceClass, ResourceClaim, ResourceSlice

NodeState = tuple[tuple[ResourceSlice, ...], tuple[int | None, ...], Hashable]
"""(the slices the node sees, their pools' versions, its labels where they matter)."""


class DeviceVerdict:
    """The allocator's answer on a node, and the packing score's count once asked."""

    __slots__ = ("free", "results")

    def __init__(self, results: list[AllocationResult] | None) -> None:
        self.results = results
        self.free: int | None = None


class DeviceVerdicts:
    def __init__(self) -> None:
        self._cache: VerdictCache[NodeState, DeviceVerdict] = VerdictCache()
        self._free: dict[str, tuple[tuple[ResourceSlice, ...], tuple[int | None, ...], bool]] = {}

    def signature_id(self, pending: Sequence[ResourceClaim],
                     classes: Mapping[str, DeviceClass]) -> int:
        """What the pending claims ask: their specs and those of the classes they name."""
        names: set[str] = set()
        for claim in pending:
            for request in claim.spec.devices.requests:
                if request.exactly is not None:
                    names.add(request.exactly.device_class_name)
                names.update(sub.device_class_name for sub in request.first_available or ())
        encode = msgspec.json.encode
        found = (classes.get(n) for n in sorted(names))
        return self._cache.signature_id((
            tuple(encode(c.spec) for c in pending),
            tuple(None if c is None else encode(c.spec) for c in found)))

    @staticmethod
    def state(index: SliceIndex, claims: DeviceClaims, node: Node) -> NodeState:
        view = index.view(node.metadata.name or "")
        labels = tuple(sorted((node.metadata.labels or {}).items())) if index.shared else None
        return view.slices, tuple(map(claims.pool_versions.get, view.pools)), labels

    def lookup(self, sig: int, node: str, state: NodeState) -> DeviceVerdict | None:
        hit = self._cache.entries.get((sig, node))
        if hit is None:
            return None
        held = hit[0]
        if held[0] is state[0] and held[1] == state[1] and held[2] == state[2]:
            return hit[1]
        return None

    def store(self, sig: int, node: str, state: NodeState,
              results: list[AllocationResult] | None) -> DeviceVerdict:
        return self._cache.store(sig, node, state, DeviceVerdict(results))

    def nodes_with_free_devices(self, index: SliceIndex, claims: DeviceClaims,
                                nodes: Iterable[str]) -> set[str]:
        """Those of ``nodes`` with a device of their own slices not in use (a node is looked
        at again only when its slices or their pools' devices in use changed)."""
        allocated = claims.allocated()
        versions_of = claims.pool_versions.get
        view, seen = index.view, self._free
        out = set()
        for node in nodes:
            mine = view(node)
            versions = tuple(map(versions_of, mine.pools))
            hit = seen.get(node)
            if hit is not None and hit[0] is mine.slices and hit[1] == versions:
                free = hit[2]
            else:
                free = any((s.spec.driver, s.spec.pool.name, d.name) not in allocated
                           for s in mine.slices for d in s.spec.devices or ())
                seen[node] = (mine.slices, versions, free)
            if free:
                out.add(node)
        return out

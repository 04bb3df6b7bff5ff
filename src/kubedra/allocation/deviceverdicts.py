"""Filter verdicts of the devices allocator, shared by pods that ask for the same thing (the
devices model's use of :class:`~.verdictcache.VerdictCache`).

An allocation on a node depends on what the pending claims ask (their specs and the specs of
the classes they name), on the slices the node sees (:meth:`SliceIndex.view`: one tuple object
until a slice changes; with slices not bound to one node, also the node's labels) and on
which devices of those slices' pools are in use (:attr:`DeviceClaims.pool_versions`). While
those stay the same, the allocator's answer, the results it chose and the free devices the
packing score counts are the same, so a pod's Filter runs the allocator only on the nodes
that changed since the last pod that asked the same. Errors are not kept: they name the claim.

Where every slice is one node's, the nodes whose allocation held are also kept per
signature (:meth:`DeviceVerdicts.fits`) and dropped as their pools change, so that a pod's
Filter passes them without looking at their state at all: most nodes, for pods created from
one template.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Iterable, Mapping, Sequence

import msgspec

from kubedra.allocation.deviceclaims import DeviceClaims
from kubedra.allocation.model.devices import DeviceKey, SliceIndex
from kubedra.allocation.verdictcache import Fitting, VerdictCache
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
        self._fits: Fitting[tuple[str, str], tuple[DeviceVerdict, Node]] = Fitting()
        self._free_nodes: set[str] = set()  # of _free_index, as of _free_mark
        self._free_index: SliceIndex | None = None
        self._free_mark = 0
        self._pools_index: SliceIndex | None = None  # of _pool_nodes
        self._pool_nodes: dict[tuple[str, str], list[str]] = {}

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

    def for_pod(self, sig: int, index: SliceIndex, claims: DeviceClaims
                ) -> Callable[[Node, str], tuple[NodeState, DeviceVerdict | None]]:
        """Per node (and its name), its state now and the verdict reached in that state
        (None: none yet). A closure over what one pod's cycle holds still, since the Filter
        of every node runs it (the hot path of scheduling, as
        :meth:`.verdicts.NodeVerdicts.for_pod`)."""
        entries, versions, view = self._cache.entries, claims.pool_versions, index.view
        if index.shared:  # what a node sees depends on its labels
            def shared(node: Node, name: str) -> tuple[NodeState, DeviceVerdict | None]:
                seen = view(name)
                state = (seen.slices, tuple(map(versions.get, seen.pools)),
                         tuple(sorted((node.metadata.labels or {}).items())))
                hit = entries.get((sig, name))
                return state, hit[1] if hit is not None and hit[0] == state else None
            return shared
        views = index.views

        def local(node: Node, name: str) -> tuple[NodeState, DeviceVerdict | None]:
            seen = views.get(name) or view(name)
            pools = tuple(map(versions.get, seen.pools))
            hit = entries.get((sig, name))
            if hit is not None:
                held = hit[0]
                if held[0] is seen.slices and held[1] == pools:
                    return held, hit[1]
            return (seen.slices, pools, None), None
        return local

    def store(self, sig: int, node: str, state: NodeState,
              results: list[AllocationResult] | None) -> DeviceVerdict:
        return self._cache.store(sig, node, state, DeviceVerdict(results))

    def fits(self, sig: int, index: SliceIndex, claims: DeviceClaims
             ) -> dict[str, tuple[DeviceVerdict, Node]]:
        """The nodes where ``sig``'s allocation held and still holds (the verdict and the
        Node it ran on): the caller adds those it allocates on. Kept from pod to pod: the
        nodes of pools whose devices in use changed since the last call are dropped, all
        of them after a slice change. Only where every slice is one node's (else a node's
        labels count too); otherwise a new dict each call."""
        if index.shared:
            return {}
        pool_nodes = self._nodes_of_pools(index)
        return self._fits.now(sig, index, claims.pool_changes,
                              lambda pool: pool_nodes.get(pool, ()))

    def _nodes_of_pools(self, index: SliceIndex) -> dict[tuple[str, str], list[str]]:
        """The nodes that see each pool, for an index of node-local slices."""
        if index is not self._pools_index:
            self._pools_index = index
            self._pool_nodes = {}
            for node in index.node_local() or ():
                for pool in index.view(node).pools:
                    self._pool_nodes.setdefault(pool, []).append(node)
        return self._pool_nodes

    def nodes_with_free_devices(self, index: SliceIndex, claims: DeviceClaims,
                                nodes: Iterable[str]) -> set[str]:
        """Those of ``nodes`` (every node with slices of its own in ``index``) with a device
        of those slices not in use. Kept from pod to pod: only the nodes of pools whose
        devices in use changed since (:attr:`DeviceClaims.pool_changes`) are looked
        at again, all of them after a slice change."""
        changed, self._free_mark = claims.pool_changes.since(self._free_mark)
        allocated = claims.allocated()
        if index is not self._free_index or changed is None:
            self._free_index = index
            self._free_nodes = {n for n in nodes if _has_free(index, n, allocated)}
        else:
            free, pool_nodes = self._free_nodes, self._nodes_of_pools(index)
            for node in {n for pool in changed for n in pool_nodes.get(pool, ())}:
                if _has_free(index, node, allocated):
                    free.add(node)
                else:
                    free.discard(node)
        return set(self._free_nodes)


def _has_free(index: SliceIndex, node: str, allocated: Collection[DeviceKey]) -> bool:
    return any((s.spec.driver, s.spec.pool.name, d.name) not in allocated
               for s in index.view(node).slices for d in s.spec.devices or ())

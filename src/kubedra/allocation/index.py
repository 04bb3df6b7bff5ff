"""The free-instance index: slices and claim allocations in, free instances per pool out.

Fed with events (slice add/update/delete, claim add/update/delete, assume/restore, in-flight
set/clear) and updated incrementally: a slice event rebuilds only its own pool, a claim event
touches only the pools its allocation names. Nothing is rebuilt per pod.

The allocation a claim contributes is its in-flight copy if any, else its assumed copy, else the
informer copy (:class:`~.claimcopies.ClaimCopies`, which both models share). A claim consumes
its instances once, however many pods reserve it.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Sequence

from kubedra.allocation.changelog import ChangeLog
from kubedra.allocation.claimcopies import ClaimCopies, claim_key
from kubedra.allocation.instance import Instance
from kubedra.allocation.model.namedresources import (
    PoolKey,
    Use,
    claim_uses,
    pool_key,
    same_instances,
    slice_instances,
)
from kubedra.allocation.pool import Pool
from kubedra.allocation.selectors import Selector
from kubedra.api.resource.v1alpha2 import ResourceClaim, ResourceSlice

__all__ = ["AllocationIndex", "ModelError", "claim_key"]

PairKey = tuple[str | None, str]  # (class filter, request selector) expressions
PAIR_SETS_PER_DRIVER = 32


class _PairNodes:
    """Nodes where (class filter, request selector) has at least one free match."""

    __slots__ = ("filter", "nodes", "request")

    def __init__(self, filt: Selector | None, request: Selector) -> None:
        self.filter = filt
        self.request = request
        self.nodes: dict[str, None] = {}

    def update(self, pool: Pool) -> None:
        free = pool.free
        if free and pool.matching(self.filter, self.request, free).ok & free:
            self.nodes[pool.node] = None
        else:
            self.nodes.pop(pool.node, None)


class ModelError(Exception):
    """The model cannot be built (e.g. listing slices failed)."""


class AllocationIndex(ClaimCopies[ResourceClaim]):
    """Cluster state for structured allocation (pure, synchronous, no I/O): the slices' pools
    and the instances the counted claims hold (claims through :class:`ClaimCopies`)."""

    def __init__(self) -> None:
        super().__init__()
        self._slices: dict[str, ResourceSlice] = {}
        self._slice_instances: dict[str, list[Instance]] = {}
        self._pool_slices: dict[PoolKey, set[str]] = {}
        self._pools: dict[PoolKey, Pool] = {}
        self._node_pools: dict[str, dict[str, Pool]] = {}
        self._holders: dict[PoolKey, dict[str, list[str]]] = {}
        self._uses: dict[str, tuple[Use, ...]] = {}
        self._claim_names: dict[str, str] = {}
        self._free_nodes: dict[str, dict[str, None]] = {}
        self._pair_nodes: dict[str, dict[PairKey, _PairNodes]] = {}
        self.generation = 0
        self.node_changes: ChangeLog[str] = ChangeLog()
        """The nodes, in the order one of their pools was replaced or its usage changed."""

    @classmethod
    def from_scratch(
        cls,
        list_slices: Callable[[], Iterable[ResourceSlice]],
        claims: Iterable[ResourceClaim],
        in_flight: Iterable[ResourceClaim] = (),
    ) -> AllocationIndex:
        """Upstream's newResourceModel in one go (initial sync, tests, offline tools)."""
        try:
            slices = list(list_slices())
        except Exception as err:
            raise ModelError(f"list node resource slices: {err}") from err
        index = cls()
        for s in slices:
            index.upsert_slice(s)
        for c in claims:
            index.upsert_claim(c)
        for c in in_flight:
            index.set_in_flight(c)
        return index

    # --- slices -----------------------------------------------------------------------------

    def upsert_slice(self, s: ResourceSlice) -> None:
        name = s.metadata.name or ""
        old = self._slices.get(name)
        self._slices[name] = s
        key = pool_key(s)
        if old is not None and pool_key(old) != key:
            self._detach_slice(name, pool_key(old))
            old = None
        if old is not None and same_instances(old, s):
            return  # same instances: keep Instance objects and their verdict caches
        self._slice_instances[name] = slice_instances(s)
        self._pool_slices.setdefault(key, set()).add(name)
        self._rebuild_pool(key)

    def delete_slice(self, name: str) -> None:
        old = self._slices.pop(name, None)
        if old is not None:
            self._detach_slice(name, pool_key(old))

    def _detach_slice(self, name: str, key: PoolKey) -> None:
        self._slice_instances.pop(name, None)
        names = self._pool_slices.get(key)
        if names is not None:
            names.discard(name)
            if not names:
                del self._pool_slices[key]
        self._rebuild_pool(key)

    def _rebuild_pool(self, key: PoolKey) -> None:
        node, driver = key
        names = self._pool_slices.get(key)
        self.generation += 1
        self.node_changes.add(node)
        if names is None:
            self._pools.pop(key, None)
            node_pools = self._node_pools.get(node)
            if node_pools is not None:
                node_pools.pop(driver, None)
                if not node_pools:
                    del self._node_pools[node]
            self._free_nodes.get(driver, {}).pop(node, None)
            for pn in self._pair_nodes.get(driver, {}).values():
                pn.nodes.pop(node, None)
            return
        instances = [i for n in sorted(names) for i in self._slice_instances[n]]
        pool = Pool(node, driver, instances)
        for inst_name, holders in self._holders.get(key, {}).items():
            pool.set_usage(inst_name, len(holders))
        self._pools[key] = pool
        self._node_pools.setdefault(node, {})[driver] = pool
        self._track_free(pool)

    def _track_free(self, pool: Pool) -> None:
        nodes = self._free_nodes.setdefault(pool.driver, {})
        if pool.free:
            nodes[pool.node] = None
        else:
            nodes.pop(pool.node, None)
        for pn in self._pair_nodes.get(pool.driver, {}).values():
            pn.update(pool)

    # --- claims -----------------------------------------------------------------------------

    def _display(self, key: str) -> str:
        return self._claim_names.get(key, key)

    def _refresh(self, key: str) -> None:
        claim = self.claim(key)
        if claim is not None:
            self._claim_names[key] = f"{claim.metadata.namespace or ''}/{claim.metadata.name or ''}"
        else:
            self._claim_names.pop(key, None)
        new = claim_uses(claim)
        old = self._uses.get(key, ())
        if new == old:
            return
        if new:
            self._uses[key] = new
        else:
            self._uses.pop(key, None)
        self.generation += 1
        for node, driver, name in old:
            holders = self._holders[(node, driver)]
            holders[name].remove(key)
            if not holders[name]:
                del holders[name]
            if not holders:
                del self._holders[(node, driver)]
            self._apply_usage((node, driver), name)
        for node, driver, name in new:
            pool_holders = self._holders.setdefault((node, driver), {})
            pool_holders.setdefault(name, []).append(key)
            self._apply_usage((node, driver), name)

    def _apply_usage(self, key: PoolKey, name: str) -> None:
        self.node_changes.add(key[0])
        pool = self._pools.get(key)
        if pool is not None:
            pool.set_usage(name, len(self._holders.get(key, {}).get(name, ())))
            self._track_free(pool)

    # --- queries ----------------------------------------------------------------------------

    def pool(self, node: str, driver: str) -> Pool | None:
        return self._pools.get((node, driver))

    def pool_lookup(self) -> Callable[[PoolKey], Pool | None]:
        """:meth:`pool` by its ``(node, driver)`` key, for loops over every node: the
        index's own mapping's ``get`` (it lives as long as the index)."""
        return self._pools.get

    def pools(self) -> Iterator[Pool]:
        return iter(self._pools.values())

    def node_pools(self, node: str) -> dict[str, Pool]:
        return self._node_pools.get(node, {})

    def nodes(self) -> list[str]:
        """Nodes that have at least one ResourceSlice."""
        return sorted(self._node_pools)

    def nodes_with_free(self, driver: str) -> Collection[str]:
        """Nodes where ``driver`` has at least one free instance (no particular order)."""
        return self._free_nodes.get(driver, {}).keys()

    def matching_nodes(self, driver: str, filt: Selector | None,
                       request: Selector) -> Collection[str]:
        """Nodes with a free instance of ``driver`` passing ``filt`` and ``request``.

        Kept up to date on every event for the most recently asked selector pairs of each
        driver (evaluating each selector once per instance, as everywhere else).
        """
        sets = self._pair_nodes.setdefault(driver, {})
        key = (filt.expression if filt is not None else None, request.expression)
        pn = sets.pop(key, None)
        if pn is None:
            if len(sets) >= PAIR_SETS_PER_DRIVER:
                del sets[next(iter(sets))]
            pn = _PairNodes(filt, request)
            for node in self._free_nodes.get(driver, ()):
                pn.update(self._pools[(node, driver)])
        sets[key] = pn  # most recently used last
        return pn.nodes.keys()

    def free_count(self, node: str, driver: str | None = None) -> int:
        """Free instances on ``node`` (of one driver, or of all drivers): for scoring."""
        if driver is not None:
            pool = self._pools.get((node, driver))
            return pool.free.bit_count() if pool is not None else 0
        return sum(p.free.bit_count() for p in self.node_pools(node).values())

    def free_counts(self, nodes: Iterable[str], drivers: Sequence[str]) -> list[int]:
        """Free instances of ``drivers`` per node, in one pass (the packing score asks for
        every feasible node at once)."""
        pools = self._pools
        if len(drivers) == 1:
            driver = drivers[0]
            return [0 if (pool := pools.get((node, driver))) is None else pool.free.bit_count()
                    for node in nodes]
        return [sum(pool.free.bit_count() for d in drivers
                    if (pool := pools.get((node, d))) is not None) for node in nodes]

    def holders(self, node: str, driver: str, name: str) -> list[str]:
        """Claims (``namespace/name``) whose allocation names this instance, in event order."""
        return [self._display(k) for k in self._holders.get((node, driver), {}).get(name, ())]

    def holder_of(self, pool: Pool, position: int) -> ResourceClaim | None:
        """The claim occupying the instance at ``position`` (the k-th holder of its name)."""
        name = pool.instances[position].name
        k = pool.by_name[name].index(position)
        keys = self._holders.get((pool.node, pool.driver), {}).get(name, [])
        return self.claim(keys[k]) if k < len(keys) else None

    def duplicates(self) -> list[tuple[str, str, str]]:
        """(node, driver, name) for every instance name listed more than once in one pool."""
        return [(p.node, p.driver, name) for p in self._pools.values() for name in p.duplicates]

    def snapshot(self) -> dict[str, dict[str, list[tuple[str, bool]]]]:
        """node -> driver -> [(instance name, allocated)]: for tests and debugging."""
        out: dict[str, dict[str, list[tuple[str, bool]]]] = {}
        for (node, driver), pool in sorted(self._pools.items()):
            out.setdefault(node, {})[driver] = [
                (inst.name, not (pool.free >> i) & 1) for i, inst in enumerate(pool.instances)
            ]
        return out

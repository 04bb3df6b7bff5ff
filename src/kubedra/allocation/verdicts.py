"""Filter verdicts of the named-resources allocator, shared by pods that ask for the same
thing (kept in :class:`~.verdictcache.VerdictCache`).

A node's verdict depends only on what the pod's claims request (selectors, class filters, in
pod and request order) and on the pools of the requested drivers on that node. Pods created
from one claim template ask for the same thing, so the verdict is reused until one of those
pools changes (a new Pool object on a slice change, a new ``version`` on every allocation
change). Each pod's scheduling cycle thus re-evaluates only the nodes whose pools changed.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Container

from kubedra.allocation.engine import UNSUITABLE, NodeVerdict, PodAllocator
from kubedra.allocation.pool import Pool
from kubedra.allocation.verdictcache import Fitting, VerdictCache

Signature = tuple[tuple[tuple[str, tuple[tuple[str | None, str], ...]], ...], ...]
_PoolState = tuple[tuple[Pool | None, int], ...]

def signature(allocator: PodAllocator) -> Signature:
    """What the allocator's claims request, per claim and driver (vendor parameters do not
    change where a claim fits)."""
    return tuple(
        tuple((driver, tuple((r.filter.expression if r.filter is not None else None,
                              r.selector.expression) for r in plan.drivers[driver]))
              for driver in sorted(plan.drivers))
        for plan in allocator.plans)


NOTHING_FREE = NodeVerdict("", False, UNSUITABLE, claim=0)
"""Nothing free at all on the node: no selector is evaluated, every claim fails alone."""


class NodeVerdicts:
    def __init__(self) -> None:
        self._cache: VerdictCache[_PoolState, NodeVerdict] = VerdictCache()
        self._passing: Fitting[str, None] = Fitting()

    def signature_id(self, allocator: PodAllocator) -> int:
        """A small number for what the allocator requests (cheap to hash per node)."""
        return self._cache.signature_id(signature(allocator))

    def for_pod(self, allocator: PodAllocator
                ) -> tuple[Callable[[str], NodeVerdict], Container[str]]:
        """The allocator's verdict by node name, reused while the node's pools of the
        requested drivers stay as they were; and the nodes where the claims are known to
        fit (kept from pod to pod, those whose pools changed since dropped), which Filter
        passes without asking. Claims usually ask one driver: then a closure over that
        driver's pools, since the Filter of every other node runs it (the hot path of
        scheduling)."""
        if not allocator.requests:  # claims without requests fit anywhere
            return allocator.filter, ()
        sig = self.signature_id(allocator)
        passing = self._passing.now(sig, allocator.index, allocator.index.node_changes,
                                    _itself)
        if len(allocator.requests) > 1:
            return functools.partial(self._several, allocator, sig, passing), passing
        driver = next(iter(allocator.requests))
        pool_of = allocator.index.pool_lookup()
        cache = self._cache.entries

        def verdict(node: str) -> NodeVerdict:
            pool = pool_of((node, driver))
            if pool is None or not pool.free:
                return NOTHING_FREE
            hit = cache.get((sig, node))
            if hit is not None:
                (held, version), = hit[0]
                if held is pool and version == pool.version:
                    found = hit[1]
                    if found.ok:
                        passing[node] = None
                    return found
            return self._evaluate(allocator, sig, node, ((pool, pool.version),), passing)

        return verdict, passing

    def _several(self, allocator: PodAllocator, sig: int, passing: dict[str, None],
                 node: str) -> NodeVerdict:
        """The verdict of claims that ask several drivers."""
        index = allocator.index
        pools = [index.pool(node, driver) for driver in allocator.requests]
        if all(p is None or not p.free for p in pools):
            return NOTHING_FREE
        state = tuple((p, p.version if p is not None else 0) for p in pools)
        hit = self._cache.entries.get((sig, node))
        if hit is not None and _same(hit[0], state):
            if hit[1].ok:
                passing[node] = None
            return hit[1]
        return self._evaluate(allocator, sig, node, state, passing)

    def _evaluate(self, allocator: PodAllocator, sig: int, node: str,
                  state: _PoolState, passing: dict[str, None]) -> NodeVerdict:
        found = self._cache.store(sig, node, state, allocator.filter(node))
        if found.ok:
            passing[node] = None
        return found


def _itself(node: str) -> tuple[str]:
    return (node,)


def _same(a: _PoolState, b: _PoolState) -> bool:
    return len(a) == len(b) and all(
        pa is pb and va == vb for (pa, va), (pb, vb) in zip(a, b, strict=True))

"""Joint allocation of all unallocated structured claims of one pod on one node.

Per driver, the requests of all the pod's claims (pod order, then request order) are matched
against that node+driver pool at once, so two claims never get the same instance (upstream
v1.30 checked each claim alone against the same model). First-fit is tried first and is
returned when it succeeds; otherwise a complete matching is searched. A selector that fails to
evaluate on an instance makes that instance unsuitable for that request; if the node ends up
unsuitable, the reason carries the first such error.

Typical scheduler use: ``PodAllocator(index, plans)`` in PreFilter, :meth:`filter` per node,
:meth:`reserve` for the chosen node (the results are in flight), :meth:`commit` for each claim
as written, :meth:`release` when the cycle ends or fails. Only this class moves a claim through
in-flight and assumed (upstream's ``inFlightAllocations`` and assume cache).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field

from kubedra.allocation.index import AllocationIndex, claim_key
from kubedra.allocation.matching import assign
from kubedra.allocation.model.namedresources import (
    ClaimPlan,
    Request,
    build_allocation,
    with_allocation,
)
from kubedra.allocation.packing import FreeCounts
from kubedra.allocation.pool import Pool
from kubedra.api.resource.v1alpha2 import AllocationResult, ResourceClaim

UNSUITABLE = "resourceclaim cannot be allocated for the node (unsuitable)"
JOINT_FAILURE = "cannot allocate all claims"
CHECK_FAILED = "checking structured parameters failed: "
INSUFFICIENT = "insufficient resources"
ALLOCATE_PREFIX = "allocating via named resources structured model: "


class AllocationError(Exception):
    """Allocation on the chosen node failed (upstream: 'claim allocation failed unexpectedly')."""


@dataclass(slots=True)
class NodeVerdict:
    """The outcome of :meth:`PodAllocator.filter` for one node.

    ``reason`` is the Filter status message (UnschedulableAndUnresolvable); ``error`` the CEL
    error in nodeIsSuitable's shape (``checking node "n" and resources of driver "d": ...``),
    ``cause`` the bare one (``evaluate request CEL expression: ...``);
    ``claim`` the index of the first claim that cannot be allocated alone (None: only the
    combination fails). ``assignment[driver]`` = pool positions in joint request order.
    """

    node: str
    ok: bool
    reason: str = ""
    error: str | None = None
    cause: str | None = None
    claim: int | None = None
    assignment: dict[str, list[int]] = field(default_factory=dict)


@dataclass
class ClaimAllocation:
    plan: ClaimPlan
    driver_name: str  # = class.driverName, written to status.driverName
    allocation: AllocationResult
    claim: ResourceClaim  # copy of the claim with status.driverName and allocation set


class PodAllocator:
    """The structured part of one pod's scheduling cycle."""

    def __init__(self, index: AllocationIndex, plans: list[ClaimPlan]) -> None:
        self.index = index
        self.plans = plans
        self.requests: dict[str, list[Request]] = {}
        self.owners: dict[str, list[int]] = {}  # per driver: plan index of each request
        for i, plan in enumerate(plans):
            for driver in sorted(plan.drivers):
                self.requests.setdefault(driver, []).extend(plan.drivers[driver])
                self.owners.setdefault(driver, []).extend([i] * len(plan.drivers[driver]))
        self._keys = {
            d: [(r.filter, r.selector, (r.filter.expression if r.filter else None,
                                        r.selector.expression)) for r in reqs]
            for d, reqs in self.requests.items()
        }
        self._verdicts: dict[str, tuple[int, NodeVerdict]] = {}
        self._reserved: list[str] = []

    # --- per node ---------------------------------------------------------------------------

    def candidates(self, pool: Pool | None, reqs: Iterable[Request]) -> list[int]:
        """Per request: free pool positions passing class filter and selector."""
        if pool is None:
            return [0 for _ in reqs]
        free = pool.free
        return [pool.matching(r.filter, r.selector, free).ok & free for r in reqs]

    def filter(self, node: str) -> NodeVerdict:
        """Can all claims be allocated on ``node`` together? O(instances of the pod's drivers)."""
        cached = self._verdicts.get(node)
        if cached is not None and cached[0] == self.index.generation:
            return cached[1]
        verdict = self._filter(node)
        self._verdicts[node] = (self.index.generation, verdict)
        return verdict

    def _filter(self, node: str) -> NodeVerdict:
        assignment: dict[str, list[int]] = {}
        pools = self.index.node_pools(node)
        for driver, keyed in self._keys.items():
            pool = pools.get(driver)
            free = 0 if pool is None else pool.free
            if free.bit_count() < len(keyed):
                return self._explain_failure(node)
            assert pool is not None
            chosen = assign([pool.matching(f, r, free, k).ok & free for f, r, k in keyed])
            if chosen is None:
                return self._explain_failure(node)
            assignment[driver] = chosen
        return NodeVerdict(node, True, assignment=assignment)

    def _explain_failure(self, node: str) -> NodeVerdict:
        """Name the first claim (pod order) that fails alone, like upstream's per-claim Filter."""
        # one claim, one driver: the joint failure is that claim's failure, no need to re-check
        alone = len(self.plans) == 1 and len(self.requests) == 1
        for ci, plan in enumerate(self.plans):
            for driver in sorted(plan.drivers):
                reqs = plan.drivers[driver]
                pool = self.index.pool(node, driver)
                if not alone and assign(self.candidates(pool, reqs)) is not None:
                    continue
                err = self.first_error(pool, reqs)
                if err is None:
                    return NodeVerdict(node, False, UNSUITABLE, claim=ci)
                error = f'checking node "{node}" and resources of driver "{driver}": {err}'
                return NodeVerdict(node, False, CHECK_FAILED + error, error=error, cause=err,
                                   claim=ci)
        return NodeVerdict(node, False, JOINT_FAILURE)

    @staticmethod
    def first_error(pool: Pool | None, reqs: Iterable[Request]) -> str | None:
        """The first evaluation error on a free instance, in request order then pool order."""
        if pool is None:
            return None
        for r in reqs:
            masks = pool.matching(r.filter, r.selector, pool.free)
            for pos in sorted(masks.errors):
                if (pool.free >> pos) & 1:
                    return masks.errors[pos]
        return None

    def allocate(self, node: str) -> list[ClaimAllocation]:
        """Allocation results for every claim on ``node`` (no state change)."""
        verdict = self.filter(node)
        if not verdict.ok:
            raise AllocationError(ALLOCATE_PREFIX + (verdict.cause or INSUFFICIENT))
        names: list[dict[str, list[str]]] = [{} for _ in self.plans]
        for driver, positions in verdict.assignment.items():
            pool = self.index.pool(node, driver)
            assert pool is not None or not positions
            for owner, pos in zip(self.owners[driver], positions, strict=True):
                assert pool is not None
                names[owner].setdefault(driver, []).append(pool.instances[pos].name)
        out: list[ClaimAllocation] = []
        for plan, per_driver in zip(self.plans, names, strict=True):
            allocation = build_allocation(plan, node, per_driver)
            claim = with_allocation(plan, allocation)
            out.append(ClaimAllocation(plan, plan.resource_class.driver_name, allocation, claim))
        return out

    def reserve(self, node: str) -> list[ClaimAllocation]:
        """Allocate and record the results as in flight, so the next pod cannot take them."""
        allocations = self.allocate(node)
        for a in allocations:
            self.index.set_in_flight(a.claim)
            self._reserved.append(claim_key(a.claim))
        return allocations

    def commit(self, stored: ResourceClaim) -> bool:
        """``stored`` (allocation and/or reservation) was written: assume it until the informer
        catches up, then stop counting it as in flight, in that order, so its instances never
        look free in between. False: the informer already has a newer copy (not assumed)."""
        key = claim_key(stored)
        if key in self._reserved:
            self._reserved.remove(key)
        return self.index.commit(stored)

    def release(self) -> None:
        """Forget the in-flight allocations not committed (Unreserve, or a failed write)."""
        for key in self._reserved:
            self.index.clear_in_flight(key)
        self._reserved.clear()

    def free_counter(self) -> FreeCounts | None:
        """Free instances of the pod's drivers per node of a list, for the packing score
        (None: no structured claims to allocate)."""
        if not self.plans:
            return None
        counts, drivers = self.index.free_counts, tuple(self.requests)
        return lambda nodes: counts(nodes, drivers)

    # --- node preselection -------------------------------------------------------------------

    def nodes_with_room(self) -> Collection[str] | None:
        """Names that include every node where the claims can be allocated: the nodes where
        the requested driver with the fewest such nodes has a free instance (None: no
        structured requests). Kept by the index, so it costs nothing to ask per cycle."""
        if not self.requests:
            return None
        return min((self.index.nodes_with_free(d) for d in self.requests), key=len)

    def candidate_nodes(self) -> Iterator[str] | None:
        """Nodes where every request has a free matching instance and every driver has as many
        free instances as requested (None: no structured requests, any node).

        A necessary condition, cheap to test and independent of how many claims are already
        allocated; :meth:`filter` still decides.
        """
        if not self.requests:
            return None
        need = {d: len(r) for d, r in self.requests.items()}
        sets = [self.index.matching_nodes(r.driver, r.filter, r.selector)
                for reqs in self.requests.values() for r in reqs]
        sets.sort(key=len)
        first, rest = sets[0], sets[1:]
        return (
            n
            for n in list(first)
            if all(n in other for other in rest)
            and all(self.index.free_count(n, d) >= k for d, k in need.items())
        )

"""The DynamicResources plugin for claims with structured parameters: v1.30 semantics (with
the fixes listed in docs/deviations.md) over ``resource.k8s.io/v1alpha2``, and 1.34's over
``resource.k8s.io/v1``.

One plugin runs the stages; what depends on the resource model is its state, a
:class:`ClaimModel` (:class:`DRAState` here for named resources, ``dradevices.DeviceState``
for devices), which turns a pod's claims into a :class:`Cycle` for PreFilter to keep.

All allocation decisions come from :mod:`kubedra.allocation`: the claim checks of PreEnqueue,
PreFilter and Filter are :mod:`~kubedra.allocation.podclaims` (shared with the simulator; how
a pod names and uses its claims is :mod:`kubedra.api.resourceclaim`), and the pod's
unallocated structured claims are allocated jointly on one node against the incremental
free-instance index.
Cluster state (:class:`DRAState`) is fed from informers by the scheduler and is plain data, so
tests drive the plugin phase by phase without a server. Writes go through a
:class:`ClaimWriter`.

Score is kubedra's own plugin :class:`DynamicResourcesPacking` (fragmentation): a node scores
higher the fewer instances (devices, on v1) of the pod's drivers it has free, so claims are
packed onto nodes that are already in use and whole nodes stay free for pods that need many
at once.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Collection, Container, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, cast

import msgspec

from kubedra.allocation.celadapter import cel_selectors
from kubedra.allocation.engine import ClaimAllocation, NodeVerdict
from kubedra.allocation.explain import first_failure
from kubedra.allocation.index import AllocationIndex, claim_key
from kubedra.allocation.model.parameters import ParameterStore
from kubedra.allocation.packing import FreeCounts
from kubedra.allocation.podclaims import (
    NOT_AVAILABLE,
    ClaimNotCreated,
    PodPlan,
    Unschedulable,
    node_reason,
    pod_claims,
    prepare,
)
from kubedra.allocation.selectors import Selectors
from kubedra.allocation.verdicts import NodeVerdicts
from kubedra.api.core import Node, Pod
from kubedra.api.resource.v1alpha2 import (
    ALLOCATION_MODE_IMMEDIATE,
    ResourceClaim,
    ResourceClaimParameters,
    ResourceClass,
    ResourceClassParameters,
    ResourceSlice,
)
from kubedra.api.resourceclaim import ResourceClaim as AnyClaim
from kubedra.api.resourceclaim import is_reserved_for_pod, structured_allocation
from kubedra.scheduler.config import DRA_FILTER_TIMEOUT
from kubedra.scheduler.framework import (
    SKIP,
    SUCCESS,
    AfterUnreservePlugin,
    Code,
    CycleState,
    Diagnosis,
    EnqueueExtensions,
    FilterPlugin,
    NodeInfo,
    PostFilterPlugin,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreScorePlugin,
    ReservePlugin,
    ScorePlugin,
    ShortlistPlugin,
    Status,
    error,
    unresolvable,
    unschedulable,
)
from kubedra.scheduler.queue import ClusterEvent, Hint

log = logging.getLogger(__name__)

NAME = "DynamicResources"
PACKING = "DynamicResourcesPacking"
FREE_INSTANCES = f"{PACKING}/free"
"""Cycle state: free instances (devices) of the pod's drivers per node of a list (the
cycle's ``free_counter``), set by DynamicResources' PreFilter (or a simulation) when the pod
allocates claims."""


class ClaimWriter(Protocol):
    """The API writes the plugin needs (the scheduler passes a client-backed one for the
    model's claims); ``Any`` is a claim of the model's generation."""

    async def bind_claim(self, claim: Any, pod: Pod, allocation: Any | None) -> Any:
        """Add the finalizer (when allocating), write the allocation (the :class:`Cycle`'s
        ``allocation_of``) and the reservation for ``pod`` with resourceVersion
        preconditions; returns the claim as stored."""

    async def unreserve_claim(self, claim: Any, pod: Pod) -> None: ...

    async def deallocate(self, claim: Any, pod: Pod) -> None:
        """Clear reservedFor and the allocation (PostFilter), unless someone other than
        ``pod`` uses the claim."""


class Check(Protocol):
    """One of the pod's claims as PreFilter checked it."""

    claim: Any


class Cycle(Protocol):
    """One pod's claims through a scheduling cycle, in one resource model."""

    @property
    def checks(self) -> Sequence[Check]: ...

    unavailable: set[int]
    """Allocated claims some node was refused for (PostFilter may deallocate them)."""

    passing: Container[str]
    """Names of nodes known to pass :meth:`reason` (verdicts of earlier pods that asked the
    same, still holding): Filter passes them without asking it."""

    def allocates(self) -> bool:
        """Some claim is allocated in this cycle."""

    def reason(self, node: Node) -> str | None:
        """Filter: None when the claims can be used on ``node``, else why not; raises
        :class:`Unschedulable` for an error."""

    def shortlist(self) -> Collection[str] | None: ...

    def free_counter(self) -> FreeCounts | None:
        """Free devices or instances per node of a list, for
        :class:`DynamicResourcesPacking`."""

    def deallocatable(self, i: int) -> bool:
        """PostFilter may deallocate the allocated claim ``checks[i]``."""

    def first_failure(self, node: str) -> str | None:
        """What ``kubedra explain`` shows as the node's first failing check."""

    def reserve(self, node: str) -> None: ...

    def allocation_of(self, claim: Any) -> Any | None:
        """After :meth:`reserve`: what PreBind writes into ``claim`` (None: reserve only)."""

    def commit(self, stored: Any) -> bool: ...

    def release(self) -> None: ...


class ClaimModel(Protocol):
    """What DynamicResources asks of a resource model's state."""

    claim_kind: ClassVar[type]

    def lookup(self, namespace: str, name: str) -> Any | None: ...

    def current(self, claim: Any) -> Any: ...

    def frees(self, old: Any, new: Any) -> bool:
        """A claim update that frees what its allocation held (may help any pod)."""

    def events(self, plugin: DynamicResources) -> list[tuple[ClusterEvent, Hint | None]]: ...

    def cycle(self, pod: Pod, claims: list[Any], plugin: DynamicResources) -> Cycle:
        """PreFilter for the pod's ``claims`` under ``plugin``'s settings; raises
        :class:`Unschedulable`."""


@dataclass
class DRAState:
    """What the plugin knows about the cluster (kept current by informer events)."""

    index: AllocationIndex = field(default_factory=AllocationIndex)
    parameters: ParameterStore = field(default_factory=ParameterStore)
    selectors: Selectors = field(default_factory=cel_selectors)
    claims: dict[str, ResourceClaim] = field(default_factory=dict)  # "ns/name" -> claim
    classes: dict[str, ResourceClass] = field(default_factory=dict)

    def set_claim(self, claim: ResourceClaim) -> None:
        self.claims[f"{claim.metadata.namespace}/{claim.metadata.name}"] = claim
        self.index.upsert_claim(claim)

    def delete_claim(self, claim: ResourceClaim) -> None:
        self.claims.pop(f"{claim.metadata.namespace}/{claim.metadata.name}", None)
        self.index.delete_claim(claim)

    def set_class(self, cls: ResourceClass) -> None:
        self.classes[cls.metadata.name or ""] = cls

    def delete_class(self, cls: ResourceClass) -> None:
        self.classes.pop(cls.metadata.name or "", None)

    def current(self, claim: ResourceClaim) -> ResourceClaim:
        """The newest copy: assumed (our own write) over the informer's."""
        return self.index.claim(claim_key(claim)) or claim

    def lookup(self, namespace: str, name: str) -> ResourceClaim | None:
        claim = self.claims.get(f"{namespace}/{name}")
        return None if claim is None else self.current(claim)

    # --- the model's part of the plugin ---------------------------------------------------------

    claim_kind: ClassVar[type] = ResourceClaim

    @staticmethod
    def frees(old: ResourceClaim, new: ResourceClaim) -> bool:
        return frees_instances(old, new)

    def events(self, plugin: DynamicResources) -> list[tuple[ClusterEvent, Hint | None]]:
        return [
            (ClusterEvent("ResourceClaimParameters", "Add"), plugin.hint_claim_parameters),
            (ClusterEvent("ResourceClaimParameters", "Update"), plugin.hint_claim_parameters),
            (ClusterEvent("ResourceClassParameters", "Add"), plugin.hint_class_parameters),
            (ClusterEvent("ResourceClassParameters", "Update"), plugin.hint_class_parameters),
            (ClusterEvent("ResourceClaim", "Add"), plugin.hint_claim),
            (ClusterEvent("ResourceClaim", "Update"), plugin.hint_claim),
            (ClusterEvent("ResourceClass", "Add"), None),
            (ClusterEvent("ResourceClass", "Update"), None),
            (ClusterEvent("Node", "Add"), None),
            (ClusterEvent("Node", "Update"), None),
            # Not registered by upstream 1.30 (fixed in 1.32, see docs/deviations.md).
            (ClusterEvent("ResourceSlice", "Add"), None),
            (ClusterEvent("ResourceSlice", "Update"), None),
            (ClusterEvent("Pod", "Update"), None),
        ]

    def cycle(self, pod: Pod, claims: list[ResourceClaim], plugin: DynamicResources
              ) -> _Cycle:
        plan = prepare(pod, claims, self.classes, self.index, self.parameters, self.selectors)
        allocator = plan.allocator
        if not allocator.plans:
            return _Cycle(plan, allocator.filter)
        verdict, passing = plugin.verdicts.for_pod(allocator)  # shared by pods asking the same
        return _Cycle(plan, verdict, passing=passing if plan.only_pending else ())


def frees_instances(old: ResourceClaim, new: ResourceClaim) -> bool:
    """A structured allocation was removed (the first test of isSchedulableAfterClaimChange)."""
    return structured_allocation(old) and new.status.allocation is None


@dataclass
class _Cycle:
    """A pod's named-resources claims through a cycle (:class:`Cycle`)."""

    plan: PodPlan
    verdict: Callable[[str], NodeVerdict]
    unavailable: set[int] = field(default_factory=set)
    allocations: list[ClaimAllocation] = field(default_factory=list)
    passing: Container[str] = ()

    @property
    def checks(self) -> Sequence[Check]:
        return self.plan.checks

    def allocates(self) -> bool:
        return bool(self.plan.allocator.plans)

    def reason(self, node: Node) -> str | None:
        reason = node_reason(self.plan, node, self.verdict)
        if reason == NOT_AVAILABLE:
            # Deallocation only helps claims that would be allocated for this pod again:
            # WaitForFirstConsumer ones (upstream also counts claims with a controller).
            checks = self.plan.checks
            self.unavailable.update(
                i for i in self.plan.unavailable_on(node)
                if checks[i].claim.spec.allocation_mode != ALLOCATION_MODE_IMMEDIATE)
        return reason

    def shortlist(self) -> Collection[str] | None:
        """Nodes without a free instance of a requested driver cannot take the pod's claims
        (the nodes a filling cluster has most of)."""
        return self.plan.allocator.nodes_with_room()

    def free_counter(self) -> FreeCounts | None:
        return self.plan.allocator.free_counter()

    def deallocatable(self, i: int) -> bool:
        return self.plan.checks[i].structured  # a classic allocation is its controller's

    def first_failure(self, node: str) -> str | None:
        return first_failure(self.plan.allocator, node)

    def reserve(self, node: str) -> None:
        self.allocations = self.plan.allocator.reserve(node)

    def allocation_of(self, claim: ResourceClaim) -> ClaimAllocation | None:
        uid = claim.metadata.uid
        return next((a for a in self.allocations if a.claim.metadata.uid == uid), None)

    def commit(self, stored: ResourceClaim) -> bool:
        return self.plan.allocator.commit(stored)

    def release(self) -> None:
        self.plan.allocator.release()
        self.allocations = []


class DynamicResources:
    name = NAME

    def __init__(self, state: ClaimModel, writer: ClaimWriter | None = None,
                 filter_timeout: float = DRA_FILTER_TIMEOUT) -> None:
        """``filter_timeout``: seconds one node's Filter may allocate (1.34's
        ``filterTimeout``; 0: no limit)."""
        self.state = state
        self.writer = writer
        self.filter_timeout = filter_timeout
        self.verdicts = NodeVerdicts()

    # --- events -------------------------------------------------------------------------------

    def events_to_register(self) -> list[tuple[ClusterEvent, Hint | None]]:
        return self.state.events(self)

    def hint_claim(self, pod: Pod, old: object, new: object) -> bool:
        """isSchedulableAfterClaimChange."""
        if new is None:
            return False
        kind = self.state.claim_kind
        if not isinstance(new, kind) or (old is not None and not isinstance(old, kind)):
            raise TypeError(f"unexpected object types {type(old)}, {type(new)}")
        try:
            claims = pod_claims(pod, self.state.lookup)
        except Unschedulable:  # its claims do not resolve yet: no claim event helps
            return False
        if old is not None and self.state.frees(old, new):
            return True  # freed instances may help any pod this plugin rejected
        changed = cast(AnyClaim, new)
        uid = changed.metadata.uid
        if not any(c.metadata.uid == uid for c in claims):
            return False
        if old is None:
            return True
        return bool(msgspec.json.encode(cast(AnyClaim, old).status)
                    != msgspec.json.encode(changed.status))

    def _pod_claim_refs(self, pod: Pod) -> list[ResourceClaim]:
        try:
            claims: list[ResourceClaim] = pod_claims(pod, self.state.lookup)
        except Unschedulable:
            return []
        return claims

    def hint_claim_parameters(self, pod: Pod, old: object, new: object) -> bool:
        if not isinstance(new, ResourceClaimParameters):
            raise TypeError(f"unexpected object type {type(new)}")
        for claim in self._pod_claim_refs(pod):
            ref = claim.spec.parameters_ref
            if ref is None or claim.metadata.namespace != new.metadata.namespace:
                continue
            if ref.api_group == "resource.k8s.io" and ref.kind == "ResourceClaimParameters":
                hit = ref.name == new.metadata.name
            else:
                gen = new.generated_from
                hit = gen is not None and (gen.api_group, gen.kind, gen.name) == (
                    ref.api_group, ref.kind, ref.name)
            if hit:
                if isinstance(old, ResourceClaimParameters):
                    return msgspec.json.encode(old.driver_requests) != msgspec.json.encode(
                        new.driver_requests)
                return True
        return False

    def hint_class_parameters(self, pod: Pod, old: object, new: object) -> bool:
        if not isinstance(new, ResourceClassParameters):
            raise TypeError(f"unexpected object type {type(new)}")
        for claim in self._pod_claim_refs(pod):
            assert isinstance(self.state, DRAState)
            cls = self.state.classes.get(claim.spec.resource_class_name)
            ref = cls.parameters_ref if cls is not None else None
            if ref is None:
                continue
            if ref.api_group == "resource.k8s.io" and ref.kind == "ResourceClassParameters":
                hit = (ref.name, ref.namespace) == (new.metadata.name, new.metadata.namespace)
            else:
                gen = new.generated_from
                hit = gen is not None and (gen.api_group, gen.kind, gen.name, gen.namespace) == (
                    ref.api_group, ref.kind, ref.name, ref.namespace)
            if hit:
                if isinstance(old, ResourceClassParameters):
                    return msgspec.json.encode(old.filters) != msgspec.json.encode(new.filters)
                return True
        return False

    # --- PreEnqueue / PreFilter -----------------------------------------------------------------

    def pre_enqueue(self, pod: Pod) -> Status:
        try:
            pod_claims(pod, self.state.lookup)
        except ClaimNotCreated as e:  # the claim controller is about to create it
            return Status(Code.UNRESOLVABLE, e.message, quiet=True)
        except Unschedulable as e:
            return unresolvable(e.message)
        return SUCCESS

    def pre_filter(self, state: CycleState, pod: Pod) -> Status:
        if not pod.spec.resource_claims:
            return SKIP
        try:
            claims = pod_claims(pod, self.state.lookup)
            if not claims:
                return SKIP
            cycle = self.state.cycle(pod, claims, self)
        except Unschedulable as e:
            return unresolvable(e.message) if e.unresolvable else error(e.message)
        state[NAME] = cycle
        counter = cycle.free_counter()
        if counter is not None:
            state[FREE_INSTANCES] = counter
        return SUCCESS

    def shortlist(self, state: CycleState, pod: Pod) -> Collection[str] | None:
        cycle: Cycle | None = state.get(NAME)
        return None if cycle is None else cycle.shortlist()

    # --- Filter / PostFilter --------------------------------------------------------------------

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
        cycle: Cycle | None = state.get(NAME)
        if cycle is None:
            return SUCCESS
        if node.name in cycle.passing:  # the hot path: most nodes, for a template's pods
            return SUCCESS
        try:
            reason = cycle.reason(node.node)
        except Unschedulable as e:
            return error(e.message)
        return SUCCESS if reason is None else _unresolvable(reason)

    async def post_filter(self, state: CycleState, pod: Pod, diagnosis: Diagnosis) -> Status:
        cycle: Cycle | None = state.get(NAME)
        if cycle is None:
            return unschedulable("no new claims to deallocate")
        diagnosis.detail = _first_failures(cycle, diagnosis)
        for i in sorted(cycle.unavailable):
            claim = cycle.checks[i].claim
            reserved = claim.status.reserved_for or []
            if reserved and not (len(reserved) == 1 and reserved[0].uid == pod.metadata.uid):
                continue
            if not cycle.deallocatable(i):
                continue
            if self.writer is not None:
                try:
                    await self.writer.deallocate(claim, pod)
                except Exception as e:
                    return error(str(e))
            return unschedulable("deallocation of ResourceClaim completed")
        return unschedulable("still not schedulable")

    # --- Reserve / Unreserve ------------------------------------------------------------------

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        cycle: Cycle | None = state.get(NAME)
        if cycle is None or not cycle.allocates():
            return SUCCESS
        try:
            cycle.reserve(node_name)
        except Exception as e:
            return error(f"claim allocation failed unexpectedly: {e}")
        return SUCCESS

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        cycle: Cycle | None = state.get(NAME)
        if cycle is not None:
            cycle.release()

    async def after_unreserve(self, state: CycleState, pod: Pod) -> None:
        """The API half of Unreserve: drop this pod's reservations from the allocated claims
        (the cycle's copies, updated by PreBind; errors only logged). Allocations stay."""
        cycle: Cycle | None = state.get(NAME)
        if cycle is None or self.writer is None:
            return
        for check in cycle.checks:
            claim = check.claim
            if claim.status.allocation is None or not is_reserved_for_pod(pod, claim):
                continue
            try:
                await self.writer.unreserve_claim(claim, pod)
            except Exception as e:
                log.info("unreserve %s: %s", claim.metadata.name, e)

    # --- PreBind ----------------------------------------------------------------------------------

    async def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        cycle: Cycle | None = state.get(NAME)
        if cycle is None:
            return SUCCESS
        try:
            for check in cycle.checks:
                claim = check.claim
                allocation = cycle.allocation_of(claim)
                if allocation is None and is_reserved_for_pod(pod, self.state.current(claim)):
                    continue
                if self.writer is None:
                    raise RuntimeError("no claim writer configured")
                stored = await self.writer.bind_claim(claim, pod, allocation)
                check.claim = stored  # Unreserve must see the reservation
                # Also for a reservation only: the next pod must see "in use" at once.
                if not cycle.commit(stored):
                    log.info("assume %s: the informer has a newer copy", claim.metadata.name)
        except Exception as e:
            return error(str(e))
        finally:
            cycle.release()
        return SUCCESS


@functools.lru_cache(maxsize=256)
def _unresolvable(message: str) -> Status:
    """Filter statuses repeat a few messages very often: share the objects."""
    return unresolvable(message)


def _first_failures(cycle: Cycle, diagnosis: Diagnosis, most: int = 3) -> str:
    """The first failing check (as ``kubedra explain`` shows it) of each node this plugin
    rejected, the ``most`` commonest with their node counts: ``On 3 node(s): ...``."""
    counts: dict[str, int] = {}
    for node, status in diagnosis.node_statuses.items():
        if status.plugin == NAME and (why := cycle.first_failure(node)):
            counts[why] = counts.get(why, 0) + 1
    ranked = sorted(counts.items(), key=lambda c: (-c[1], c[0]))[:most]
    return ("On " + "; on ".join(f"{n} node(s): {why}" for why, n in ranked) + "."
            if ranked else "")


def feed(state: DRAState, objects: Sequence[Any]) -> None:
    """Load objects of any DRA kind into ``state`` (tests, simulation)."""
    for obj in objects:
        if isinstance(obj, ResourceClaim):
            state.set_claim(obj)
        elif isinstance(obj, ResourceClass):
            state.set_class(obj)
        elif isinstance(obj, ResourceSlice):
            state.index.upsert_slice(obj)
        elif isinstance(obj, ResourceClaimParameters):
            state.parameters.upsert_claim_parameters(obj)
        elif isinstance(obj, ResourceClassParameters):
            state.parameters.upsert_class_parameters(obj)


class DynamicResourcesPacking:
    """kubedra's Score for pods that allocate structured claims: ``100 - free instances
    (devices) of the pod's drivers on the node`` (at least 0), from the DynamicResources
    cycle. Upstream
    has no DRA score; its default weight 1 leaves spreading to the default plugins, a larger
    one (scheduler configuration) packs claims onto nodes already in use."""

    name = PACKING
    weight = 1

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        return SKIP if FREE_INSTANCES not in state else SUCCESS

    def score(self, state: CycleState, pod: Pod, node: NodeInfo) -> int:
        return self.scores(state, pod, (node,))[0]

    def scores(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> list[int]:
        free: FreeCounts = state[FREE_INSTANCES]
        return [100 - n if n < 100 else 0 for n in free([node.name for node in nodes])]


if TYPE_CHECKING:  # the stages DynamicResources implements (upstream: var _ framework.X = ...)
    _plugin = DynamicResources(DRAState())
    _pre_enqueue: PreEnqueuePlugin = _plugin
    _enqueue: EnqueueExtensions = _plugin
    _pre_filter: PreFilterPlugin = _plugin
    _filter: FilterPlugin = _plugin
    _shortlist: ShortlistPlugin = _plugin
    _post_filter: PostFilterPlugin = _plugin
    _pre_score: PreScorePlugin = DynamicResourcesPacking()
    _score: ScorePlugin = DynamicResourcesPacking()
    _reserve: ReservePlugin = _plugin
    _after_unreserve: AfterUnreservePlugin = _plugin
    _pre_bind: PreBindPlugin = _plugin

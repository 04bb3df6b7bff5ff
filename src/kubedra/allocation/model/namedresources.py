"""What the allocator reads from the named-resources model (``resource.k8s.io/v1alpha2``).

Instances from a slice, the instances a claim's allocation holds, one unallocated claim's
requests per driver (SP newClaimController, resolved once: entries for the same driver merged
in order, each driver's class filter, every selector compiled once) and the AllocationResult
written back into the claim (SP allocate), exactly as upstream.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgspec

from kubedra.allocation.instance import Instance
from kubedra.allocation.selectors import Selector, SelectorCompileError, Selectors
from kubedra.api.core import (
    LABEL_HOSTNAME,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
)
from kubedra.api.meta import kobj
from kubedra.api.resource.v1alpha2 import (
    AllocationResult,
    DriverAllocationResult,
    NamedResourcesAllocationResult,
    ResourceClaim,
    ResourceClaimParameters,
    ResourceClass,
    ResourceClassParameters,
    ResourceHandle,
    ResourceSlice,
    StructuredResourceHandle,
)

CONTROLLER_PREFIX = "creating claim controller for named resources structured model"


PoolKey = tuple[str, str]  # (node, driver)
Use = tuple[str, str, str]  # (node, driver, instance name)


# --- slices and allocations: what the index counts -------------------------------------------


def pool_key(s: ResourceSlice) -> PoolKey:
    """The pool a slice belongs to: its node's instances of its driver."""
    return (s.node_name, s.driver_name)


def slice_instances(s: ResourceSlice) -> list[Instance]:
    """The slice's instances in slice order (positions are the slice's own)."""
    name = s.metadata.name or ""
    nr = s.named_resources
    return [Instance(i.name, i.attributes or (), name, pos)
            for pos, i in enumerate(nr.instances if nr is not None else ())]


def same_instances(old: ResourceSlice, new: ResourceSlice) -> bool:
    """Whether an update left the slice's instances as they were (their Instance objects
    and verdict caches can stay)."""
    return old.named_resources == new.named_resources


def claim_uses(claim: ResourceClaim | None) -> tuple[Use, ...]:
    """The (node, driver, name) of every structured named-resources result of the claim."""
    if claim is None or claim.status.allocation is None:
        return ()
    out: list[Use] = []
    for handle in claim.status.allocation.resource_handles or ():
        data = handle.structured_data
        if data is None:
            continue
        for result in data.results:
            if result.named_resources is not None:
                out.append((data.node_name, handle.driver_name, result.named_resources.name))
    return tuple(out)


# --- requests: what an unallocated claim asks for --------------------------------------------


class ClaimPlanError(Exception):
    """The claim's parameters cannot be turned into an allocator (upstream: Error status)."""


@dataclass(frozen=True)
class Request:
    """One named-resources request of a claim for one driver."""

    claim: int  # the ``position`` given to :func:`plan_claim` (informational)
    driver: str
    index: int  # position among this claim's requests for ``driver``
    selector: Selector
    filter: Selector | None
    vendor_parameters: Any = None


@dataclass
class ClaimPlan:
    """A claim with its class and parameters resolved once, and its requests per driver."""

    claim: ResourceClaim
    resource_class: ResourceClass
    class_parameters: ResourceClassParameters
    claim_parameters: ResourceClaimParameters
    drivers: dict[str, list[Request]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return kobj(self.claim.metadata.namespace, self.claim.metadata.name)


def plan_claim(
    position: int,
    claim: ResourceClaim,
    resource_class: ResourceClass,
    class_parameters: ResourceClassParameters,
    claim_parameters: ResourceClaimParameters,
    selectors: Selectors,
) -> ClaimPlan:
    """Group requests by driver and compile selectors; errors use upstream's texts."""
    plan = ClaimPlan(claim, resource_class, class_parameters, claim_parameters)
    pending: dict[str, list[tuple[str, Any]]] = {}
    for i, dr in enumerate(claim_parameters.driver_requests or ()):
        for e, req in enumerate(dr.requests or ()):
            if req.named_resources is None:
                who = kobj(claim_parameters.metadata.namespace, claim_parameters.metadata.name)
                # "driverRequersts" (sic) is the v1.30.0 text.
                raise ClaimPlanError(
                    f"claim parameters {who}: driverRequersts[{i}].requests[{e}]: "
                    "no supported structured parameters found"
                )
            pending.setdefault(dr.driver_name, []).append(
                (req.named_resources.selector, req.vendor_parameters)
            )
    for driver, reqs in pending.items():
        filt = class_filter(class_parameters, driver, selectors)
        out: list[Request] = []
        for e, (expr, vendor) in enumerate(reqs):
            try:
                sel = selectors.get(expr)
            except SelectorCompileError as err:
                raise ClaimPlanError(
                    f"{CONTROLLER_PREFIX}: compile request CEL expression: {err}"
                ) from err
            out.append(Request(position, driver, e, sel, filt, vendor))
        plan.drivers[driver] = out
    return plan


def class_filter(
    params: ResourceClassParameters, driver: str, selectors: Selectors
) -> Selector | None:
    """The class's first filter for ``driver`` (None: no filter); a compile error fails the
    claim as upstream's controller does."""
    for f in params.filters or ():
        if f.driver_name == driver and f.named_resources is not None:
            try:
                return selectors.get(f.named_resources.selector)
            except SelectorCompileError as err:
                raise ClaimPlanError(
                    f"{CONTROLLER_PREFIX}: compile class filter CEL expression: {err}"
                ) from err
    return None


# --- results: the AllocationResult written into claim.status --------------------------------


def node_selector_for(node: str) -> NodeSelector:
    """One term: ``kubernetes.io/hostname In [node]``."""
    req = NodeSelectorRequirement(key=LABEL_HOSTNAME, operator="In", values=[node])
    return NodeSelector(node_selector_terms=[NodeSelectorTerm(match_expressions=[req])])


def build_allocation(plan: ClaimPlan, node: str, names: dict[str, list[str]]) -> AllocationResult:
    """``names[driver]`` = chosen instance names in request order; handles sorted by driver."""
    handles: list[ResourceHandle] = []
    for driver in sorted(plan.drivers):
        reqs = plan.drivers[driver]
        results = [
            DriverAllocationResult(
                vendor_request_parameters=r.vendor_parameters,
                named_resources=NamedResourcesAllocationResult(name=name),
            )
            for r, name in zip(reqs, names[driver], strict=True)
        ]
        handles.append(
            ResourceHandle(
                driver_name=driver,
                structured_data=StructuredResourceHandle(
                    vendor_class_parameters=_class_vendor(plan, driver),
                    vendor_claim_parameters=_claim_vendor(plan, driver),
                    node_name=node,
                    results=results,
                ),
            )
        )
    return AllocationResult(
        resource_handles=handles or None,
        available_on_nodes=node_selector_for(node),
        shareable=plan.claim_parameters.shareable,
    )


def _class_vendor(plan: ClaimPlan, driver: str) -> object:
    for vp in plan.class_parameters.vendor_parameters or ():
        if vp.driver_name == driver:
            return vp.parameters
    return None


def _claim_vendor(plan: ClaimPlan, driver: str) -> object:
    for dr in plan.claim_parameters.driver_requests or ():
        if dr.driver_name == driver:
            return dr.vendor_parameters
    return None


def with_allocation(plan: ClaimPlan, allocation: AllocationResult) -> ResourceClaim:
    """A copy of the claim carrying the allocation and ``status.driverName`` (class driver)."""
    # Shallow: only status is new; metadata and spec are shared and never mutated.
    status = msgspec.structs.replace(plan.claim.status,
                                     driver_name=plan.resource_class.driver_name,
                                     allocation=allocation)
    return msgspec.structs.replace(plan.claim, status=status)

"""The AllocationResult written into ``claim.status`` (SP allocate), exactly as upstream."""

from __future__ import annotations

import msgspec

from kubedra.allocation.claims import ClaimPlan
from kubedra.api.core import NodeSelector, NodeSelectorRequirement, NodeSelectorTerm
from kubedra.api.resource.v1alpha2 import (
    AllocationResult,
    DriverAllocationResult,
    NamedResourcesAllocationResult,
    ResourceClaim,
    ResourceHandle,
    StructuredResourceHandle,
)

HOSTNAME_LABEL = "kubernetes.io/hostname"


def node_selector_for(node: str) -> NodeSelector:
    """One term: ``kubernetes.io/hostname In [node]``."""
    req = NodeSelectorRequirement(key=HOSTNAME_LABEL, operator="In", values=[node])
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

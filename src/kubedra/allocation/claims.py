"""What one unallocated structured claim asks for (SP newClaimController), resolved once.

A :class:`ClaimPlan` groups the claim's requests by driver (entries for the same driver are
merged in order), attaches each driver's class filter (first ``filters`` entry for the driver
with a named-resources filter) and compiles every selector once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubedra.allocation.selectors import Selector, SelectorCompileError, Selectors
from kubedra.api.meta import kobj
from kubedra.api.resource.v1alpha2 import (
    ResourceClaim,
    ResourceClaimParameters,
    ResourceClass,
    ResourceClassParameters,
)

CONTROLLER_PREFIX = "creating claim controller for named resources structured model"


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

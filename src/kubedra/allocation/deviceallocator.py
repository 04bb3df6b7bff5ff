"""Allocation of ``resource.k8s.io/v1`` claims on one node (upstream ``Allocator.Allocate``).

Built like upstream's ``NewAllocator(features, allocatedDevices, classes, slices, celCache)``;
:meth:`DeviceAllocator.allocate` takes the node and the claims to allocate together. It checks
each claim and request as upstream does (same error texts, same order), turns them into the
search problem of :mod:`.search` (where the answer is found, completely: an allocation is
returned whenever one exists, the preferred one as upstream defines it) and builds each
claim's ``AllocationResult`` (results, configuration, ``nodeSelector``).

Where upstream's outcome depends on its random pool order or on how far its search got, the
answer here is the deterministic one: pools in (driver, pool) order; an invalid pool before the
chosen device of a request (or any invalid pool, when there is no allocation) is the error
upstream reports on reaching it; a CEL evaluation error on a device before the chosen one (or
on any candidate, when there is no allocation) is reported the same way; an ``All`` request
whose own devices cannot satisfy a constraint is the error upstream reports when it tries it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubedra.allocation.features import Features
from kubedra.allocation.matching import bits
from kubedra.allocation.model.devices import (
    PER_DEVICE_LIMIT,
    DeviceEntry,
    DeviceKey,
    DeviceSelectors,
    Pool,
    SliceDevices,
    SliceIndex,
    SliceMask,
    configs,
    device_id,
    gather_pools,
    node_matches,
    node_selector,
)
from kubedra.allocation.search import Choice, ChoiceError, Constraint, Problem, Request
from kubedra.allocation.selectors import SelectorCompileError
from kubedra.api.core import Node
from kubedra.api.meta import kobj
from kubedra.api.resource.v1 import (
    ALLOCATION_RESULTS_MAX_SIZE,
    AllocationResult,
    DeviceAllocationResult,
    DeviceClass,
    DeviceRequest,
    DeviceRequestAllocationResult,
    DeviceSelector,
    DeviceTaint,
    DeviceToleration,
    ResourceClaim,
    ResourceSlice,
)
from kubedra.api.taints import NO_EXECUTE, NO_SCHEDULE, tolerates

TIMED_OUT = "timed out trying to allocate devices"


class AllocationError(Exception):
    """Allocation cannot proceed (upstream: Allocate returned an error); upstream's text."""


class AllocationTimeout(AllocationError):
    """The deadline passed during the search (the scheduler's Filter timeout)."""

    def __init__(self) -> None:
        super().__init__(TIMED_OUT)


@dataclass(slots=True)
class _Alternative:
    """A request or one subrequest, as checked."""

    request: str
    sub: str | None
    cls: DeviceClass
    selectors: Sequence[DeviceSelector]
    all_mode: bool
    count: int
    admin: bool
    tolerations: list[DeviceToleration] | None

    fixed: tuple[int, ...] | None = None  # All: the devices, in candidate order
    errors: list[tuple[int, str]] = field(default_factory=list)  # (position, CEL error)

    @property
    def name(self) -> str:
        return self.request if self.sub is None else f"{self.request}/{self.sub}"

    @property
    def size(self) -> int:
        return len(self.fixed) if self.fixed is not None else self.count

    def prefix(self, claim: ResourceClaim) -> str:
        return f"claim {_name(claim)}, request {self.sub if self.sub is not None else self.request}"


@dataclass(frozen=True, slots=True)
class Option:
    """One alternative of a request (the request itself, or one of its subrequests)."""

    claim: int  # position in the claims given
    request: str
    sub: str | None
    device_class: DeviceClass
    class_selectors: tuple[str, ...]  # the class's CEL expressions
    selectors: tuple[str, ...]  # the request's
    all_mode: bool
    count: int  # ExactCount: how many
    admin: bool
    tolerations: tuple[DeviceToleration, ...] | None  # None: DeviceTaints off
    selectable: int  # bit = position in Inspection.entries: devices its checks admit
    devices: tuple[int, ...] | None  # All: the devices it takes


@dataclass(frozen=True, slots=True)
class ConstraintView:
    claim: int
    attribute: str
    requests: frozenset[str]  # empty: every request of the claim
    values: Mapping[int, Hashable]  # position -> typed value (devices without it: absent)


@dataclass(frozen=True, slots=True)
class Inspection:
    """:meth:`DeviceAllocator.inspect`'s answer for one node."""

    entries: list[DeviceEntry]  # the devices of the valid pools, in candidate order
    requests: list[list[Option]]  # per request (claims in order), its alternatives
    constraints: list[ConstraintView]


class DeviceAllocator:
    """One scheduling cycle's allocator: cluster state in, :meth:`allocate` per node."""

    def __init__(self, features: Features, allocated: Collection[DeviceKey],
                 classes: Mapping[str, DeviceClass],
                 slices: Sequence[ResourceSlice] | SliceIndex,
                 selectors: DeviceSelectors) -> None:
        self.features = features
        self.allocated = allocated
        self.classes = classes
        self.slices = slices if isinstance(slices, SliceIndex) else SliceIndex(slices)
        self.selectors = selectors

    def allocate(self, node: Node | None, claims: Sequence[ResourceClaim],
                 deadline: float | None = None,
                 cancelled: Callable[[], str | None] | None = None,
                 ) -> list[AllocationResult] | None:
        """Per claim its result; None = no allocation on this node. Raises
        :class:`AllocationError` with upstream's text, :class:`AllocationTimeout` once
        ``deadline`` (``time.monotonic()``) has passed, and ``filter operation aborted:
        <cause>`` once ``cancelled`` returns a cause (upstream's context, checked at every
        step of the search)."""
        return _Allocation(self, node, claims, deadline, cancelled).run()

    def inspect(self, node: Node | None, claims: Sequence[ResourceClaim]) -> Inspection:
        """What :meth:`allocate` checks before its search, as data for explanations (``kubedra
        explain``): the pools and devices ``node`` sees, each request's alternatives with
        the devices their selectors admit, the constraints. Raises :class:`AllocationError`
        where :meth:`allocate` does before searching."""
        return _Allocation(self, node, claims, None, None).inspect()


class _Allocation:
    """One Allocate call."""

    def __init__(self, owner: DeviceAllocator, node: Node | None,
                 claims: Sequence[ResourceClaim], deadline: float | None,
                 cancelled: Callable[[], str | None] | None) -> None:
        self.owner = owner
        self.features = owner.features
        self.claims = claims
        self.deadline = deadline
        self.cancelled = cancelled
        self.pools = gather_pools(owner.slices.for_node(node), node,
                                  owner.features.partitionable_devices)
        self.node = node
        self.entries: list[DeviceEntry] = []  # candidate order: the search's bit positions
        self.slices: list[tuple[int, SliceDevices]] = []  # (first position, the slice's devices)
        self.invalid_before: list[Pool | None] = []  # per entry: an invalid pool before it
        self.first_invalid: Pool | None = None
        for pool in self.pools:
            if pool.invalid is not None:
                self.first_invalid = self.first_invalid or pool
                continue
            for s in pool.slices:
                devices = owner.selectors.inventory.devices(s)
                self.slices.append((len(self.entries), devices))
                self.entries += devices.entries
                self.invalid_before += [self.first_invalid] * len(devices.entries)

    def check(self) -> None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise AllocationTimeout
        cause = self.cancelled() if self.cancelled is not None else None
        if cause is not None:
            raise AllocationError(f"filter operation aborted: {cause}")

    def inspect(self) -> Inspection:
        """The checks of :meth:`run` up to the search, as :class:`Inspection`."""
        self._requests()
        options = []
        for alts, ci in zip(self.alternatives, self.claim_of, strict=True):
            row = []
            for alt in alts:
                mask = (sum(1 << d for d in alt.fixed) if alt.fixed is not None
                        else self._selectable(self.claims[ci], alt)[0])
                row.append(Option(ci, alt.request, alt.sub, alt.cls,
                                  _expressions(alt.cls.spec.selectors),
                                  _expressions(alt.selectors), alt.all_mode, alt.count,
                                  alt.admin, tuple(alt.tolerations or ())
                                  if self.features.device_taints else None, mask, alt.fixed))
            options.append(row)
        constraints = [ConstraintView(ci, attribute, frozenset(names), c.values)
                       for (ci, attribute, names), c in zip(self.covers, self.constraints,
                                                            strict=True)]
        return Inspection(self.entries, options, constraints)

    # --- checks and the problem --------------------------------------------------------------

    def run(self) -> list[AllocationResult] | None:
        requests = self._requests()
        problem = Problem(requests, self.constraints, ALLOCATION_RESULTS_MAX_SIZE, self.check)
        try:
            solution = problem.solve()
        except ChoiceError as err:
            raise AllocationError(str(err)) from None
        if solution is None:
            self._no_allocation()
            return None
        self._reached(solution.choices, solution.devices)
        return self._results(solution.choices, solution.devices)

    def _requests(self) -> list[Request]:
        """Upstream's checks, claim by claim, and the search's requests and constraints."""
        self.alternatives: list[list[_Alternative]] = []  # per request (all claims)
        self.claim_of: list[int] = []
        self.constraints: list[Constraint] = []
        # per constraint: its claim, attribute and request names
        self.covers: list[tuple[int, str, set[str]]] = []
        for ci, claim in enumerate(self.claims):
            minimum = 0
            for request in claim.spec.devices.requests:
                alts = self._alternatives(claim, request)
                for alt in alts:
                    if alt.all_mode:
                        alt.fixed = self._all_devices(claim, alt)
                minimum += min(a.size for a in alts)
                self.alternatives.append(alts)
                self.claim_of.append(ci)
            if minimum > ALLOCATION_RESULTS_MAX_SIZE:
                raise AllocationError(
                    f"claim {_name(claim)}: number of requested devices {minimum} exceeds "
                    f"the claim limit of {ALLOCATION_RESULTS_MAX_SIZE}")
            for k, constraint in enumerate(claim.spec.devices.constraints or ()):
                attribute = constraint.match_attribute
                if attribute is None:
                    raise AllocationError(f"claim {_name(claim)}, constraint #{k}: empty "
                                          "constraint (unsupported constraint type?)")
                values = {}
                for start, devices in self.slices:
                    for pos, v in devices.attribute(attribute).items():
                        values[start + pos] = v
                self.constraints.append(Constraint(values))
                self.covers.append((ci, attribute, set(constraint.requests or ())))
        requests = []
        for alts, ci in zip(self.alternatives, self.claim_of, strict=True):
            choices = []
            for alt in alts:
                cons = tuple(k for k, (c, _, names) in enumerate(self.covers) if c == ci and (
                    not names or alt.request in names or alt.name in names))
                choices.append(self._choice(self.claims[ci], alt, cons))
            requests.append(Request(ci, tuple(choices)))
        return requests

    def _alternatives(self, claim: ResourceClaim, request: DeviceRequest) -> list[_Alternative]:
        name = request.name
        if request.first_available:
            if not self.features.prioritized_list:
                raise AllocationError(f"claim {_name(claim)}, request {name}: has subrequests, "
                                      "but the DRAPrioritizedList feature is disabled")
            return [self._checked(claim, name, sub.name, sub.device_class_name,
                                  sub.selectors or (), sub.allocation_mode, sub.count, None,
                                  sub.tolerations) for sub in request.first_available]
        exact = request.exactly
        if exact is None:
            return [self._checked(claim, name, None, "", (), "", 0, None, None)]
        return [self._checked(claim, name, None, exact.device_class_name, exact.selectors or (),
                              exact.allocation_mode, exact.count, exact.admin_access,
                              exact.tolerations)]

    def _checked(self, claim: ResourceClaim, request: str, sub: str | None, class_name: str,
                 selectors: Sequence[DeviceSelector], mode: str, count: int,
                 admin: bool | None, tolerations: list[DeviceToleration] | None
                 ) -> _Alternative:
        """Upstream ``validateDeviceRequest``, in its order."""
        prefix = f"claim {_name(claim)}, request {sub if sub is not None else request}"
        for i, selector in enumerate(selectors):
            if selector.cel is None:
                raise AllocationError(f"{prefix}, selector #{i}: CEL expression empty "
                                      "(unsupported selector type?)")
        if admin is not None and not self.features.admin_access:
            raise AllocationError(f"{prefix}: admin access is requested, but the feature is "
                                  "disabled")
        if not class_name:
            raise AllocationError(f"{prefix}: missing device class name (unsupported request "
                                  "type?)")
        cls = self.owner.classes.get(class_name)
        if cls is None:
            raise AllocationError(f"{prefix}: could not retrieve device class {class_name}: "
                                  f'deviceclass.resource.k8s.io "{class_name}" not found')
        if mode not in ("ExactCount", "All"):
            raise AllocationError(f"{prefix}: unsupported count mode {mode}")
        return _Alternative(request, sub, cls, selectors, mode == "All", count, bool(admin),
                            tolerations)

    def _all_devices(self, claim: ResourceClaim, alt: _Alternative) -> tuple[int, ...]:
        """The devices an ``All`` (sub)request takes; every pool must be complete and valid."""
        for pool in self.pools:
            if pool.incomplete:
                raise AllocationError(f"{alt.prefix(claim)}: asks for all devices, but resource "
                                      f"pool {pool.id} is currently being updated")
            if pool.invalid is not None:
                raise AllocationError(f"{alt.prefix(claim)}: asks for all devices, but resource "
                                      f"pool {pool.id} is currently invalid")
        mask, errors = self._selectable(claim, alt)
        if errors:
            raise AllocationError(errors[0][1])
        return tuple(bits(mask))

    def _selectable(self, claim: ResourceClaim, alt: _Alternative
                    ) -> tuple[int, list[tuple[int, str]]]:
        """Upstream ``isSelectable`` and the feature checks of ``allocateDevice`` over all
        devices: the mask of those that pass, and the evaluation errors (position, text)."""
        cls = alt.cls
        tolerations = (alt.tolerations or []) if self.features.device_taints else None
        key = (cls.metadata.name, _expressions(cls.spec.selectors),
               _expressions(alt.selectors),
               None if tolerations is None else tuple(
                   (t.key, t.operator, t.value, t.effect) for t in tolerations))
        mask = 0
        errors: list[tuple[int, str]] = []
        for start, devices in self.slices:
            found = devices.masks.get(key)
            if found is None:
                if len(devices.masks) >= PER_DEVICE_LIMIT:
                    devices.masks.clear()
                found = devices.masks[key] = self._slice_mask(devices, key, tolerations)
            part, failed = found
            if part and devices.entries[0].slice.spec.per_device_node_selection:
                for pos in bits(part):
                    d = devices.entries[pos].device
                    if not node_matches(self.node, d.node_name, d.all_nodes, d.node_selector):
                        part &= ~(1 << pos)
            mask |= part << start
            for pos, by_claim, text in failed:
                owner = f"claim {_name(claim)}" if by_claim else f"class {cls.metadata.name}"
                errors.append((start + pos, f"{owner}: {text}"))
        return mask, errors

    def _slice_mask(self, devices: SliceDevices, key: tuple[Any, ...],
                    tolerations: Sequence[DeviceToleration] | None) -> SliceMask:
        """One slice's devices that pass the class's selectors, then the request's, and (with
        DeviceTaints) whose taints the request tolerates."""
        _, class_exprs, request_exprs, _ = key
        mask = 0
        errors: list[tuple[int, bool, str]] = []
        for pos, e in enumerate(devices.entries):
            why = refusal(self.owner.selectors, e, class_exprs, request_exprs, tolerations)
            if why is None:
                mask |= 1 << pos
            elif why.error is not None:
                errors.append((pos, why.by_claim, why.error))
        return mask, tuple(errors)

    def _choice(self, claim: ResourceClaim, alt: _Alternative, cons: tuple[int, ...]) -> Choice:
        allocated = self.owner.allocated
        if alt.fixed is not None:
            fixed = alt.fixed
            if not alt.admin and any(self.entries[d].key in allocated for d in fixed):
                fixed = ()  # a device is in use: no allocation with this choice
            return Choice(fixed=fixed, admin=alt.admin, constraints=cons,
                          error=self._all_mismatch(claim, alt, fixed, cons))
        mask, alt.errors = self._selectable(claim, alt)
        if not alt.admin and allocated:
            for pos in bits(mask):
                if self.entries[pos].key in allocated:
                    mask &= ~(1 << pos)
            alt.errors = [(p, t) for p, t in alt.errors if self.entries[p].key not in allocated]
        return Choice(mask=mask, count=alt.count, admin=alt.admin, constraints=cons)

    def _all_mismatch(self, claim: ResourceClaim, alt: _Alternative, fixed: tuple[int, ...],
                      cons: tuple[int, ...]) -> str | None:
        """Upstream adds an ``All`` request's devices one by one and fails on the first that a
        constraint refuses: the error when its own devices disagree."""
        for k in cons:
            values = self.constraints[k].values
            for d in fixed:
                if d not in values or values[d] != values.get(fixed[0]):
                    return (f"{alt.prefix(claim)}: cannot add device "
                            f"{device_id(self.entries[d].key)} because a claim constraint "
                            "would not be satisfied")
        return None

    # --- outcome -----------------------------------------------------------------------------

    def _invalid(self, pool: Pool) -> AllocationError:
        return AllocationError(f"pool {pool.name} is invalid: {pool.invalid}")

    def _reached(self, chosen: Sequence[int], devices: Sequence[Sequence[int]]) -> None:
        """Errors upstream's search meets on its way to the answer: an invalid pool, or a
        selector failing on a device, before a chosen device."""
        for alts, k, devs in zip(self.alternatives, chosen, devices, strict=True):
            alt = alts[k]
            if alt.all_mode or not devs:
                continue
            last = max(devs)
            pool = self.invalid_before[last]
            if pool is not None:
                raise self._invalid(pool)
            for pos, text in alt.errors:
                if pos < last:
                    raise AllocationError(text)

    def _no_allocation(self) -> None:
        """No allocation: what upstream's exhaustive search would have run into."""
        exact = [a for alts in self.alternatives for a in alts if not a.all_mode]
        if self.first_invalid is not None and exact:
            raise self._invalid(self.first_invalid)
        for alt in exact:
            if alt.errors:
                raise AllocationError(alt.errors[0][1])

    def _results(self, chosen: Sequence[int], devices: Sequence[Sequence[int]]
                 ) -> list[AllocationResult]:
        results: list[list[DeviceRequestAllocationResult]] = [[] for _ in self.claims]
        used: list[list[DeviceEntry]] = [[] for _ in self.claims]
        picked: list[list[tuple[str, str | None, DeviceClass]]] = [[] for _ in self.claims]
        for alts, ci, k, devs in zip(self.alternatives, self.claim_of, chosen, devices,
                                     strict=True):
            alt = alts[k]
            picked[ci].append((alt.request, alt.sub, alt.cls))
            for d in devs:
                e = self.entries[d]
                used[ci].append(e)
                results[ci].append(DeviceRequestAllocationResult(
                    request=alt.name, driver=e.key[0], pool=e.key[1], device=e.key[2],
                    admin_access=True if alt.admin else None, tolerations=alt.tolerations))
        out = []
        for ci, claim in enumerate(self.claims):
            config = configs(claim, picked[ci])
            out.append(AllocationResult(
                devices=DeviceAllocationResult(results=results[ci], config=config or None),
                node_selector=node_selector(used[ci])))
        return out


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a device is not selectable for a request (upstream ``isSelectable`` and the taint
    check of ``allocateDevice``), as :func:`refusal` finds it first."""

    kind: str  # "unsupported" | "selector" | "taint"
    by_claim: bool = False  # a selector of the request (else of the class)
    index: int = 0  # the selector's position
    expression: str = ""
    error: str | None = None  # the evaluation or compile error, after "class c: "/"claim c: "
    taint: DeviceTaint | None = None


def refusal(selectors: DeviceSelectors, entry: DeviceEntry, class_exprs: Sequence[str],
            request_exprs: Sequence[str],
            tolerations: Sequence[DeviceToleration] | None) -> Refusal | None:
    """The first check ``entry`` fails for a request with these selectors (the class's, then
    the request's, in order) and tolerations (None: DeviceTaints off); None = selectable.
    The one home of these checks: the allocator's masks and ``kubedra explain`` ask it."""
    device = entry.device
    if device.binding_conditions or device.consumes_counters:
        # These need DRADeviceBindingConditions and DRAPartitionableDevices, whose allocation
        # parts (the results' conditions, counters) are not built here: such devices are never
        # chosen, so nothing is over-allocated (upstream, gates off: the same).
        return Refusal("unsupported")
    for by_claim, exprs in ((False, class_exprs), (True, request_exprs)):
        for i, expr in enumerate(exprs):
            try:
                v = selectors.verdict(entry, expr)
            except SelectorCompileError as err:
                return Refusal("selector", by_claim, i, expr,
                               f"selector #{i}: CEL compile error: {err}")
            if isinstance(v, str):
                return Refusal("selector", by_claim, i, expr, f"selector #{i} on device "
                               f"{device_id(entry.key)}: CEL runtime error: {v}")
            if not v:
                return Refusal("selector", by_claim, i, expr)
    if tolerations is not None:
        for taint in device.taints or ():
            if taint.effect in (NO_SCHEDULE, NO_EXECUTE) and not any(
                    tolerates(t, taint) for t in tolerations):
                return Refusal("taint", taint=taint)
    return None


def _expressions(selectors: Sequence[DeviceSelector] | None) -> tuple[str, ...]:
    return tuple(s.cel.expression for s in selectors or () if s.cel is not None)


def _name(claim: ResourceClaim) -> str:
    return kobj(claim.metadata.namespace, claim.metadata.name)

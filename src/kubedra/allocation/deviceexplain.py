"""Why a pod's ``resource.k8s.io/v1`` claims fit a node or not: per request (and subrequest)
and device, the first check the device fails, who holds it, what this pod would get; the
pools and slices the node sees or not; the values ``matchAttribute`` constraints meet.

Every verdict is the devices allocator's own: :meth:`DeviceAllocator.inspect` (the checks
before the search) and :func:`~.deviceallocator.refusal` (a device's first failing check);
whether a claim, or a claim without its constraints, fits is asked of
:meth:`DeviceAllocator.allocate`. Returned as plain data (``asdict``); ``kubedra explain``
renders it as a table.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field

from kubedra.allocation.deviceallocator import (
    AllocationError,
    ConstraintView,
    DeviceAllocator,
    Inspection,
    Option,
    refusal,
)
from kubedra.allocation.explain import TOGETHER
from kubedra.allocation.matching import bits
from kubedra.allocation.model.devices import (
    DeviceKey,
    device_id,
    gather_pools,
    node_matches,
)
from kubedra.api.core import Node
from kubedra.api.meta import kobj
from kubedra.api.resource.v1 import (
    AllocationResult,
    DeviceConstraint,
    DeviceTaint,
    ResourceClaim,
)

Outcome = Callable[[], list[AllocationResult] | None]
"""The allocation of the pod's claims on the node (raises AllocationError), maybe cached."""


@dataclass
class DeviceLine:
    device: str  # driver/pool/device
    slice: str
    state: str  # CHOSEN | chosen for <claim>#<request> | usable | in use by <claim> | why not


@dataclass
class DeviceRequestLine:
    claim: str
    request: str  # the request, or request/subrequest of firstAvailable
    device_class: str
    mode: str  # "ExactCount <n>" | "All", " (admin access)" when so
    usable: int  # devices its checks admit that are free
    devices: list[DeviceLine] = field(default_factory=list)


@dataclass
class ConstraintLine:
    claim: str
    attribute: str
    requests: list[str]
    values: dict[str, list[str]]
    """Per request it covers: the attribute's values among its usable devices."""
    missing: dict[str, int]
    """Per request it covers: how many of its usable devices lack the attribute."""

    def seen(self) -> str:
        """``a: "x", "y"; b: "x" (1 without it)``: the values per request, in words."""
        return "; ".join(f"{r}: {', '.join(v) or 'none'}"
                         + (f" ({self.missing[r]} without it)" if self.missing[r] else "")
                         for r, v in self.values.items())


@dataclass
class DeviceNodeExplanation:
    node: str
    suitable: bool
    reason: str
    requests: list[DeviceRequestLine] = field(default_factory=list)
    constraints: list[ConstraintLine] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    why: str = ""
    """For a node the allocator rejects: its first failing check (:func:`first_failure`)."""


def label(claim: ResourceClaim, request: str) -> str:
    """How the table and the reasons name a claim's request: ``namespace/claim#request``."""
    return f"{_name(claim)}#{request}"


def explain_node(allocator: DeviceAllocator, node: Node, claims: Sequence[ResourceClaim],
                 holders: Mapping[DeviceKey, str], outcome: Outcome) -> DeviceNodeExplanation:
    """The request and device table of ``claims`` on ``node``; ``holders``: the claim
    holding each allocated device."""
    out = DeviceNodeExplanation(node.metadata.name or "", True, "", notes=_notes(allocator, node))
    try:
        inspection = allocator.inspect(node, claims)
        results = outcome()
    except AllocationError as err:
        out.suitable, out.reason = False, str(err)
        return out
    chosen: dict[DeviceKey, tuple[int, str]] = {}
    for ci, result in enumerate(results or ()):
        for r in result.devices.results or ():
            chosen[(r.driver, r.pool, r.device)] = (ci, r.request)
    for options in inspection.requests:
        for o in options:
            out.requests.append(_request_line(allocator, inspection, claims, o, holders, chosen))
    out.constraints = [_constraint_line(allocator, inspection, claims, c)
                       for c in inspection.constraints]
    return out


def _request_line(allocator: DeviceAllocator, inspection: Inspection,
                  claims: Sequence[ResourceClaim], o: Option, holders: Mapping[DeviceKey, str],
                  chosen: Mapping[DeviceKey, tuple[int, str]]) -> DeviceRequestLine:
    claim = claims[o.claim]
    name = _option_name(o)
    mode = "All" if o.all_mode else f"ExactCount {o.count}"
    line = DeviceRequestLine(_name(claim), name, o.device_class.metadata.name or "",
                             mode + (" (admin access)" if o.admin else ""),
                             len(_usable(allocator, inspection, o)))
    for pos, entry in enumerate(inspection.entries):
        taken = chosen.get(entry.key)
        if taken == (o.claim, name):
            state = "CHOSEN"
        elif (o.selectable >> pos) & 1:
            if not o.admin and entry.key in allocator.allocated:
                state = f"in use by {holders.get(entry.key, 'another claim')}"
            elif taken is not None:
                state = f"chosen for {label(claims[taken[0]], taken[1])}"
            else:
                state = "usable"
        else:
            state = _refused(allocator, claim, o, pos, inspection)
        line.devices.append(DeviceLine(device_id(entry.key), entry.slice.metadata.name or "",
                                       state))
    return line


def _refused(allocator: DeviceAllocator, claim: ResourceClaim, o: Option, pos: int,
             inspection: Inspection) -> str:
    """Why the device at ``pos`` is not selectable for ``o``: the allocator's first failing
    check, in words."""
    entry = inspection.entries[pos]
    cls = o.device_class
    why = refusal(allocator.selectors, entry, o.class_selectors, o.selectors, o.tolerations)
    if why is None:
        return "its node selection does not include the node"
    if why.kind == "unsupported":
        return "uses counters or binding conditions, which are not supported"
    if why.kind == "taint" and why.taint is not None:
        return f"taint {_taint(why.taint)} is not tolerated"
    owner = f"claim {_name(claim)}" if why.by_claim else f"class {cls.metadata.name}"
    if why.error is not None:
        return f"{owner}: {why.error}"
    which = "request" if why.by_claim else f"class {cls.metadata.name}"
    return f"{which} selector #{why.index} is false: {why.expression}"


def _constraint_line(allocator: DeviceAllocator, inspection: Inspection,
                     claims: Sequence[ResourceClaim], c: ConstraintView) -> ConstraintLine:
    line = ConstraintLine(_name(claims[c.claim]), c.attribute, sorted(c.requests), {}, {})
    for o in _covered(inspection, c):
        usable = _usable(allocator, inspection, o)
        values = {c.values[d] for d in usable if d in c.values}
        line.values[_option_name(o)] = sorted(_value(v) for v in values)
        line.missing[_option_name(o)] = sum(1 for d in usable if d not in c.values)
    return line


def first_failure(allocator: DeviceAllocator, node: Node, claims: Sequence[ResourceClaim]) -> str:
    """Why ``claims`` cannot be allocated on ``node``, in one line: the first claim (pod
    order) that fails alone and, in it, the first request whose every alternative lacks
    usable devices (``ExactCount`` n of m, an ``All`` device in use), or the first
    ``matchAttribute`` constraint it cannot meet (with the values seen); "" when they can,
    or when allocation stops with an error (its text is the reason)."""
    try:
        if allocator.allocate(node, claims) is not None:
            return ""
        for claim in claims:
            if allocator.allocate(node, [claim]) is None:
                return _claim_failure(allocator, node, claim)
    except AllocationError:
        return ""
    return TOGETHER


def _claim_failure(allocator: DeviceAllocator, node: Node, claim: ResourceClaim) -> str:
    inspection = allocator.inspect(node, [claim])
    total = len(inspection.entries)
    for options in inspection.requests:
        whys = [_short(allocator, inspection, o, total) for o in options]
        if all(whys):
            if len(options) == 1:
                return f"{label(claim, options[0].request)}: {whys[0]}"
            subs = "; ".join(f"{o.sub}: {w}" for o, w in zip(options, whys, strict=True))
            return f"{label(claim, options[0].request)}: no subrequest can be met ({subs})"
    constraints = claim.spec.devices.constraints or []
    if constraints and allocator.allocate(node, [_with_constraints(claim, [])]) is not None:
        for k, view in enumerate(inspection.constraints):
            if allocator.allocate(node, [_with_constraints(claim, [constraints[k]])]) is None:
                seen = _constraint_line(allocator, inspection, [claim], view).seen()
                return (f"{_name(claim)}: matchAttribute {view.attribute} cannot be met, "
                        f"values seen: {seen}")
        return f"{_name(claim)}: its matchAttribute constraints cannot be met together"
    return f"{_name(claim)}: its requests together need more usable devices than the node has"


def _short(allocator: DeviceAllocator, inspection: Inspection, o: Option, total: int) -> str:
    """Why ``o`` cannot be met on its own ("" when its devices suffice)."""
    usable = _usable(allocator, inspection, o)
    if o.all_mode:
        busy = [d for d in o.devices or () if not o.admin
                and inspection.entries[d].key in allocator.allocated]
        if busy:
            return (f"asks for all {len(o.devices or ())} devices, "
                    f"{device_id(inspection.entries[busy[0]].key)} is in use")
        return ""
    if len(usable) < o.count:
        return (f"needs {o.count} device{'' if o.count == 1 else 's'} (ExactCount), "
                f"{len(usable)} of the node's {total} usable")
    return ""


def _usable(allocator: DeviceAllocator, inspection: Inspection, o: Option) -> list[int]:
    """Positions of the devices ``o``'s checks admit and that are free (for it)."""
    return [d for d in bits(o.selectable)
            if o.admin or inspection.entries[d].key not in allocator.allocated]


def _covered(inspection: Inspection, c: ConstraintView) -> list[Option]:
    return [o for options in inspection.requests for o in options if o.claim == c.claim and (
        not c.requests or o.request in c.requests or _option_name(o) in c.requests)]


def _notes(allocator: DeviceAllocator, node: Node) -> list[str]:
    """The pools the node sees that the allocator treats apart, and the slices whose node
    selection leaves the node out."""
    partitionable = allocator.features.partitionable_devices
    slices = allocator.slices.for_node(node)
    notes = []
    for pool in gather_pools(slices, node, partitionable):
        if pool.invalid is not None:
            notes.append(f"pool {pool.id} is invalid ({pool.invalid}): none of its devices "
                         "is used")
        elif pool.incomplete:
            want = pool.slices[0].spec.pool.resource_slice_count
            notes.append(f"pool {pool.id} is incomplete ({len(pool.slices)} of {want} "
                         "slices): requests for all devices refuse it")
    for s in slices:
        spec = s.spec
        if spec.node_selector is not None and not node_matches(node, None, None,
                                                               spec.node_selector):
            notes.append(f"slice {s.metadata.name} (driver {spec.driver}): its nodeSelector "
                         "does not match the node")
        elif spec.per_device_node_selection and partitionable and not any(
                node_matches(node, d.node_name, d.all_nodes, d.node_selector)
                for d in spec.devices or ()):
            notes.append(f"slice {s.metadata.name} (driver {spec.driver}): none of its "
                         "devices selects the node")
    return notes


def _with_constraints(claim: ResourceClaim, constraints: list[DeviceConstraint]
                      ) -> ResourceClaim:
    out = copy.deepcopy(claim)
    out.spec.devices.constraints = constraints or None
    return out


def _option_name(o: Option) -> str:
    return o.request if o.sub is None else f"{o.request}/{o.sub}"


def _taint(t: DeviceTaint) -> str:
    return f"{t.key}{'=' + t.value if t.value else ''}:{t.effect}"


def _value(v: Hashable) -> str:
    """A typed attribute value as the user wrote it (strings quoted)."""
    kind, value = v if isinstance(v, tuple) else ("", v)
    if kind == "string":
        return f'"{value}"'
    if kind == "bool":
        return "true" if value else "false"
    return str(value)


def _name(claim: ResourceClaim) -> str:
    return kobj(claim.metadata.namespace, claim.metadata.name)

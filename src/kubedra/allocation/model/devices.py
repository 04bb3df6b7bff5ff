"""The ``resource.k8s.io/v1`` devices model as the allocator reads it (spec §8).

* :func:`gather_pools` — the pools one node sees (upstream ``GatherPools``): slices for the node
  by ``nodeName``, ``allNodes``, ``nodeSelector`` or (partitionable devices) a device's own node
  fields; per (driver, pool) only the highest generation among the visible slices;
  ``incomplete`` when fewer slices than ``resourceSliceCount``, ``invalid`` on a repeated device
  name. Pools are ordered by (driver, pool) (upstream: Go map order, i.e. random).
* :class:`DeviceEntry` — one device with its selector verdicts, kept across Allocate calls by
  :class:`Inventory` for as long as its slice object is the same.
* :class:`DeviceSelectors` — selectors compiled once (the compiler is given: CEL's ``device``
  environment in production, :mod:`.devicecel`) and evaluated at most once per device.
* :class:`SliceIndex` — the slices a node may see, without a pass over every node's slices.
* :func:`claim_uses` — the devices an allocated claim holds (admin access holds none).
* :func:`lookup_attribute`, :func:`node_selector` and :func:`configs` — the upstream rules for
  ``matchAttribute``, the allocation's ``nodeSelector`` and the copied configuration.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from kubedra.allocation.selectors import CompileCache, SelectorEvalError
from kubedra.api.core import Node, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm
from kubedra.api.nodeaffinity import matches
from kubedra.api.resource.v1 import (
    Device,
    DeviceAllocationConfiguration,
    DeviceAttribute,
    DeviceClass,
    ResourceClaim,
    ResourceSlice,
)

DeviceKey = tuple[str, str, str]
"""(driver, pool, device): upstream's ``DeviceID``."""

Verdict = bool | str
"""A selector's answer for one device: True/False, or the CEL evaluation error text."""

PER_DEVICE_LIMIT = 256
"""Verdicts kept per device, and selector sets' masks kept per slice: unique selectors cannot
grow memory without bound."""


def device_id(key: DeviceKey) -> str:
    return "/".join(key)


class DeviceEntry:
    """One device of a slice, with the verdicts of the selectors evaluated on it."""

    __slots__ = ("device", "key", "prepared", "slice", "verdicts")

    def __init__(self, slice_: ResourceSlice, device: Device) -> None:
        self.slice = slice_
        self.device = device
        self.key: DeviceKey = (slice_.spec.driver, slice_.spec.pool.name, device.name)
        self.verdicts: dict[str, Verdict] = {}
        self.prepared: object | None = None  # the evaluator's converted device


SliceMask = tuple[int, tuple[tuple[int, bool, str], ...]]
"""Which devices of a slice pass a selector set (bit = position in the slice), and the
evaluation errors met: (position, whether a request selector failed, the text after the
owner ``class <c>: `` or ``claim <c>: ``)."""


class SliceDevices:
    """A slice's device entries and what is known about them on any node: the masks of the
    selector sets seen, attribute values by name."""

    __slots__ = ("entries", "masks", "values")

    def __init__(self, slice_: ResourceSlice) -> None:
        self.entries = [DeviceEntry(slice_, d) for d in slice_.spec.devices or ()]
        self.masks: dict[Hashable, SliceMask] = {}
        self.values: dict[str, dict[int, Hashable]] = {}

    def attribute(self, name: str) -> dict[int, Hashable]:
        """Position -> typed value of the attribute ``name`` (see :func:`lookup_attribute`)."""
        found = self.values.get(name)
        if found is None:
            found = self.values[name] = {}
            for pos, e in enumerate(self.entries):
                v = lookup_attribute(e, name)
                if v is not None:
                    found[pos] = v
        return found


class Inventory:
    """:class:`SliceDevices` per slice object, reused while the caller hands the same slice
    objects (an informer's), so verdicts and masks survive from one pod's allocation to the
    next."""

    def __init__(self, limit: int = 100_000) -> None:
        self._slices: dict[int, tuple[ResourceSlice, SliceDevices]] = {}
        self._limit = limit

    def devices(self, slice_: ResourceSlice) -> SliceDevices:
        hit = self._slices.get(id(slice_))
        if hit is not None and hit[0] is slice_:
            return hit[1]
        if len(self._slices) >= self._limit:
            self._slices.clear()
        made = SliceDevices(slice_)
        self._slices[id(slice_)] = (slice_, made)
        return made


Evaluator = Callable[[DeviceEntry], bool]
Compiler = Callable[[str], Evaluator]


class DeviceSelectors:
    """Compiles each expression once (LRU-bounded) and caches verdicts on the devices, which
    its :class:`Inventory` keeps: the one cache an allocator is given (upstream's celCache)."""

    def __init__(self, compiler: Compiler, limit: int = 4096) -> None:
        self.inventory = Inventory()
        self._programs = CompileCache(compiler, limit)

    def program(self, expression: str) -> Evaluator:
        """The compiled expression; raises :class:`SelectorCompileError`."""
        return self._programs.get(expression)

    def verdict(self, entry: DeviceEntry, expression: str) -> Verdict:
        cached = entry.verdicts.get(expression)
        if cached is not None:
            return cached
        evaluate = self.program(expression)
        try:
            result: Verdict = bool(evaluate(entry))
        except SelectorEvalError as err:
            result = str(err)
        if len(entry.verdicts) >= PER_DEVICE_LIMIT:
            entry.verdicts.clear()
        entry.verdicts[expression] = result
        return result


# --- pools ------------------------------------------------------------------------------------


@dataclass(slots=True)
class Pool:
    driver: str
    name: str
    generation: int
    slices: list[ResourceSlice] = field(default_factory=list)
    incomplete: bool = False
    invalid: str | None = None  # the reason

    @property
    def id(self) -> str:
        return f"{self.driver}/{self.name}"


def node_matches(node: Node | None, name: str | None, all_nodes: bool | None,
                 selector: NodeSelector | None) -> bool:
    """Upstream ``nodeMatches``: a node name, all nodes, or a node selector."""
    if name:
        return node is not None and node.metadata.name == name
    if all_nodes:
        return True
    if selector is not None and node is not None:
        return matches(selector, node.metadata.labels or {}, node.metadata.name or "")
    return False


class SliceIndex:
    """The slices one node may see, found without looking at every other node's: node-local
    slices by node name, the others (``allNodes``, ``nodeSelector``, per device) apart;
    either way in input order, which orders a pool's slices. Built once per change of the
    slices, so a node's view is the same tuple object until then (cheap to compare)."""

    def __init__(self, slices: Iterable[ResourceSlice]) -> None:
        self._local: dict[str, list[tuple[int, ResourceSlice]]] = {}
        self._shared: list[tuple[int, ResourceSlice]] = []
        self._views: dict[str, NodeView] = {}
        for i, s in enumerate(slices):
            if s.spec.node_name:
                self._local.setdefault(s.spec.node_name, []).append((i, s))
            else:
                self._shared.append((i, s))

    @property
    def shared(self) -> bool:
        """Some slice is not bound to one node (what a node sees depends on its labels)."""
        return bool(self._shared)

    def node_local(self) -> Mapping[str, list[tuple[int, ResourceSlice]]] | None:
        """Each node's own slices, or None when some slice is not bound to one node."""
        return None if self._shared else self._local

    @property
    def views(self) -> Mapping[str, NodeView]:
        """The views :meth:`view` has made so far, by node name (a lookup without a call)."""
        return self._views

    def view(self, name: str) -> NodeView:
        """The slices a node of that name may see (before its labels are matched) and
        their pools; the same object until the index is rebuilt."""
        found = self._views.get(name)
        if found is None:
            local = self._local.get(name, [])
            slices = tuple(s for _, s in sorted(local + self._shared, key=lambda p: p[0])
                           ) if self._shared else tuple(s for _, s in local)
            pools = tuple(dict.fromkeys((s.spec.driver, s.spec.pool.name) for s in slices))
            found = self._views[name] = NodeView(slices, pools)
        return found

    def for_node(self, node: Node | None) -> Sequence[ResourceSlice]:
        return self.view(node.metadata.name or "").slices if node is not None else tuple(
            s for _, s in self._shared)


@dataclass(frozen=True, slots=True)
class NodeView:
    """:meth:`SliceIndex.view`: slices in input order, their (driver, pool) names once each."""

    slices: tuple[ResourceSlice, ...]
    pools: tuple[tuple[str, str], ...]


def claim_uses(claim: ResourceClaim) -> list[DeviceKey]:
    """The devices a claim's allocation holds in use: its results without admin access (those
    never count as in use, as the scheduler's ``allocateddevices.go``)."""
    allocation = claim.status.allocation
    if allocation is None:
        return []
    return [(r.driver, r.pool, r.device) for r in allocation.devices.results or ()
            if not r.admin_access]


def gather_pools(slices: Iterable[ResourceSlice], node: Node | None,
                 partitionable: bool) -> list[Pool]:
    pools: dict[tuple[str, str], Pool] = {}
    for s in slices:
        spec = s.spec
        if spec.per_device_node_selection is not None and not partitionable:
            continue
        if spec.node_name or spec.all_nodes or spec.node_selector is not None:
            visible = node_matches(node, spec.node_name, spec.all_nodes, spec.node_selector)
        elif spec.per_device_node_selection:
            visible = any(node_matches(node, d.node_name, d.all_nodes, d.node_selector)
                          for d in spec.devices or ())
        else:
            continue  # some future node selection: not known here
        if not visible:
            continue
        key = (spec.driver, spec.pool.name)
        pool = pools.get(key)
        if pool is None or spec.pool.generation > pool.generation:
            pools[key] = Pool(spec.driver, spec.pool.name, spec.pool.generation, [s])
        elif spec.pool.generation == pool.generation:
            pool.slices.append(s)
    for pool in pools.values():
        pool.incomplete = len(pool.slices) != pool.slices[0].spec.pool.resource_slice_count
        seen: set[str] = set()
        for s in pool.slices:
            for d in s.spec.devices or ():
                if d.name in seen and pool.invalid is None:
                    pool.invalid = f"duplicate device name {d.name}"
                seen.add(d.name)
    return [pools[k] for k in sorted(pools)]


# --- matchAttribute -----------------------------------------------------------------------------


def lookup_attribute(entry: DeviceEntry, name: str) -> Hashable | None:
    """The typed value of the fully qualified attribute ``name``, or None if the device has
    none; an unqualified attribute belongs to the device's driver's domain."""
    attributes = entry.device.attributes or {}
    attr = attributes.get(name)
    if attr is None:
        domain, sep, ident = name.partition("/")
        if not sep or domain != entry.key[0]:
            return None
        attr = attributes.get(ident)
    return None if attr is None else typed_value(attr)


def typed_value(attr: DeviceAttribute) -> Hashable | None:
    """Values compare by type; versions by their string (semver's minimal form)."""
    if attr.string is not None:
        return ("string", attr.string)
    if attr.int_ is not None:
        return ("int", attr.int_)
    if attr.bool_ is not None:
        return ("bool", attr.bool_)
    if attr.version is not None:
        return ("version", attr.version)
    return None


# --- the result -----------------------------------------------------------------------------


def node_selector(entries: Sequence[DeviceEntry]) -> NodeSelector | None:
    """Upstream ``createNodeSelector``: a node-local device pins the node; otherwise one term
    with the union of the slices' (or devices') single-term requirements; None = anywhere."""
    fields: list[NodeSelectorRequirement] = []
    exprs: list[NodeSelectorRequirement] = []
    for e in entries:
        spec = e.slice.spec
        source = e.device if spec.per_device_node_selection else spec
        if source.node_name:
            return NodeSelector(node_selector_terms=[NodeSelectorTerm(match_fields=[
                NodeSelectorRequirement(key="metadata.name", operator="In",
                                        values=[source.node_name])])])
        selector = source.node_selector
        if selector is not None and selector.node_selector_terms:
            term = selector.node_selector_terms[0]
            _add_new(term.match_fields or (), fields)
            _add_new(term.match_expressions or (), exprs)
    if not fields and not exprs:
        return None
    return NodeSelector(node_selector_terms=[NodeSelectorTerm(
        match_expressions=exprs or None, match_fields=fields or None)])


def _add_new(src: Iterable[NodeSelectorRequirement], dst: list[NodeSelectorRequirement]) -> None:
    for r in src:
        if not any(o.key == r.key and o.operator == r.operator
                   and set(o.values or ()) == set(r.values or ()) for o in dst):
            dst.append(r)


def configs(claim: ResourceClaim, chosen: Sequence[tuple[str, str | None, DeviceClass]]
            ) -> list[DeviceAllocationConfiguration]:
    """The configuration copied into the result, upstream's order: each class's entries once
    (``FromClass``, naming the requests that use the class), then the claim's entries
    (``FromClaim``): one without requests as is, one naming requests once per matching
    request (or chosen ``req/sub``). (Later releases drop ``requests`` naming every
    request; 1.34 keeps them.)

    ``chosen`` is per request: (name, chosen subrequest name or None, class)."""
    out: list[DeviceAllocationConfiguration] = []
    by_class: dict[str, tuple[int, int]] = {}
    for request, sub, cls in chosen:
        name = request if sub is None else f"{request}/{sub}"
        span = by_class.get(cls.metadata.name or "")
        if span is not None:
            for i in range(*span):
                out[i].requests = [*(out[i].requests or ()), name]
            continue
        start = len(out)
        for c in cls.spec.config or ():
            out.append(DeviceAllocationConfiguration(source="FromClass", requests=[name],
                                                     opaque=c.opaque))
        by_class[cls.metadata.name or ""] = (start, len(out))
    for cc in claim.spec.devices.config or ():
        if not cc.requests:
            out.append(DeviceAllocationConfiguration(source="FromClaim", requests=cc.requests,
                                                     opaque=cc.opaque))
            continue
        for request, sub, _ in chosen:
            if request in cc.requests or (sub is not None and f"{request}/{sub}" in cc.requests):
                out.append(DeviceAllocationConfiguration(source="FromClaim",
                                                         requests=list(cc.requests),
                                                         opaque=cc.opaque))
    return out

"""The cluster-autoscaler question: how many copies of a node template must be added so that
every pending pod of a snapshot fits (placement as in :mod:`kubedra.allocation.simulate`, or
:mod:`~kubedra.allocation.devicesimulate` for a ``resource.k8s.io/v1`` snapshot)."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field

from kubedra.allocation.celadapter import cel_selectors
from kubedra.allocation.devicesimulate import simulator_for
from kubedra.allocation.selectors import Selectors
from kubedra.allocation.simulate import Placement, Snapshot, pending_pods, pod_name
from kubedra.api.core import LABEL_HOSTNAME, Node, Pod
from kubedra.api.resource import v1, v1alpha2

AnySlice = v1alpha2.ResourceSlice | v1.ResourceSlice


@dataclass
class Autoscale:
    """The smallest number of template nodes to add so that every pending pod fits, and where
    each pending pod goes with that many (or ``tried``) nodes added."""

    extra_nodes: int | None  # None: no number up to ``tried`` helps
    tried: int
    placements: list[Placement]
    never_fit: list[str] = field(default_factory=list)
    """Pods that fit neither on the existing nodes nor on an empty template node."""
    on_existing: list[str] = field(default_factory=list)
    """Pods placed on the snapshot's nodes."""
    on_new: list[str] = field(default_factory=list)
    """Pods placed on added template nodes."""
    unplaced: list[str] = field(default_factory=list)
    """Pods that could fit on a template node but found no room with ``tried`` added."""


def _answer(extra: int | None, tried: int, placements: list[Placement], added: set[str],
            never: set[str]) -> Autoscale:
    """The answer with each pending pod sorted into one of the four groups."""
    placed = [p for p in placements if p.node is not None]
    unplaced = {p.pod for p in placements if p.node is None}
    return Autoscale(extra, tried, placements, sorted(unplaced & never),
                     sorted(p.pod for p in placed if p.node not in added),
                     sorted(p.pod for p in placed if p.node in added),
                     sorted(unplaced - never))


def clone_template(node: Node, slices: Sequence[AnySlice], i: int) -> list[object]:
    """Copy ``i`` of the template node (``<name>-<i>``) with its slices re-pointed at it (a
    v1 slice's pool renamed too, since devices are known by driver, pool and name: the
    template node's name becomes the copy's, any other pool name gets ``-<i>``)."""
    base = node.metadata.name or "template"
    name = f"{base}-{i}"
    clone = copy.deepcopy(node)
    clone.metadata.name = name
    clone.metadata.uid = None
    clone.metadata.labels = {**(clone.metadata.labels or {}), LABEL_HOSTNAME: name}
    out: list[object] = [clone]
    for s in slices:
        c = copy.deepcopy(s)
        c.metadata.name = f"{s.metadata.name or base}-{i}"
        c.metadata.uid = None
        if isinstance(c, v1.ResourceSlice):
            pool = c.spec.pool
            pool.name = name if pool.name == base else f"{pool.name}-{i}"
            c.spec.node_name, c.spec.all_nodes, c.spec.node_selector = name, None, None
        else:
            c.node_name = name
        out.append(c)
    return out


def extra_nodes_needed(snapshot: Snapshot, template: Node, template_slices: Sequence[AnySlice],
                       limit: int | None = None, selectors: Selectors | None = None) -> Autoscale:
    """Try 0, 1, 2, ... extra template nodes until every pending pod is placed.

    Pods are placed in order, on existing nodes when possible, like the cluster autoscaler's
    bin-packing estimate; the answer is the smallest count under that placement policy.

    ``limit`` defaults to the number of pending pods (each pod needs at most one new node);
    every count is simulated, so the cost is O(answer x simulation). Pods that fit neither on
    the existing nodes nor on an empty template node are reported in ``never_fit`` and do
    not count against the answer.
    """
    selectors = selectors or cel_selectors()
    pending = pending_pods(snapshot)
    never = {pod_name(p) for p in pending
             if _fails_alone(snapshot, template, template_slices, p, selectors)}
    limit = len(pending) if limit is None else limit
    placements: list[Placement] = []
    added: list[str] = []
    for k in range(limit + 1):
        extra = Snapshot.from_objects(
            o for i in range(1, k + 1) for o in clone_template(template, template_slices, i))
        added = [n.metadata.name or "" for n in extra.nodes]
        sim = simulator_for(snapshot.merged(extra), selectors, added)
        placements = sim.run(copy.deepcopy(pending))
        if {p.pod for p in placements if p.node is None} <= never:
            return _answer(k, k, placements, set(added), never)
    return _answer(None, limit, placements, set(added), never)


def _fails_alone(snapshot: Snapshot, template: Node, slices: Sequence[AnySlice], pod: Pod,
                 selectors: Selectors) -> bool:
    """Does ``pod`` fail even on a cluster made of one empty template node?"""
    objs = [*clone_template(template, slices, 0), *snapshot.classes, *snapshot.class_parameters,
            *snapshot.claim_parameters, *snapshot.claims, *snapshot.templates,
            *snapshot.device_classes, *snapshot.device_claims, *snapshot.device_templates]
    sim = simulator_for(Snapshot.from_objects(objs), selectors)
    return sim.place(copy.deepcopy(pod)).node is None

"""Offline placement of pending pods on a cluster snapshot, and the autoscaler question.

The pipeline is the scheduler's DynamicResources checks, shared through
:mod:`~kubedra.allocation.podclaims` (claim lookup, reservation rules, ``availableOnNodes``,
class ``suitableNodes``, joint structured allocation), plus the pod's ``nodeSelector`` and
required node affinity; the ResourceClaim controller's part (claims from templates) is played
here too. Given a :class:`NodeChooser` (the scheduler's profile, see
``kubedra.scheduler.offline``), the other plugins filter and score the nodes the claims fit
on and the node is drawn as the scheduler draws it; without one, what other plugins check is
not modelled (:data:`NOT_MODELLED`) and the node left with the fewest free instances wins
(bin packing), ties by name. Placed pods' allocations count for the next pods.
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

import msgspec

from kubedra.allocation.celadapter import cel_selectors
from kubedra.allocation.explain import (
    NodeAnswer,
    NodeExplanation,
    PodExplanation,
    explain_node,
    first_failure,
)
from kubedra.allocation.index import AllocationIndex, claim_key
from kubedra.allocation.model.namedresources import claim_uses
from kubedra.allocation.model.parameters import ParameterStore
from kubedra.allocation.packing import FreeCounts
from kubedra.allocation.podclaims import (
    PodPlan,
    Unschedulable,
    node_reason,
    pod_claims,
    prepare,
)
from kubedra.allocation.selectors import Selectors
from kubedra.api.core import (
    ClaimSource,
    Node,
    Pod,
    PodResourceClaim,
    PodResourceClaimStatus,
    PodSpec,
)
from kubedra.api.meta import ObjectMeta, kobj
from kubedra.api.nodeaffinity import MISMATCH, pod_matches_node
from kubedra.api.resource import v1
from kubedra.api.resource.v1alpha2 import (
    ResourceClaim,
    ResourceClaimParameters,
    ResourceClaimTemplate,
    ResourceClass,
    ResourceClassParameters,
    ResourceSlice,
)
from kubedra.api.resourceclaim import (
    claim_from_template,
    claim_ref,
    consumer_ref,
    template_not_found,
)

NOT_MODELLED = ("CPU, memory and pod-count requests", "taints and tolerations",
                "preferred node affinity", "inter-pod affinity and topology spread",
                "unschedulable nodes")
"""What the scheduler checks that placement here ignores (a pod placed may still not fit)."""


@dataclass
class Choice:
    node: str | None
    reasons: dict[str, str] = field(default_factory=dict)
    """Why nodes the claims fit on were rejected (when no node is chosen)."""
    scores: dict[str, dict[str, int]] = field(default_factory=dict)
    """Per scored node, each score plugin's weighted, normalised score."""


class NodeChooser(Protocol):
    """The scheduler's other plugins, for a simulation."""

    def choose(self, pod: Pod, fits: Collection[str],
               free: FreeCounts | None) -> Choice:
        """Among the nodes the pod's claims ``fits`` on, the node the scheduler picks;
        ``free``: what the packing score counts per node of a list (None: the pod allocates
        nothing)."""

    def placed(self, pod: Pod, node: str) -> None:
        """The pod was placed on ``node``: it counts for the next pods."""


@dataclass
class Snapshot:
    nodes: list[Node] = field(default_factory=list)
    slices: list[ResourceSlice] = field(default_factory=list)
    classes: list[ResourceClass] = field(default_factory=list)
    class_parameters: list[ResourceClassParameters] = field(default_factory=list)
    claim_parameters: list[ResourceClaimParameters] = field(default_factory=list)
    claims: list[ResourceClaim] = field(default_factory=list)
    templates: list[ResourceClaimTemplate] = field(default_factory=list)
    pods: list[Pod] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    device_slices: list[v1.ResourceSlice] = field(default_factory=list)
    device_classes: list[v1.DeviceClass] = field(default_factory=list)
    device_claims: list[v1.ResourceClaim] = field(default_factory=list)
    device_templates: list[v1.ResourceClaimTemplate] = field(default_factory=list)

    @classmethod
    def from_objects(cls, objects: Iterable[object]) -> Snapshot:
        snap = cls()
        for obj in objects:
            name = _BUCKETS.get(type(obj))
            if name is None:
                snap.ignored.append(type(obj).__name__)
            else:
                getattr(snap, name).append(obj)
        return snap

    @property
    def devices(self) -> bool:
        """Does it hold ``resource.k8s.io/v1`` objects (the 1.34 era)?"""
        return bool(self.device_slices or self.device_classes or self.device_claims
                    or self.device_templates)

    @property
    def named_resources(self) -> bool:
        """Does it hold ``resource.k8s.io/v1alpha2`` objects (the 1.30 era)?"""
        return bool(self.slices or self.classes or self.class_parameters
                    or self.claim_parameters or self.claims or self.templates)

    def merged(self, other: Snapshot) -> Snapshot:
        return Snapshot(*(getattr(self, f) + getattr(other, f) for f in self.__dataclass_fields__))


_BUCKETS: dict[type, str] = {
    Node: "nodes",
    ResourceSlice: "slices",
    ResourceClass: "classes",
    ResourceClassParameters: "class_parameters",
    ResourceClaimParameters: "claim_parameters",
    ResourceClaim: "claims",
    ResourceClaimTemplate: "templates",
    Pod: "pods",
    v1.ResourceSlice: "device_slices",
    v1.DeviceClass: "device_classes",
    v1.ResourceClaim: "device_claims",
    v1.ResourceClaimTemplate: "device_templates",
}

SNAPSHOT_KINDS: tuple[type, ...] = tuple(_BUCKETS)
"""The kinds a snapshot holds (read from files or from a cluster); others are ignored."""


@dataclass
class ClaimOutcome:
    claim: str
    node: str | None
    instances: list[str]  # driver/name
    newly_allocated: bool


@dataclass
class Placement:
    pod: str
    node: str | None
    claims: list[ClaimOutcome] = field(default_factory=list)
    reasons: dict[str, str] = field(default_factory=dict)  # node -> why not (when unplaced)
    message: str = ""


def pod_name(pod: Pod) -> str:
    return kobj(pod.metadata.namespace, pod.metadata.name)


def _pod_uid(pod: Pod) -> str:
    return pod.metadata.uid or f"sim-{pod.metadata.namespace}-{pod.metadata.name}"


PlanT = TypeVar("PlanT")
ClaimT = TypeVar("ClaimT", ResourceClaim, v1.ResourceClaim)
TemplateT = TypeVar("TemplateT", ResourceClaimTemplate, v1.ResourceClaimTemplate)


class Simulation(ABC, Generic[PlanT, ClaimT, TemplateT]):
    """Pods placed one after another on a snapshot, whatever the claims' model: the claim
    controller's part (claims from templates), the node loop, the chooser, explanations.
    A model's subclass holds its allocation state and answers the hooks below."""

    def __init__(self, snapshot: Snapshot, templates: Iterable[TemplateT],
                 added_nodes: Iterable[str], chooser: NodeChooser | None) -> None:
        self.chooser = chooser
        self.added = set(added_nodes)  # used only when no existing node fits (autoscaler)
        self.nodes = {n.metadata.name or "": n for n in snapshot.nodes}
        self.templates: dict[tuple[str, str], TemplateT] = {
            (t.metadata.namespace or "", t.metadata.name or ""): t for t in templates}
        self.claims: dict[tuple[str, str], ClaimT] = {}

    # --- the model's part -----------------------------------------------------------------

    @abstractmethod
    def _store(self, claim: ClaimT) -> None:
        """Keep ``claim`` (new, or as updated) in the claims and the allocation state."""

    @abstractmethod
    def _lookup(self, namespace: str, name: str) -> ClaimT | None: ...

    @abstractmethod
    def _from_template(self, pod: Pod, pod_claim: str, template: TemplateT,
                       name: str) -> ClaimT: ...

    @abstractmethod
    def _plan(self, pod: Pod) -> PlanT:
        """The scheduler's PreFilter for ``pod`` as created; raises Unschedulable."""

    @abstractmethod
    def _claim_reason(self, plan: PlanT, node: Node) -> str | None:
        """The scheduler's DynamicResources Filter on ``node``."""

    @abstractmethod
    def _pod_of(self, plan: PlanT) -> Pod: ...

    @abstractmethod
    def _claims_of(self, plan: PlanT) -> list[ClaimT]: ...

    @abstractmethod
    def _free_counter(self, plan: PlanT) -> FreeCounts | None:
        """Free instances (devices) per node of what the plan allocates, as the scheduler's
        packing score counts them (None: nothing to allocate)."""

    @abstractmethod
    def _score(self, plan: PlanT, node: str) -> tuple[bool, int, str]:
        """Without a chooser, the lowest wins: existing nodes, fewest free devices left."""

    @abstractmethod
    def _commit(self, plan: PlanT, node: str) -> list[ClaimOutcome]: ...

    @abstractmethod
    def _explain_node(self, plan: PlanT, node: str, reason: str | None) -> NodeAnswer: ...

    # --- claims of a pod ----------------------------------------------------------------------

    def _as_created(self, pod: Pod) -> Pod:
        """The pod as the ResourceClaim controller leaves it: with a UID, and a claim created
        from the template (and recorded in the status) for every template entry."""
        ns = pod.metadata.namespace or ""
        pod = msgspec.structs.replace(
            pod, metadata=msgspec.structs.replace(pod.metadata, uid=_pod_uid(pod)))
        recorded = {s.name: s.resource_claim_name
                    for s in pod.status.resource_claim_statuses or ()}
        statuses: list[PodResourceClaimStatus] = []
        for pc in pod.spec.resource_claims or ():
            template = claim_ref(pc)[1]
            if not template:
                continue
            name = recorded.get(pc.name, f"{pod.metadata.name}-{pc.name}")
            statuses.append(PodResourceClaimStatus(name=pc.name, resource_claim_name=name))
            if not name or (ns, name) in self.claims:
                continue
            tmpl = self.templates.get((ns, template))
            if tmpl is None:
                raise Unschedulable(template_not_found(template))
            claim = self._from_template(pod, pc.name, tmpl, name)
            claim.metadata.uid = f"sim-{ns}-{name}"
            self._store(claim)
        return msgspec.structs.replace(pod, status=msgspec.structs.replace(
            pod.status, resource_claim_statuses=statuses or None))

    # --- one pod ------------------------------------------------------------------------------

    def _prepare(self, pod: Pod) -> PlanT:
        return self._plan(self._as_created(pod))

    def _node_reason(self, plan: PlanT, node: str) -> str | None:
        obj = self.nodes[node]
        if not pod_matches_node(self._pod_of(plan), obj.metadata.labels or {}, node):
            return MISMATCH
        return self._claim_reason(plan, obj)

    def place(self, pod: Pod) -> Placement:
        """Place one pod (committing its allocations) or say why it does not fit anywhere."""
        placement = Placement(pod_name(pod), None)
        try:
            plan = self._prepare(pod)
        except Unschedulable as err:
            placement.message = err.message
            return placement
        feasible: list[str] = []
        for node in sorted(self.nodes):
            reason = self._node_reason(plan, node)
            if reason is None:
                feasible.append(node)
            else:
                placement.reasons[node] = reason
        if not feasible:
            placement.message = (
                f"0/{len(self.nodes)} nodes are available" if self.nodes else "no nodes"
            )
            return placement
        if self.chooser is not None:
            choice = self.chooser.choose(self._pod_of(plan), feasible,
                                         self._free_counter(plan))
            if choice.node is None:
                placement.reasons.update(choice.reasons)
                placement.message = f"0/{len(self.nodes)} nodes are available"
                return placement
            node = choice.node
            self.chooser.placed(self._pod_of(plan), node)
        else:
            node = min(feasible, key=lambda n: self._score(plan, n))
        placement.node = node
        placement.reasons.clear()
        placement.claims = self._commit(plan, node)
        placement.message = "scheduled"
        return placement

    def run(self, pods: Iterable[Pod]) -> list[Placement]:
        return [self.place(p) for p in pods]

    def explain_claim(self, namespace: str, claim: str) -> PodExplanation:
        """As :meth:`explain`, for a stand-in pod that uses just ``claim``."""
        pod = Pod(api_version="v1", kind="Pod",
                  metadata=ObjectMeta(name=f"claim:{claim}", namespace=namespace),
                  spec=PodSpec(resource_claims=[PodResourceClaim(
                      name="claim", source=ClaimSource(resource_claim_name=claim))]))
        explanation = self.explain(pod)
        explanation.subject, explanation.pod = "claim", kobj(namespace, claim)
        return explanation

    def explain(self, pod: Pod) -> PodExplanation:
        """Per node: why the pod's claims fit or not (nothing is committed)."""
        name = pod_name(pod)
        try:
            plan = self._prepare(pod)
        except Unschedulable as err:
            return PodExplanation(name, [], [], err.message)
        nodes = [self._explain_node(plan, node, self._node_reason(plan, node))
                 for node in sorted(self.nodes)]
        chosen, scores = None, {}
        if self.chooser is not None:
            choice = self.chooser.choose(self._pod_of(plan),
                                         [n.node for n in nodes if n.suitable],
                                         self._free_counter(plan))
            chosen, scores = choice.node, choice.scores
            for ex in nodes:
                if ex.suitable and ex.node in choice.reasons:
                    ex.suitable, ex.reason = False, choice.reasons[ex.node]
        ok = [n.node for n in nodes if n.suitable]
        result = f"fits on {', '.join(ok)}" if ok else "fits on no node"
        if chosen is not None:
            result += f"; the scheduler picks {chosen}"
        claims = [kobj(c.metadata.namespace, c.metadata.name) +
                  (" (allocated)" if c.status.allocation is not None else "")
                  for c in self._claims_of(plan)]
        return PodExplanation(name, claims, nodes, result, scores=scores)


class Simulator(Simulation[PodPlan, ResourceClaim, ResourceClaimTemplate]):
    """A snapshot of ``resource.k8s.io/v1alpha2`` objects loaded into an
    :class:`AllocationIndex` (the named-resources model)."""

    def __init__(self, snapshot: Snapshot, selectors: Selectors | None = None,
                 added_nodes: Iterable[str] = (), chooser: NodeChooser | None = None) -> None:
        super().__init__(snapshot, snapshot.templates, added_nodes, chooser)
        self.selectors = selectors or cel_selectors()
        self.index = AllocationIndex()
        self.params = ParameterStore()
        self.classes = {c.metadata.name or "": c for c in snapshot.classes}
        for s in snapshot.slices:
            self.index.upsert_slice(s)
        for p in snapshot.class_parameters:
            self.params.upsert_class_parameters(p)
        for q in snapshot.claim_parameters:
            self.params.upsert_claim_parameters(q)
        for c in snapshot.claims:
            self._store(c)

    def _store(self, claim: ResourceClaim) -> None:
        self.claims[(claim.metadata.namespace or "", claim.metadata.name or "")] = claim
        self.index.upsert_claim(claim)

    def _lookup(self, namespace: str, name: str) -> ResourceClaim | None:
        claim = self.claims.get((namespace, name))
        return None if claim is None else self.index.claim(claim_key(claim)) or claim

    def _from_template(self, pod: Pod, pod_claim: str, template: ResourceClaimTemplate,
                       name: str) -> ResourceClaim:
        return claim_from_template(pod, pod_claim, template, name=name)

    def _plan(self, pod: Pod) -> PodPlan:
        claims = pod_claims(pod, self._lookup)
        return prepare(pod, claims, self.classes, self.index, self.params, self.selectors)

    def _claim_reason(self, plan: PodPlan, node: Node) -> str | None:
        return node_reason(plan, node, plan.allocator.filter)

    def _pod_of(self, plan: PodPlan) -> Pod:
        return plan.pod

    def _claims_of(self, plan: PodPlan) -> list[ResourceClaim]:
        return plan.claims

    def _free_counter(self, plan: PodPlan) -> FreeCounts | None:
        return plan.allocator.free_counter()

    def _score(self, plan: PodPlan, node: str) -> tuple[bool, int, str]:
        free = sum(self.index.free_count(node, d) - len(r)
                   for d, r in plan.allocator.requests.items())
        return (node in self.added, free, node)

    def _commit(self, plan: PodPlan, node: str) -> list[ClaimOutcome]:
        ref = consumer_ref(plan.pod)
        new = {claim_key(a.plan.claim): a for a in plan.allocator.allocate(node)}
        outcomes: list[ClaimOutcome] = []
        for claim in plan.claims:
            a = new.get(claim_key(claim))
            updated = copy.deepcopy(a.claim if a is not None else claim)
            if ref.uid not in [r.uid for r in updated.status.reserved_for or ()]:
                updated.status.reserved_for = [*(updated.status.reserved_for or []), ref]
            self._store(updated)
            outcomes.append(_outcome(updated, a is not None))
        return outcomes

    def _explain_node(self, plan: PodPlan, node: str, reason: str | None) -> NodeExplanation:
        verdict = plan.allocator.filter(node)
        ex = explain_node(plan.allocator, verdict)
        ex.suitable, ex.reason = reason is None, reason or ""
        if reason is not None and reason == verdict.reason:
            ex.why = first_failure(plan.allocator, node)
        return ex


def _outcome(claim: ResourceClaim, new: bool) -> ClaimOutcome:
    uses = claim_uses(claim)
    node = uses[-1][0] if uses else None
    instances = [f"{driver}/{name}" for _, driver, name in uses]
    return ClaimOutcome(kobj(claim.metadata.namespace, claim.metadata.name), node, instances, new)


def pending_pods(snapshot: Snapshot) -> list[Pod]:
    """Pods not bound to a node and not finished, in snapshot order."""
    return [p for p in snapshot.pods if not p.spec.node_name
            and p.status.phase not in ("Succeeded", "Failed")]

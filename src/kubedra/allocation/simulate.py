"""Offline placement of pending pods on a cluster snapshot, and the autoscaler question.

The pipeline mirrors the scheduler's DynamicResources checks (claim lookup, reservation rules,
``availableOnNodes``, class ``suitableNodes``, joint structured allocation) plus the pod's
``nodeSelector``; what other scheduler plugins check is not modelled (:data:`NOT_MODELLED`).
Among suitable nodes the one left with the fewest free instances wins (bin packing), ties by
name, so results are deterministic. Placed pods' allocations count for the next pods.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass, field

from kubedra.allocation.claims import ClaimPlan, ClaimPlanError, plan_claim
from kubedra.allocation.engine import PodAllocator
from kubedra.allocation.explain import NodeExplanation, PodExplanation, explain_node
from kubedra.allocation.index import AllocationIndex, claim_key
from kubedra.allocation.nodeselector import matches
from kubedra.allocation.parameters import ParameterError, ParameterStore, kobj
from kubedra.allocation.selectors import Selectors
from kubedra.api.core import ClaimSource, Node, Pod, PodResourceClaim, PodSpec
from kubedra.api.meta import ObjectMeta, OwnerReference
from kubedra.api.resource import (
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceClaimParameters,
    ResourceClaimTemplate,
    ResourceClass,
    ResourceClassParameters,
    ResourceSlice,
)

POD_CLAIM_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
NOT_MODELLED = ("CPU, memory and pod-count requests", "taints and tolerations",
                "node affinity", "inter-pod affinity and topology spread",
                "unschedulable nodes")
"""What the scheduler checks that placement here ignores (a pod placed may still not fit)."""


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
}


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


@dataclass
class _Prepared:
    pod: Pod
    claims: list[ResourceClaim]
    allocated: list[ResourceClaim]
    plans: list[ClaimPlan]
    allocator: PodAllocator


def pod_name(pod: Pod) -> str:
    return kobj(pod.metadata.namespace, pod.metadata.name)


def _pod_uid(pod: Pod) -> str:
    return pod.metadata.uid or f"sim-{pod.metadata.namespace}-{pod.metadata.name}"


class Simulator:
    """A snapshot loaded into an :class:`AllocationIndex`, placing pods one after another."""

    def __init__(self, snapshot: Snapshot, selectors: Selectors | None = None,
                 added_nodes: Iterable[str] = ()) -> None:
        self.selectors = selectors or Selectors()
        self.added = set(added_nodes)  # used only when no existing node fits (autoscaler)
        self.index = AllocationIndex()
        self.params = ParameterStore()
        self.nodes = {n.metadata.name or "": n for n in snapshot.nodes}
        self.classes = {c.metadata.name or "": c for c in snapshot.classes}
        self.templates = {(t.metadata.namespace or "", t.metadata.name or ""): t
                          for t in snapshot.templates}
        self.claims: dict[tuple[str, str], ResourceClaim] = {}
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

    # --- claims of a pod ----------------------------------------------------------------------

    def _pod_claims(self, pod: Pod) -> list[ResourceClaim]:
        ns = pod.metadata.namespace or ""
        out: list[ResourceClaim] = []
        statuses = {s.name: s.resource_claim_name for s in pod.status.resource_claim_statuses or ()}
        for pc in pod.spec.resource_claims or ():
            src = pc.source
            if src.resource_claim_name:
                claim = self.claims.get((ns, src.resource_claim_name))
                if claim is None:
                    raise ParameterError(
                        f'resourceclaim.resource.k8s.io "{src.resource_claim_name}" not found',
                        unresolvable=True,
                    )
            elif src.resource_claim_template_name:
                if pc.name in statuses and statuses[pc.name] is None:
                    continue  # claim not needed
                claim = self._template_claim(pod, pc.name, src.resource_claim_template_name,
                                             statuses.get(pc.name))
            else:
                raise ParameterError(
                    f'pod "{pod_name(pod)}", spec.resourceClaim "{pc.name}": '
                    "none of the supported fields are set",
                    unresolvable=True,
                )
            out.append(claim)
        return out

    def _template_claim(self, pod: Pod, pod_claim: str, template: str,
                        name: str | None) -> ResourceClaim:
        """The generated claim, created from the template as the claim controller would."""
        ns = pod.metadata.namespace or ""
        name = name or f"{pod.metadata.name}-{pod_claim}"
        existing = self.claims.get((ns, name))
        if existing is not None:
            return existing
        tmpl = self.templates.get((ns, template))
        if tmpl is None:
            raise ParameterError(
                f'resource claim template "{template}": resourceclaimtemplate.resource.k8s.io '
                f'"{template}" not found',
                unresolvable=True,
            )
        claim = ResourceClaim(
            api_version="resource.k8s.io/v1alpha2",
            kind="ResourceClaim",
            metadata=ObjectMeta(
                name=name,
                namespace=ns,
                uid=f"sim-{ns}-{name}",
                labels=tmpl.spec.metadata.labels,
                annotations={**(tmpl.spec.metadata.annotations or {}),
                             POD_CLAIM_ANNOTATION: pod_claim},
                owner_references=[OwnerReference(
                    api_version="v1", kind="Pod", name=pod.metadata.name or "",
                    uid=_pod_uid(pod), controller=True, block_owner_deletion=True)],
            ),
            spec=copy.deepcopy(tmpl.spec.spec),
        )
        self._store(claim)
        return claim

    # --- one pod ------------------------------------------------------------------------------

    def _prepare(self, pod: Pod) -> _Prepared:
        claims = [self.index.claim(claim_key(c)) or c for c in self._pod_claims(pod)]
        allocated: list[ResourceClaim] = []
        plans: list[ClaimPlan] = []
        uid = _pod_uid(pod)
        for claim in claims:
            st = claim.status
            if st.deallocation_requested:
                raise ParameterError("resourceclaim must be reallocated", unresolvable=True)
            if st.allocation is not None:
                reserved = [r.uid for r in st.reserved_for or ()]
                if not st.allocation.shareable and reserved and uid not in reserved:
                    raise ParameterError("resourceclaim in use", unresolvable=True)
                allocated.append(claim)
                continue
            cls = self.classes.get(claim.spec.resource_class_name)
            if cls is None:
                raise ParameterError(
                    f"resource class {claim.spec.resource_class_name} does not exist",
                    unresolvable=True,
                )
            if not cls.structured_parameters:
                raise ParameterError(
                    f"resource class {cls.metadata.name} does not use structured parameters; "
                    "classic DRA needs a vendor control-plane controller, which is not "
                    "supported",
                    unresolvable=True,
                )
            class_params = self.params.class_parameters(cls)
            claim_params = self.params.claim_parameters(claim, cls)
            try:
                plans.append(plan_claim(len(plans), claim, cls, class_params, claim_params,
                                        self.selectors))
            except ClaimPlanError as err:
                raise ParameterError(str(err), unresolvable=False) from err
        return _Prepared(pod, claims, allocated, plans, PodAllocator(self.index, plans))

    def _node_reason(self, prep: _Prepared, node: str) -> str | None:
        obj = self.nodes[node]
        labels = obj.metadata.labels or {}
        for key, value in (prep.pod.spec.node_selector or {}).items():
            if labels.get(key) != value:
                return "node(s) didn't match Pod's node affinity/selector"
        for claim in prep.allocated:
            alloc = claim.status.allocation
            assert alloc is not None
            if alloc.available_on_nodes is not None and not matches(
                alloc.available_on_nodes, labels, node
            ):
                return "resourceclaim not available on the node"
        for plan in prep.plans:
            suitable = plan.resource_class.suitable_nodes
            if suitable is not None and not matches(suitable, labels, node):
                return "excluded by resource class node filter"
        verdict = prep.allocator.filter(node)
        return None if verdict.ok else verdict.reason

    def _score(self, prep: _Prepared, node: str) -> tuple[bool, int, str]:
        free = sum(self.index.free_count(node, d) - len(r)
                   for d, r in prep.allocator.requests.items())
        return (node in self.added, free, node)

    def place(self, pod: Pod) -> Placement:
        """Place one pod (committing its allocations) or say why it does not fit anywhere."""
        placement = Placement(pod_name(pod), None)
        try:
            prep = self._prepare(pod)
        except ParameterError as err:
            placement.message = err.message
            return placement
        feasible: list[str] = []
        for node in sorted(self.nodes):
            reason = self._node_reason(prep, node)
            if reason is None:
                feasible.append(node)
            else:
                placement.reasons[node] = reason
        if not feasible:
            placement.message = (
                f"0/{len(self.nodes)} nodes are available" if self.nodes else "no nodes"
            )
            return placement
        node = min(feasible, key=lambda n: self._score(prep, n))
        placement.node = node
        placement.reasons.clear()
        placement.claims = self._commit(prep, node)
        placement.message = "scheduled"
        return placement

    def _commit(self, prep: _Prepared, node: str) -> list[ClaimOutcome]:
        ref = ResourceClaimConsumerReference(
            resource="pods", name=prep.pod.metadata.name or "", uid=_pod_uid(prep.pod)
        )
        new = {claim_key(a.plan.claim): a for a in prep.allocator.allocate(node)}
        outcomes: list[ClaimOutcome] = []
        for claim in prep.claims:
            a = new.get(claim_key(claim))
            updated = copy.deepcopy(a.claim if a is not None else claim)
            if ref.uid not in [r.uid for r in updated.status.reserved_for or ()]:
                updated.status.reserved_for = [*(updated.status.reserved_for or []), ref]
            self._store(updated)
            outcomes.append(_outcome(updated, a is not None))
        return outcomes

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
            prep = self._prepare(pod)
        except ParameterError as err:
            return PodExplanation(name, [], [], err.message)
        nodes: list[NodeExplanation] = []
        for node in sorted(self.nodes):
            reason = self._node_reason(prep, node)
            verdict = prep.allocator.filter(node)
            ex = explain_node(prep.allocator, verdict)
            ex.suitable, ex.reason = reason is None, reason or ""
            nodes.append(ex)
        ok = [n.node for n in nodes if n.suitable]
        result = f"fits on {', '.join(ok)}" if ok else "fits on no node"
        claims = [kobj(c.metadata.namespace, c.metadata.name) +
                  (" (allocated)" if c.status.allocation is not None else "")
                  for c in prep.claims]
        return PodExplanation(name, claims, nodes, result)


def _outcome(claim: ResourceClaim, new: bool) -> ClaimOutcome:
    alloc = claim.status.allocation
    instances: list[str] = []
    node = None
    for h in (alloc.resource_handles or []) if alloc else []:
        if h.structured_data is not None:
            node = h.structured_data.node_name
            instances += [f"{h.driver_name}/{r.named_resources.name}"
                          for r in h.structured_data.results if r.named_resources]
    return ClaimOutcome(kobj(claim.metadata.namespace, claim.metadata.name), node, instances, new)


def pending_pods(snapshot: Snapshot) -> list[Pod]:
    """Pods not bound to a node and not finished, in snapshot order."""
    return [p for p in snapshot.pods if not p.spec.node_name
            and p.status.phase not in ("Succeeded", "Failed")]

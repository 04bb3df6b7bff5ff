"""InterPodAffinity (upstream ``interpodaffinity``, v1.30). Filter: the pod's required
affinity terms need a matching pod in the node's domain (or, for the first pod of a group
that matches its own terms, no matching pod anywhere), its required anti-affinity terms and
the placed pods' ones must find none. Score: preferred terms of the pod and of the placed
pods (and the placed pods' required affinity, weight 1) add their weights per topology
domain; the result is scaled min..max to 0..100.

The API keeps pod (anti-)affinity as raw JSON; terms are read here. Both halves SKIP at
once while neither the pod nor any placed pod has terms (``NodeTally`` counts the latter).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kubedra.api.core import Pod
from kubedra.scheduler.framework import (
    SKIP,
    SUCCESS,
    CycleState,
    FilterPlugin,
    NodeByNode,
    NodeInfo,
    NormalizeScorePlugin,
    PreFilterPlugin,
    PreScorePlugin,
    ScorePlugin,
    Status,
    has_pod_affinity,
    required_anti_affinity,
    unresolvable,
    unschedulable,
)
from kubedra.scheduler.plugins.helper import MAX_NODE_SCORE, LabelMatcher, label_matcher

NAME = "InterPodAffinity"
AFFINITY_NOT_MATCH = "node(s) didn't match pod affinity rules"
ANTI_AFFINITY_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"
EXISTING_ANTI_AFFINITY_NOT_MATCH = "node(s) didn't satisfy existing pods anti-affinity rules"
HARD_POD_AFFINITY_WEIGHT = 1
"""InterPodAffinityArgs.hardPodAffinityWeight's default."""

NamespaceLabels = Callable[[str], Mapping[str, str]]
Pair = tuple[str, str]


@dataclass(frozen=True)
class Term:
    """A parsed ``PodAffinityTerm`` of a pod in ``namespaces`` (upstream ``AffinityTerm``)."""

    topology_key: str
    selects: LabelMatcher
    namespaces: frozenset[str]
    namespace_selects: LabelMatcher
    weight: int = 0

    def matches(self, pod: Pod, namespace_labels: NamespaceLabels) -> bool:
        ns = pod.metadata.namespace or ""
        if ns in self.namespaces or self.namespace_selects(namespace_labels(ns)):
            return self.selects(pod.metadata.labels or {})
        return False


def _term(raw: Mapping[str, Any], owner: Pod, weight: int = 0) -> Term:
    namespaces = frozenset(raw.get("namespaces") or ())
    ns_selector = raw.get("namespaceSelector")
    if not namespaces and ns_selector is None:  # the owner's own namespace
        namespaces = frozenset((owner.metadata.namespace or "",))
    return Term(raw.get("topologyKey") or "", label_matcher(raw.get("labelSelector")),
                namespaces, label_matcher(ns_selector), weight)


@dataclass(frozen=True)
class Terms:
    required_affinity: list[Term]
    required_anti: list[Term]
    preferred_affinity: list[Term]
    preferred_anti: list[Term]


def pod_terms(pod: Pod) -> Terms:
    affinity = pod.spec.affinity
    pos = (affinity.pod_affinity if affinity is not None else None) or {}
    neg = (affinity.pod_anti_affinity if affinity is not None else None) or {}

    def required(raw: Mapping[str, Any]) -> list[Term]:
        return [_term(t, pod) for t in raw.get("requiredDuringSchedulingIgnoredDuringExecution")
                or ()]

    def preferred(raw: Mapping[str, Any]) -> list[Term]:
        return [_term(t.get("podAffinityTerm") or {}, pod, int(t.get("weight") or 0))
                for t in raw.get("preferredDuringSchedulingIgnoredDuringExecution") or ()]

    return Terms(required(pos), required(neg), preferred(pos), preferred(neg))


def _add(counts: dict[Pair, int], labels: Mapping[str, str], key: str, value: int) -> None:
    if key in labels:
        pair = (key, labels[key])
        counts[pair] = counts.get(pair, 0) + value


@dataclass
class _FilterState:
    terms: Terms
    affinity: dict[Pair, int]
    anti: dict[Pair, int]
    existing_anti: dict[Pair, int]


class InterPodAffinity(NodeByNode):
    name = NAME
    weight = 2

    def __init__(self, namespace_labels: NamespaceLabels | None = None) -> None:
        """``namespace_labels``: a namespace's labels, for terms with a namespaceSelector."""
        self.namespace_labels: NamespaceLabels = namespace_labels or (lambda ns: {})

    # --- Filter -----------------------------------------------------------------------------

    def pre_filter(self, state: CycleState, pod: Pod) -> Status:
        tally = state.nodes
        has_own = has_required(pod)
        if not has_own and tally is not None and not tally.anti_affinity_pods:
            return SKIP
        terms = pod_terms(pod)
        existing_anti: dict[Pair, int] = {}
        affinity: dict[Pair, int] = {}
        anti: dict[Pair, int] = {}
        for info in state.all_nodes:
            for other in info.affinity_pods.values():
                for raw in required_anti_affinity(other):
                    term = _term(raw, other)
                    if term.matches(pod, self.namespace_labels):
                        _add(existing_anti, info.labels, term.topology_key, 1)
            if not has_own:
                continue
            for other in info.pods.values():
                if terms.required_affinity and all(
                        t.matches(other, self.namespace_labels)
                        for t in terms.required_affinity):
                    for t in terms.required_affinity:
                        _add(affinity, info.labels, t.topology_key, 1)
                for t in terms.required_anti:
                    if t.matches(other, self.namespace_labels):
                        _add(anti, info.labels, t.topology_key, 1)
        if not has_own and not existing_anti:
            return SKIP
        state[NAME] = _FilterState(terms, affinity, anti, existing_anti)
        return SUCCESS

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
        s: _FilterState = state[NAME]
        labels = node.labels
        if not self._affinity_satisfied(s, pod, labels):
            return unresolvable(AFFINITY_NOT_MATCH)
        if s.anti and any(s.anti.get((t.topology_key, labels[t.topology_key]), 0) > 0
                          for t in s.terms.required_anti if t.topology_key in labels):
            return unschedulable(ANTI_AFFINITY_NOT_MATCH)
        if s.existing_anti and any(s.existing_anti.get(pair, 0) > 0 for pair in labels.items()):
            return unschedulable(EXISTING_ANTI_AFFINITY_NOT_MATCH)
        return SUCCESS

    def _affinity_satisfied(self, s: _FilterState, pod: Pod, labels: Mapping[str, str]) -> bool:
        pods_exist = True
        for t in s.terms.required_affinity:
            if t.topology_key not in labels:
                return False  # the node must have every topology key
            if s.affinity.get((t.topology_key, labels[t.topology_key]), 0) <= 0:
                pods_exist = False
        if pods_exist:
            return True
        # the first pod of a group with affinity to itself: no matching pod anywhere, and
        # the pod matches its own terms
        return not s.affinity and all(t.matches(pod, self.namespace_labels)
                                      for t in s.terms.required_affinity)

    # --- Score ------------------------------------------------------------------------------

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        terms = pod_terms(pod) if has_pod_affinity(pod) else None
        own = terms is not None and bool(terms.preferred_affinity or terms.preferred_anti)
        tally = state.nodes
        if not own and tally is not None and not tally.affinity_pods:
            return SKIP
        scores: dict[str, dict[str, int]] = {}

        def add(term: Term, weight: int, target: Pod, labels: Mapping[str, str]) -> None:
            if term.topology_key in labels and term.matches(target, self.namespace_labels):
                by_value = scores.setdefault(term.topology_key, {})
                value = labels[term.topology_key]
                by_value[value] = by_value.get(value, 0) + weight

        for info in state.all_nodes:
            labels = info.labels
            if not labels:
                continue
            for other in (info.pods if own else info.affinity_pods).values():
                if terms is not None:
                    for t in terms.preferred_affinity:
                        add(t, t.weight, other, labels)
                    for t in terms.preferred_anti:
                        add(t, -t.weight, other, labels)
                if other.spec.affinity is None:
                    continue
                theirs = pod_terms(other)
                for t in theirs.required_affinity:
                    add(t, HARD_POD_AFFINITY_WEIGHT, pod, labels)
                for t in theirs.preferred_affinity:
                    add(t, t.weight, pod, labels)
                for t in theirs.preferred_anti:
                    add(t, -t.weight, pod, labels)
        if not scores:
            return SKIP
        state[f"PreScore{NAME}"] = scores
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, node: NodeInfo) -> int:
        scores: dict[str, dict[str, int]] = state[f"PreScore{NAME}"]
        return sum(by_value.get(node.labels[key], 0) for key, by_value in scores.items()
                   if key in node.labels)

    def normalize_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo],
                        scores: list[int]) -> None:
        """Min..max to 0..100 (a float scale, truncated)."""
        low, high = min(scores, default=0), max(scores, default=0)
        for i, score in enumerate(scores):
            scores[i] = (int(MAX_NODE_SCORE * ((score - low) / (high - low))) if high > low
                         else 0)


def has_required(pod: Pod) -> bool:
    affinity = pod.spec.affinity
    if affinity is None:
        return False
    return any((raw or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
               for raw in (affinity.pod_affinity, affinity.pod_anti_affinity))


if TYPE_CHECKING:  # the stages it implements (upstream: var _ framework.X = ...)
    _pre_filter: PreFilterPlugin = InterPodAffinity()
    _filter: FilterPlugin = InterPodAffinity()
    _pre_score: PreScorePlugin = InterPodAffinity()
    _score: ScorePlugin = InterPodAffinity()
    _normalize: NormalizeScorePlugin = InterPodAffinity()

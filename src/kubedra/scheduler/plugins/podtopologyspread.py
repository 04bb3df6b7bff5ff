"""PodTopologySpread (upstream ``podtopologyspread``, v1.30): the Filter keeps a pod's
``DoNotSchedule`` constraints (``skew = matching pods in the node's domain + self - the
smallest domain's count <= maxSkew``); the Score prefers domains with fewer matching pods
for ``ScheduleAnyway`` constraints, or for the system default constraints when the pod has
none and its owners give a selector.

Counting visits every node's pods, so both halves SKIP quickly for pods without constraints.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kubedra.api.core import LABEL_HOSTNAME, Node, Pod
from kubedra.api.nodeaffinity import pod_matches_node
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
    unresolvable,
    unschedulable,
)
from kubedra.scheduler.plugins.helper import MAX_NODE_SCORE, LabelMatcher, label_matcher
from kubedra.scheduler.plugins.nodes import untolerated

NAME = "PodTopologySpread"
ZONE = "topology.kubernetes.io/zone"
MISSING_LABEL = "node(s) didn't match pod topology spread constraints (missing required label)"
NOT_MATCH = "node(s) didn't match pod topology spread constraints"

SYSTEM_DEFAULTS = ((LABEL_HOSTNAME, 3), (ZONE, 5))
"""Upstream's system default constraints (``ScheduleAnyway``): topology key and maxSkew."""


@dataclass(frozen=True)
class Constraint:
    max_skew: int
    key: str
    matches: LabelMatcher
    min_domains: int = 1
    honor_affinity: bool = True
    """nodeAffinityPolicy Honor (the default): only nodes the pod may go to count."""
    honor_taints: bool = False
    """nodeTaintsPolicy Honor: only nodes whose taints the pod tolerates count."""

    def includes(self, pod: Pod, node: Node, labels: Mapping[str, str]) -> bool:
        """Upstream ``MatchNodeInclusionPolicies``."""
        if self.honor_affinity and not pod_matches_node(pod, labels, node.metadata.name or ""):
            return False
        return not self.honor_taints or untolerated(pod, node) is None


def constraints(pod: Pod, action: str) -> list[Constraint]:
    """The pod's constraints with ``whenUnsatisfiable`` == ``action``; ``matchLabelKeys``
    add the pod's own values of those labels to the selector."""
    labels = pod.metadata.labels or {}
    found = []
    for raw in pod.spec.topology_spread_constraints or ():
        if raw.get("whenUnsatisfiable") != action:
            continue
        selector: dict[str, Any] | None = raw.get("labelSelector")
        keys = [k for k in raw.get("matchLabelKeys") or () if k in labels]
        if selector is not None and keys:
            selector = {**selector, "matchExpressions": [
                *(selector.get("matchExpressions") or ()),
                *({"key": k, "operator": "In", "values": [labels[k]]} for k in keys)]}
        found.append(Constraint(
            max_skew=int(raw.get("maxSkew") or 0), key=raw.get("topologyKey") or "",
            matches=label_matcher(selector), min_domains=int(raw.get("minDomains") or 1),
            honor_affinity=raw.get("nodeAffinityPolicy", "Honor") != "Ignore",
            honor_taints=raw.get("nodeTaintsPolicy") == "Honor"))
    return found


def count_matching(pods: Iterable[Pod], matches: LabelMatcher, namespace: str | None) -> int:
    """Pods of ``namespace``, not being deleted, whose labels match (upstream
    ``countPodsMatchSelector``)."""
    return sum(1 for p in pods if p.metadata.namespace == namespace
               and p.metadata.deletion_timestamp is None
               and matches(p.metadata.labels or {}))


def _has_keys(labels: Mapping[str, str], found: Sequence[Constraint]) -> bool:
    return all(c.key in labels for c in found)


@dataclass
class _FilterState:
    found: list[Constraint]
    counts: dict[tuple[str, str], int]
    """Matching pods per topology pair (key, value), over the nodes that count."""
    minimum: dict[str, int]
    """Per topology key: the smallest domain's count, 0 while fewer domains than minDomains."""


@dataclass
class _ScoreState:
    found: list[Constraint]
    ignored: set[str]
    counts: dict[tuple[str, str], int]
    weights: list[float]


class PodTopologySpread(NodeByNode):
    name = NAME
    weight = 2

    def __init__(self, default_selector: Callable[[Pod], LabelMatcher | None] | None = None
                 ) -> None:
        """``default_selector``: the selector of the pod's owners (Services, ReplicaSets,
        StatefulSets, ReplicationControllers) for the system defaults; kubedra serves none
        of those with a selector, so by default there is none and the defaults never apply."""
        self.default_selector = default_selector

    # --- Filter -----------------------------------------------------------------------------

    def pre_filter(self, state: CycleState, pod: Pod) -> Status:
        found = constraints(pod, "DoNotSchedule")
        if not found:
            return SKIP
        counts: dict[tuple[str, str], int] = {}
        for info in state.all_nodes:
            if not _has_keys(info.labels, found):
                continue
            for c in found:
                if not c.includes(pod, info.node, info.labels):
                    continue
                pair = (c.key, info.labels[c.key])
                counts[pair] = counts.get(pair, 0) + count_matching(
                    info.pods.values(), c.matches, pod.metadata.namespace)
        minimum: dict[str, int] = {}
        domains: dict[str, int] = {}
        for (key, _), n in counts.items():
            minimum[key] = min(minimum.get(key, n), n)
            domains[key] = domains.get(key, 0) + 1
        for c in found:
            if domains.get(c.key, 0) < c.min_domains:
                minimum[c.key] = 0
        state[NAME] = _FilterState(found, counts, minimum)
        return SUCCESS

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
        s: _FilterState = state[NAME]
        own = pod.metadata.labels or {}
        for c in s.found:
            value = node.labels.get(c.key)
            if value is None:
                return unresolvable(MISSING_LABEL)
            skew = (s.counts.get((c.key, value), 0) + (1 if c.matches(own) else 0)
                    - s.minimum.get(c.key, 0))
            if skew > c.max_skew:
                return unschedulable(NOT_MATCH)
        return SUCCESS

    # --- Score ------------------------------------------------------------------------------

    def _score_constraints(self, pod: Pod) -> tuple[list[Constraint], bool]:
        """The constraints to score and whether nodes must carry all their keys."""
        if pod.spec.topology_spread_constraints:
            return constraints(pod, "ScheduleAnyway"), True
        selector = self.default_selector(pod) if self.default_selector is not None else None
        if selector is None:
            return [], False
        return [Constraint(skew, key, selector) for key, skew in SYSTEM_DEFAULTS], False

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        found, require_all = self._score_constraints(pod)
        if not found:
            return SKIP
        ignored: set[str] = set()
        counts: dict[tuple[str, str], int] = {}
        sizes = [0] * len(found)
        for info in nodes:
            if require_all and not _has_keys(info.labels, found):
                ignored.add(info.name)
                continue
            for i, c in enumerate(found):
                if c.key != LABEL_HOSTNAME and (pair := (c.key, info.labels.get(c.key, ""))
                                          ) not in counts:
                    counts[pair] = 0
                    sizes[i] += 1
        weights = [math.log((len(nodes) - len(ignored) if c.key == LABEL_HOSTNAME
                             else sizes[i]) + 2)
                   for i, c in enumerate(found)]
        for info in state.all_nodes:
            if require_all and not _has_keys(info.labels, found):
                continue
            for c in found:
                pair = (c.key, info.labels.get(c.key, ""))
                if pair in counts and c.includes(pod, info.node, info.labels):
                    counts[pair] += count_matching(info.pods.values(), c.matches,
                                                   pod.metadata.namespace)
        state[f"PreScore{NAME}"] = _ScoreState(found, ignored, counts, weights)
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, node: NodeInfo) -> int:
        s: _ScoreState = state[f"PreScore{NAME}"]
        if node.name in s.ignored:
            return 0
        total = 0.0
        for c, weight in zip(s.found, s.weights, strict=True):
            value = node.labels.get(c.key)
            if value is None:
                continue
            if c.key == LABEL_HOSTNAME:
                n = count_matching(node.pods.values(), c.matches, pod.metadata.namespace)
            else:
                n = s.counts[(c.key, value)]
            total += n * weight + (c.max_skew - 1)
        return _round(total)

    def normalize_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo],
                        scores: list[int]) -> None:
        """Fewer matching pods is better: ``100 * (max + min - score) / max``; ignored
        nodes get 0."""
        s: _ScoreState = state[f"PreScore{NAME}"]
        valid = [score for score, info in zip(scores, nodes, strict=True)
                 if info.name not in s.ignored]
        low, high = min(valid, default=0), max(valid, default=0)
        for i, info in enumerate(nodes):
            if info.name in s.ignored:
                scores[i] = 0
            elif high == 0:
                scores[i] = MAX_NODE_SCORE
            else:
                scores[i] = MAX_NODE_SCORE * (high + low - scores[i]) // high


def _round(x: float) -> int:
    """Go's ``math.Round``: halves away from zero."""
    return math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5)


if TYPE_CHECKING:  # the stages it implements (upstream: var _ framework.X = ...)
    _pre_filter: PreFilterPlugin = PodTopologySpread()
    _filter: FilterPlugin = PodTopologySpread()
    _pre_score: PreScorePlugin = PodTopologySpread()
    _score: ScorePlugin = PodTopologySpread()
    _normalize: NormalizeScorePlugin = PodTopologySpread()

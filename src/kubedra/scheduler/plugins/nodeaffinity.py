"""NodeAffinity's Score: the summed weights of the pod's preferred node affinity terms the
node matches, scaled by the best node (upstream ``nodeaffinity``). The Filter half is
:class:`kubedra.scheduler.plugins.nodes.NodeAffinity`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from kubedra.api.core import NodeSelector, Pod
from kubedra.api.nodeaffinity import matches
from kubedra.scheduler.framework import (
    SKIP,
    SUCCESS,
    CycleState,
    NodeByNode,
    NodeInfo,
    NormalizeScorePlugin,
    PreScorePlugin,
    ScorePlugin,
    Status,
)
from kubedra.scheduler.plugins.helper import default_normalize_score


class NodeAffinityScore(NodeByNode):
    name = "NodeAffinity"
    weight = 2

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        """SKIP when the pod has no preferred terms (as upstream)."""
        affinity = pod.spec.affinity
        node_affinity = affinity.node_affinity if affinity is not None else None
        preferred = (node_affinity.preferred_during_scheduling_ignored_during_execution
                     if node_affinity is not None else None)
        terms = [(t.weight, NodeSelector(node_selector_terms=[t.preference]))
                 for t in preferred or () if t.weight]
        if not terms:
            return SKIP
        state[self.name] = terms
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, node: NodeInfo) -> int:
        return sum(weight for weight, term in state[self.name]
                   if matches(term, node.labels, node.name))

    def normalize_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo],
                        scores: list[int]) -> None:
        default_normalize_score(scores, reverse=False)


if TYPE_CHECKING:  # the stages it implements (upstream: var _ framework.X = ...)
    _pre_score: PreScorePlugin = NodeAffinityScore()
    _score: ScorePlugin = NodeAffinityScore()
    _normalize: NormalizeScorePlugin = NodeAffinityScore()

"""TaintToleration's Score: a node scores by how many ``PreferNoSchedule`` taints the pod
does not tolerate, fewer being better (upstream ``tainttoleration``). The Filter half is
:class:`kubedra.scheduler.plugins.nodes.TaintToleration`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from kubedra.api.core import Pod
from kubedra.api.taints import tolerates
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

PREFER_NO_SCHEDULE = "PreferNoSchedule"


class TaintTolerationScore(NodeByNode):
    name = "TaintToleration"
    weight = 3

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        """SKIP while no node has a PreferNoSchedule taint (kubedra only: every node would
        score the same)."""
        if state.nodes is not None and not state.nodes.prefer_tainted:
            return SKIP
        # an empty effect tolerates every effect, PreferNoSchedule included
        state[self.name] = [t for t in pod.spec.tolerations or ()
                            if not t.effect or t.effect == PREFER_NO_SCHEDULE]
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, node: NodeInfo) -> int:
        tolerations = state[self.name]
        return sum(1 for taint in node.node.spec.taints or ()
                   if taint.effect == PREFER_NO_SCHEDULE
                   and not any(tolerates(t, taint) for t in tolerations))

    def normalize_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo],
                        scores: list[int]) -> None:
        default_normalize_score(scores, reverse=True)


if TYPE_CHECKING:  # the stages it implements (upstream: var _ framework.X = ...)
    _pre_score: PreScorePlugin = TaintTolerationScore()
    _score: ScorePlugin = TaintTolerationScore()
    _normalize: NormalizeScorePlugin = TaintTolerationScore()

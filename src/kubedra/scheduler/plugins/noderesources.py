"""Node scores (upstream ``noderesources`` and ``imagelocality``): NodeResourcesFit's
``LeastAllocated`` strategy and NodeResourcesBalancedAllocation, both over cpu and memory
with weight 1 each, and ImageLocality.

Both depend only on the node's summed requests and the pod's, so a node's score is kept
(``KeptScores``, the cache's) until its requests change: pods alike (the usual case) cost
one lookup per node.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from kubedra.api.core import Pod
from kubedra.scheduler.framework import (
    SKIP,
    SUCCESS,
    CycleState,
    NodeByNode,
    NodeInfo,
    PreScorePlugin,
    Resources,
    ScorePlugin,
    Status,
)

MAX_NODE_SCORE = 100


def least_requested(requested: int, capacity: int) -> int:
    """``(capacity - requested) * 100 / capacity`` in integers; 0 when over capacity."""
    if capacity == 0 or requested > capacity:
        return 0
    return (capacity - requested) * MAX_NODE_SCORE // capacity


def least_allocated(requested: Resources, allocatable: Resources) -> int:
    """The weighted mean of cpu's and memory's :func:`least_requested` (resources the node
    has none of are left out)."""
    total = weights = 0
    for req, cap in ((requested.milli_cpu, allocatable.milli_cpu),
                     (requested.memory, allocatable.memory)):
        if cap:
            total += least_requested(req, cap)
            weights += 1
    return total // weights if weights else 0


def balanced_allocation(requested: Resources, allocatable: Resources) -> int:
    """``(1 - std) * 100`` over the requested fractions (each capped at 1); for two
    resources the standard deviation is half their difference."""
    fractions = [min(req / cap, 1.0) for req, cap in (
        (requested.milli_cpu, allocatable.milli_cpu), (requested.memory, allocatable.memory))
        if cap]
    std = abs(fractions[0] - fractions[1]) / 2 if len(fractions) == 2 else 0.0
    return int((1 - std) * MAX_NODE_SCORE)


def with_pod(node: Resources, pod: Resources) -> Resources:
    return Resources(node.milli_cpu + pod.milli_cpu, node.memory + pod.memory)


class ResourceScore:
    """The shared Score half: the pod's requests from PreScore, the node's from its info."""

    name = ""
    state_key = ""
    """Where PreScore leaves the pod's requests (not ``name``: NodeResourcesFit's Filter
    half keeps its own there)."""
    weight = 1
    non_zero = False

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        want = state.requests(pod, non_zero=self.non_zero)
        state[self.state_key] = (self.name, want.milli_cpu, want.memory), want
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, node: NodeInfo) -> int:
        key, want = state[self.state_key]
        table = state.kept.table(key) if state.kept is not None else {}
        found = table.get(node)
        if found is None:
            have = node.non_zero_requested if self.non_zero else node.requested
            found = table[node] = self.formula(with_pod(have, want), node.allocatable)
        return found

    def scores(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> list[int]:
        """The kept scores, looked up in one table (-1: none kept, a score is never
        negative); only the nodes whose requests changed (about one per pod in a burst)
        are scored, found by a search in C."""
        if state.kept is None:
            return [self.score(state, pod, node) for node in nodes]
        get = state.kept.table(state[self.state_key][0]).get
        kept = [get(node, -1) for node in nodes]
        missing = 0
        for _ in range(kept.count(-1)):
            missing = kept.index(-1, missing)
            kept[missing] = self.score(state, pod, nodes[missing])
        return kept

    def formula(self, requested: Resources, allocatable: Resources) -> int:
        raise NotImplementedError


class LeastAllocatedScore(ResourceScore):
    """NodeResourcesFit's Score with the default ``LeastAllocated`` strategy: requests
    counted with the non-zero defaults."""

    name = "NodeResourcesFit"
    state_key = "PreScoreNodeResourcesFit"
    non_zero = True

    def formula(self, requested: Resources, allocatable: Resources) -> int:
        return least_allocated(requested, allocatable)


class BalancedAllocation(ResourceScore):
    """NodeResourcesBalancedAllocation: requests as they are (no defaults)."""

    name = "NodeResourcesBalancedAllocation"
    state_key = "PreScoreNodeResourcesBalancedAllocation"

    def formula(self, requested: Resources, allocatable: Resources) -> int:
        return balanced_allocation(requested, allocatable)


class ImageLocality(NodeByNode):
    """Nodes report no images (kubedra's nodes run no container runtime), so every node
    scores 0, as a real node without the pod's images would: nothing to rank."""

    name = "ImageLocality"
    weight = 1

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        return SKIP

    def score(self, state: CycleState, pod: Pod, node: NodeInfo) -> int:
        return 0


if TYPE_CHECKING:  # the stages each plugin implements (upstream: var _ framework.X = ...)
    _pre_scores: tuple[PreScorePlugin, ...] = (LeastAllocatedScore(), BalancedAllocation(),
                                               ImageLocality())
    _scores: tuple[ScorePlugin, ...] = (LeastAllocatedScore(), BalancedAllocation(),
                                        ImageLocality())

"""selectHost: the best total wins; among equal totals every node is equally likely
(upstream's reservoir sampling), and a seed makes the draw reproducible."""

from __future__ import annotations

import collections
import random

from kubedra.api.core import Pod
from kubedra.scheduler.framework import (
    SUCCESS,
    CycleState,
    NodeByNode,
    NodeInfo,
    Profile,
    Resources,
)
from kubedra.scheduler.scheduler import score_nodes, select_host
from kubedra.testing import fake_node
from tests.unit.scheduler.score_support import pod


def infos(*names: str) -> list[NodeInfo]:
    return [NodeInfo(fake_node(n), n, {}, Resources()) for n in names]


def test_the_highest_total_wins() -> None:
    nodes = infos("a", "b", "c")
    table = {"P": [10, 30, 20], "Q": [50, 0, 0]}
    assert select_host(random.Random(1), nodes, table).name == "a"


def test_ties_are_drawn_uniformly() -> None:
    nodes = infos("a", "b", "c", "d")
    table = {"P": [5, 9, 9, 9]}
    rng = random.Random(7)
    counts = collections.Counter(select_host(rng, nodes, table).name for _ in range(6000))
    assert set(counts) == {"b", "c", "d"}
    assert all(1700 < n < 2300 for n in counts.values()), counts


def test_a_seed_makes_the_draw_reproducible() -> None:
    nodes = infos(*"abcdefgh")
    table = {"P": [1] * 8}

    def draws(seed: int) -> list[str]:
        rng = random.Random(seed)
        return [select_host(rng, nodes, table).name for _ in range(20)]

    assert draws(3) == draws(3)
    assert len(set(draws(3))) > 1


class Fixed(NodeByNode):
    """A score plugin giving fixed raw scores, normalised by doubling."""

    def __init__(self, name: str, raw: dict[str, int], weight: int) -> None:
        self.name, self.raw, self.weight = name, raw, weight

    def pre_score(self, state: CycleState, pod: Pod, nodes: object) -> object:
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, node: NodeInfo) -> int:
        return self.raw[node.name]

    def normalize_score(self, state: CycleState, pod: Pod, nodes: object,
                        scores: list[int]) -> None:
        scores[:] = [2 * s for s in scores]


def test_scores_are_normalised_then_weighted() -> None:
    p, q = Fixed("P", {"a": 1, "b": 2}, 3), Fixed("Q", {"a": 10, "b": 0}, 1)
    state = CycleState()
    state.profile = Profile(pre_score=[p, q], score=[p, q],  # type: ignore[list-item]
                            normalize_score=[p])  # type: ignore[list-item]
    table = score_nodes(state, pod(), infos("a", "b"))
    assert table == {"P": [6, 12], "Q": [10, 0]}
    assert score_nodes(state, pod(), infos("a")) == {}  # one feasible node: not scored

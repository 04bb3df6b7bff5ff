"""InterPodAffinity against rows of upstream's ``interpodaffinity/scoring_test.go``
(TestPreferredAffinity) and ``filtering_test.go`` (TestRequiredAffinitySingleNode), test
names quoted."""

from __future__ import annotations

from typing import Any

from kubedra.scheduler.framework import Code
from kubedra.scheduler.plugins.interpodaffinity import (
    AFFINITY_NOT_MATCH,
    ANTI_AFFINITY_NOT_MATCH,
    EXISTING_ANTI_AFFINITY_NOT_MATCH,
    InterPodAffinity,
)
from tests.unit.scheduler.score_support import cluster, filtered, node, pod, scores

CHINA, INDIA, AZ1, AZ2 = {"region": "China"}, {"region": "India"}, {"az": "az1"}, {"az": "az2"}
CHINA_AZ1 = {"region": "China", "az": "az1"}
S1, S2 = {"security": "S1"}, {"security": "S2"}


def term(key: str, *values: str, operator: str = "In") -> dict[str, Any]:
    return {"labelSelector": {"matchExpressions": [
        {"key": "security", "operator": operator, "values": list(values)}]}, "topologyKey": key}


def weighted(weight: int, t: dict[str, Any]) -> dict[str, Any]:
    return {"weight": weight, "podAffinityTerm": t}


STAY_WITH_S1_IN_REGION = {"podAffinity": {
    "preferredDuringSchedulingIgnoredDuringExecution": [weighted(5, term("region", "S1"))]}}
STAY_WITH_S2_IN_REGION = {"podAffinity": {
    "preferredDuringSchedulingIgnoredDuringExecution": [weighted(6, term("region", "S2"))]}}
AWAY_FROM_S1_IN_AZ = {"podAntiAffinity": {
    "preferredDuringSchedulingIgnoredDuringExecution": [weighted(5, term("az", "S1"))]}}
AWAY_FROM_S2_IN_AZ = {"podAntiAffinity": {
    "preferredDuringSchedulingIgnoredDuringExecution": [weighted(5, term("az", "S2"))]}}
STAY_WITH_S1_AWAY_FROM_S2 = {**STAY_WITH_S1_IN_REGION, **AWAY_FROM_S2_IN_AZ}
STAY_WITH_S1_AWAY_FROM_S2["podAffinity"] = {
    "preferredDuringSchedulingIgnoredDuringExecution": [weighted(8, term("region", "S1"))]}
HARD_AFFINITY = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    term("region", "S1", "value2"),
    {"labelSelector": {"matchExpressions": [
        {"key": "security", "operator": "Exists"},
        {"key": "wrongkey", "operator": "DoesNotExist"}]}, "topologyKey": "region"}]}}


def test_all_nodes_are_same_priority_as_affinity_is_nil() -> None:
    """"all nodes are same priority as Affinity is nil" (PreScore Skip)."""
    cache = cluster([node("node1", CHINA), node("node2", INDIA), node("node3", AZ1)], [])
    assert scores(InterPodAffinity(), pod(labels=S1), cache) is Code.SKIP


def test_affinity_pod_that_matches_topology_key_and_pods_in_nodes_gets_high_score() -> None:
    """"Affinity: pod that matches topology key & pods in nodes will get high score
    comparing to others which doesn't match either pods in nodes or in topology key"."""
    cache = cluster([node("node1", CHINA), node("node2", INDIA), node("node3", AZ1)],
                    [pod("node1", S1), pod("node2", S2), pod("node3", S1)])
    incoming = pod(labels=S1, affinity=STAY_WITH_S1_IN_REGION)
    assert scores(InterPodAffinity(), incoming, cache) == {"node1": 100, "node2": 0, "node3": 0}


def test_nodes_with_the_same_topology_value_as_a_matching_pod_score_the_same() -> None:
    """"All the nodes that have the same topology key & label value with one of them has
    an existing pod that match the affinity rules, have the same score"."""
    cache = cluster([node("node1", CHINA), node("node2", CHINA_AZ1), node("node3", INDIA)],
                    [pod("node1", S1)])
    incoming = pod(affinity=STAY_WITH_S1_IN_REGION)
    assert scores(InterPodAffinity(), incoming, cache) == {
        "node1": 100, "node2": 100, "node3": 0}


def test_affinity_region_with_more_matching_pods_gets_high_score() -> None:
    """"Affinity: nodes in one region has more matching pods comparing to other region, so
    the region which has more matches will get high score"."""
    cache = cluster([node("node1", CHINA), node("node2", INDIA), node("node3", CHINA),
                     node("node4", CHINA), node("node5", INDIA)],
                    [pod("node1", S2), pod("node1", S2), pod("node2", S2), pod("node3", S2),
                     pod("node4", S2), pod("node5", S2)])
    incoming = pod(labels=S1, affinity=STAY_WITH_S2_IN_REGION)
    assert scores(InterPodAffinity(), incoming, cache) == {
        "node1": 100, "node2": 0, "node3": 100, "node4": 100, "node5": 0}


def test_affinity_different_label_operators_and_values() -> None:
    """"Affinity: different Label operators and values for pod affinity scheduling
    preference, including some match failures"."""
    affinity3 = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        weighted(8, {"labelSelector": {"matchExpressions": [
            {"key": "security", "operator": "NotIn", "values": ["S1"]},
            {"key": "security", "operator": "In", "values": ["S2"]}]},
            "topologyKey": "region"}),
        weighted(2, {"labelSelector": {"matchExpressions": [
            {"key": "security", "operator": "Exists"},
            {"key": "wrongkey", "operator": "DoesNotExist"}]}, "topologyKey": "region"})]}}
    cache = cluster([node("node1", CHINA), node("node2", INDIA), node("node3", AZ1)],
                    [pod("node1", S1), pod("node2", S2), pod("node3", S1)])
    incoming = pod(labels=S1, affinity=affinity3)
    assert scores(InterPodAffinity(), incoming, cache) == {"node1": 20, "node2": 100, "node3": 0}


def test_affinity_symmetry_preferred_terms_of_placed_pods() -> None:
    """"Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution
    in pod affinity symmetry"."""
    cache = cluster([node("node1", CHINA), node("node2", INDIA), node("node3", AZ1)],
                    [pod("node1", S1, affinity=STAY_WITH_S1_IN_REGION),
                     pod("node2", S2, affinity=STAY_WITH_S2_IN_REGION)])
    assert scores(InterPodAffinity(), pod(labels=S2), cache) == {
        "node1": 0, "node2": 100, "node3": 0}


def test_affinity_symmetry_required_terms_of_placed_pods() -> None:
    """"Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod
    affinity symmetry"."""
    cache = cluster([node("node1", CHINA), node("node2", INDIA), node("node3", AZ1)],
                    [pod("node1", S1, affinity=HARD_AFFINITY),
                     pod("node2", S2, affinity=HARD_AFFINITY)])
    assert scores(InterPodAffinity(), pod(labels=S1), cache) == {
        "node1": 100, "node2": 100, "node3": 0}


def test_anti_affinity_pod_that_does_not_match_existing_pods_gets_high_score() -> None:
    """"Anti Affinity: pod that does not match existing pods in node will get high
    score"."""
    cache = cluster([node("node1", AZ1), node("node2", CHINA)],
                    [pod("node1", S1), pod("node2", S2)])
    incoming = pod(labels=S1, affinity=AWAY_FROM_S1_IN_AZ)
    assert scores(InterPodAffinity(), incoming, cache) == {"node1": 0, "node2": 100}


def test_anti_affinity_symmetry() -> None:
    """"Anti Affinity symmetry: the existing pods in node which has anti affinity match
    will get high score"."""
    cache = cluster([node("node1", AZ1), node("node2", AZ2)],
                    [pod("node1", S1, affinity=AWAY_FROM_S2_IN_AZ),
                     pod("node2", S2, affinity=AWAY_FROM_S1_IN_AZ)])
    assert scores(InterPodAffinity(), pod(labels=S2), cache) == {"node1": 0, "node2": 100}


def test_affinity_anti_affinity_and_symmetry_together() -> None:
    """"Affinity and Anti Affinity and symmetry: considered only
    preferredDuringSchedulingIgnoredDuringExecution in both pod affinity & anti affinity &
    symmetry"."""
    cache = cluster([node("node1", CHINA), node("node2", AZ1), node("node3", INDIA),
                     node("node4", AZ2)],
                    [pod("node1", S1), pod("node2", S2),
                     pod("node3", affinity=STAY_WITH_S1_AWAY_FROM_S2),
                     pod("node4", affinity=AWAY_FROM_S1_IN_AZ)])
    incoming = pod(labels=S1, affinity=STAY_WITH_S1_AWAY_FROM_S2)
    assert scores(InterPodAffinity(), incoming, cache) == {
        "node1": 100, "node2": 0, "node3": 100, "node4": 0}


def test_avoid_panic_when_partial_nodes_in_a_topology_dont_have_pods_with_affinity() -> None:
    """"Avoid panic when partial nodes in a topology don't have pods with affinity"."""
    cache = cluster([node("node1", CHINA), node("node2", CHINA)],
                    [pod("node1", S1), pod("node2", affinity=STAY_WITH_S1_AWAY_FROM_S2)])
    assert scores(InterPodAffinity(), pod(labels=S1), cache) == {"node1": 0, "node2": 0}


def required(kind: str, *terms: dict[str, Any]) -> dict[str, Any]:
    return {kind: {"requiredDuringSchedulingIgnoredDuringExecution": list(terms)}}


REGION_NODES = [node("node1", CHINA), node("node2", INDIA), node("node3", AZ1)]


def test_filter_pod_without_required_terms_skips_while_no_pod_has_required_anti() -> None:
    """"A pod that has no required pod affinity scheduling rules can schedule onto a node
    with no existing pods" (kubedra: PreFilter SKIP, every node fits)."""
    assert filtered(InterPodAffinity(), pod(), cluster(REGION_NODES, [])) is Code.SKIP


def test_filter_required_affinity_in_operator_matches_the_existing_pod() -> None:
    """"satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using
    In operator that matches the existing pod"."""
    cache = cluster(REGION_NODES, [pod("node1", S1)])
    incoming = pod(labels=S2, affinity=required("podAffinity", term("region", "S1")))
    assert filtered(InterPodAffinity(), incoming, cache) == {
        "node1": "", "node2": f"UnschedulableAndUnresolvable: {AFFINITY_NOT_MATCH}",
        "node3": f"UnschedulableAndUnresolvable: {AFFINITY_NOT_MATCH}"}


def test_filter_affinity_to_pods_in_another_namespace_does_not_match() -> None:
    """"Does not satisfy the PodAffinity with labelSelector because of diff Namespace"."""
    cache = cluster(REGION_NODES, [pod("node1", S1, namespace="ns")])
    incoming = pod(labels=S2, namespace="other",
                   affinity=required("podAffinity", term("region", "S1")))
    assert filtered(InterPodAffinity(), incoming, cache)["node1"] == (
        f"UnschedulableAndUnresolvable: {AFFINITY_NOT_MATCH}")


def test_filter_first_pod_of_a_group_with_affinity_to_itself() -> None:
    """"verify that PodAffinity is not satisfied... unless the pod matches its own terms"
    (the first pod of a series: no matching pod anywhere and it matches itself)."""
    cache = cluster(REGION_NODES, [])
    incoming = pod(labels=S1, affinity=required("podAffinity", term("region", "S1")))
    assert filtered(InterPodAffinity(), incoming, cache) == {
        "node1": "", "node2": "",
        "node3": f"UnschedulableAndUnresolvable: {AFFINITY_NOT_MATCH}"}


def test_filter_required_anti_affinity_keeps_off_the_matching_domain() -> None:
    """"Anti-affinity: pod that does not satisfy the required anti-affinity rule"."""
    cache = cluster(REGION_NODES, [pod("node1", S1)])
    incoming = pod(labels=S2, affinity=required("podAntiAffinity", term("region", "S1")))
    assert filtered(InterPodAffinity(), incoming, cache) == {
        "node1": f"Unschedulable: {ANTI_AFFINITY_NOT_MATCH}", "node2": "", "node3": ""}


def test_filter_existing_pods_anti_affinity_is_honoured() -> None:
    """"Verify that existing pods' anti-affinity rules are honoured" (symmetry)."""
    cache = cluster(REGION_NODES, [
        pod("node1", S1, affinity=required("podAntiAffinity", term("region", "S2")))])
    assert filtered(InterPodAffinity(), pod(labels=S2), cache) == {
        "node1": f"Unschedulable: {EXISTING_ANTI_AFFINITY_NOT_MATCH}", "node2": "",
        "node3": ""}
    assert cache.tally.anti_affinity_pods == 1

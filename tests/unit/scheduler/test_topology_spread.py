"""PodTopologySpread against rows of upstream's ``podtopologyspread/scoring_test.go``
(TestPodTopologySpreadScore) and ``filtering_test.go`` (TestSingleConstraint), test names
quoted."""

from __future__ import annotations

from typing import Any

from kubedra.scheduler.framework import Code
from kubedra.scheduler.plugins.helper import label_matcher
from kubedra.scheduler.plugins.podtopologyspread import MISSING_LABEL, NOT_MATCH, PodTopologySpread
from tests.unit.scheduler.score_support import cluster, filtered, node, pod, scores

HOST = "kubernetes.io/hostname"
FOO = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}


def spread(skew: int, key: str, when: str = "ScheduleAnyway",
           selector: dict[str, Any] | None = FOO) -> dict[str, Any]:
    return {"maxSkew": skew, "topologyKey": key, "whenUnsatisfiable": when,
            "labelSelector": selector}


def host(name: str, **labels: str) -> Any:
    return node(name, {HOST: name, **labels})


def foo_pods(**per_node: int) -> list[Any]:
    return [pod(n.replace("_", "-"), {"foo": ""}) for n, k in per_node.items()
            for _ in range(k)]


def incoming(*constraints: dict[str, Any]) -> Any:
    return pod(labels={"foo": ""}, topologySpreadConstraints=list(constraints))


def test_one_constraint_on_node_all_4_nodes_are_candidates() -> None:
    """"one constraint on node, all 4 nodes are candidates" (matching pods 2/1/0/3)."""
    cache = cluster([host("node-a"), host("node-b"), host("node-c"), host("node-d")],
                    foo_pods(node_a=2, node_b=1, node_d=3))
    assert scores(PodTopologySpread(), incoming(spread(1, HOST)), cache) == {
        "node-a": 20, "node-b": 60, "node-c": 100, "node-d": 0}


def test_one_constraint_on_node_all_4_nodes_are_candidates_max_skew_2() -> None:
    """"one constraint on node, all 4 nodes are candidates, maxSkew=2"."""
    cache = cluster([host("node-a"), host("node-b"), host("node-c"), host("node-d")],
                    foo_pods(node_a=2, node_b=1, node_d=3))
    assert scores(PodTopologySpread(), incoming(spread(2, HOST)), cache) == {
        "node-a": 33, "node-b": 66, "node-c": 100, "node-d": 16}


def test_one_constraint_on_node_null_selector() -> None:
    """"one constraint on node, null selector"."""
    cache = cluster([host("node-a"), host("node-b"), host("node-c"), host("node-d")],
                    foo_pods(node_a=2, node_b=1, node_d=3))
    assert scores(PodTopologySpread(), incoming(spread(1, HOST, selector=None)), cache) == {
        "node-a": 100, "node-b": 100, "node-c": 100, "node-d": 100}


def test_system_defaulting_nodes_dont_have_zone_pods_match_service() -> None:
    """"system defaulting, nodes don't have zone, pods match service" (the Service's
    selector ``foo: ""`` given as the pod's owners' selector)."""
    cache = cluster([host("node-a"), host("node-b"), host("node-c"), host("node-d")],
                    foo_pods(node_a=4, node_b=3, node_c=2, node_d=1))
    plugin = PodTopologySpread(lambda p: label_matcher({"matchLabels": {"foo": ""}}))
    assert scores(plugin, pod(labels={"foo": ""}), cache) == {
        "node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100}
    assert scores(PodTopologySpread(), pod(labels={"foo": ""}), cache) is Code.SKIP


def test_one_constraint_on_node_3_out_of_4_nodes_are_candidates() -> None:
    """"one constraint on node, 3 out of 4 nodes are candidates" (4/2/1/~3~)."""
    cache = cluster([host("node-a"), host("node-b"), host("node-x"), host("node-y")],
                    foo_pods(node_a=4, node_b=2, node_x=1, node_y=3))
    assert scores(PodTopologySpread(), incoming(spread(1, HOST)), cache,
                  ["node-a", "node-b", "node-x"]) == {"node-a": 33, "node-b": 83, "node-x": 100}


def test_one_node_doesnt_match_topology_key() -> None:
    """"one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match
    topology key"."""
    cache = cluster([host("node-a"), node("node-b", {"n": "node-b"}), host("node-x"),
                     host("node-y")], foo_pods(node_a=4, node_b=2, node_x=1, node_y=3))
    assert scores(PodTopologySpread(), incoming(spread(1, HOST)), cache,
                  ["node-a", "node-b", "node-x"]) == {"node-a": 16, "node-b": 0, "node-x": 100}


def test_one_constraint_on_zone_3_out_of_4_nodes_are_candidates() -> None:
    """"one constraint on zone, 3 out of 4 nodes are candidates"."""
    cache = cluster([host("node-a", zone="zone1"), host("node-b", zone="zone1"),
                     host("node-x", zone="zone2"), host("node-y", zone="zone2")],
                    foo_pods(node_a=4, node_b=2, node_x=1, node_y=3))
    assert scores(PodTopologySpread(), incoming(spread(1, "zone")), cache,
                  ["node-a", "node-b", "node-x"]) == {"node-a": 75, "node-b": 75, "node-x": 100}


def test_two_constraints_on_zone_and_node_2_out_of_4_nodes_are_candidates() -> None:
    """"two Constraints on zone and node, 2 out of 4 nodes are candidates" (2/~1~/2/~4~)."""
    cache = cluster([host("node-a", zone="zone1"), host("node-b", zone="zone1"),
                     host("node-x", zone="zone2"), host("node-y", zone="zone2")],
                    foo_pods(node_a=2, node_b=1, node_x=2, node_y=4))
    assert scores(PodTopologySpread(), incoming(spread(1, "zone"), spread(1, HOST)), cache,
                  ["node-a", "node-x"]) == {"node-a": 100, "node-x": 63}


def test_pods_without_schedule_anyway_constraints_skip_scoring() -> None:
    cache = cluster([host("node-a"), host("node-b")], [])
    assert scores(PodTopologySpread(), pod(), cache) is Code.SKIP
    only_hard = incoming(spread(1, HOST, "DoNotSchedule"))
    assert scores(PodTopologySpread(), only_hard, cache) is Code.SKIP


ZONES = [host("node-a", zone="zone1"), host("node-b", zone="zone1"),
         host("node-x", zone="zone2"), host("node-y", zone="zone2")]
FITS, SKEWED = "", f"Unschedulable: {NOT_MATCH}"


def test_filter_no_existing_pods() -> None:
    """"no existing pods" (TestSingleConstraint)."""
    hard = incoming(spread(1, "zone", "DoNotSchedule"))
    assert filtered(PodTopologySpread(), hard, cluster(ZONES, [])) == {
        "node-a": FITS, "node-b": FITS, "node-x": FITS, "node-y": FITS}


def test_filter_pods_spread_across_zones_as_3_3_all_nodes_fit() -> None:
    """"pods spread across zones as 3/3, all nodes fit"."""
    cache = cluster(ZONES, foo_pods(node_a=1, node_b=2, node_x=1, node_y=2))
    hard = incoming(spread(1, "zone", "DoNotSchedule"))
    assert filtered(PodTopologySpread(), hard, cache) == {
        "node-a": FITS, "node-b": FITS, "node-x": FITS, "node-y": FITS}


def test_filter_pods_spread_across_nodes_as_2_1_0_3_only_node_x_fits() -> None:
    """"pods spread across nodes as 2/1/0/3, only node-x fits"."""
    cache = cluster(ZONES, foo_pods(node_a=2, node_b=1, node_y=3))
    hard = incoming(spread(1, HOST, "DoNotSchedule"))
    assert filtered(PodTopologySpread(), hard, cache) == {
        "node-a": SKEWED, "node-b": SKEWED, "node-x": FITS, "node-y": SKEWED}


def test_filter_pods_spread_across_nodes_as_2_1_0_3_max_skew_2() -> None:
    """"pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit"."""
    cache = cluster(ZONES, foo_pods(node_a=2, node_b=1, node_y=3))
    hard = incoming(spread(2, HOST, "DoNotSchedule"))
    assert filtered(PodTopologySpread(), hard, cache) == {
        "node-a": SKEWED, "node-b": FITS, "node-x": FITS, "node-y": SKEWED}


def test_filter_node_without_the_topology_label_is_unresolvable() -> None:
    cache = cluster([*ZONES[:3], host("node-y")], foo_pods(node_a=1))
    hard = incoming(spread(1, "zone", "DoNotSchedule"))
    assert filtered(PodTopologySpread(), hard, cache)["node-y"] == (
        f"UnschedulableAndUnresolvable: {MISSING_LABEL}")


def test_filter_pods_in_other_namespaces_do_not_count() -> None:
    """"existing pods in a different namespace do not count"."""
    cache = cluster(ZONES, [pod("node-a", {"foo": ""}, namespace="ns1"),
                            pod("node-a", {"foo": ""}, namespace="ns2")])
    hard = pod(labels={"foo": ""}, namespace="ns1",
               topologySpreadConstraints=[spread(1, "zone", "DoNotSchedule")])
    assert filtered(PodTopologySpread(), hard, cache) == {
        "node-a": SKEWED, "node-b": SKEWED, "node-x": FITS, "node-y": FITS}


def test_filter_skips_pods_without_do_not_schedule_constraints() -> None:
    assert filtered(PodTopologySpread(), incoming(spread(1, HOST)), cluster(ZONES, [])) is (
        Code.SKIP)

"""The scheduler runs the plugins its profile lists per stage and names the plugin behind
every status it records (upstream ``Status.SetPlugin``)."""

from __future__ import annotations

from kubedra.api.codec import decode
from kubedra.api.core import Pod
from kubedra.client.informer import Informers
from kubedra.scheduler.framework import (
    SUCCESS,
    CycleState,
    Diagnosis,
    NodeInfo,
    Profile,
    Status,
    unresolvable,
)
from kubedra.scheduler.plugins.dynamicresources import DRAState, DynamicResources
from kubedra.scheduler.scheduler import Scheduler
from kubedra.scheduler.setup import default_profile
from kubedra.testing import fake_node


class OnlyNode:
    name = "OnlyNode"

    def __init__(self, wanted: str) -> None:
        self.wanted = wanted

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
        return SUCCESS if node.name == self.wanted else unresolvable("not the one")


def test_filter_statuses_carry_the_plugin_name() -> None:
    only = OnlyNode("n1")
    scheduler = Scheduler(None, Informers(None), Profile(filter=[only]))  # type: ignore[arg-type]
    for name in ("n0", "n1", "n2"):
        scheduler.cache.set_node(fake_node(name))
    pod = decode({"metadata": {"name": "p", "namespace": "ns"}}, Pod)
    diagnosis, rejectors = Diagnosis(), set[str]()
    feasible = scheduler._find_feasible(CycleState(), pod, [only], diagnosis, rejectors)
    assert [n.name for n in feasible] == ["n1"]
    assert rejectors == {"OnlyNode"}
    assert {n: (s.plugin, s.message) for n, s in diagnosis.node_statuses.items()} == {
        "n0": ("OnlyNode", "not the one"), "n2": ("OnlyNode", "not the one")}


def test_default_profile_lists_dynamic_resources_at_each_of_its_stages() -> None:
    dra = DynamicResources(DRAState())
    profile = default_profile(dra)
    stages = {stage: [p.name for p in getattr(profile, stage)]
              for stage in Profile.__dataclass_fields__
              if stage != "percentage_of_nodes_to_score"}
    assert [s for s, names in stages.items() if "DynamicResources" in names] == [
        "pre_enqueue", "enqueue", "pre_filter", "filter", "shortlist", "post_filter",
        "reserve", "after_unreserve", "pre_bind"]
    assert stages["filter"] == ["NodeUnschedulable", "NodeName", "TaintToleration",
                                "NodeAffinity", "NodeResourcesFit", "PodTopologySpread",
                                "InterPodAffinity", "DynamicResources"]


def test_default_profile_scores_with_upstreams_weights() -> None:
    """default_plugins.go (v1.30): TaintToleration 3, NodeAffinity 2, PodTopologySpread 2,
    InterPodAffinity 2, the others 1; plus kubedra's packing score."""
    profile = default_profile(DynamicResources(DRAState()))
    assert {p.name: p.weight for p in profile.score} == {
        "TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 1,
        "PodTopologySpread": 2, "InterPodAffinity": 2, "NodeResourcesBalancedAllocation": 1,
        "ImageLocality": 1, "DynamicResourcesPacking": 1}
    assert [p.name for p in profile.normalize_score] == [
        "TaintToleration", "NodeAffinity", "PodTopologySpread", "InterPodAffinity"]

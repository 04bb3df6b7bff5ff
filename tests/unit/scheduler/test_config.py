"""``KubeSchedulerConfiguration`` files: upstream's strict decoding and validation texts,
plugins merged with the defaults per extension point, score weights, and the profiles the
scheduler builds from them."""

from __future__ import annotations

import pytest

from kubedra.scheduler.config import ConfigError, decode, resolve
from kubedra.scheduler.plugins.dynamicresources import DRAState, DynamicResources
from kubedra.scheduler.setup import IMPLEMENTS, build_profile

HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


def config(body: str = "") -> object:
    return resolve(decode(HEAD + body), IMPLEMENTS)


def error(body: str, head: str = HEAD) -> str:
    with pytest.raises(ConfigError) as err:
        resolve(decode(head + body), IMPLEMENTS)
    return str(err.value)


def test_unknown_fields_are_a_strict_decoding_error() -> None:
    """In document order, as sigs.k8s.io/json reports them."""
    assert error("profiles:\n- schedulerName: a\n  foo: 1\nbar: 2\n") == (
        'strict decoding error: unknown field "profiles[0].foo", unknown field "bar"')


def test_only_v1_is_known() -> None:
    assert error("", "apiVersion: kubescheduler.config.k8s.io/v1beta3\n"
                     "kind: KubeSchedulerConfiguration\n").startswith(
        'no kind "KubeSchedulerConfiguration" is registered for version '
        '"kubescheduler.config.k8s.io/v1beta3"')


def test_bad_values_get_upstreams_field_errors() -> None:
    assert error("percentageOfNodesToScore: 101\n") == (
        "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]")
    assert error("profiles:\n- schedulerName: a\n- percentageOfNodesToScore: -1\n") == (
        "[profiles[1].schedulerName: Required value, profiles[1].percentageOfNodesToScore: "
        "Invalid value: -1: not in valid range [0-100]]")
    assert error("parallelism: 0\npodInitialBackoffSeconds: 5\npodMaxBackoffSeconds: 2\n") == (
        "[parallelism: Invalid value: 0: should be an integer value greater than zero, "
        "podMaxBackoffSeconds: Invalid value: 2: must be greater than or equal to "
        "PodInitialBackoffSeconds]")
    assert "profiles[1].schedulerName: Duplicate value" in error(
        "profiles:\n- schedulerName: a\n- schedulerName: a\n")
    assert error("profiles:\n- plugins:\n    filter:\n      enabled:\n"
                 "      - name: EBSLimits\n") == (
        'profiles[0].plugins.filter.enabled[0]: Invalid value: "EBSLimits": was invalid in '
        'version "kubescheduler.config.k8s.io/v1" (KubeSchedulerConfiguration is version '
        '"kubescheduler.config.k8s.io/v1")')


def test_unknown_and_misplaced_plugins_fail_as_the_framework_does() -> None:
    assert error("profiles:\n- plugins:\n    score:\n      enabled:\n      - name: Foo\n") == (
        "initializing profiles: creating profile for scheduler name default-scheduler: "
        'ScorePlugin "Foo" does not exist')
    assert error("profiles:\n- plugins:\n    score:\n      enabled:\n"
                 "      - name: NodeName\n") == (
        "initializing profiles: creating profile for scheduler name default-scheduler: "
        'plugin "NodeName" does not extend ScorePlugin plugin')


def test_the_empty_configuration_is_the_default_profile() -> None:
    cfg = config()
    [profile] = cfg.profiles  # type: ignore[attr-defined]
    assert profile.scheduler_name == "default-scheduler"
    assert profile.weights == {
        "TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 1, "VolumeBinding": 1,
        "PodTopologySpread": 2, "InterPodAffinity": 2, "NodeResourcesBalancedAllocation": 1,
        "ImageLocality": 1, "DynamicResourcesPacking": 1}
    assert profile.points["filter"][:4] == [
        "NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity"]


def test_weights_disabling_and_percentage_per_profile() -> None:
    cfg = config("""percentageOfNodesToScore: 30
profiles:
- schedulerName: packing
  percentageOfNodesToScore: 70
  plugins:
    multiPoint:
      enabled:
      - name: DynamicResourcesPacking
        weight: 20
    score:
      disabled:
      - name: NodeResourcesBalancedAllocation
      enabled:
      - name: TaintToleration
        weight: 7
- schedulerName: only-fit
  plugins:
    score:
      disabled:
      - name: "*"
      enabled:
      - name: NodeResourcesFit
    filter:
      disabled:
      - name: PodTopologySpread
""")
    packing, only_fit = cfg.profiles  # type: ignore[attr-defined]
    assert cfg.percentage_of_nodes_to_score == 30  # type: ignore[attr-defined]
    assert (cfg.pod_initial_backoff_seconds, cfg.pod_max_backoff_seconds) == (  # type: ignore[attr-defined]
        1, 10)
    assert packing.percentage_of_nodes_to_score == 70
    assert packing.weights["DynamicResourcesPacking"] == 20
    assert packing.weights["TaintToleration"] == 7
    assert "NodeResourcesBalancedAllocation" not in packing.points["score"]
    assert packing.points["score"][0] == "TaintToleration"  # an override keeps its place
    assert only_fit.points["score"] == ["NodeResourcesFit"]
    assert "PodTopologySpread" not in only_fit.points["filter"]
    assert "PodTopologySpread" in only_fit.points["preFilter"]

    dra = DynamicResources(DRAState())
    built = build_profile(only_fit, dra)
    assert [p.name for p in built.score] == ["NodeResourcesFit"]
    assert [p.name for p in built.filter] == [
        "NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity",
        "NodeResourcesFit", "InterPodAffinity", "DynamicResources"]
    weighted = build_profile(packing, dra)
    assert {p.name: p.weight for p in weighted.score}["DynamicResourcesPacking"] == 20
    assert weighted.percentage_of_nodes_to_score == 70


def test_queueing_hints_of_every_enabled_plugin_are_registered() -> None:
    """As upstream's framework: a plugin enabled at any extension point registers its
    events (TaintToleration's Node hint requeues a pod it kept off a tainted Node), one
    disabled everywhere does not."""
    cfg = config("""profiles:
- schedulerName: default-scheduler
- schedulerName: scores-taints
  plugins:
    filter:
      disabled:
      - name: TaintToleration
- schedulerName: no-taints
  plugins:
    multiPoint:
      disabled:
      - name: TaintToleration
""")
    dra = DynamicResources(DRAState())
    registered = [sorted(p.name for p in build_profile(one, dra).enqueue)
                  for one in cfg.profiles]  # type: ignore[attr-defined]
    assert registered == [["DynamicResources", "TaintToleration"],
                          ["DynamicResources", "TaintToleration"], ["DynamicResources"]]


def test_plugin_args_are_refused_rather_than_ignored() -> None:
    assert error("profiles:\n- pluginConfig:\n  - name: InterPodAffinity\n    args:\n"
                 "      hardPodAffinityWeight: 5\n") == (
        'profiles[0].pluginConfig[0].args: Invalid value: "InterPodAffinity": '
        "kubedra applies no plugin args")

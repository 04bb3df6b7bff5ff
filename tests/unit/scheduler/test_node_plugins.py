"""Node filters and resource fit with upstream's reasons; FitError formatting."""

from __future__ import annotations

from kubedra.api import codec
from kubedra.api.core import Node, Pod
from kubedra.scheduler.cache import SchedulerCache
from kubedra.scheduler.framework import (
    NOTE_LENGTH_LIMIT,
    Code,
    CycleState,
    Diagnosis,
    event_message,
    fit_error_message,
)
from kubedra.scheduler.plugins.nodes import (
    NodeAffinity,
    NodeName,
    NodeResourcesFit,
    NodeUnschedulable,
    TaintToleration,
)


def node(name: str, **spec: object) -> Node:
    return codec.decode({
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "zone": "a"}},
        "spec": spec,
        "status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "3"}},
    }, Node)


def pod(name: str = "p", **spec: object) -> Pod:
    body: dict[str, object] = {"containers": [{"name": "c"}], **spec}
    return codec.decode({"metadata": {"name": name, "namespace": "default"}, "spec": body},
                        Pod)


def check(plugin: object, p: Pod, n: Node) -> tuple[str, str]:
    cache = SchedulerCache()
    cache.set_node(n)
    state = CycleState()
    if hasattr(plugin, "pre_filter"):
        plugin.pre_filter(state, p)
    status = plugin.filter(state, p, cache.nodes[n.metadata.name or ""])  # type: ignore[attr-defined]
    return status.code.value, status.message


def test_node_name() -> None:
    assert check(NodeName(), pod(nodeName="other"), node("n1")) == (
        "UnschedulableAndUnresolvable", "node(s) didn't match the requested node name")
    assert check(NodeName(), pod(nodeName="n1"), node("n1"))[0] == "Success"


def test_unschedulable_node_unless_tolerated() -> None:
    n = node("n1", unschedulable=True)
    assert check(NodeUnschedulable(), pod(), n)[1] == "node(s) were unschedulable"
    tolerating = pod(tolerations=[{"key": "node.kubernetes.io/unschedulable",
                                   "operator": "Exists", "effect": "NoSchedule"}])
    assert check(NodeUnschedulable(), tolerating, n)[0] == "Success"


def test_taints() -> None:
    n = node("n1", taints=[{"key": "gpu", "value": "true", "effect": "NoSchedule"},
                           {"key": "soft", "effect": "PreferNoSchedule"}])
    assert check(TaintToleration(), pod(), n) == (
        "UnschedulableAndUnresolvable", "node(s) had untolerated taint {gpu: true}")
    ok = pod(tolerations=[{"key": "gpu", "operator": "Equal", "value": "true"}])
    assert check(TaintToleration(), ok, n)[0] == "Success"
    wrong_value = pod(tolerations=[{"key": "gpu", "value": "false"}])
    assert check(TaintToleration(), wrong_value, n)[0] == "UnschedulableAndUnresolvable"


def test_taint_hint_requeues_once_the_taint_is_gone() -> None:
    """A pod kept off by the unreachable taint is requeued when its Node loses the taint
    (the node agent is back), not on every other Node update."""
    unreachable = [{"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule"}]
    tainted, healthy = node("n1", taints=unreachable), node("n1")
    hint = TaintToleration.hint_node
    assert hint(pod(), tainted, healthy)
    assert not hint(pod(), tainted, tainted)
    assert not hint(pod(), healthy, healthy)  # it was not the taint that kept the pod off
    assert not hint(pod(), healthy, tainted)
    assert hint(pod(), None, healthy)  # a new Node
    tolerant = pod(tolerations=[{"key": "node.kubernetes.io/unreachable",
                                 "operator": "Exists"}])
    assert not hint(tolerant, tainted, healthy)


def test_node_selector_and_required_affinity() -> None:
    n = node("n1")
    reason = "node(s) didn't match Pod's node affinity/selector"
    assert check(NodeAffinity(), pod(nodeSelector={"zone": "b"}), n)[1] == reason
    assert check(NodeAffinity(), pod(nodeSelector={"zone": "a"}), n)[0] == "Success"
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                                "values": ["n2"]}]}]}}}
    assert check(NodeAffinity(), pod(affinity=affinity), n)[1] == reason
    assert check(NodeAffinity(), pod(affinity=affinity), node("n2"))[0] == "Success"


def test_resource_fit_counts_assumed_pods() -> None:
    cache = SchedulerCache()
    n = node("n1")
    cache.set_node(n)
    big = pod("big", containers=[{"name": "c", "resources": {"requests": {"cpu": "1500m"}}}])
    cache.assume(big, "n1")
    fit = NodeResourcesFit()
    state = CycleState()
    small = pod("small", containers=[{"name": "c", "resources": {"requests": {
        "cpu": "600m", "memory": "5Gi"}}}])
    fit.pre_filter(state, small)
    status = fit.filter(state, small, cache.nodes["n1"])
    assert status.code is Code.UNSCHEDULABLE
    assert status.message.split("\n") == ["Insufficient cpu", "Insufficient memory"]
    cache.forget(big)
    assert cache.nodes["n1"].requested.milli_cpu == 0


def test_fit_error_message_counts_and_sorts_reasons() -> None:
    diagnosis = Diagnosis()
    fit = NodeResourcesFit()
    cache = SchedulerCache()
    for i in range(3):
        cache.set_node(node(f"n{i}"))
    for name in ("a", "b", "c"):
        cache.assume(pod(name), "n0")
    state = CycleState()
    diagnosis.node_statuses["n0"] = fit.filter(state, pod(), cache.nodes["n0"])
    diagnosis.node_statuses["n1"] = NodeName().filter(state, pod(nodeName="x"), cache.nodes["n1"])
    diagnosis.node_statuses["n2"] = NodeName().filter(state, pod(nodeName="x"), cache.nodes["n2"])
    assert fit_error_message(3, diagnosis) == (
        "0/3 nodes are available: 1 Too many pods, "
        "2 node(s) didn't match the requested node name.")


def test_event_message_appends_the_detail_and_keeps_the_event_short() -> None:
    upstream = "0/1 nodes are available: 1 Too many pods."
    assert event_message(upstream, Diagnosis()) == upstream
    assert event_message(upstream, Diagnosis(detail="On 1 node(s): x.")) == \
        f"{upstream} On 1 node(s): x."
    long = event_message(upstream, Diagnosis(detail="y" * 2000))
    assert len(long) == NOTE_LENGTH_LIMIT and long.startswith(upstream)
    assert long.endswith("y ...")  # as upstream's truncateMessage

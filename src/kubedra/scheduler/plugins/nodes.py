"""Node filters of the default profile, with upstream's reasons: NodeName,
NodeUnschedulable, TaintToleration, NodeAffinity (nodeSelector + required affinity) and
NodeResourcesFit (cpu, memory, pods)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubedra.api.core import Node, Pod, Taint
from kubedra.api.nodeaffinity import MISMATCH, pod_matches_node, required_node_selector
from kubedra.api.taints import UNSCHEDULABLE, tolerates
from kubedra.scheduler.framework import (
    SCHEDULING_TAINT_EFFECTS,
    SKIP,
    SUCCESS,
    CycleState,
    EnqueueExtensions,
    FilterPlugin,
    NodeInfo,
    PreFilterPlugin,
    Status,
    unresolvable,
    unschedulable,
)
from kubedra.scheduler.queue import ClusterEvent, Hint


class NodeName:
    name = "NodeName"

    def pre_filter(self, state: CycleState, pod: Pod) -> Status:
        return SUCCESS if pod.spec.node_name else SKIP

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
        wanted = pod.spec.node_name
        if wanted and wanted != node.name:
            return unresolvable("node(s) didn't match the requested node name")
        return SUCCESS


class NodeUnschedulable:
    name = "NodeUnschedulable"

    def pre_filter(self, state: CycleState, pod: Pod) -> Status:
        """SKIP while no node is unschedulable (kubedra only: upstream has no PreFilter)."""
        return SKIP if state.nodes is not None and not state.nodes.unschedulable else SUCCESS

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
        if not node.node.spec.unschedulable:
            return SUCCESS
        taint = Taint(key=UNSCHEDULABLE, effect="NoSchedule")
        if any(tolerates(t, taint) for t in pod.spec.tolerations or ()):
            return SUCCESS
        return unresolvable("node(s) were unschedulable")


class TaintToleration:
    name = "TaintToleration"

    def pre_filter(self, state: CycleState, pod: Pod) -> Status:
        """SKIP while no node has a taint that keeps pods off (kubedra only, as above)."""
        return SKIP if state.nodes is not None and not state.nodes.tainted else SUCCESS

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
        taint = untolerated(pod, node.node)
        if taint is not None:
            return unresolvable(
                f"node(s) had untolerated taint {{{taint.key}: {taint.value or ''}}}")
        return SUCCESS

    def events_to_register(self) -> list[tuple[ClusterEvent, Hint | None]]:
        return [(ClusterEvent("Node", "Add"), self.hint_node),
                (ClusterEvent("Node", "Update"), self.hint_node)]

    @staticmethod
    def hint_node(pod: Pod, old: object, new: object) -> bool:
        """isSchedulableAfterNodeChange: the Node's taints kept the pod off and no longer do
        (a Node whose agent is back loses its unreachable taint)."""
        if not isinstance(new, Node):
            return False
        was_untolerated = not isinstance(old, Node) or untolerated(pod, old) is not None
        return was_untolerated and untolerated(pod, new) is None


def untolerated(pod: Pod, node: Node) -> Taint | None:
    """The first taint of ``node`` that keeps ``pod`` off (``FindMatchingUntoleratedTaint``
    with the NoSchedule and NoExecute effects)."""
    tolerations = pod.spec.tolerations or ()
    for taint in node.spec.taints or ():
        if taint.effect in SCHEDULING_TAINT_EFFECTS and not any(
                tolerates(t, taint) for t in tolerations):
            return taint
    return None


class NodeAffinity:
    name = "NodeAffinity"

    def pre_filter(self, state: CycleState, pod: Pod) -> Status:
        """Skip (as upstream) when the pod has neither a nodeSelector nor required affinity."""
        wanted = pod.spec.node_selector or required_node_selector(pod) is not None
        return SUCCESS if wanted else SKIP

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
        if pod_matches_node(pod, node.labels, node.name):
            return SUCCESS
        return unresolvable(MISMATCH)


class NodeResourcesFit:
    name = "NodeResourcesFit"

    def pre_filter(self, state: CycleState, pod: Pod) -> Status:
        """SKIP when the pod asks for neither cpu nor memory while no node is full of pods:
        then no node can fail the fit."""
        want = state[self.name] = state.requests(pod)
        nodes = state.nodes
        if nodes is not None and not (nodes.pods_full or want.milli_cpu or want.memory):
            return SKIP
        return SUCCESS

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
        want = state.get(self.name) or state.requests(pod)
        have, used = node.allocatable, node.requested
        reasons = []
        if used.pods + 1 > have.pods:
            reasons.append("Too many pods")
        if want.milli_cpu and used.milli_cpu + want.milli_cpu > have.milli_cpu:
            reasons.append("Insufficient cpu")
        if want.memory and used.memory + want.memory > have.memory:
            reasons.append("Insufficient memory")
        if reasons:
            return unschedulable("\n".join(reasons))
        return SUCCESS


if TYPE_CHECKING:  # the stages each plugin implements (upstream: var _ framework.X = ...)
    _filters: tuple[FilterPlugin, ...] = (NodeName(), NodeUnschedulable(), TaintToleration(),
                                          NodeAffinity(), NodeResourcesFit())
    _enqueue: EnqueueExtensions = TaintToleration()
    _pre_filters: tuple[PreFilterPlugin, ...] = (NodeName(), NodeUnschedulable(),
                                                 TaintToleration(), NodeAffinity(),
                                                 NodeResourcesFit())

"""The scheduler's view of nodes and of the pods placed on them, including pods it has
assumed (chosen a node for) but whose binding has not been observed yet."""

from __future__ import annotations

from kubedra.api.core import Node, Pod
from kubedra.scheduler.framework import (
    KeptScores,
    NodeInfo,
    NodeTally,
    Resources,
    has_pod_affinity,
    node_allocatable,
    pod_requests,
)
from kubedra.scheduler.queue import pod_key


class SchedulerCache:
    def __init__(self) -> None:
        self.nodes: dict[str, NodeInfo] = {}
        self._pod_node: dict[str, str] = {}
        self._pod_requests: dict[str, tuple[Resources, Resources]] = {}
        """Per pod: its requests, and them with the non-zero defaults."""
        self._pods: dict[str, Pod] = {}
        self.assumed: set[str] = set()
        self._order: list[str] = []
        self._infos: list[NodeInfo] = []
        self._order_dirty = False
        self.tally = NodeTally()
        """Kept as nodes and their pods change (every change below goes through it)."""
        self.kept = KeptScores()
        """The resource scores of the nodes as they are (a change below forgets a node's)."""

    # --- nodes -----------------------------------------------------------------------------

    def set_node(self, node: Node) -> None:
        name = node.metadata.name or ""
        info = self.nodes.get(name)
        if info is None:
            info = self.nodes[name] = NodeInfo(node, name, dict(node.metadata.labels or {}),
                                               node_allocatable(node))
            self._order_dirty = True
            for key, placed_on in self._pod_node.items():
                if placed_on == name:
                    _add(info, key, self._pods[key], self._pod_requests[key])
        else:
            self.tally.count(info, -1)
            info.node = node
            info.labels = dict(node.metadata.labels or {})
            info.allocatable = node_allocatable(node)
            self.kept.forget(info)
        self.tally.count(info, 1)

    def remove_node(self, name: str) -> None:
        info = self.nodes.pop(name, None)
        if info is not None:
            self.tally.count(info, -1)
            self.kept.forget(info)
            self._order_dirty = True

    def node_names(self) -> list[str]:
        """Nodes in a stable (name) order, so placement is deterministic."""
        if self._order_dirty:
            self._order = sorted(self.nodes)
            self._infos = [self.nodes[n] for n in self._order]
            self._order_dirty = False
        return self._order

    def node_infos(self) -> list[NodeInfo]:
        """The NodeInfos in :meth:`node_names` order."""
        self.node_names()
        return self._infos

    # --- pods ------------------------------------------------------------------------------

    def _place(self, pod: Pod, node_name: str,
               requests: tuple[Resources, Resources] | None = None) -> None:
        key = pod_key(pod)
        placed = self._pods.get(key)
        if (placed is not None and self._pod_node.get(key) == node_name
                and _counts_alike(placed, pod)):
            self._replace(key, pod, node_name)
            return
        self._unplace(key)
        if requests is None:
            requests = (pod_requests(pod), pod_requests(pod, non_zero=True))
        self._pod_node[key] = node_name
        self._pod_requests[key] = requests
        self._pods[key] = pod
        info = self.nodes.get(node_name)
        if info is not None:
            self.tally.count(info, -1)
            _add(info, key, pod, requests)
            self.kept.forget(info)
            self.tally.count(info, 1)

    def _unplace(self, key: str) -> None:
        node_name = self._pod_node.pop(key, None)
        requests = self._pod_requests.pop(key, None)
        self._pods.pop(key, None)
        info = self.nodes.get(node_name) if node_name else None
        if info is not None and key in info.pods:
            self.tally.count(info, -1)
            del info.pods[key]
            info.affinity_pods.pop(key, None)
            if requests:
                info.requested.add(requests[0], -1)
                info.non_zero_requested.add(requests[1], -1)
                self.kept.forget(info)
            self.tally.count(info, 1)

    def _replace(self, key: str, pod: Pod, node_name: str) -> None:
        """A placed pod seen again where it is, counting alike (an assumed pod's binding, a
        change of its status or labels): the new object replaces the old, and its node's
        requests, tally and kept scores stay as they are."""
        self._pods[key] = pod
        info = self.nodes.get(node_name)
        if info is not None and key in info.pods:
            info.pods[key] = pod
            if key in info.affinity_pods:
                info.affinity_pods[key] = pod

    def assume(self, pod: Pod, node_name: str,
               requests: tuple[Resources, Resources] | None = None) -> None:
        """``requests``: the pod's, without and with the non-zero defaults, if the caller
        has them (the scheduling cycle summed them already)."""
        self._place(pod, node_name, requests)
        self.assumed.add(pod_key(pod))

    def forget(self, pod: Pod) -> None:
        key = pod_key(pod)
        if key in self.assumed:
            self.assumed.discard(key)
            self._unplace(key)

    def set_pod(self, pod: Pod) -> None:
        """An observed pod: bound pods occupy their node until they finish or go away."""
        key = pod_key(pod)
        node = pod.spec.node_name
        if not node or pod.status.phase in ("Succeeded", "Failed"):
            if key not in self.assumed:
                self._unplace(key)
            return
        self.assumed.discard(key)
        self._place(pod, node)

    def remove_pod(self, pod: Pod) -> None:
        key = pod_key(pod)
        self.assumed.discard(key)
        self._unplace(key)

    def node_of(self, pod: Pod) -> str | None:
        return self._pod_node.get(pod_key(pod))


def _counts_alike(a: Pod, b: Pod) -> bool:
    """Whether two versions of a pod add the same to their node: the same requests (from
    the containers and the overhead) and the same pod affinity terms."""
    sa, sb = a.spec, b.spec
    return (sa.containers == sb.containers and sa.init_containers == sb.init_containers
            and sa.overhead == sb.overhead and sa.affinity == sb.affinity)


def _add(info: NodeInfo, key: str, pod: Pod, requests: tuple[Resources, Resources]) -> None:
    info.pods[key] = pod
    if has_pod_affinity(pod):
        info.affinity_pods[key] = pod
    info.requested.add(requests[0])
    info.non_zero_requested.add(requests[1])

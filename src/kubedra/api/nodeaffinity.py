"""core/v1 node affinity (upstream ``component-helpers/scheduling/corev1/nodeaffinity``):
NodeSelector matching against a node's labels and name (pod required affinity, class
``suitableNodes``, allocation ``availableOnNodes``): terms are ORed, requirements inside a term
ANDed, and a term without requirements matches nothing, as upstream; and whether a pod's
``nodeSelector`` plus required node affinity admit a node.
"""

from __future__ import annotations

from collections.abc import Mapping

from kubedra.api.core import NodeSelector, NodeSelectorRequirement, Pod

MISMATCH = "node(s) didn't match Pod's node affinity/selector"
"""The NodeAffinity Filter reason."""


def required_node_selector(pod: Pod) -> NodeSelector | None:
    affinity = pod.spec.affinity
    if affinity is None or affinity.node_affinity is None:
        return None
    return affinity.node_affinity.required_during_scheduling_ignored_during_execution


def pod_matches_node(pod: Pod, labels: Mapping[str, str], node_name: str) -> bool:
    """``nodeSelector`` (every label equal) and required node affinity both admit the node."""
    selector = pod.spec.node_selector
    if selector and any(labels.get(k) != v for k, v in selector.items()):
        return False
    required = required_node_selector(pod)
    return required is None or matches(required, labels, node_name)


def matches(selector: NodeSelector, labels: Mapping[str, str], node_name: str) -> bool:
    for term in selector.node_selector_terms:
        exprs = term.match_expressions or []
        fields = term.match_fields or []
        if not exprs and not fields:
            continue
        if all(_requirement(r, labels) for r in exprs) and all(
            _requirement(r, {"metadata.name": node_name}) for r in fields
        ):
            return True
    return False


def _requirement(req: NodeSelectorRequirement, labels: Mapping[str, str]) -> bool:
    present = req.key in labels
    value = labels.get(req.key, "")
    values = req.values or []
    op = req.operator
    if op == "In":
        return present and value in values
    if op == "NotIn":
        return not present or value not in values
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt") and present and len(values) == 1:
        try:
            have, want = int(value), int(values[0])
        except ValueError:
            return False
        return have > want if op == "Gt" else have < want
    return False

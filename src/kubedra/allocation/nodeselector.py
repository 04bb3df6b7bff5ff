"""core/v1 NodeSelector matching against a node's labels and name (class ``suitableNodes``,
allocation ``availableOnNodes``): terms are ORed, requirements inside a term ANDed, and a term
without requirements matches nothing, as upstream."""

from __future__ import annotations

from collections.abc import Mapping

from kubedra.api.core import NodeSelector, NodeSelectorRequirement


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

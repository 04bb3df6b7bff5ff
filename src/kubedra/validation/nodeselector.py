"""core/v1 NodeSelector validation (``ValidateNodeSelector``, k8s pkg/apis/core/validation v1.30).

Used by ResourceClass.suitableNodes, AllocationResult.availableOnNodes and pod node affinity.
"""

from __future__ import annotations

from kubedra.api.core import NodeSelector, NodeSelectorRequirement, NodeSelectorTerm
from kubedra.validation.field import ErrorList, Path, forbidden, invalid, required
from kubedra.validation.meta import validate_label_name
from kubedra.validation.names import is_valid_label_value, name_is_dns_subdomain

# Field-selector keys a node selector's matchFields may use, with their value checks.
_NODE_FIELD_VALIDATORS = {"metadata.name": name_is_dns_subdomain}
_BAD_OPERATOR = "not a valid selector operator"


def validate_node_selector_requirement(req: NodeSelectorRequirement, path: Path) -> ErrorList:
    """A ``matchExpressions`` entry: operator/value-count rules, label key and values."""
    errs: ErrorList = []
    values = req.values or []
    if req.operator in ("In", "NotIn"):
        if not values:
            errs.append(required(path.child("values"),
                                 "must be specified when `operator` is 'In' or 'NotIn'"))
    elif req.operator in ("Exists", "DoesNotExist"):
        if values:
            errs.append(forbidden(
                path.child("values"),
                "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            ))
    elif req.operator in ("Gt", "Lt"):
        if len(values) != 1:
            errs.append(required(path.child("values"),
                                 "must be specified single value when `operator` is 'Lt' or 'Gt'"))
    else:
        errs.append(invalid(path.child("operator"), req.operator, _BAD_OPERATOR))
    errs += validate_label_name(req.key, path.child("key"))
    for i, value in enumerate(values):
        errs += [invalid(path.child("values").index(i), value, msg)
                 for msg in is_valid_label_value(value)]
    return errs


def validate_node_field_selector_requirement(
    req: NodeSelectorRequirement, path: Path
) -> ErrorList:
    """A ``matchFields`` entry: only ``metadata.name`` with In/NotIn and exactly one value."""
    errs: ErrorList = []
    values = req.values or []
    if req.operator in ("In", "NotIn"):
        if len(values) != 1:
            errs.append(required(
                path.child("values"),
                "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
            ))
    else:
        errs.append(invalid(path.child("operator"), req.operator, _BAD_OPERATOR))
    check = _NODE_FIELD_VALIDATORS.get(req.key)
    if check is None:
        errs.append(invalid(path.child("key"), req.key, "not a valid field selector key"))
    else:
        for i, value in enumerate(values):
            errs += [invalid(path.child("values").index(i), value, msg)
                     for msg in check(value, False)]
    return errs


def validate_node_selector_term(term: NodeSelectorTerm, path: Path) -> ErrorList:
    errs: ErrorList = []
    for j, req in enumerate(term.match_expressions or ()):
        errs += validate_node_selector_requirement(req, path.child("matchExpressions").index(j))
    for j, req in enumerate(term.match_fields or ()):
        errs += validate_node_field_selector_requirement(req, path.child("matchFields").index(j))
    return errs


def validate_node_selector(selector: NodeSelector, path: Path) -> ErrorList:
    terms_path = path.child("nodeSelectorTerms")
    if not selector.node_selector_terms:
        return [required(terms_path, "must have at least one node selector term")]
    errs: ErrorList = []
    for i, term in enumerate(selector.node_selector_terms):
        errs += validate_node_selector_term(term, terms_path.index(i))
    return errs

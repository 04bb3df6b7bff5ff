"""``metav1.LabelSelector``: validation (``ValidateLabelSelector``) and matching.

Matching follows ``LabelSelectorAsSelector``: a nil selector matches nothing, an empty one
matches everything, and a selector that does not convert (bad key, value or operator) is
reported as ``None`` by :func:`selector_matches` so callers can skip, as upstream does.
"""

from __future__ import annotations

from collections.abc import Mapping

from kubedra.api.meta import LabelSelector, LabelSelectorRequirement
from kubedra.validation.field import ErrorList, Path, forbidden, invalid, required
from kubedra.validation.meta import validate_label_name, validate_labels
from kubedra.validation.names import is_qualified_name, is_valid_label_value

OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def _validate_requirement(
    req: LabelSelectorRequirement, path: Path, allow_invalid_values: bool
) -> ErrorList:
    errs: ErrorList = []
    if req.operator in ("In", "NotIn"):
        if not req.values:
            errs.append(
                required(
                    path.child("values"), "must be specified when `operator` is 'In' or 'NotIn'"
                )
            )
    elif req.operator in ("Exists", "DoesNotExist"):
        if req.values:
            errs.append(
                forbidden(
                    path.child("values"),
                    "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                )
            )
    else:
        errs.append(invalid(path.child("operator"), req.operator, "not a valid selector operator"))
    errs += validate_label_name(req.key, path.child("key"))
    if not allow_invalid_values:
        for i, value in enumerate(req.values or ()):
            p = path.child("values").index(i)
            errs.extend(invalid(p, value, msg) for msg in is_valid_label_value(value))
    return errs


def validate_label_selector(
    selector: LabelSelector | None, path: Path, allow_invalid_values: bool = False
) -> ErrorList:
    if selector is None:
        return []
    errs = validate_labels(selector.match_labels, path.child("matchLabels"))
    for i, req in enumerate(selector.match_expressions or ()):
        errs += _validate_requirement(
            req, path.child("matchExpressions").index(i), allow_invalid_values
        )
    return errs


def has_invalid_label_value(selector: LabelSelector | None) -> bool:
    """``LabelSelectorHasInvalidLabelValue``: stored objects with bad values keep validating."""
    if selector is None:
        return False
    return any(
        is_valid_label_value(v) for r in selector.match_expressions or () for v in r.values or ()
    )


def _convertible(selector: LabelSelector) -> bool:
    for key, value in (selector.match_labels or {}).items():
        if is_qualified_name(key) or is_valid_label_value(value):
            return False
    for req in selector.match_expressions or ():
        values = req.values or []
        if req.operator not in OPERATORS or is_qualified_name(req.key):
            return False
        if (req.operator in ("In", "NotIn")) != bool(values):
            return False
        if any(is_valid_label_value(v) for v in values):
            return False
    return True


def selector_matches(
    selector: LabelSelector | None, labels: Mapping[str, str] | None
) -> bool | None:
    """Whether ``labels`` match; ``None`` when the selector cannot be converted."""
    if selector is None:
        return False
    if not selector.match_labels and not selector.match_expressions:
        return True
    if not _convertible(selector):
        return None
    have = labels or {}
    for key, value in (selector.match_labels or {}).items():
        if have.get(key) != value:
            return False
    for req in selector.match_expressions or ():
        present = req.key in have
        if req.operator == "In" and not (present and have[req.key] in (req.values or ())):
            return False
        if req.operator == "NotIn" and present and have[req.key] in (req.values or ()):
            return False
        if req.operator == "Exists" and not present:
            return False
        if req.operator == "DoesNotExist" and present:
            return False
    return True

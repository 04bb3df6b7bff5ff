"""metav1.LabelSelector matching and validation (used by Job validation and controllers)."""

from __future__ import annotations

import pytest

from kubedra.api.meta import LabelSelector, LabelSelectorRequirement
from kubedra.validation.field import ROOT
from kubedra.validation.labelselector import (
    has_invalid_label_value,
    selector_matches,
    validate_label_selector,
)


def req(key: str, op: str, *values: str) -> LabelSelectorRequirement:
    return LabelSelectorRequirement(key=key, operator=op, values=list(values) or None)


LABELS = {"app": "web", "tier": "front"}


@pytest.mark.parametrize(
    ("selector", "matches"),
    [
        (None, False),  # nil selects nothing
        (LabelSelector(), True),  # empty selects everything
        (LabelSelector(match_labels={"app": "web"}), True),
        (LabelSelector(match_labels={"app": "db"}), False),
        (LabelSelector(match_expressions=[req("app", "In", "web", "db")]), True),
        (LabelSelector(match_expressions=[req("app", "NotIn", "web")]), False),
        (LabelSelector(match_expressions=[req("zone", "NotIn", "a")]), True),
        (LabelSelector(match_expressions=[req("tier", "Exists")]), True),
        (LabelSelector(match_expressions=[req("tier", "DoesNotExist")]), False),
        # Not convertible: reported as None so callers skip the check, as upstream does.
        (LabelSelector(match_expressions=[req("app", "Gt", "1")]), None),
        (LabelSelector(match_expressions=[req("app", "In")]), None),
        (LabelSelector(match_expressions=[req("app", "Exists", "x")]), None),
        (LabelSelector(match_labels={"bad key!": "x"}), None),
        (LabelSelector(match_labels={"app": "bad value!"}), None),
    ],
)
def test_matches(selector: LabelSelector | None, matches: bool | None) -> None:
    assert selector_matches(selector, LABELS) is matches


def test_validation_messages() -> None:
    selector = LabelSelector(
        match_labels={"ok": "fine"},
        match_expressions=[
            req("a", "Exists", "x"),
            req("b", "Sometimes"),
            req("c", "In", "bad value!"),
        ],
    )
    got = [str(e) for e in validate_label_selector(selector, ROOT.child("selector"))]
    assert got[:2] == [
        "selector.matchExpressions[0].values: Forbidden: may not be specified when `operator` "
        "is 'Exists' or 'DoesNotExist'",
        'selector.matchExpressions[1].operator: Invalid value: "Sometimes": not a valid selector '
        "operator",
    ]
    assert got[2].startswith('selector.matchExpressions[2].values[0]: Invalid value: "bad value!"')
    assert len(got) == 3
    relaxed = validate_label_selector(selector, ROOT.child("selector"), allow_invalid_values=True)
    assert len(relaxed) == 2
    assert validate_label_selector(None, ROOT) == []


def test_has_invalid_label_value() -> None:
    assert has_invalid_label_value(LabelSelector(match_expressions=[req("a", "In", "x y")]))
    assert not has_invalid_label_value(LabelSelector(match_expressions=[req("a", "In", "x")]))
    assert not has_invalid_label_value(None)

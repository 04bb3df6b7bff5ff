"""Helpers the score plugins share (upstream ``plugins/helper``): the default score
normalisation and label selectors given as raw JSON (pod affinity and topology spread
terms, which the API keeps untyped)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

MAX_NODE_SCORE = 100

LabelMatcher = Callable[[Mapping[str, str]], bool]


def default_normalize_score(scores: list[int], reverse: bool,
                            max_priority: int = MAX_NODE_SCORE) -> None:
    """Scale to 0..``max_priority`` by the highest score (integer division); ``reverse``
    turns it around (a high raw score is bad). All zero: all 0, or all the maximum if
    reversed."""
    top = max(scores, default=0)
    if top <= 0:
        if reverse:
            scores[:] = [max_priority] * len(scores)
        return
    for i, score in enumerate(scores):
        scaled = max_priority * score // top
        scores[i] = max_priority - scaled if reverse else scaled


def _nothing(labels: Mapping[str, str]) -> bool:
    return False


def _everything(labels: Mapping[str, str]) -> bool:
    return True


_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def label_matcher(selector: Mapping[str, Any] | None) -> LabelMatcher:
    """A raw ``LabelSelector``: None selects nothing, ``{}`` everything (upstream
    ``metav1.LabelSelectorAsSelector``); requirements are ANDed."""
    if selector is None:
        return _nothing
    reqs: list[tuple[str, str, frozenset[str]]] = [
        (key, "In", frozenset((value,)))
        for key, value in (selector.get("matchLabels") or {}).items()]
    for req in selector.get("matchExpressions") or ():
        op = req.get("operator")
        if op not in _OPERATORS:  # validation rejects it; upstream's conversion fails
            return _nothing
        reqs.append((req.get("key", ""), op, frozenset(req.get("values") or ())))
    if not reqs:
        return _everything

    def matches(labels: Mapping[str, str]) -> bool:
        for key, op, values in reqs:
            value = labels.get(key)
            if op == "In":
                ok = value in values
            elif op == "NotIn":
                ok = value not in values
            else:
                ok = (value is not None) == (op == "Exists")
            if not ok:
                return False
        return True

    return matches

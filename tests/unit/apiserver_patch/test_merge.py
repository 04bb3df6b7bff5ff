"""RFC 7386 JSON Merge Patch: the RFC's appendix A table, plus Kubernetes-shaped cases."""

from __future__ import annotations

from typing import Any

import pytest

from kubedra.apiserver.patch import PatchError, apply_merge_patch

RFC_TABLE: list[tuple[Any, Any, Any]] = [
    ({"a": "b"}, {"a": "c"}, {"a": "c"}),
    ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
    ({"a": "b"}, {"a": None}, {}),
    ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
    ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
    ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
    ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
    ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
    ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
    ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
    ("not an object", {"a": "b"}, {"a": "b"}),
]


@pytest.mark.parametrize(("doc", "patch", "want"), RFC_TABLE)
def test_rfc_table(doc: Any, patch: Any, want: Any) -> None:
    assert apply_merge_patch(doc, patch) == want


def test_kubectl_label_body() -> None:
    live = {"metadata": {"name": "n", "labels": {"x": "y"}}, "driverName": "d"}
    out = apply_merge_patch(live, {"metadata": {"labels": {"a": "b"}}})
    assert out == {"metadata": {"name": "n", "labels": {"x": "y", "a": "b"}}, "driverName": "d"}
    assert live["metadata"]["labels"] == {"x": "y"}


def test_lists_are_replaced_whole() -> None:
    live = {"spec": {"containers": [{"name": "a"}, {"name": "b"}]}}
    out = apply_merge_patch(live, {"spec": {"containers": [{"name": "c"}]}})
    assert out["spec"]["containers"] == [{"name": "c"}]


@pytest.mark.parametrize("patch", [[1], "x", 3, None])
def test_non_object_patch_is_400(patch: Any) -> None:
    with pytest.raises(PatchError) as info:
        apply_merge_patch({}, patch)
    assert info.value.code == 400

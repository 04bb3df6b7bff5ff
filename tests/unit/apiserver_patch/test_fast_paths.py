"""The shortcuts the write path takes (equal-subtree skipping in diffs, memoized FieldsV1,
reused stored trees, list-item keys encoded by msgspec) answer exactly as the plain
computation does."""

from __future__ import annotations

import copy
import importlib.util
import json
import string
from pathlib import Path
from types import ModuleType
from typing import Any
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from kubedra.apiserver.patch import fieldset, update_managed_fields
from kubedra.apiserver.patch.fieldset import (
    created,
    diff,
    field_set,
    from_fields_v1,
    outside,
    strip,
    to_fields_v1,
)
from kubedra.apiserver.patch.schema import UNTYPED, schema_of
from kubedra.apiserver.patch.values import go_json, json_equal, same_json

NOW = "2026-11-29T12:00:00Z"


def _from_source(module: ModuleType) -> ModuleType:
    """A fresh copy of ``module`` run from its source: where setup.py compiled it, its
    functions call each other directly, past any patch of the module's names."""
    path = Path(str(module.__file__))
    source = path.with_name(path.name.split(".", 1)[0] + ".py")
    spec = importlib.util.spec_from_file_location(f"{module.__name__}_source", source)
    assert spec is not None and spec.loader is not None
    copy_ = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(copy_)
    return copy_


_fieldset = _from_source(fieldset)  # what the patches below see into

_scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from([1.0, 0.5]),
                     st.sampled_from(["a", "b", ""]))
_json = st.recursive(_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from("xyz"), inner, max_size=3)),
    max_leaves=12)


@given(_json, _json)
@settings(max_examples=300, deadline=None)
def test_same_json_is_sound(a: Any, b: Any) -> None:
    if same_json(a, b):
        assert json_equal(a, b)
    assert same_json(a, copy.deepcopy(a)) or not json_equal(a, a)


def test_same_json_tells_numbers_from_booleans() -> None:
    assert not same_json({"x": 1}, {"x": True})
    assert not same_json([1], [1.0])  # json_equal decides those
    assert same_json({"x": [1, "a"]}, {"x": [1, "a"]})


@given(st.dictionaries(st.sampled_from("xyz"), _json, max_size=3),
       st.dictionaries(st.sampled_from("xyz"), _json, max_size=3))
@settings(max_examples=300, deadline=None)
def test_diff_of_equal_members_is_empty(a: dict[str, Any], b: dict[str, Any]) -> None:
    old = {"spec": a, "same": copy.deepcopy(b)}
    new = {"spec": b, "same": copy.deepcopy(b)}
    fast = _fieldset.diff(old, new, UNTYPED)
    assert fast == diff(old, new, UNTYPED)
    with mock.patch.object(_fieldset, "same_json", lambda x, y: False):
        plain = _fieldset.diff(old, new, UNTYPED)  # every member compared the long way
    assert fast == plain
    assert not any(p[0] == "f:same" for part in fast for p in part)


@given(st.dictionaries(st.sampled_from("xyz"), _json, max_size=4))
@settings(max_examples=200, deadline=None)
def test_fields_v1_codec_matches_plain_functions(obj: dict[str, Any]) -> None:
    for module in (fieldset, _fieldset):
        codec = module.FieldsV1Codec(capacity=2)
        paths = field_set({"spec": obj}, UNTYPED)
        tree = to_fields_v1(paths)
        for _ in range(2):  # a miss, then a hit
            assert codec.encode(paths) == tree
            assert codec.decode(tree) == from_fields_v1(tree) == paths
    codec = _fieldset.FieldsV1Codec(capacity=2)
    given = codec.encode(paths)
    assert codec.encode(paths) is given  # one shared tree, as stored trees are shared
    with mock.patch.object(_fieldset, "_encode", side_effect=AssertionError):
        assert codec.decode(given) == paths  # a tree it gave: found by identity
    fresh = _fieldset.FieldsV1Codec()
    stored = json.loads(json.dumps(fresh.encode(paths)))  # as the next write reads it back
    with mock.patch.object(_fieldset, "from_fields_v1", side_effect=AssertionError):
        assert fresh.decode(stored) == paths  # what it encoded, it decodes without a walk


def test_fields_v1_codec_forgets_its_oldest_entry_first() -> None:
    codec = _fieldset.FieldsV1Codec(capacity=2)
    sets = [{("f:spec", f"f:{name}")} for name in "abc"]
    trees = [json.loads(json.dumps(codec.encode(paths))) for paths in sets]
    with mock.patch.object(_fieldset, "from_fields_v1", side_effect=AssertionError):
        assert codec.decode(trees[1]) == sets[1]  # the two newest are still known
        assert codec.decode(trees[2]) == sets[2]
    assert codec.decode(trees[0]) == sets[0]  # the oldest went: decoded by a walk


_elements = st.sampled_from(["f:a", "f:ab", "f:b", "k:{\"x\":1}", "v:2", "i:0"])


def _sorted_everywhere(tree: dict[str, Any]) -> bool:
    keys = list(tree)
    return keys == sorted(keys) and all(_sorted_everywhere(v) for v in tree.values())


@given(st.sets(st.lists(_elements, min_size=1, max_size=4).map(tuple), max_size=12))
@settings(max_examples=300, deadline=None)
def test_fields_v1_tree_holds_its_set_sorted(paths: set[tuple[str, ...]]) -> None:
    tree = to_fields_v1(paths)
    assert from_fields_v1(tree) == paths
    assert _sorted_everywhere(tree)  # "." sorts before every element kind


def _lease(**labels: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "l", "namespace": "default"}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": meta,
            "spec": {"holderIdentity": "h"}}


def test_update_managed_fields_reuses_and_recomputes_trees() -> None:
    created = update_managed_fields(None, _lease(), "a", now=NOW)
    assert created["metadata"]["managedFields"] == [{
        "manager": "a", "operation": "Update", "apiVersion": "coordination.k8s.io/v1",
        "time": NOW, "fieldsType": "FieldsV1",
        "fieldsV1": {"f:spec": {"f:holderIdentity": {}}}}]
    labelled = update_managed_fields(created, _lease(x="1"), "b", now=NOW)
    entries = {e["manager"]: e["fieldsV1"] for e in labelled["metadata"]["managedFields"]}
    assert entries == {"a": {"f:spec": {"f:holderIdentity": {}}},
                       "b": {"f:metadata": {"f:labels": {".": {}, "f:x": {}}}}}
    # a value change of a field "b" owns: both sets unchanged, stored trees written back
    again = update_managed_fields(labelled, _lease(x="2"), "b", now=NOW)
    assert again["metadata"]["managedFields"] == labelled["metadata"]["managedFields"]
    # "a" takes the label over: "b" loses it
    taken = update_managed_fields(again, _lease(x="3"), "a", now=NOW)
    owners = {e["manager"]: e["fieldsV1"] for e in taken["metadata"]["managedFields"]}
    assert owners == {"a": {"f:metadata": {"f:labels": {"f:x": {}}},
                            "f:spec": {"f:holderIdentity": {}}},
                      "b": {"f:metadata": {"f:labels": {}}}}
    assert "managedFields" not in _lease()["metadata"]  # inputs are not modified


def test_update_managed_fields_leaves_its_input_alone() -> None:
    old = update_managed_fields(None, _lease(), "a", now=NOW)
    new = _lease(y="1")
    before = copy.deepcopy(new)
    out = update_managed_fields(old, new, "a", now=NOW)
    assert new == before and out is not new and out["metadata"] is not new["metadata"]
    assert schema_of("coordination.k8s.io/v1", "Lease") is not UNTYPED


# Pods in the shapes the schema types: list-maps (containers, claims), a set (finalizers),
# maps (labels, annotations, requests), structs, atomic lists, and now and then a key of any
# kind in any place.
_names = st.sampled_from(["a", "b", "c"])
_container = st.fixed_dictionaries({"name": _names}, optional={
    "image": st.sampled_from(["x", "y"]), "args": st.lists(_names, max_size=2),
    "resources": st.fixed_dictionaries({}, optional={
        "requests": st.dictionaries(st.sampled_from(["cpu", "memory"]), st.just("1")),
        "claims": st.lists(st.fixed_dictionaries({"name": _names}), max_size=2)})})
_pod = st.fixed_dictionaries({"apiVersion": st.just("v1"), "kind": st.just("Pod")}, optional={
    "metadata": st.fixed_dictionaries({"name": st.just("p")}, optional={
        "labels": st.dictionaries(_names, _names, max_size=2),
        "annotations": st.dictionaries(_names, _names, max_size=2),
        "finalizers": st.lists(_names, max_size=2, unique=True),
        "resourceVersion": st.just("7")}),
    "spec": st.fixed_dictionaries({}, optional={
        "containers": st.lists(_container, max_size=2, unique_by=lambda c: c["name"]),
        "nodeName": _names, "extra": _json}),
    "status": st.fixed_dictionaries({}, optional={
        "phase": _names, "conditions": st.lists(
            st.fixed_dictionaries({"type": _names, "status": _names}), max_size=2,
            unique_by=lambda c: c["type"])}),
    "other": _json})
_resets = st.sampled_from([set(), {("f:status",)}, {("f:spec",), ("f:other",)},
                           {("f:spec", "f:containers")},
                           {("f:status",), ("f:metadata", "f:labels")}])


@given(_pod, _resets)
@settings(max_examples=300, deadline=None)
def test_created_is_the_diff_from_nothing(obj: dict[str, Any], reset: set[Any]) -> None:
    schema = schema_of("v1", "Pod")
    added, modified, removed = diff({}, strip(obj), schema)
    assert not modified and not removed
    assert created(obj, schema, reset) == outside(added, reset)


def _owners(obj: dict[str, Any]) -> dict[str, Any]:
    return {e["manager"]: e["fieldsV1"] for e in obj["metadata"].get("managedFields", [])}


@given(st.lists(st.tuples(_pod, st.sampled_from(["a", "b", "c"]), _resets), min_size=1,
                max_size=5))
@settings(max_examples=200, deadline=None)
def test_update_managed_fields_is_the_plain_set_algebra(
        writes: list[tuple[dict[str, Any], str, set[Any]]]) -> None:
    """A chain of writes by several managers: every manager's set as the plain computation
    (copies of every set, added | modified, the removed paths taken from everyone) has it."""
    schema = schema_of("v1", "Pod")
    live: dict[str, Any] | None = None
    plain: dict[str, set[Any]] = {}
    for obj, manager, reset in writes:
        added, modified, removed = diff(strip(live or {}), strip(obj), schema)
        changed = outside(added | modified, reset)
        plain = {m: outside(f, removed) - changed for m, f in plain.items() if m != manager} | {
            manager: outside(plain.get(manager, set()), removed) | changed}
        live = update_managed_fields(live, copy.deepcopy(obj), manager, now=NOW,
                                     reset_fields=reset)
        live = json.loads(json.dumps(live))  # as the next write reads it from the store
        assert {m: from_fields_v1(t) for m, t in _owners(live).items()} == {
            m: f for m, f in plain.items() if f}


_TEXT = st.text(alphabet=st.sampled_from(list(string.printable + "é\u2028<>&\"\\\x01")),
                max_size=8)


@given(st.dictionaries(_TEXT, st.one_of(st.integers(), _TEXT, st.booleans(), st.none(),
                                        st.floats(allow_nan=False)), max_size=3))
def test_go_json_fast_path_writes_what_json_dumps_does(value: dict[str, Any]) -> None:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    general = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    assert go_json(value) == general

"""RFC 6902 JSON Patch, with the RFC's appendix A examples rewritten as cases."""

from __future__ import annotations

from typing import Any

import pytest

from kubedra.apiserver.errors import ApiError
from kubedra.apiserver.patch import PatchError, apply_json_patch

CASES: list[tuple[str, Any, list[dict[str, Any]], Any]] = [
    ("add member", {"foo": "bar"}, [{"op": "add", "path": "/baz", "value": "qux"}],
     {"foo": "bar", "baz": "qux"}),
    ("add array element", {"foo": ["bar", "baz"]},
     [{"op": "add", "path": "/foo/1", "value": "qux"}], {"foo": ["bar", "qux", "baz"]}),
    ("append with dash", {"a": [1]}, [{"op": "add", "path": "/a/-", "value": 2}], {"a": [1, 2]}),
    ("remove member", {"baz": "qux", "foo": "bar"}, [{"op": "remove", "path": "/baz"}],
     {"foo": "bar"}),
    ("remove element", {"foo": ["bar", "qux", "baz"]}, [{"op": "remove", "path": "/foo/1"}],
     {"foo": ["bar", "baz"]}),
    ("replace", {"baz": "qux", "foo": "bar"},
     [{"op": "replace", "path": "/baz", "value": "boo"}], {"baz": "boo", "foo": "bar"}),
    ("move member", {"foo": {"bar": "baz", "waldo": "fred"}, "qux": {"corge": "grault"}},
     [{"op": "move", "from": "/foo/waldo", "path": "/qux/thud"}],
     {"foo": {"bar": "baz"}, "qux": {"corge": "grault", "thud": "fred"}}),
    ("move element", {"foo": ["all", "grass", "cows", "eat"]},
     [{"op": "move", "from": "/foo/1", "path": "/foo/3"}],
     {"foo": ["all", "cows", "eat", "grass"]}),
    ("copy", {"a": {"b": [1]}}, [{"op": "copy", "from": "/a/b", "path": "/c"}],
     {"a": {"b": [1]}, "c": [1]}),
    ("test passes", {"baz": "qux", "foo": ["a", 2, "c"]},
     [{"op": "test", "path": "/baz", "value": "qux"}, {"op": "test", "path": "/foo/1", "value": 2}],
     {"baz": "qux", "foo": ["a", 2, "c"]}),
    ("nested add", {"foo": "bar"}, [{"op": "add", "path": "/child", "value": {"grandchild": {}}}],
     {"foo": "bar", "child": {"grandchild": {}}}),
    ("escaped pointer", {"/": 9, "~1": 10}, [{"op": "replace", "path": "/~01", "value": 11},
                                            {"op": "remove", "path": "/~1"}], {"~1": 11}),
    ("add array value", {"foo": ["bar"]}, [{"op": "add", "path": "/foo/-", "value": ["abc"]}],
     {"foo": ["bar", ["abc"]]}),
    ("replace whole document", {"a": 1}, [{"op": "replace", "path": "", "value": {"b": 2}}],
     {"b": 2}),
    ("labels via pointer", {"metadata": {"labels": {"a.b/c": "x"}}},
     [{"op": "replace", "path": "/metadata/labels/a.b~1c", "value": "y"}],
     {"metadata": {"labels": {"a.b/c": "y"}}}),
    ("test equal numbers", {"n": 1}, [{"op": "test", "path": "/n", "value": 1.0}], {"n": 1}),
]


@pytest.mark.parametrize(("doc", "ops", "want"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_applies(doc: Any, ops: list[dict[str, Any]], want: Any) -> None:
    before = repr(doc)
    assert apply_json_patch(doc, ops) == want
    assert repr(doc) == before  # input untouched


FAILING: list[tuple[str, Any, list[dict[str, Any]], str]] = [
    ("test fails", {"baz": "qux"}, [{"op": "test", "path": "/baz", "value": "bar"}],
     'test operation failed: value at "/baz" differs'),
    ("test bool is not int", {"b": True}, [{"op": "test", "path": "/b", "value": 1}], "differs"),
    ("add to missing parent", {"foo": "bar"},
     [{"op": "add", "path": "/baz/bat", "value": "qux"}], 'path "/baz/bat" does not exist'),
    ("remove missing", {"a": 1}, [{"op": "remove", "path": "/b"}], 'path "/b" does not exist'),
    ("replace missing", {"a": 1}, [{"op": "replace", "path": "/b", "value": 2}],
     'path "/b" does not exist'),
    ("index out of bounds", {"a": [1]}, [{"op": "add", "path": "/a/5", "value": 2}],
     "array index 5 out of bounds"),
    ("leading zero index", {"a": [1, 2]}, [{"op": "remove", "path": "/a/01"}],
     'invalid array index "01"'),
    ("unknown op", {}, [{"op": "frobnicate", "path": "/a"}], 'unknown op "frobnicate"'),
    ("missing value", {}, [{"op": "add", "path": "/a"}], 'is missing "value"'),
    ("bad pointer", {}, [{"op": "add", "path": "a", "value": 1}], "invalid JSON pointer"),
    ("move into child", {"a": {"b": 1}}, [{"op": "move", "from": "/a", "path": "/a/b/c"}],
     "into its own child"),
]


@pytest.mark.parametrize(("doc", "ops", "message"), [c[1:] for c in FAILING],
                         ids=[c[0] for c in FAILING])
def test_failures_are_422(doc: Any, ops: list[dict[str, Any]], message: str) -> None:
    with pytest.raises(PatchError) as info:
        apply_json_patch(doc, ops)
    assert info.value.code == 422
    assert info.value.status["reason"] == "Invalid"
    assert message in info.value.status["message"]


def test_failed_operation_leaves_input_alone() -> None:
    doc = {"a": 1}
    with pytest.raises(PatchError):
        apply_json_patch(doc, [{"op": "add", "path": "/b", "value": 2},
                               {"op": "test", "path": "/a", "value": 3}])
    assert doc == {"a": 1}


@pytest.mark.parametrize("body", [{"op": "add"}, ["not an object"], "x"])
def test_undecodable_body_is_400(body: Any) -> None:
    with pytest.raises(PatchError) as info:
        apply_json_patch({}, body)
    assert info.value.code == 400
    assert info.value.status["reason"] == "BadRequest"


def test_too_many_operations_is_413() -> None:
    with pytest.raises(ApiError) as info:
        apply_json_patch({}, [{"op": "test", "path": "", "value": {}}] * 10001)
    assert info.value.code == 413
    assert info.value.status["message"] == (
        "Request entity too large: The allowed maximum operations in a JSON patch is 10000,"
        " got 10001"
    )

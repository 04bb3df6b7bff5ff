"""unknown_fields and duplicate_fields: the inputs of fieldValidation=Strict."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubedra.api import codec, core, kinds
from kubedra.api.resource import v1alpha2


def test_unknown_fields_paths_in_document_order() -> None:
    raw = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "nmae": "typo"},
        "spec": {
            "foo": 1,
            "containers": [{"name": "a"}, {"name": "b", "imagePullPolicy": "Always", "bar": 2}],
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "k", "operator": "In", "x": 1}]}
                        ]
                    }
                }
            },
        },
        "zz": True,
    }
    assert codec.unknown_fields(raw, core.Pod) == [
        "metadata.nmae",
        "spec.foo",
        "spec.containers[1].bar",
        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        ".nodeSelectorTerms[0].matchExpressions[0].x",
        "zz",
    ]


def test_raw_json_parts_accept_any_field() -> None:
    raw = {
        "spec": {
            "volumes": [{"name": "v", "emptyDir": {"anything": 1}}],
            "affinity": {"podAffinity": {"whatever": []}},
            "containers": [{"livenessProbe": {"exec": {"command": ["x"]}}}],
        }
    }
    assert codec.unknown_fields(raw, core.Pod) == []
    params = {
        "driverRequests": [
            {
                "vendorParameters": {"free": {"form": 1}},
                "requests": [{"namedResources": {"selector": "true"}, "y": 1}],
            }
        ]
    }
    assert codec.unknown_fields(params, v1alpha2.ResourceClaimParameters) == [
        "driverRequests[0].requests[0].y"
    ]


def test_wrong_types_are_not_unknown_fields() -> None:
    # Type errors are decode's business; unknown_fields only names keys.
    assert codec.unknown_fields({"spec": "x", "metadata": [1]}, core.Pod) == []
    assert codec.unknown_fields({"spec": {"containers": {"a": 1}}}, core.Pod) == []
    assert codec.unknown_fields([1, 2], core.Pod) == []


def test_list_items_are_checked() -> None:
    raw = {
        "items": [{"metadata": {"name": "n"}, "spec": {"taints": [{"key": "k", "colour": "red"}]}}]
    }
    assert codec.unknown_fields(raw, core.NodeList) == ["items[0].spec.taints[0].colour"]


def test_duplicate_fields() -> None:
    data = b'{"metadata":{"name":"a","name":"b","labels":{"x":"1","x":"2"}},"spec":{},"spec":{}}'
    assert codec.duplicate_fields(data) == ["metadata.name", "metadata.labels.x", "spec"]
    assert codec.duplicate_fields(b'{"a":[{"b":1},{"b":1,"b":2}]}') == ["a[1].b"]
    assert codec.duplicate_fields('{"a":1,"a":2,"a":3}') == ["a"]
    assert codec.duplicate_fields(b'{"a":1}') == []
    assert codec.duplicate_fields(b"{not json") == []


def test_yaml_duplicate_fields_per_document() -> None:
    text = (
        "~\n---\nmetadata:\n  name: a\n  name: b\n  labels: {x: '1', x: '2'}\n"
        "spec: {}\nspec: {}\nitems:\n- {a: 1, a: 2, a: 3}\n---\nok: 1\n"
    )
    assert codec.yaml_duplicate_fields(text) == [
        ["metadata.name", "metadata.labels.x", "spec", "items[0].a"],
        [],
    ]
    assert len(codec.yaml_duplicate_fields(text)) == len(codec.load_documents(text))


def test_yaml_duplicates_through_aliases_and_merges() -> None:
    # an aliased mapping is reported where it first appears; merge keys are not repeats
    text = "a: &x {b: 1, b: 2}\nc: *x\nd: [*x, *x]\ne: {<<: *x, f: 1}\n"
    assert codec.yaml_duplicate_fields(text) == [["a.b"]]
    assert codec.yaml_duplicate_fields("a: [1\n") == []
    assert codec.yaml_duplicate_fields(b"\xff") == []


def test_list_items_know_their_place() -> None:
    docs = [
        {"kind": "List", "items": [{"kind": "A"}, {"kind": "BList", "items": [{"k": 1}]}]},
        {"kind": "C"},
    ]
    assert [(i, p) for i, p, _ in codec.list_items(docs)] == [
        (0, "items[0]"),
        (0, "items[1].items[0]"),
        (1, ""),
    ]


# --- the strict twin agrees with the walk ---------------------------------------------------

_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=3))


def _json_for(info: msgspec.inspect.Type, depth: int) -> st.SearchStrategy[Any]:
    """JSON shaped after ``info``, with now and then a key the model does not know, a null
    or a value of another shape (the cases where the twin and the walk could part)."""
    stray = st.one_of(_SCALARS, st.lists(_SCALARS, max_size=2),
                      st.dictionaries(st.sampled_from(["x", "name"]), _SCALARS, max_size=2))
    if depth <= 0:
        return stray
    if isinstance(info, msgspec.inspect.UnionType):
        return st.one_of(*(_json_for(m, depth) for m in info.types))
    if isinstance(info, msgspec.inspect.StructType):
        fields = {f.encode_name: _json_for(f.type, depth - 1) for f in info.fields}
        known = st.fixed_dictionaries({}, optional=fields)
        unknown = st.dictionaries(st.sampled_from(["bogus", "nmae"]), _SCALARS, max_size=1)
        return st.one_of(known, known, known, st.builds(lambda a, b: {**a, **b}, known, unknown),
                         stray)
    if isinstance(info, msgspec.inspect.ListType):
        return st.one_of(st.lists(_json_for(info.item_type, depth - 1), max_size=2), stray)
    if isinstance(info, msgspec.inspect.DictType):
        return st.one_of(st.dictionaries(st.text(max_size=2), _json_for(info.value_type, depth - 1),
                                         max_size=2), stray)
    return _SCALARS


def _walked(raw: Any, model: Any, absent: codec.Absent = codec.NONE_ABSENT) -> list[str]:
    out: list[str] = []
    codec._walk_unknown(raw, codec._type_info(model), "", out, absent)
    return out


# one release's Pod lacks the other's claim fields (registry/strategies/podfields.py)
_POD_1_34 = frozenset({(core.PodResourceClaim, "source")})
_POD_1_30 = frozenset({(core.PodResourceClaim, "resourceClaimName"),
                       (core.PodResourceClaim, "resourceClaimTemplateName"),
                       (core.ResourceClaim, "request")})


@pytest.mark.parametrize(("model", "absent"), [
    (core.Pod, codec.NONE_ABSENT), (core.Pod, _POD_1_34), (core.Pod, _POD_1_30),
    (v1alpha2.ResourceClaim, codec.NONE_ABSENT), (core.Event, codec.NONE_ABSENT),
    (core.Binding, codec.NONE_ABSENT), (v1alpha2.ResourceSlice, codec.NONE_ABSENT),
    (v1alpha2.ResourceClaimParameters, codec.NONE_ABSENT)])
def test_fast_answer_is_the_walks(model: Any, absent: codec.Absent) -> None:
    @settings(max_examples=300, deadline=None)
    @given(_json_for(codec._type_info(model), 6))
    def check(raw: Any) -> None:
        assert codec.unknown_fields(raw, model, absent) == _walked(raw, model, absent)

    check()


def test_an_absent_field_is_unknown_at_its_place_only() -> None:
    raw = {"spec": {"containers": [{"resources": {"claims": [{"name": "a"}]}}],
                    "resourceClaims": [{"name": "a", "source": {}}]}}
    assert codec.unknown_fields(raw, core.Pod) == []
    assert codec.unknown_fields(raw, core.Pod, _POD_1_34) == ["spec.resourceClaims[0].source"]
    assert codec.unknown_fields(raw, core.Pod, _POD_1_30) == []


def test_every_served_kind_has_a_twin() -> None:
    for kind in kinds.KINDS:
        assert codec._strict_twin(kind.model, codec.NONE_ABSENT) is not None, kind.kind


def test_a_body_without_unknown_fields_is_not_walked(monkeypatch: pytest.MonkeyPatch) -> None:
    def walked(*_: Any) -> None:
        raise AssertionError("walked")

    monkeypatch.setattr(codec, "_walk_unknown", walked)
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "p", "labels": {"a": "b"}, "managedFields": [
               {"manager": "m", "operation": "Update", "fieldsV1": {"f:spec": {}}}]},
           "spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "1"}},
                                    "ports": [{"containerPort": 80}]}],
                    "resourceClaims": [{"name": "r", "source": {"resourceClaimName": "c"}}]},
           "status": {"phase": "Pending", "conditions": None}}
    assert codec.unknown_fields(pod, core.Pod) == []

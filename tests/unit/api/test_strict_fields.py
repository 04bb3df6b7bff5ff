"""unknown_fields and duplicate_fields: the inputs of fieldValidation=Strict."""

from __future__ import annotations

from kubedra.api import codec, core, resource


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
    assert codec.unknown_fields(params, resource.ResourceClaimParameters) == [
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

"""resource.k8s.io checks the vectors do not cover: classes, templates, scheduling-context
specs, driver-name edge cases, node selectors, defaulting and the wire format."""

from __future__ import annotations

from typing import Any

from kubedra.api import codec
from kubedra.api.resource import v1alpha2 as r
from kubedra.validation import resource as v
from kubedra.validation.defaults_resource import (
    default_resource_claim,
    default_resource_claim_template,
)
from kubedra.validation.field import FieldError, Path
from kubedra.validation.names import is_dns1123_subdomain

API = "resource.k8s.io/v1alpha2"


def summary(errors: list[FieldError]) -> list[tuple[str, str, str]]:
    return [(e.type.value, str(e.field), e.detail) for e in errors]


def obj(kind: str, model: type[Any], **fields: Any) -> Any:
    meta = fields.pop("metadata", {"name": "x"})
    return codec.decode({"apiVersion": API, "kind": kind, "metadata": meta, **fields}, model)


def test_driver_name_rules() -> None:
    assert v.validate_driver_name("Gpu.Example.COM", Path("d")) == []  # lower-cased first
    empty = v.validate_driver_name("", Path("d"))
    assert [e.type.value for e in empty] == ["FieldValueRequired", "FieldValueInvalid"]
    long = v.validate_driver_name("a" * 64, Path("d"))
    assert summary(long) == [("FieldValueTooLong", "d", "must have at most 63 bytes")]
    assert str(long[0]) == "d: Too long: must have at most 63 bytes"


def test_resource_class() -> None:
    good = obj(
        "ResourceClass",
        r.ResourceClass,
        driverName="gpu.example.com",
        structuredParameters=True,
        suitableNodes={
            "nodeSelectorTerms": [
                {
                    "matchFields": [
                        {"key": "metadata.name", "operator": "In", "values": ["worker-1"]}
                    ]
                }
            ]
        },
    )
    assert v.validate_resource_class(good) == []
    bad = obj(
        "ResourceClass",
        r.ResourceClass,
        metadata={"name": "x", "namespace": "ns"},
        driverName="gpu.example.com",
        parametersRef={"namespace": "a.b"},
        suitableNodes={
            "nodeSelectorTerms": [
                {
                    "matchExpressions": [
                        {"key": "k", "operator": "Gt", "values": []},
                        {"key": "k", "operator": "Bogus"},
                    ],
                    "matchFields": [
                        {"key": "spec.x", "operator": "Exists", "values": ["a", "b"]},
                        {"key": "metadata.name", "operator": "In", "values": ["Bad!"]},
                    ],
                }
            ]
        },
    )
    assert summary(v.validate_resource_class(bad)) == [
        ("FieldValueForbidden", "metadata.namespace", "not allowed on this type"),
        ("FieldValueRequired", "parametersRef.kind", ""),
        ("FieldValueRequired", "parametersRef.name", ""),
        ("FieldValueInvalid", "parametersRef.namespace", "must not contain dots"),
        (
            "FieldValueRequired",
            "suitableNodes.nodeSelectorTerms[0].matchExpressions[0].values",
            "must be specified single value when `operator` is 'Lt' or 'Gt'",
        ),
        (
            "FieldValueInvalid",
            "suitableNodes.nodeSelectorTerms[0].matchExpressions[1].operator",
            "not a valid selector operator",
        ),
        (
            "FieldValueInvalid",
            "suitableNodes.nodeSelectorTerms[0].matchFields[0].operator",
            "not a valid selector operator",
        ),
        (
            "FieldValueInvalid",
            "suitableNodes.nodeSelectorTerms[0].matchFields[0].key",
            "not a valid field selector key",
        ),
        (
            "FieldValueInvalid",
            "suitableNodes.nodeSelectorTerms[0].matchFields[1].values[0]",
            is_dns1123_subdomain("Bad!")[0],
        ),
    ]
    empty = obj("ResourceClass", r.ResourceClass, driverName="d", suitableNodes={})
    assert summary(v.validate_resource_class(empty)) == [
        (
            "FieldValueRequired",
            "suitableNodes.nodeSelectorTerms",
            "must have at least one node selector term",
        ),
    ]


def test_resource_class_update_everything_mutable() -> None:
    old = obj(
        "ResourceClass",
        r.ResourceClass,
        metadata={"name": "x", "resourceVersion": "1"},
        driverName="a.example.com",
    )
    new = obj(
        "ResourceClass",
        r.ResourceClass,
        metadata={"name": "x", "resourceVersion": "1"},
        driverName="b.example.com",
        structuredParameters=True,
    )
    assert v.validate_resource_class_update(new, old) == []


def test_claim_template() -> None:
    tpl = obj(
        "ResourceClaimTemplate",
        r.ResourceClaimTemplate,
        metadata={"name": "t", "namespace": "ns"},
        spec={
            "metadata": {"labels": {"a": "b"}, "name": "nope"},
            "spec": {"resourceClassName": "Bad!", "allocationMode": "Immediate"},
        },
    )
    assert [(t, f) for t, f, _ in summary(v.validate_resource_claim_template(tpl))] == [
        ("FieldValueForbidden", "spec.metadata.name"),
        ("FieldValueInvalid", "spec.spec.resourceClassName"),
    ]
    old = obj(
        "ResourceClaimTemplate",
        r.ResourceClaimTemplate,
        metadata={"name": "t", "namespace": "ns", "resourceVersion": "1"},
        spec={"spec": {"resourceClassName": "c", "allocationMode": "Immediate"}},
    )
    new = obj(
        "ResourceClaimTemplate",
        r.ResourceClaimTemplate,
        metadata={"name": "t", "namespace": "ns", "resourceVersion": "1"},
        spec={
            "metadata": {"labels": {"a": "b"}},
            "spec": {"resourceClassName": "c", "allocationMode": "Immediate"},
        },
    )
    errs = v.validate_resource_claim_template_update(new, old)
    assert summary(errs) == [("FieldValueInvalid", "spec", "field is immutable")]
    assert codec.to_builtins(errs[0].bad_value) == codec.to_builtins(new.spec)
    assert str(errs[0]).startswith('spec: Invalid value: {"metadata":{"labels":{"a":"b"}}')


def test_pod_scheduling_context_spec() -> None:
    psc = obj(
        "PodSchedulingContext",
        r.PodSchedulingContext,
        metadata={"name": "p", "namespace": "ns"},
        spec={
            "selectedNode": "Not Validated!",
            "potentialNodes": ["a", "a", "Bad!"] + [f"n{i}" for i in range(126)],
        },
    )
    assert [(t, f) for t, f, _ in summary(v.validate_pod_scheduling_context(psc))] == [
        ("FieldValueDuplicate", "spec.potentialNodes[1]"),
        ("FieldValueInvalid", "spec.potentialNodes[2]"),
        ("FieldValueTooLong", "spec.potentialNodes"),
    ]


def test_empty_slice_model_at_nil_path() -> None:
    slice_ = obj("ResourceSlice", r.ResourceSlice, driverName="d")
    errs = v.validate_resource_slice(slice_)
    assert str(errs[0]) == "<nil>: Required value: exactly one structured model field must be set"


def test_slice_node_name_cannot_be_set_later() -> None:
    old = obj(
        "ResourceSlice",
        r.ResourceSlice,
        metadata={"name": "s", "resourceVersion": "1"},
        driverName="d",
        namedResources={},
    )
    new = obj(
        "ResourceSlice",
        r.ResourceSlice,
        metadata={"name": "s", "resourceVersion": "1"},
        driverName="d",
        nodeName="n",
        namedResources={"instances": [{"name": "i"}]},
    )
    assert summary(v.validate_resource_slice_update(new, old)) == [
        ("FieldValueInvalid", "nodeName", "field is immutable"),
    ]


def test_attribute_value_members_sorted() -> None:
    slice_ = obj(
        "ResourceSlice",
        r.ResourceSlice,
        driverName="d",
        namedResources={
            "instances": [
                {
                    "name": "i",
                    "attributes": [
                        {
                            "name": "a",
                            "version": "1.0.0",
                            "string": "s",
                            "bool": True,
                            "quantity": "1",
                            "int": 1,
                            "intSlice": {"ints": []},
                            "stringSlice": {"strings": []},
                        }
                    ],
                }
            ]
        },
    )
    errs = v.validate_resource_slice(slice_)
    assert errs[0].bad_value == [
        "bool",
        "int",
        "intSlice",
        "quantity",
        "string",
        "stringSlice",
        "version",
    ]
    assert str(errs[0]).startswith(
        'namedResources.instances[0].attributes[0]: Invalid value: []string{"bool", "int", '
    )


def test_semver_is_anchored_and_ascii() -> None:
    for bad in ("1.0.0\n", "\u0661.\u0660.\u0660", "v1.0.0", "1.0.0-01"):
        slice_ = obj(
            "ResourceSlice",
            r.ResourceSlice,
            driverName="d",
            namedResources={
                "instances": [{"name": "i", "attributes": [{"name": "a", "version": bad}]}]
            },
        )
        assert [str(e.field) for e in v.validate_resource_slice(slice_)] == [
            "namedResources.instances[0].attributes[0].version"
        ], bad
    slice_ = obj(
        "ResourceSlice",
        r.ResourceSlice,
        driverName="d",
        namedResources={
            "instances": [{"name": "i", "attributes": [{"name": "a", "version": "1.0.0-0a.1+001"}]}]
        },
    )
    assert v.validate_resource_slice(slice_) == []


def test_claim_status_allocation_can_be_set_and_cleared() -> None:
    base = {
        "metadata": {"name": "c", "namespace": "ns", "resourceVersion": "1"},
        "spec": {"resourceClassName": "c", "allocationMode": "WaitForFirstConsumer"},
    }
    alloc = {
        "driverName": "d",
        "allocation": {
            "resourceHandles": [
                {
                    "driverName": "d",
                    "structuredData": {
                        "nodeName": "n",
                        "results": [{"namedResources": {"name": "gpu-0"}}],
                    },
                }
            ],
            "availableOnNodes": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n"]}]}
                ]
            },
        },
    }
    unallocated = obj("ResourceClaim", r.ResourceClaim, **base)
    allocated = obj("ResourceClaim", r.ResourceClaim, **base, status=alloc)
    assert v.validate_resource_claim_status_update(allocated, unallocated) == []
    assert v.validate_resource_claim_status_update(unallocated, allocated) == []
    # A semantically equal allocation (nil vs empty lists) is not a modification.
    assert v.validate_resource_claim_status_update(allocated, allocated) == []


def test_defaulting() -> None:
    claim = obj("ResourceClaim", r.ResourceClaim, spec={"resourceClassName": "c"})
    default_resource_claim(claim)
    assert claim.spec.allocation_mode == "WaitForFirstConsumer"
    claim.spec.allocation_mode = "Immediate"
    default_resource_claim(claim)
    assert claim.spec.allocation_mode == "Immediate"
    tpl = obj("ResourceClaimTemplate", r.ResourceClaimTemplate, spec={"spec": {}})
    default_resource_claim_template(tpl)
    assert tpl.spec.spec.allocation_mode == "WaitForFirstConsumer"


def test_wire_format() -> None:
    raw: dict[str, Any] = {
        "apiVersion": API,
        "kind": "ResourceSlice",
        "metadata": {"name": "s"},
        "nodeName": "n",
        "driverName": "d",
        "namedResources": {
            "instances": [
                {
                    "name": "gpu-0",
                    "attributes": [
                        {"name": "mem", "quantity": "1000m"},
                        {"name": "b", "bool": False},
                        {"name": "i", "int": 3},
                        {"name": "is", "intSlice": {"ints": []}},
                        {"name": "ss", "stringSlice": {"strings": ["x"]}},
                        {"name": "v", "version": "1.2.3"},
                    ],
                }
            ]
        },
    }
    slice_ = codec.decode(raw, r.ResourceSlice)
    assert slice_.named_resources is not None
    attrs = slice_.named_resources.instances[0].attributes or []
    assert attrs[1].bool_ is False and attrs[2].int_ == 3
    out = codec.to_builtins(slice_)
    assert out["namedResources"]["instances"][0]["attributes"][0] == {
        "name": "mem",
        "quantity": "1",
    }
    assert (
        out["namedResources"]["instances"][0]["attributes"][1:]
        == raw["namedResources"]["instances"][0]["attributes"][1:]
    )
    # Required lists are written even when empty; RawExtensions are written as null.
    assert codec.to_builtins(r.ResourceSlice(named_resources=r.NamedResourcesResources())) == {
        "metadata": {},
        "namedResources": {"instances": []},
    }
    handle = codec.to_builtins(r.StructuredResourceHandle())
    assert handle == {"vendorClassParameters": None, "vendorClaimParameters": None, "results": []}
    params = {
        "driverName": "d",
        "vendorParameters": {"a": [1, "x", None]},
        "requests": [{"vendorParameters": None, "namedResources": {"selector": "true"}}],
    }
    assert codec.to_builtins(codec.decode(params, r.DriverRequests)) == params
    claim = codec.to_builtins(r.ResourceClaim())
    assert claim["spec"] == {} and claim["status"] == {}
    assert codec.to_builtins(r.ResourceClaimList())["items"] == []


def test_go_null_lists_are_accepted() -> None:
    slice_ = codec.decode({"driverName": "d", "namedResources": {"instances": None}},
                          r.ResourceSlice)
    assert slice_.named_resources is not None and slice_.named_resources.instances == []
    handle = codec.decode({"results": None, "vendorClassParameters": None},
                          r.StructuredResourceHandle)
    assert handle.results == [] and handle.vendor_class_parameters is None
    attr = codec.decode({"name": "a", "intSlice": {"ints": None},
                         "stringSlice": {"strings": None}}, r.NamedResourcesAttribute)
    assert attr.int_slice is not None and attr.int_slice.ints == []
    assert attr.string_slice is not None and attr.string_slice.strings == []
    assert codec.to_builtins(attr)["intSlice"] == {"ints": []}


STORED_ONLY = 'isIP("1.2.3.4")'  # IP/CIDR libraries exist only in StoredExpressions (1.30)


def _claim_params(selector: str, driver: str = "d") -> r.ResourceClaimParameters:
    params: r.ResourceClaimParameters = obj("ResourceClaimParameters", r.ResourceClaimParameters,
               metadata={"name": "p", "namespace": "ns", "resourceVersion": "1"},
               driverRequests=[{"driverName": driver,
                                "requests": [{"namedResources": {"selector": selector}}]}])
    return params


def _class_params(selector: str, driver: str = "d") -> r.ResourceClassParameters:
    params: r.ResourceClassParameters = obj("ResourceClassParameters", r.ResourceClassParameters,
               metadata={"name": "p", "namespace": "ns", "resourceVersion": "1"},
               filters=[{"driverName": driver, "namedResources": {"selector": selector}}])
    return params


def test_claim_parameters_update_uses_stored_env_for_unchanged_requests() -> None:
    stored = _claim_params(STORED_ONLY)
    assert [str(e.field) for e in v.validate_resource_claim_parameters(stored)] == [
        "driverRequests[0].requests[0].namedResources.selector"]
    # Unchanged driverRequests compile as stored expressions: accepted.
    assert v.validate_resource_claim_parameters_update(stored, stored) == []
    # Any change to driverRequests makes them new expressions again.
    changed = _claim_params(STORED_ONLY, driver="e")
    errs = v.validate_resource_claim_parameters_update(changed, stored)
    assert [e.detail.startswith("compilation failed: ") for e in errs] == [True]


def test_class_parameters_update_always_uses_new_env() -> None:
    stored = _class_params(STORED_ONLY)
    errs = v.validate_resource_class_parameters_update(stored, stored)
    assert [(e.type.value, str(e.field)) for e in errs] == [
        ("FieldValueInvalid", "filters[0].namedResources.selector")]


def test_selector_must_be_bool() -> None:
    errs = v.validate_resource_class_parameters(_class_params('"text"'))
    assert [(str(e.field), e.detail, e.bad_value) for e in errs] == [
        ("filters[0].namedResources.selector", "must evaluate to bool", '"text"')]

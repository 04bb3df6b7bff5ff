"""Arbitrary input never escapes the codec as anything but DecodeError."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubedra.api import codec, kinds

MODELS = [k.model for k in kinds.KINDS] + [k.list_model for k in kinds.KINDS]

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.text(max_size=12)
    | (st.floats(allow_nan=False, allow_infinity=False))
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=5)
    ),
    max_leaves=30,
)

# Objects shaped like the API (known keys at several depths), so decoding gets past the top.
KEYS = [
    "apiVersion",
    "kind",
    "metadata",
    "name",
    "spec",
    "status",
    "containers",
    "resources",
    "requests",
    "limits",
    "claims",
    "namedResources",
    "instances",
    "attributes",
    "quantity",
    "int",
    "bool",
    "intSlice",
    "ints",
    "driverRequests",
    "requests",
    "template",
    "affinity",
    "nodeAffinity",
    "capacity",
    "allocatable",
    "items",
    "labels",
    "source",
    "taints",
    "cpu",
]
shaped_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=5), inner, max_size=5)
    ),
    max_leaves=40,
)

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _decodes_or_decode_error(data: Any, model: Any) -> None:
    try:
        codec.decode(data, model)
    except codec.DecodeError as err:
        assert str(err)


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
@FUZZ
@given(value=shaped_values)
def test_arbitrary_json_values(model: Any, value: Any) -> None:
    _decodes_or_decode_error(json.dumps(value).encode(), model)
    if isinstance(value, dict):
        _decodes_or_decode_error(value, model)
        codec.unknown_fields(value, model)


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
@FUZZ
@given(data=st.binary(max_size=200))
def test_arbitrary_bytes(model: Any, data: bytes) -> None:
    _decodes_or_decode_error(data, model)


@FUZZ
@given(value=json_values)
def test_decode_object_of_anything(value: Any) -> None:
    with contextlib.suppress(codec.DecodeError):
        codec.decode_object(value)


@FUZZ
@given(text=st.text(max_size=200))
def test_yaml_of_anything(text: str) -> None:
    duplicates = codec.yaml_duplicate_fields(text)
    try:
        docs = codec.load_documents(text)
    except codec.DecodeError:
        return
    json.dumps(docs, allow_nan=False)  # always plain JSON values
    assert len(duplicates) == len(docs)


@FUZZ
@given(data=st.binary(max_size=200))
def test_duplicate_fields_of_anything(data: bytes) -> None:
    assert isinstance(codec.duplicate_fields(data), list)


@pytest.mark.parametrize(
    "data",
    [
        b"[" * 100_000 + b"]" * 100_000,
        b'{"spec":' * 5000 + b"{}" + b"}" * 5000,
        b'{"metadata":{"labels":{"a":1}}}',
        b'{"spec":{"containers":[{"resources":{"limits":{"x":"1Q"}}}]}}',
        b'{"spec":{"overhead":{"cpu":[]}}}',
        b'{"spec":{"priority":1e400}}',
        b"\xff\xfe",
        b"",
        b'{"apiVersion": 1}',
    ],
)
def test_hostile_inputs(data: bytes) -> None:
    for model in MODELS:
        _decodes_or_decode_error(data, model)


def test_error_carries_path_and_reason() -> None:
    from kubedra.api import core

    with pytest.raises(codec.DecodeError) as info:
        codec.decode(
            b'{"spec":{"containers":[{"name":"c","ports":[{"containerPort":"80"}]}]}}', core.Pod
        )
    assert info.value.path == "spec.containers[0].ports[0].containerPort"
    assert info.value.reason == "Expected `int`, got `str`"
    assert str(info.value) == "spec.containers[0].ports[0].containerPort: Expected `int`, got `str`"
    with pytest.raises(codec.DecodeError, match="quantities must match the regular expression"):
        codec.decode({"spec": {"overhead": {"cpu": "one"}}}, core.Pod)
    with pytest.raises(codec.DecodeError, match=r"malformed|truncated"):
        codec.decode(b'{"spec":', core.Pod)


def test_decode_object_messages() -> None:
    with pytest.raises(codec.DecodeError, match="Object 'Kind' is missing"):
        codec.decode_object({"apiVersion": "v1"})
    with pytest.raises(codec.DecodeError, match="'apiVersion' is missing"):
        codec.decode_object({"kind": "Pod"})
    with pytest.raises(codec.DecodeError, match='no matches for kind "Widget" in version "v1"'):
        codec.decode_object({"apiVersion": "v1", "kind": "Widget"})
    with pytest.raises(codec.DecodeError, match="expected a JSON object, got array"):
        codec.decode_object([])  # type: ignore[arg-type]


def test_python_values_that_are_not_json() -> None:
    from kubedra.api import core

    cases: list[tuple[Any, str, str]] = [
        ({"metadata": {"labels": {1: "a"}}}, "metadata.labels", "map key: Expected `str`"),
        ({"spec": b"x"}, "spec", "Expected `object`, got `bytes`"),
        ({"metadata": object()}, "metadata", "Expected `object`"),
        ({"spec": {"priority": float("nan")}}, "spec.priority", "Expected `int | null`"),
        ({"spec": {"overhead": {"cpu": float("inf")}}}, "spec.overhead[cpu]", "quantity"),
        ({"spec": {"overhead": {"a": "x", "b": "y"}}}, "spec.overhead[...]", "quantities"),
    ]
    for data, path, reason in cases:
        with pytest.raises(codec.DecodeError) as info:
            codec.decode(data, core.Pod)
        assert info.value.path == path
        assert reason in info.value.reason
    with pytest.raises(codec.DecodeError, match="cannot decode a list"):
        codec.decode([], core.Pod)  # type: ignore[arg-type]


def test_nulls_decode_as_zero_values_like_go() -> None:
    from kubedra.api import core
    from kubedra.api.resource import v1alpha2

    pod = codec.decode(
        b'{"metadata":null,"spec":{"containers":[null,{"name":null,"resources":null}],'
        b'"nodeSelector":{"a":null}},"status":{"containerStatuses":[{"ready":null}]}}',
        core.Pod,
    )
    assert [c.name for c in pod.spec.containers] == ["", ""]
    assert pod.spec.node_selector == {"a": ""}
    assert pod.status.container_statuses is not None
    assert pod.status.container_statuses[0].ready is False
    # Go writes "instances": null for a nil slice; it reads back as empty.
    rs = codec.decode({"namedResources": {"instances": None}}, v1alpha2.ResourceSlice)
    assert rs.named_resources is not None and rs.named_resources.instances == []
    # a null does not hide a real error elsewhere
    for body in (
        b'{"spec":{"priority":"x","containers":null}}',
        b'{"spec":{"containers":null,"priority":"x"}}',
    ):
        with pytest.raises(codec.DecodeError, match=r"spec\.priority"):
            codec.decode(body, core.Pod)


def test_map_errors_name_the_key() -> None:
    from kubedra.api import core

    body = b'{"spec":{"containers":[{"resources":{"limits":{"cpu":"1","memory":"1x"}}}]}}'
    with pytest.raises(codec.DecodeError) as info:
        codec.decode(body, core.Pod)
    assert info.value.path == "spec.containers[0].resources.limits[memory]"
    with pytest.raises(codec.DecodeError) as info:
        codec.decode({"spec": {"containers": None, "nodeSelector": {"a": 1}}}, core.Pod)
    assert info.value.path == "spec.nodeSelector[a]"

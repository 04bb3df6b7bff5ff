"""Negotiation for a kind without a protobuf message (apiserver/media.py): every kind the
server serves has one, so the JSON-only rule is checked here rather than over HTTP; and the
protobuf encoding a write's answer and its watch event share."""

from __future__ import annotations

import pytest
from aiohttp.test_utils import make_mocked_request

from kubedra.api.features import FeatureGates
from kubedra.api.release import R1_30, R1_34
from kubedra.apiserver import errors, media
from kubedra.apiserver.registry import Registry
from kubedra.proto import kube

PB, JSON = media.PROTOBUF, "application/json"


def _accepting(accept: str) -> str:
    return media.answer_type(make_mocked_request("GET", "/", headers={"Accept": accept}),
                             protobuf=False)


def test_json_when_json_is_acceptable_else_406_without_protobuf() -> None:
    assert _accepting(f"{PB},{JSON}") == JSON
    with pytest.raises(errors.ApiError) as err:
        _accepting(PB)
    assert err.value.code == 406
    assert err.value.status["message"] == (
        f"only the following media types are accepted: {JSON}, application/yaml")


def test_a_body_may_be_protobuf_only_for_a_kind_with_a_message() -> None:
    assert media.body_types(False) == (JSON, "application/yaml")
    assert media.body_types(True) == (JSON, "application/yaml", PB)
    assert all(res.protobuf for res in Registry(FeatureGates.for_release(R1_34)))
    assert all(res.protobuf for res in Registry(FeatureGates.for_release(R1_30)))
    assert kube.message_for("resource.k8s.io/v1", "Nothing") is None


def test_a_shared_object_is_encoded_once_and_the_memory_is_bounded() -> None:
    def node(name: str) -> dict[str, object]:
        return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}

    first = node("n0")
    encoded = media.shared_protobuf(first)
    assert encoded == kube.encode(first)
    assert media.shared_protobuf(first) is encoded  # the same bytes, not encoded again
    twin = node("n0")  # equal, but another object: its own encoding
    assert media.shared_protobuf(twin) == encoded
    assert media.shared_protobuf(twin) is not encoded
    kept = [node(f"n{i}") for i in range(1, 1100)]
    for obj in kept:
        media.shared_protobuf(obj)
    assert media.shared_protobuf(kept[-1]) is media.shared_protobuf(kept[-1])
    assert media.shared_protobuf(first) is not encoded  # forgotten: encoded anew

"""Negotiation for a kind without a protobuf message (apiserver/media.py): every kind the
server serves has one, so the JSON-only rule is checked here rather than over HTTP."""

from __future__ import annotations

import pytest
from aiohttp.test_utils import make_mocked_request

from kubedra.apiserver import errors, media

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
    assert media.has_protobuf("resource.k8s.io/v1", "ResourceClaim")
    assert not media.has_protobuf("resource.k8s.io/v1", "Nothing")

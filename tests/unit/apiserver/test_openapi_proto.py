"""The Swagger 2.0 -> gnostic protobuf encoder (apiserver/openapi_proto.py)."""

from __future__ import annotations

import pytest

from kubedra.apiserver import openapi_proto


def test_encodes_field_numbers_of_gnostic_document() -> None:
    doc = {"swagger": "2.0", "info": {"title": "Kubernetes", "version": "v1.30.0"},
           "definitions": {"X": {"type": "object", "additionalProperties": False}}}
    got = openapi_proto.encode(doc)
    # Document.swagger = 1, Document.info = 2 { title = 1, version = 2 }
    assert got.startswith(b"\x0a\x032.0\x12\x15\x0a\x0aKubernetes\x12\x07v1.30.0")
    # Document.definitions = 9 { additional_properties = 1 { name = 1, value = 2: Schema {
    #   type = 22 { value = 1 }, additional_properties = 21 { boolean = 2: false } } } }
    assert got.endswith(b"\x4a\x17\x0a\x15\x0a\x01X\x12\x10\xb2\x01\x08\x0a\x06object"
                        b"\xaa\x01\x02\x10\x00")


def test_unknown_keys_are_refused() -> None:
    with pytest.raises(ValueError, match="no protobuf field for 'nullable'"):
        openapi_proto.encode({"definitions": {"X": {"type": "string", "nullable": True}}})

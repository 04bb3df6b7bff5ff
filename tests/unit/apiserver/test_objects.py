"""Stored bytes → what clients get: the resourceVersion spliced into the stored JSON must
read back exactly as the decoded object with the version set, or not be offered at all."""

from __future__ import annotations

from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from kubedra.api import codec
from kubedra.api.meta import ObjectMeta
from kubedra.api.resource.v1alpha2 import ResourceClaim
from kubedra.apiserver import objects
from kubedra.storage.contract import KeyValue

_scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=12)
_json = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=3),
    max_leaves=10,
)
_strings = st.text(alphabet='{}"\\:,ab', max_size=10)  # what could fool a byte search


@given(api_version=_strings, kind=_strings,
       meta=st.dictionaries(_strings, _json, max_size=3),
       rest=st.dictionaries(st.sampled_from(["spec", "status", "data"]), _json, max_size=2),
       first=st.booleans(), revision=st.integers(min_value=1, max_value=2**62))
@settings(max_examples=400, deadline=None)
def test_spliced_bytes_read_back_as_the_object_with_its_version(
        api_version: str, kind: str, meta: dict[str, Any], rest: dict[str, Any],
        first: bool, revision: int) -> None:
    meta.pop("resourceVersion", None)
    obj: dict[str, Any] = {"apiVersion": api_version, "kind": kind, "metadata": meta, **rest}
    if first:  # metadata after a nested value: the top level cannot be told cheaply
        obj = {**rest, "apiVersion": api_version, "kind": kind, "metadata": meta}
    stored = objects.to_storage(obj)
    kv = KeyValue("/registry/x", stored, revision, revision)
    expected = objects.from_kv(kv)
    spliced = objects.with_revision(stored, revision)
    if spliced is not None:
        assert msgspec.json.decode(spliced) == expected
    got, data = objects.wire(kv)
    assert got == expected
    assert msgspec.json.decode(data) == expected


def test_typical_objects_are_spliced_not_encoded_again() -> None:
    stored = b'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{}}'
    assert objects.with_revision(stored, 7) == (
        b'{"apiVersion":"v1","kind":"Pod","metadata":{"resourceVersion":"7","name":"p"},'
        b'"spec":{}}')
    assert objects.with_revision(b'{"kind":"X","metadata":{}}', 3) == (
        b'{"kind":"X","metadata":{"resourceVersion":"3"}}')


def test_bytes_it_cannot_read_safely_are_left_to_the_encoder() -> None:
    nested_first = b'{"spec":{"metadata":{}},"metadata":{"name":"p"}}'
    assert objects.with_revision(nested_first, 1) is None
    with_version = b'{"kind":"Event","metadata":{},"involvedObject":{"resourceVersion":"4"}}'
    assert objects.with_revision(with_version, 1) is None
    assert objects.with_revision(b'{"kind":"X"}', 1) is None


def test_managed_fields_are_put_where_the_typed_encoding_puts_them() -> None:
    """The server encodes an object without its managedFields and appends them after
    (rest.create, admission.before_update): that is the typed encoding's place only while
    ``managed_fields`` stays ObjectMeta's last field."""
    assert ObjectMeta.__struct_fields__[-1] == "managed_fields"
    every_field = {"name": "c", "generateName": "c-", "namespace": "ns", "selfLink": "/x",
                   "uid": "u", "resourceVersion": "1", "generation": 1,
                   "creationTimestamp": "2024-01-01T00:00:00Z",
                   "deletionTimestamp": "2024-01-01T00:00:00Z",
                   "deletionGracePeriodSeconds": 0, "labels": {"a": "b"},
                   "annotations": {"a": "b"}, "ownerReferences": [
                       {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "u"}],
                   "finalizers": ["f"], "managedFields": [
                       {"manager": "m", "operation": "Update", "apiVersion": "v1",
                        "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {}}}]}
    assert len(every_field) == len(ObjectMeta.__struct_fields__)
    typed = codec.decode({"apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClaim",
                          "metadata": every_field, "spec": {"resourceClassName": "gpu"}},
                         ResourceClaim)
    whole = codec.to_builtins(typed)
    typed.metadata.managed_fields = None
    split = codec.to_builtins(typed)
    objects.put_managed_fields(split, whole["metadata"]["managedFields"])
    assert objects.encode(split) == objects.encode(whole)

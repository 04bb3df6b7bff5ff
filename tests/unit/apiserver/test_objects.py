"""Stored bytes → what clients get: the resourceVersion spliced into the stored JSON must
read back exactly as the decoded object with the version set, or not be offered at all."""

from __future__ import annotations

from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

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

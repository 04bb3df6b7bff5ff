"""Stored objects: JSON bytes in the store, dicts in the request path.

The store holds each object as JSON without ``metadata.resourceVersion``; the version is the
key's mod revision and is stamped on when an object leaves the store (as upstream's etcd3
storage does). :class:`WireCache` keeps the last decoded form and encoded bytes per key so a
GET or a watch fan-out encodes each revision once: a write's own object becomes the entry,
and the answer and the watch event share its stored bytes with the resourceVersion spliced
in (:func:`with_revision`), so a write encodes its object once.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import msgspec

from kubedra.api.base import Obj
from kubedra.storage.contract import KeyValue

_decoder = msgspec.json.Decoder()
_encoder = msgspec.json.Encoder()
encode = _encoder.encode


def decode(data: bytes) -> Any:
    return _decoder.decode(data)


def clone(obj: Obj) -> Obj:
    """A deep copy of a JSON object (an encode/decode round trip beats deepcopy)."""
    out: Obj = _decoder.decode(_encoder.encode(obj))
    return out


def meta(obj: Obj) -> Obj:
    """The object's metadata dict, created if missing (or replaced if it is not a dict)."""
    m = obj.get("metadata")
    if not isinstance(m, dict):
        m = {}
        obj["metadata"] = m
    return m


def put_managed_fields(obj: Obj, entries: Any) -> None:
    """Put the server's managedFields record (kept as JSON, off the typed path) into ``obj``,
    the encoding of a typed object without them. Appended last, where the typed encoding
    puts them: ``managed_fields`` is the last field of ObjectMeta (``api/meta.py``), as
    upstream's ``ManagedFields``, so the stored bytes keep upstream's key order either way
    (``tests/unit/apiserver/test_objects.py`` fails if ObjectMeta's order changes)."""
    obj["metadata"]["managedFields"] = entries


def to_storage(obj: Obj) -> bytes:
    """Encode for the store: resourceVersion is never persisted."""
    m = obj.get("metadata")
    if isinstance(m, dict) and "resourceVersion" in m:
        rv = m.pop("resourceVersion")
        try:
            return encode(obj)
        finally:
            m["resourceVersion"] = rv
    return encode(obj)


_METADATA = b'"metadata":{'
_RESOURCE_VERSION = b'"resourceVersion":'


def with_revision(stored: bytes, revision: int) -> bytes | None:
    """The wire form of stored bytes, ``metadata.resourceVersion`` spliced in as the first
    field of the metadata, instead of encoding the object a second time; None when the
    top-level metadata cannot be told from the bytes (a caller then encodes).

    The first ``"metadata":{`` is a key (a quote inside a JSON string is escaped), and it is
    the top level's when no other ``{`` comes before it. Stored bytes never carry a
    resourceVersion (:func:`to_storage`); any occurrence, even a nested one, falls back."""
    at = stored.find(_METADATA)
    if at < 0 or stored.count(b"{", 0, at) != 1 or _RESOURCE_VERSION in stored:
        return None
    head = at + len(_METADATA)
    field = b'"resourceVersion":"%d"' % revision
    if stored[head:head + 1] != b"}":
        field += b","
    return stored[:head] + field + stored[head:]


def _wire_bytes(kv: KeyValue, revision: int, obj: Obj) -> bytes:
    """What a client gets for ``kv`` at ``revision`` (``obj`` is it decoded)."""
    return with_revision(kv.value, revision) or encode(obj)


def from_kv(kv: KeyValue, revision: int | None = None) -> Obj:
    """A fresh, mutable dict of a stored object with its resourceVersion set."""
    obj: Obj = decode(kv.value)
    meta(obj)["resourceVersion"] = str(revision if revision is not None else kv.mod_revision)
    return obj


def wire(kv: KeyValue, revision: int | None = None) -> tuple[Obj, bytes]:
    """A stored object as :func:`from_kv` gives it, and its bytes as a client gets them."""
    rev = revision if revision is not None else kv.mod_revision
    obj = from_kv(kv, rev)
    return obj, _wire_bytes(kv, rev, obj)


def at_revision(kv: KeyValue, obj: Obj, revision: int) -> tuple[Obj, bytes]:
    """``obj`` (``kv`` decoded, shared) as of ``revision`` (a delete's): a copy of its top
    level and metadata with that resourceVersion, everything below shared, and its bytes
    as a client gets them."""
    meta = obj.get("metadata")
    out = dict(obj, metadata=dict(meta if isinstance(meta, dict) else {},
                                  resourceVersion=str(revision)))
    return out, _wire_bytes(kv, revision, out)


class WireCache:
    """key → (revision, dict, bytes) for the latest revision served of each key, bounded;
    beside it, filled on demand, (key, version) → the same in another served version than
    the stored one (one conversion per revision and version)."""

    def __init__(self, capacity: int = 50_000) -> None:
        self._items: OrderedDict[str, tuple[int, Obj, bytes]] = OrderedDict()
        self._versions: OrderedDict[tuple[str, str], tuple[int, Obj, bytes]] = OrderedDict()
        self._capacity = capacity

    def served(self, kv: KeyValue, version: str,
               convert: Callable[[Obj, bytes], tuple[Obj, bytes]]) -> tuple[Obj, bytes]:
        """``kv`` in served ``version`` (shared: do not mutate): ``convert`` of its stored
        form, run once per revision."""
        hit = self._versions.get((kv.key, version))
        if hit is not None and hit[0] == kv.mod_revision:
            return hit[1], hit[2]
        obj, data = convert(*self.get(kv))
        self._versions[(kv.key, version)] = (kv.mod_revision, obj, data)
        if len(self._versions) > self._capacity:
            self._versions.popitem(last=False)
        return obj, data

    def get(self, kv: KeyValue, revision: int | None = None) -> tuple[Obj, bytes]:
        """Decoded object (shared: do not mutate) and its encoded bytes."""
        rev = revision if revision is not None else kv.mod_revision
        hit = self._hit(kv.key, rev)
        if hit is not None:
            return hit[1], hit[2]
        return self._keep(kv.key, rev, *wire(kv, rev))

    def decoded(self, kv: KeyValue) -> Obj:
        """The object of ``kv`` (shared: do not mutate): the cached one when it is that
        revision, else a fresh decode, not kept (the caller only reads it)."""
        hit = self._hit(kv.key, kv.mod_revision)
        return hit[1] if hit is not None else from_kv(kv)

    def _hit(self, key: str, revision: int) -> tuple[int, Obj, bytes] | None:
        hit = self._items.get(key)
        return hit if hit is not None and hit[0] == revision else None

    def put(self, kv: KeyValue, obj: Obj) -> tuple[Obj, bytes]:
        """``obj`` is what was just written as ``kv``: it becomes the cached (shared) form,
        with its resourceVersion set, so neither the answer nor the watch event decodes the
        stored bytes again, and the answer's bytes are the stored ones with the version
        spliced in. The caller gives ``obj`` away."""
        meta(obj)["resourceVersion"] = str(kv.mod_revision)
        return self._keep(kv.key, kv.mod_revision, obj, _wire_bytes(kv, kv.mod_revision, obj))

    def _keep(self, key: str, revision: int, obj: Obj, data: bytes) -> tuple[Obj, bytes]:
        self._items[key] = (revision, obj, data)
        if len(self._items) > self._capacity:
            self._items.popitem(last=False)
        return obj, data

    def forget(self, key: str) -> None:
        self._items.pop(key, None)  # a version's entry is stale by its revision

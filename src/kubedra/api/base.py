"""The base of every wire model.

Models are msgspec Structs with camelCase JSON names. Optional fields default to ``None`` and
are left out when encoding, as Go's ``omitempty`` does. Lists that upstream writes even when
empty (``items``, ``instances``, ``results``, ...) use :func:`required_list`, whose factory is
not a builtin: msgspec then always encodes the field, so an empty one comes out as ``[]``.
"""

from __future__ import annotations

import functools
from typing import Annotated, Any

import msgspec

#: A JSON object as plain values (the form of request bodies, stored objects and patches).
Obj = dict[str, Any]


def dig(obj: Any, *path: str) -> Any:
    """The value at ``path`` inside nested JSON objects, or None where one is missing."""
    for p in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(p)
    return obj


class Model(msgspec.Struct, rename="camel", omit_defaults=True, kw_only=True, gc=False):
    """A JSON object of the Kubernetes API.

    Not tracked by the cycle collector (``gc=False``): a model holds JSON values and other
    models, which never form a cycle, and the collector walked every object of every
    informer cache and request in flight (about 7 % of each component's CPU in
    ``bench/job_bench.py``). Never store a reference back to a model inside it."""


def _empty_list() -> list[Any]:
    return []


def required_list() -> Any:
    """A field default for a list that upstream always writes (never omitted, never null)."""
    return msgspec.field(default_factory=_empty_list)


def _null() -> Any:
    return None


def raw_extension() -> Any:
    """A field default for a ``runtime.RawExtension``: unset is ``None``, encoded as ``null``.

    The factory is not a builtin, so msgspec never omits the key (Go always writes it).
    """
    return msgspec.field(default_factory=_null)


def null_to_empty(obj: Any, name: str) -> None:
    """Go writes a nil required list as ``null``; accept it and keep ``[]`` (msgspec calls
    ``__post_init__`` after decoding). The field's runtime type admits ``None`` for decoding,
    while type checkers see a plain list."""
    if getattr(obj, name) is None:
        setattr(obj, name, [])


def _same(value: Any) -> Any:
    return value


def always(value: Any, name: str | None = None) -> Any:
    """A field default for an immutable scalar that upstream always writes (a key without
    ``omitempty``, such as a container status' ``ready: false``): like :func:`required_list`,
    the non-builtin factory makes msgspec encode it even when it equals the zero value.
    ``name`` overrides the JSON key as in ``msgspec.field``."""
    return msgspec.field(default_factory=functools.partial(_same, value), name=name)


# Go's integer types. msgspec decodes integers of any size; the bounds make decode reject what
# a Go client could not hold (upstream answers 400), so no stored object breaks a typed reader.
Int32 = Annotated[int, msgspec.Meta(ge=-(2**31), le=2**31 - 1)]
Int64 = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]

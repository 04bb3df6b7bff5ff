"""Helpers over JSON-like values shared by the patch flavours."""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec

_encode = msgspec.json.Encoder().encode


def copy_json(value: Any) -> Any:
    """A deep copy of a JSON value (dicts, lists, scalars): several times cheaper than
    ``copy.deepcopy``, which keeps a memo for shared and cyclic structures JSON never has.
    Not ``objects.clone``'s encode and decode: the values a patch sets are mostly scalars
    (returned as they are) and short lists, for which that round trip costs more."""
    if isinstance(value, dict):
        return {k: copy_json(v) if isinstance(v, dict | list) else v for k, v in value.items()}
    if isinstance(value, list):
        return [copy_json(v) if isinstance(v, dict | list) else v for v in value]
    return value


def json_equal(a: Any, b: Any) -> bool:
    """Equality as JSON sees it: ``1 == 1.0`` but ``True != 1`` and dict order is ignored."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and bool(a == b)


def same_json(a: Any, b: Any) -> bool:
    """A quick, sound check that two JSON values are equal: the same scalar, or containers
    that are equal and encode to the same bytes (so no ``1`` meets a ``true`` or a ``1.0``).
    False may still be equal: :func:`json_equal` decides those."""
    if a is b:
        return True
    if type(a) is not type(b) or a != b:
        return False
    if not isinstance(a, dict | list):
        return True
    try:
        return bool(_encode(a) == _encode(b))
    except (TypeError, ValueError, msgspec.MsgspecError):
        return False


def same_kind(a: Any, b: Any) -> bool:
    """Whether two values have the same JSON type (ints and floats are distinct, as in Go's
    ``UnmarshalCaseSensitivePreserveInts``)."""
    return type(a) is type(b)


# printable ASCII but the characters any JSON encoder escapes its own way: " \\ & < >
_PLAIN = re.compile(r"[ !#-%'-;=?-\[\]-~]*")
_encode_sorted = msgspec.json.Encoder(order="sorted").encode


def _plain(value: Any) -> bool:
    return type(value) is int or (type(value) is str and _PLAIN.fullmatch(value) is not None)


def go_json(value: Any) -> str:
    """Compact JSON with sorted keys and Go's HTML escaping (``encoding/json`` of a map)."""
    if type(value) is str and _PLAIN.fullmatch(value):
        return f'"{value}"'  # a set's item (a finalizer): nothing to escape
    if type(value) is dict and all(type(k) is str and _PLAIN.fullmatch(k) and _plain(v)
                                   for k, v in value.items()):
        # a list item's keys ({"type":"Ready"}): nothing to escape, so msgspec's encoding
        # is the same text, at a fraction of json.dumps's cost
        return _encode_sorted(value).decode()
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")

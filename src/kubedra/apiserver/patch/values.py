"""Helpers over JSON-like values shared by the patch flavours."""

from __future__ import annotations

import json
from typing import Any


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


def same_kind(a: Any, b: Any) -> bool:
    """Whether two values have the same JSON type (ints and floats are distinct, as in Go's
    ``UnmarshalCaseSensitivePreserveInts``)."""
    return type(a) is type(b)


def go_json(value: Any) -> str:
    """Compact JSON with sorted keys and Go's HTML escaping (``encoding/json`` of a map)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")

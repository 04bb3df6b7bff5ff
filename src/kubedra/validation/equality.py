"""``apiequality.Semantic.DeepEqual`` for our models, used by every "field is immutable" check.

Upstream treats a nil and an empty slice or map as equal and compares Quantities by value. Our
models also use ``None`` for Go strings that are merely omitted, so ``None`` equals ``""``,
``[]`` and ``{}`` here. Booleans never equal numbers (JSON ``true`` is not ``1``).
"""

from __future__ import annotations

from typing import Any

import msgspec

from kubedra.api import codec


def _is_empty(value: Any) -> bool:
    return value is None or (isinstance(value, str | list | tuple | dict) and len(value) == 0)


def semantic_equal(a: Any, b: Any) -> bool:
    """True when ``a`` and ``b`` are equal under upstream's semantic equality."""
    if isinstance(a, msgspec.Struct) and type(a) is type(b) and codec.encode(a) == codec.encode(b):
        return True  # the same JSON is equal under any reading: most updates, at C speed
    return _equal(a, b)


def _equal(a: Any, b: Any) -> bool:
    if a is b:
        return True
    if _is_empty(a) and _is_empty(b):
        return True
    if a is None or b is None:
        return False
    if isinstance(a, msgspec.Struct) or isinstance(b, msgspec.Struct):
        if type(a) is not type(b):
            return False
        return all(_equal(getattr(a, f), getattr(b, f)) for f in a.__struct_fields__)
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    result = a == b
    return result is True

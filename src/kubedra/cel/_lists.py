"""The Kubernetes lists and regex libraries (apiserver:pkg/cel/library/{lists,regex}.go@v0.30.0).

cel-cpp has no type parameters usable from Python and registers one runtime implementation per
(function name, argument kinds). So the typed overloads (``list_int_max_int`` ...) are declared
without implementation for the type checker, and a single "shadow" overload over
``list(kubedra.Shadow)`` (which the checker never picks) carries the implementation with a
``dyn`` result. ``indexOf``/``lastIndexOf`` get one typed overload per element type.
"""

from __future__ import annotations

import datetime
import functools
from collections.abc import Callable, Sequence
from typing import Any, Final

import re2
from cel_expr_python import cel

from kubedra.cel import _cost
from kubedra.cel._decl import Overloads, overload
from kubedra.cel._proto import QUANTITY, SEMVER, SHADOW

T = cel.Type

COMPARABLE: Final = ("int", "uint", "double", "bool", "duration", "timestamp", "string", "bytes")
SUMMABLE: Final = ("int", "uint", "double", "duration")
# element types for indexOf/lastIndexOf; the value is the runtime-kind group
INDEXABLE: Final = (*COMPARABLE, QUANTITY, SEMVER)
_INT64: Final = (-(1 << 63), (1 << 63) - 1)


_TIME_TYPES: Final = (datetime.timedelta, datetime.datetime)


def _no_time(value: Any, name: str) -> Any:
    """cel-expr-python cannot return durations/timestamps from Python (docs/deviations.md)."""
    if isinstance(value, _TIME_TYPES):
        raise ValueError(f"{name}() over duration or timestamp lists is not supported")
    return value


def _is_sorted(lst: Sequence[Any]) -> bool:
    _cost.charge(len(lst) * _cost.PER_ELEMENT)
    return all(not (lst[i - 1] > lst[i]) for i in range(1, len(lst)))


def _sum(lst: Sequence[Any]) -> Any:
    _cost.charge(len(lst) * _cost.PER_ELEMENT)
    total: Any = 0
    for x in lst:
        total = total + x
        if isinstance(total, int) and not _INT64[0] <= total <= _INT64[1]:
            raise OverflowError("integer overflow")
    return _no_time(total, "sum")


def _extreme(name: str, better: Callable[[Any, Any], bool]) -> Callable[[Sequence[Any]], Any]:
    def impl(lst: Sequence[Any]) -> Any:
        _cost.charge(len(lst) * _cost.PER_ELEMENT)
        if not lst:
            raise ValueError(f"{name} called on empty list")
        best = lst[0]
        for x in lst[1:]:
            if better(x, best):
                best = x
        return _no_time(best, name)

    return impl


def _index_of(lst: Sequence[Any], item: Any) -> int:
    _cost.charge(len(lst) * _cost.PER_ELEMENT)
    for i, x in enumerate(lst):
        if x == item:
            return i
    return -1


def _last_index_of(lst: Sequence[Any], item: Any) -> int:
    _cost.charge(len(lst) * _cost.PER_ELEMENT)
    for i in range(len(lst) - 1, -1, -1):
        if lst[i] == item:
            return i
    return -1


def _kind(elem: str) -> str:
    """The cel-cpp runtime kind of an element type (all messages share one kind)."""
    return "message" if "." in elem else elem


def list_overloads() -> Overloads:
    shadow = T.List(T(SHADOW))
    out: Overloads = []
    groups: tuple[tuple[str, Callable[..., Any], tuple[str, ...], str | None], ...] = (
        ("isSorted", _is_sorted, COMPARABLE, "bool"),
        ("sum", _sum, SUMMABLE, None),
        ("max", _extreme("max", lambda a, b: a > b), COMPARABLE, None),
        ("min", _extreme("min", lambda a, b: a < b), COMPARABLE, None),
    )
    for name, impl, types, result in groups:
        suffix = "bool" if result else ""
        for t in types:
            oid = f"list_{t}_{name_id(name)}_{suffix or t}"
            out.append(overload(name, oid, T(result or t), [T(f"list<{t}>")]))
        out.append(overload(name, f"kubedra_shadow_{name}", T.DYN, [shadow], impl))
    seen: set[str] = set()
    for t in INDEXABLE:
        for name, impl in (("indexOf", _index_of), ("lastIndexOf", _last_index_of)):
            oid = f"list_{t.replace('.', '_').lower()}_{name_id(name)}_int"
            params = [T.List(T(t)), T(t)]
            key = f"{name}/{_kind(t)}"
            if key in seen:
                out.append(overload(name, oid, T.INT, params))
            else:
                seen.add(key)
                out.append(overload(name, oid, T.INT, params, impl))
    return out


def name_id(name: str) -> str:
    """``isSorted`` -> ``is_sorted`` (the overload-id spelling upstream uses)."""
    return "".join("_" + c.lower() if c.isupper() else c for c in name)


# ----------------------------------------------------------------------------- regex

_RE2_OPTIONS: Final = re2.Options()
_RE2_OPTIONS.log_errors = False


@functools.lru_cache(maxsize=512)
def compile_regex(pattern: str) -> Any:
    try:
        return re2.compile(pattern, options=_RE2_OPTIONS)
    except re2.error as e:
        msg = e.args[0].decode() if e.args and isinstance(e.args[0], bytes) else str(e)
        raise ValueError(f"Illegal regex: {msg}") from None


def _find(s: str, pattern: str) -> str:
    _cost.charge(len(s) + len(pattern))
    m = compile_regex(pattern).search(s)
    return m.group(0) if m else ""


def _find_all_n(s: str, pattern: str, n: int) -> list[str]:
    """Go ``FindAllString``: empty matches abutting a preceding match are skipped."""
    _cost.charge(len(s) + len(pattern))
    if n == 0:
        return []
    out: list[str] = []
    prev_end = -1
    for m in compile_regex(pattern).finditer(s):
        if m.start() == m.end() and m.start() == prev_end:
            continue
        out.append(m.group(0))
        prev_end = m.end()
        if 0 < n <= len(out):
            break
    return out


def _find_all(s: str, pattern: str) -> list[str]:
    return _find_all_n(s, pattern, -1)


def regex_overloads() -> Overloads:
    s, ls = T.STRING, T("list<string>")
    return [
        overload("find", "string_find_string", s, [s, s], _find),
        overload("findAll", "string_find_all_string", ls, [s, s], _find_all),
        overload("findAll", "string_find_all_string_int", ls, [s, s, T.INT], _find_all_n),
    ]

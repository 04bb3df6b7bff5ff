"""The ordering operators ``<``, ``<=``, ``>``, ``>=``, with cel-go's cross-type numeric
comparisons (``cel.CrossTypeNumericComparisons(true)``, in upstream's selector environments
since 1.28: ``attributes.int["n"] > 1.5``).

cel-cpp's checker has no such option and refuses a second declaration of ``_<_``, so the
environment leaves these four operators out of the standard library (:data:`STDLIB_CONFIG`)
and declares them again here with cel-go's overloads and ids (checker/decls of cel-go
v0.17), the mixed int/uint/double ones only from 1.28. Same-type overloads of non-double
types run cel-cpp's own implementations, which agree with cel-go. The overloads with a double
operand, and the int/uint mixes, are rewritten on the checked AST (:data:`HELPERS`,
``_ast.rename_calls``) into calls of helper functions implementing cel-go v0.17's
``common/types/compare.go``: a NaN operand is the error ``NaN values cannot be ordered``
(cel-cpp would answer false), an int or uint is compared with a double after conversion to
double (so ``9007199254740993 > 9007199254740992.0`` is false), a double beyond the int64 or
uint64 range orders before or after every value of it, and equality (``==``) stays
same-type as in cel-go. The helpers' names start with ``@``, which no expression can spell.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Final

from cel_expr_python import cel

from kubedra.cel._decl import Overloads, overload

T = cel.Type
_OPERATORS: Final = {"_<_": "less", "_<=_": "less_equals", "_>_": "greater",
                     "_>=_": "greater_equals"}
_HOLDS: Final[dict[str, Callable[[int], bool]]] = {
    "less": lambda c: c < 0, "less_equals": lambda c: c <= 0,
    "greater": lambda c: c > 0, "greater_equals": lambda c: c >= 0,
}
_SAME_TYPE: Final = (
    ("bool", T.BOOL), ("int64", T.INT), ("uint64", T.UINT), ("double", T.DOUBLE),
    ("string", T.STRING), ("bytes", T.BYTES), ("timestamp", T.TIMESTAMP),
    ("duration", T.DURATION),
)
_NUMBERS: Final = {"int64": T.INT, "uint64": T.UINT, "double": T.DOUBLE}
STDLIB_CONFIG: Final = cel.NewEnvConfigFromYaml(
    "stdlib:\n  exclude_functions:\n"
    + "".join(f'    - name: "{op}"\n' for op in _OPERATORS)
)

# float64 images of the int64/uint64 bounds, as Go's untyped-constant comparisons see them
_MIN_INT64: Final = float(-(1 << 63))
_MAX_INT64: Final = float((1 << 63) - 1)  # rounds to 2^63
_MAX_UINT64: Final = float((1 << 64) - 1)  # rounds to 2^64
NAN_ERROR: Final = "NaN values cannot be ordered"


class NaNOrderingError(ValueError):
    """cel-go's ``Compare`` on a NaN."""

    def __init__(self) -> None:
        super().__init__(NAN_ERROR)


def _double(a: float, b: float) -> int:
    if math.isnan(a) or math.isnan(b):
        raise NaNOrderingError()
    return -1 if a < b else (1 if a > b else 0)


def _double_int(d: float, i: int) -> int:
    if math.isnan(d):
        raise NaNOrderingError()
    if d < _MIN_INT64:
        return -1
    if d > _MAX_INT64:
        return 1
    return _double(d, float(i))


def _double_uint(d: float, u: int) -> int:
    if math.isnan(d):
        raise NaNOrderingError()
    if d < 0:
        return -1
    if d > _MAX_UINT64:
        return 1
    return _double(d, float(u))


def _int_uint(i: int, u: int) -> int:
    if i < 0 or u > (1 << 63) - 1:
        return -1
    return (i > u) - (i < u)


_COMPARE: Final[dict[tuple[str, str], Callable[[Any, Any], int]]] = {
    ("double", "double"): _double,
    ("double", "int64"): _double_int,
    ("int64", "double"): lambda i, d: -_double_int(d, i),
    ("double", "uint64"): _double_uint,
    ("uint64", "double"): lambda u, d: -_double_uint(d, u),
    ("int64", "uint64"): _int_uint,
    ("uint64", "int64"): lambda u, i: -_int_uint(i, u),
}


def _oid(name: str, a: str, b: str) -> str:
    """cel-go's overload id: ``less_int64`` (same type) or ``less_int64_double``."""
    return f"{name}_{a}" if a == b else f"{name}_{a}_{b}"


def _helper(name: str) -> str:
    return f"@kubedra_{name}"


# overload id the checker picks -> helper function the checked AST is rewritten to call
HELPERS: Final = {_oid(name, a, b): _helper(name)
                  for name in _OPERATORS.values() for a, b in _COMPARE}


def _implementation(name: str, a: str, b: str) -> Callable[[Any, Any], bool]:
    compare, holds = _COMPARE[(a, b)], _HOLDS[name]
    return lambda x, y: holds(compare(x, y))


def _helpers(pairs: list[tuple[str, str]]) -> Overloads:
    return [
        overload(_helper(name), f"kubedra_{_oid(name, a, b)}", T.BOOL,
                 [_NUMBERS[a], _NUMBERS[b]], _implementation(name, a, b), member=False)
        for name in _OPERATORS.values() for a, b in pairs
    ]


def same_type_overloads() -> Overloads:
    """The standard library's ordering overloads (bool … duration), and the double helper."""
    out = [overload(op, _oid(name, n, n), T.BOOL, [t, t], member=False)
           for op, name in _OPERATORS.items() for n, t in _SAME_TYPE]
    return out + _helpers([("double", "double")])


def cross_type_overloads() -> Overloads:
    """``CrossTypeNumericComparisons(true)``: int/uint/double mixed, and their helpers."""
    pairs = [p for p in _COMPARE if p[0] != p[1]]
    out = [overload(op, _oid(name, a, b), T.BOOL, [_NUMBERS[a], _NUMBERS[b]], member=False)
           for op, name in _OPERATORS.items() for a, b in pairs]
    return out + _helpers(pairs)

"""Function declarations, in the one form the environment (_env.py) takes from each library.

A library module returns :data:`Overloads`, ``(function name, cel.Overload)`` pairs built with
:func:`overload`.
"""

from __future__ import annotations

from typing import Any

from cel_expr_python import cel

Overloads = list[tuple[str, Any]]


def overload(
    name: str, oid: str, ret: Any, params: list[Any], impl: Any = None, *, member: bool = True
) -> tuple[str, Any]:
    """Overload ``oid`` of function ``name``. Without ``impl`` it only type-checks: cel-cpp
    dispatches by argument kind at run time, so the implementation of another overload with the
    same kinds runs (see _k8s.py and _lists.py)."""
    if impl is None:
        return (name, cel.Overload(oid, ret, params, member))
    return (name, cel.Overload(oid, ret, params, member, impl))

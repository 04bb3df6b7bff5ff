"""Selectors compiled and evaluated by :mod:`kubedra.cel` (StoredExpressions, as the scheduler).

Each instance's attributes are converted once (``cel.prepare``) and kept on the instance, so
repeated evaluations of different selectors reuse one activation.
"""

from __future__ import annotations

from kubedra import cel
from kubedra.allocation.instance import Instance
from kubedra.allocation.selectors import (
    Evaluator,
    SelectorCompileError,
    SelectorEvalError,
    Selectors,
)


def compile_selector(expression: str) -> Evaluator:
    """Compile ``expression``; a compile error carries upstream's detail text."""
    try:
        program = cel.compile_expression(expression, cel.EnvType.STORED_EXPRESSIONS)
    except cel.CompileError as err:
        raise SelectorCompileError(err.detail) from err

    def evaluate(instance: Instance) -> bool:
        prepared = instance.prepared
        if not isinstance(prepared, cel.Prepared):
            prepared = instance.prepared = cel.prepare(instance.attributes)
        try:
            return program.evaluate(prepared)
        except cel.EvalError as err:
            raise SelectorEvalError(str(err)) from err

    return evaluate


def cel_selectors() -> Selectors:
    """A selector cache compiling with CEL (what the scheduler and the simulator use)."""
    return Selectors(compile_selector)

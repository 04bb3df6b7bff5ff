"""Compiled selectors and the per-instance verdict cache.

A verdict is ``True``/``False`` or, when CEL evaluation failed, the error text. Verdicts live on
the :class:`~kubedra.allocation.instance.Instance` object, which the index replaces only when the
instance's ResourceSlice changes, so each selector is evaluated at most once per instance per
slice generation.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

from kubedra.allocation.instance import Instance, Verdict


class Evaluator(Protocol):
    """A compiled selector: True/False for one instance; :class:`SelectorEvalError` on a CEL
    runtime error.

    It may keep per-instance state (e.g. converted attributes) in ``instance.prepared``.
    """

    def __call__(self, instance: Instance) -> bool: ...


Compiler = Callable[[str], Evaluator]
T = TypeVar("T")


class SelectorCompileError(Exception):
    """The selector does not compile (message = the CEL compile error text)."""


class SelectorEvalError(Exception):
    """Evaluating the selector on an instance failed (message = cel-go's text)."""


_VERDICTS_PER_INSTANCE = 256


class Selector:
    """One compiled selector expression."""

    __slots__ = ("_evaluate", "expression")

    def __init__(self, expression: str, evaluate: Evaluator) -> None:
        self.expression = expression
        self._evaluate = evaluate

    def verdict(self, instance: Instance) -> Verdict:
        cached = instance.verdicts.get(self.expression)
        if cached is not None:
            return cached
        try:
            result: Verdict = bool(self._evaluate(instance))
        except SelectorEvalError as err:
            result = str(err)
        if len(instance.verdicts) >= _VERDICTS_PER_INSTANCE:
            instance.verdicts.clear()
        instance.verdicts[self.expression] = result
        return result


class CompileCache(Generic[T]):
    """Each distinct expression built once, LRU-bounded; a compile error is kept and raised
    again. The one cache of compiled selectors for both models (unique selectors cannot grow
    memory without limit)."""

    def __init__(self, build: Callable[[str], T], limit: int = 4096) -> None:
        self._build = build
        self._cache: dict[str, T | SelectorCompileError] = {}
        self._limit = limit

    def get(self, expression: str) -> T:
        """The built expression; raises :class:`SelectorCompileError`."""
        hit = self._cache.pop(expression, None)
        if hit is None:
            if len(self._cache) >= self._limit:
                del self._cache[next(iter(self._cache))]  # least recently used
            try:
                hit = self._build(expression)
            except SelectorCompileError as err:
                hit = err
        self._cache[expression] = hit
        if isinstance(hit, SelectorCompileError):
            raise hit
        return hit


class Selectors:
    """Compiles each distinct expression once and hands out shared :class:`Selector` objects
    (per-instance verdicts are bounded too). The compiler is given (CEL:
    :func:`.celadapter.cel_selectors`)."""

    def __init__(self, compiler: Compiler, limit: int = 4096) -> None:
        self._cache = CompileCache(lambda e: Selector(e, compiler(e)), limit)

    def get(self, expression: str) -> Selector:
        return self._cache.get(expression)

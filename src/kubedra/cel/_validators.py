"""The AST validators of the 1.29 base environment that cel-cpp lacks.

apiserver:pkg/cel/environment/base.go@v0.30.0 adds (1.29) cel-go's ``ValidateDurationLiterals``,
``ValidateTimestampLiterals``, ``ValidateRegexLiterals`` and (1.0 checker option, 1.29
validator) homogeneous aggregate literals. cel-go reports, after a successful type-check:

* ``invalid duration argument`` / ``invalid timestamp argument`` / ``invalid matches argument``
  at a string literal given as argument 0 of ``duration``/``timestamp``/``matches`` that does
  not evaluate / compile (for ``"s".matches(re)`` argument 0 is the pattern);
* ``expected type 'T1' but found 'T2'`` at the first list element (or map key/value) whose type
  differs from the first one (``dyn`` is compatible with anything; literals directly inside a
  ``format`` call are exempt).

Issues are formatted like cel-go's ``Issues.String()``, sorted by position.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Final

import re2
from cel_expr_python import cel

from kubedra.cel._ast import _Reader, _Span

_EXPR_ID, _CONST, _CALL, _LIST, _STRUCT, _COMPREHENSION, _SELECT = 2, 3, 6, 7, 8, 9, 5
_CONST_STRING: Final = 6
_PRIMITIVES: Final = {1: "bool", 2: "int", 3: "uint", 4: "double", 5: "string", 6: "bytes"}
_WELL_KNOWN: Final = {1: "any", 2: "google.protobuf.Timestamp", 3: "google.protobuf.Duration"}
_RE2_OPTIONS: Final = re2.Options()
_RE2_OPTIONS.log_errors = False


@functools.lru_cache(maxsize=1)
def _conversion_env() -> Any:
    return cel.NewEnv(variables={"s": cel.Type.STRING})


@functools.lru_cache(maxsize=256)
def _converts(function: str, literal: str) -> bool:
    env = _conversion_env()
    result = env.compile(f"{function}(s)").eval(env.Activation({"s": literal}))
    return bool(result.type() != cel.Type.ERROR)


@functools.lru_cache(maxsize=256)
def _regex_ok(pattern: str) -> bool:
    try:
        re2.compile(pattern, options=_RE2_OPTIONS)
    except re2.error:
        return False
    return True


_LITERAL_CHECKS: Final[dict[str, Callable[[str], bool]]] = {
    "duration": lambda s: _converts("duration", s),
    "timestamp": lambda s: _converts("timestamp", s),
    "matches": _regex_ok,
}


def format_type(r: _Reader, span: _Span) -> str:
    """cel-go ``FormatCELType`` of a ``cel.expr.Type``."""
    for num, wt, s, e in r.fields(*span):
        if num == 1:
            return "dyn"
        if num == 2:
            return "null_type"
        if num == 3 and wt == 0:
            return _PRIMITIVES.get(r.varint(s)[0], "dyn")
        if num == 4 and wt == 0:
            return f"wrapper({_PRIMITIVES.get(r.varint(s)[0], 'dyn')})"
        if num == 5 and wt == 0:
            return _WELL_KNOWN.get(r.varint(s)[0], "dyn")
        if num == 6:
            elem = r.sub(s, e, 1)
            return f"list({format_type(r, elem[0]) if elem else 'dyn'})"
        if num == 7:
            k, v = r.sub(s, e, 1), r.sub(s, e, 2)
            return f"map({format_type(r, k[0])}, {format_type(r, v[0])})"
        if num == 9:
            return r.text((s, e))
        if num == 10:
            return r.text((s, e))
        if num == 11:
            return f"type({format_type(r, (s, e))})" if e > s else "type"
        if num == 14:
            name = r.text(r.sub(s, e, 1)[0])
            params = ", ".join(format_type(r, p) for p in r.sub(s, e, 2))
            return f"{name}({params})" if params else name
    return "dyn"


class LiteralValidator:
    """Collects validator issues of one ``CheckedExpr`` (see module docstring)."""

    def __init__(self, r: _Reader, checked: _Span) -> None:
        self.r = r
        self.types: dict[int, _Span] = dict(r.int_keyed_entries(checked[0], checked[1], 3))
        self.positions: dict[int, int] = {}
        self.line_offsets: list[int] = []
        for ss, se in r.sub(checked[0], checked[1], 5):  # source_info
            for num, wt, fs, fe in r.fields(ss, se):
                if num == 3 and wt == 2:  # packed line_offsets
                    pos = fs
                    while pos < fe:
                        v, pos = r.varint(pos)
                        self.line_offsets.append(v)
                elif num == 3 and wt == 0:
                    self.line_offsets.append(r.varint(fs)[0])
                elif num == 4 and wt == 2:
                    k = v2 = 0
                    for n2, w2, s2, _ in r.fields(fs, fe):
                        if n2 == 1 and w2 == 0:
                            k = r.varint(s2)[0]
                        elif n2 == 2 and w2 == 0:
                            v2 = r.varint(s2)[0]
                    self.positions[k] = v2
        self.issues: list[tuple[int, str]] = []  # (offset, message)
        for span in r.sub(checked[0], checked[1], 4):
            self.walk(span, in_format=False)

    def _id(self, span: _Span) -> int:
        for num, wt, s, _ in self.r.fields(*span):
            if num == _EXPR_ID and wt == 0:
                return self.r.varint(s)[0]
        return 0

    def _string_literal(self, span: _Span) -> str | None:
        for num, wt, s, e in self.r.fields(*span):
            if num == _CONST and wt == 2:
                for cnum, cwt, cs, ce in self.r.fields(s, e):
                    if cnum == _CONST_STRING and cwt == 2:
                        return self.r.text((cs, ce))
        return None

    def _report(self, span: _Span, message: str) -> None:
        self.issues.append((self.positions.get(self._id(span), 0), message))

    def walk(self, span: _Span, in_format: bool) -> None:
        r = self.r
        for num, wt, s, e in r.fields(*span):
            if wt != 2:
                continue
            if num == _CALL:
                self.call((s, e))
            elif num == _LIST:
                elements = r.sub(s, e, 1)
                optional = self._optional_indices(s, e)
                if not in_format:
                    self.homogeneous([x for i, x in enumerate(elements) if i not in optional])
                for x in elements:
                    self.walk(x, in_format)
            elif num == _STRUCT:
                keys: list[_Span] = []
                values: list[_Span] = []
                for es, ee in r.sub(s, e, 2):
                    parts = {n: (a, b) for n, w, a, b in r.fields(es, ee) if w == 2}
                    optional_entry = any(n == 5 for n, w, _, _ in r.fields(es, ee))
                    if 3 in parts:
                        keys.append(parts[3])
                        if not optional_entry and 4 in parts:
                            values.append(parts[4])
                    for n in (3, 4):
                        if n in parts:
                            self.walk(parts[n], in_format)
                if not in_format:
                    self.homogeneous(keys)
                    self.homogeneous(values)
            elif num == _SELECT:
                for x in r.sub(s, e, 1):
                    self.walk(x, False)
            elif num == _COMPREHENSION:
                for n, w, a, b in r.fields(s, e):
                    if w == 2 and n in (2, 4, 5, 6, 7):
                        self.walk((a, b), False)

    def _optional_indices(self, s: int, e: int) -> set[int]:
        out: set[int] = set()
        for num, wt, fs, fe in self.r.fields(s, e):
            if num == 2 and wt == 2:
                pos = fs
                while pos < fe:
                    v, pos = self.r.varint(pos)
                    out.add(v)
            elif num == 2 and wt == 0:
                out.add(self.r.varint(fs)[0])
        return out

    def call(self, span: _Span) -> None:
        r = self.r
        function = ""
        args: list[_Span] = []
        target: list[_Span] = []
        for num, wt, s, e in r.fields(*span):
            if num == 2 and wt == 2:
                function = r.text((s, e))
            elif num == 3 and wt == 2:
                args.append((s, e))
            elif num == 1 and wt == 2:
                target.append((s, e))
        check = _LITERAL_CHECKS.get(function)
        if check is not None and args:
            literal = self._string_literal(args[0])
            if literal is not None and not check(literal):
                self._report(args[0], f"invalid {function} argument")
        for x in target:
            self.walk(x, False)
        for x in args:
            self.walk(x, function == "format")

    def homogeneous(self, exprs: list[_Span]) -> None:
        first: bytes | None = None
        first_span: _Span | None = None
        for x in exprs:
            t = self.types.get(self._id(x))
            if t is None:
                continue
            tb = self.r.buf[t[0] : t[1]]
            if first is None or first_span is None:
                first, first_span = tb, t
                continue
            if tb != first and not self._is_dyn(t) and not self._is_dyn(first_span):
                expected, actual = format_type(self.r, first_span), format_type(self.r, t)
                self._report(x, f"expected type '{expected}' but found '{actual}'")
                return

    def _is_dyn(self, t: _Span) -> bool:
        return any(num == 1 for num, _, _, _ in self.r.fields(*t))

    def messages(self, source: str) -> list[str]:
        """The issues as cel-go prints them, sorted by position."""
        lines = source.split("\n")
        out = []
        for offset, message in sorted(self.issues, key=lambda i: i[0]):
            line = 0
            while line < len(self.line_offsets) and offset >= self.line_offsets[line]:
                line += 1
            start = self.line_offsets[line - 1] if line > 0 else 0
            col = offset - start
            text = lines[line].replace("\t", " ") if line < len(lines) else ""
            out.append(
                f"ERROR: <input>:{line + 1}:{col + 1}: {message}\n | {text}\n | {'.' * col}^"
            )
        return out


def literal_issues(serialized: bytes, source: str) -> list[str]:
    """cel-go validator issues for a checked expression (empty when there are none)."""
    r = _Reader(serialized)
    (value,) = r.sub(0, len(serialized), 2)
    return LiteralValidator(r, value).messages(source)

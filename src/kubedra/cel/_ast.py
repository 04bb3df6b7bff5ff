"""Static checks over a checked expression, read from cel-cpp's serialized ``CheckedExpr``,
and the one rewrite of it we make (:func:`rename_calls`, for _numeric.py's comparisons).

cel-expr-python exposes no AST, but ``Expression.serialize()`` returns a
``google.protobuf.Any`` holding a ``cel.expr.CheckedExpr``. This module walks its ``Expr`` tree
with a small protobuf wire-format reader (field numbers from cel-spec syntax.proto/checked.proto)
to estimate the work of one evaluation, given ``unknown``: the largest size a list or map that
is not a literal can have (the evaluation knows it from the instance's attributes):

* every node counts once per iteration of each enclosing comprehension; a comprehension over a
  list literal iterates ``len(list)`` times, over anything else ``unknown`` times; the
  multiplicity is capped at cel-cpp's iteration budget (10,000 per evaluation);
* calls that walk a whole list (our Python list functions, whose arguments cel-cpp converts on
  every call, and cel-cpp's list ``+`` and ``in``) add the list's length (literal) or
  ``unknown``; ``map``/``filter`` append to their result list, which cel-cpp copies on every
  step, so each step adds the iteration count (quadratic, as measured);
* calls of the string functions charged by size (_metered.py) add one walk of the longest
  string the instance holds;
* selecting the internal key field of our object types (e.g. ``q.kubedra_value_key``) is
  reported.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

from kubedra.cel._metered import STRING_OVERLOADS, STRING_TRAVERSAL
from kubedra.cel._proto import KEY_FIELD

ITERATION_BUDGET: Final = 10_000

# cel.expr.Expr fields
_ID, _IDENT, _SELECT, _CALL, _LIST, _STRUCT, _COMPREHENSION = 2, 4, 5, 6, 7, 8, 9
# our list functions (overload ids as chosen by the checker) walk their list operand
_LIST_FUNCTION_MARKERS: Final = (
    "_is_sorted_",
    "_sum_",
    "_max_",
    "_min_",
    "_index_of_int",
    "kubedra_shadow_",
    "list_join",
)
_SETS: Final = ("list_sets_contains_list", "list_sets_equivalent_list", "list_sets_intersects_list")
_ACCUMULATORS: Final = frozenset({"@result", "__result__"})
_Span = tuple[int, int]


class _Reader:
    __slots__ = ("buf", "list_calls", "string_calls")

    def __init__(self, buf: bytes) -> None:
        self.buf = buf
        self.list_calls: dict[int, tuple[int, ...]] = {}
        self.string_calls: set[int] = set()  # calls whose work grows with a string operand

    def varint(self, pos: int) -> tuple[int, int]:
        result = shift = 0
        buf = self.buf
        while True:
            b = buf[pos]
            pos += 1
            result |= (b & 0x7F) << shift
            if b < 0x80:
                return result, pos
            shift += 7

    def fields(self, start: int, end: int) -> list[tuple[int, int, int, int]]:
        """(field number, wire type, value start, value end) of a message's fields."""
        out = []
        pos = start
        while pos < end:
            key, pos = self.varint(pos)
            num, wt = key >> 3, key & 7
            if wt == 0:
                _, nxt = self.varint(pos)
            elif wt == 2:
                ln, pos = self.varint(pos)
                nxt = pos + ln
            elif wt == 1:
                nxt = pos + 8
            elif wt == 5:
                nxt = pos + 4
            else:
                raise ValueError(f"unsupported wire type {wt}")
            out.append((num, wt, pos, nxt))
            pos = nxt
        return out

    def sub(self, start: int, end: int, num: int) -> list[_Span]:
        return [(s, e) for n, wt, s, e in self.fields(start, end) if n == num and wt == 2]

    def int_keyed_entries(self, start: int, end: int, num: int) -> list[tuple[int, _Span]]:
        """(key, value span) of each entry of map field ``num`` (int64 keys, message values)."""
        out = []
        for es, ee in self.sub(start, end, num):
            key = val = None
            for n, wt, fs, fe in self.fields(es, ee):
                if n == 1 and wt == 0:
                    key = self.varint(fs)[0]
                elif n == 2 and wt == 2:
                    val = (fs, fe)
            if key is not None and val is not None:
                out.append((key, val))
        return out

    def text(self, span: _Span) -> str:
        return self.buf[span[0] : span[1]].decode()


@dataclass(slots=True)
class Analysis:
    """What the static pass found."""

    estimated_cost: int = 0
    selects_internal_field: bool = False


def size_bucket(n: int) -> int:
    """``n`` rounded up to a power of two: the sizes an estimate is cached for."""
    return 1 << max(n - 1, 0).bit_length()


class CheckedAst:
    """A parsed ``CheckedExpr``; :meth:`analyze` may be called for several ``unknown`` sizes."""

    def __init__(self, serialized: bytes) -> None:
        r = self._r = _Reader(serialized)
        # the overload ids the checker left possible for each call, by expression id
        self.overloads: dict[int, list[str]] = {}
        (value,) = r.sub(0, len(serialized), 2)  # Any.value
        for key, ref in r.int_keyed_entries(value[0], value[1], 2):  # CheckedExpr.reference_map
            ids = self.overloads[key] = [r.text(s) for s in r.sub(ref[0], ref[1], 3)]
            for oid in ids:  # Reference.overload_id
                operands = _list_operands(oid)
                if operands:
                    r.list_calls[key] = operands
                if oid in STRING_OVERLOADS:
                    r.string_calls.add(key)
        self._roots = r.sub(value[0], value[1], 4)  # CheckedExpr.expr

    def analyze(
        self, unknown: int, unknown_string: int = 0, iteration_cap: int = ITERATION_BUDGET
    ) -> Analysis:
        """The estimate when non-literal lists/maps hold up to ``unknown`` items and strings
        up to ``unknown_string`` characters (each string function walks one such string).
        Iterations count up to ``iteration_cap`` (cel-cpp's runtime bound; a worst-case
        estimate as upstream's ``MaxCost`` passes no cap)."""
        out = Analysis()
        walker = _Walker(self._r, max(0, unknown), out)
        walker.iteration_cap = iteration_cap
        walker.string_cost = 1 + math.ceil(max(0, unknown_string) * STRING_TRAVERSAL)
        for span in self._roots:
            walker.walk(span, 1, 0)
        return out


def _list_operands(overload_id: str) -> tuple[int, ...]:
    """Operands of a call that are lists walked in full: -1 is the member target, 0.. the
    arguments; () for calls that do not walk a list."""
    if overload_id == "in_list":
        return (1,)
    if overload_id == "add_list" or overload_id in _SETS:
        return (0, 1)
    if overload_id == "string_format":
        return (0,)
    if any(m in overload_id for m in _LIST_FUNCTION_MARKERS):
        return (-1,)
    return ()


class _Walker:
    __slots__ = ("iteration_cap", "out", "r", "string_cost", "unknown")

    def __init__(self, r: _Reader, unknown: int, out: Analysis) -> None:
        self.r, self.unknown, self.out = r, unknown, out
        self.string_cost = 1
        self.iteration_cap = ITERATION_BUDGET

    def list_len(self, span: _Span) -> int | None:
        for num, wt, vs, ve in self.r.fields(*span):
            if num == _LIST and wt == 2:
                return len(self.r.sub(vs, ve, 1))
        return None

    def is_accumulator(self, span: _Span) -> bool:
        for num, wt, fs, fe in self.r.fields(*span):
            if num == _IDENT and wt == 2:
                return any(self.r.text(s) in _ACCUMULATORS for s in self.r.sub(fs, fe, 1))
        return False

    def walk(self, span: _Span, mult: int, acc: int) -> None:
        """Add the cost of the Expr at ``span`` evaluated ``mult`` times; ``acc`` is the size
        the enclosing comprehension's accumulator list can reach."""
        r, out = self.r, self.out
        out.estimated_cost += mult
        fields = r.fields(*span)
        expr_id = next((r.varint(fs)[0] for n, wt, fs, _ in fields if n == _ID and wt == 0), -1)
        for num, wt, vs, ve in fields:
            if wt != 2:
                continue
            if num == _SELECT:
                for fnum, fwt, fs, fe in r.fields(vs, ve):
                    if fnum == 1 and fwt == 2:
                        self.walk((fs, fe), mult, acc)
                    elif fnum == 2 and fwt == 2 and r.text((fs, fe)) == KEY_FIELD:
                        out.selects_internal_field = True
            elif num == _CALL:
                if expr_id in r.string_calls:
                    out.estimated_cost += mult * self.string_cost
                operands = r.list_calls.get(expr_id, ())
                arg = 0
                for fnum, fwt, fs, fe in r.fields(vs, ve):
                    if fwt != 2 or fnum not in (1, 3):
                        continue
                    index = -1 if fnum == 1 else arg
                    arg += fnum == 3
                    if index in operands:
                        out.estimated_cost += mult * self.operand_size((fs, fe), acc)
                    self.walk((fs, fe), mult, acc)
            elif num == _LIST:
                for s in r.sub(vs, ve, 1):
                    self.walk(s, mult, acc)
            elif num == _STRUCT:
                for es, ee in r.sub(vs, ve, 2):
                    for fnum, fwt, fs, fe in r.fields(es, ee):
                        if fnum in (3, 4) and fwt == 2:
                            self.walk((fs, fe), mult, acc)
            elif num == _COMPREHENSION:
                self.comprehension((vs, ve), mult, acc)

    def operand_size(self, span: _Span, acc: int) -> int:
        if self.is_accumulator(span):
            return acc
        n = self.list_len(span)
        return self.unknown if n is None else n

    def comprehension(self, span: _Span, mult: int, acc: int) -> None:
        parts = {num: (fs, fe) for num, wt, fs, fe in self.r.fields(*span) if wt == 2}
        cap = self.iteration_cap
        iters = min(self.unknown, cap)
        if 2 in parts:
            n = self.list_len(parts[2])
            if n is not None:
                iters = min(n, cap)
        inner = min(mult * iters, cap)
        for num in (2, 4, 7):  # range, accumulator init, result
            if num in parts:
                self.walk(parts[num], mult, acc)
        for num in (5, 6):  # loop condition and step run once per iteration
            if num in parts:
                self.walk(parts[num], inner, iters)


# --- rewriting -----------------------------------------------------------------------------

# the message fields that hold messages, per message type (cel-spec syntax.proto/checked.proto)
_CHILDREN: Final[dict[str, dict[int, str]]] = {
    "Any": {2: "CheckedExpr"},
    "CheckedExpr": {4: "Expr"},
    "Expr": {_SELECT: "Select", _CALL: "Call", _LIST: "CreateList", _STRUCT: "CreateStruct",
             _COMPREHENSION: "Comprehension"},
    "Select": {1: "Expr"},
    "Call": {1: "Expr", 3: "Expr"},
    "CreateList": {1: "Expr"},
    "CreateStruct": {2: "Entry"},
    "Entry": {3: "Expr", 4: "Expr"},
    "Comprehension": {2: "Expr", 4: "Expr", 5: "Expr", 6: "Expr", 7: "Expr"},
}
_CALL_FUNCTION: Final = 2


def _varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def rename_calls(serialized: bytes, renames: dict[int, str]) -> bytes:
    """The serialized ``CheckedExpr`` with the function of each call whose expression id is
    in ``renames`` replaced (the checker's types and references stay as they are)."""
    r = _Reader(serialized)

    def message(span: _Span, kind: str, rename: str | None) -> bytes:
        out = bytearray()
        children = _CHILDREN.get(kind, {})
        fields = r.fields(*span)
        if kind == "Expr":
            expr_id = next((r.varint(fs)[0] for n, wt, fs, _ in fields if n == _ID and wt == 0),
                           -1)
            rename = renames.get(expr_id)
        for num, wt, start, end in fields:
            if wt == 2 and num in children:
                data = message((start, end), children[num], rename)
            elif wt == 2 and kind == "Call" and num == _CALL_FUNCTION and rename is not None:
                data = rename.encode()
            else:
                out += _varint(num << 3 | wt)
                if wt == 2:
                    out += _varint(end - start)
                out += r.buf[start:end]
                continue
            out += _varint(num << 3 | 2) + _varint(len(data)) + data
        return bytes(out)

    return message((0, len(serialized)), "Any", None)


# --- resource.k8s.io/v1: unknown domains read as empty maps ----------------------------------

def _len_field(num: int, payload: bytes) -> bytes:
    return _varint(num << 3 | 2) + _varint(len(payload)) + payload


def _varint_field(num: int, value: int) -> bytes:
    return _varint(num << 3) + _varint(value)


def _expr(expr_id: int, kind: int, payload: bytes) -> bytes:
    return _varint_field(_ID, expr_id) + _len_field(kind, payload)


# cel.expr.Type of ``device.attributes`` / ``device.capacity`` as the checker records it:
# map(string, map(string, dyn)) (Type.map_type = 7, MapType.key_type/value_type = 1/2,
# Type.primitive = 3 with STRING = 5, Type.dyn = 1)
_STRING_TYPE: Final = _varint_field(3, 5)
DOMAIN_MAP_TYPE: Final = _len_field(7, _len_field(1, _STRING_TYPE) + _len_field(
    2, _len_field(7, _len_field(1, _STRING_TYPE) + _len_field(2, _len_field(1, b""))))
)
_CONST, _CONST_BOOL, _CONST_STRING = 3, 2, 6
_SELECT_OPERAND, _SELECT_FIELD, _SELECT_TEST_ONLY = 1, 2, 3
_CALL_TARGET, _CALL_ARGS = 1, 3


_Part = tuple[int, int, bytes, int]


def _max_expr_id(r: _Reader, span: _Span, kind: str) -> int:
    """The largest ``Expr.id`` in the message at ``span`` (new nodes take ids above it)."""
    children = _CHILDREN.get(kind, {})
    top = 0
    for num, wt, start, end in r.fields(*span):
        if kind == "Expr" and num == _ID and wt == 0:
            top = max(top, r.varint(start)[0])
        elif wt == 2 and num in children:
            top = max(top, _max_expr_id(r, (start, end), children[num]))
    return top


def default_empty_domains(serialized: bytes) -> bytes | None:
    """The serialized ``CheckedExpr`` with every lookup of a domain in a map typed as
    ``device.attributes``/``device.capacity`` made total, as upstream's mapper does:
    ``m[k]`` and ``m.k`` become ``m[?k].orValue({})`` (an unknown domain reads as an empty
    map); as that mapper finds every key, ``has(m.k)`` becomes ``true`` and the optional
    lookups ``m[?k]``/``m.?k`` become ``optional.of(m[?k].orValue({}))``; ``k in m`` and
    iteration see only the real domains. None when the expression has no such lookup."""
    r = _Reader(serialized)
    (value,) = r.sub(0, len(serialized), 2)  # Any.value
    typed = r.int_keyed_entries(value[0], value[1], 3)  # CheckedExpr.type_map
    maps = {key for key, span in typed if r.buf[span[0] : span[1]] == DOMAIN_MAP_TYPE}
    if not maps:
        return None
    next_id = _max_expr_id(r, (0, len(serialized)), "Any") + 1

    def fresh() -> int:
        nonlocal next_id
        next_id += 1
        return next_id - 1

    def total_lookup(eid: int, operand: bytes, key: bytes) -> bytes:
        optional = _expr(fresh(), _CALL, _len_field(_CALL_FUNCTION, b"_[?_]")
                         + _len_field(_CALL_ARGS, operand) + _len_field(_CALL_ARGS, key))
        empty = _expr(fresh(), _STRUCT, b"")
        return _expr(eid, _CALL, _len_field(_CALL_TARGET, optional)
                     + _len_field(_CALL_FUNCTION, b"orValue") + _len_field(_CALL_ARGS, empty))

    def replace(eid: int, kind: int, parts: list[_Part]) -> bytes | None:
        """The replacement of Expr ``eid`` whose ``kind`` message has (rebuilt) ``parts``."""
        if kind == _CALL:
            args = [p for p in parts if p[0] == _CALL_ARGS]
            function = next((p[2] for p in parts if p[0] == _CALL_FUNCTION), b"")
            if (len(args) != 2 or args[0][3] not in maps
                    or any(p[0] == _CALL_TARGET for p in parts)):
                return None
            if function == b"_[_]":
                return total_lookup(eid, args[0][2], args[1][2])
            if function in (b"_[?_]", b"_?._"):  # m[?k], m.?k: present as well
                return _expr(eid, _CALL, _len_field(_CALL_FUNCTION, b"optional.of") + _len_field(
                    _CALL_ARGS, total_lookup(fresh(), args[0][2], args[1][2])))
            return None
        operand = next((p for p in parts if p[0] == _SELECT_OPERAND), None)
        if operand is None or operand[3] not in maps:
            return None
        if any(p[0] == _SELECT_TEST_ONLY and p[2] == b"\x01" for p in parts):
            return _expr(eid, _CONST, _varint_field(_CONST_BOOL, 1))
        field = next(p[2] for p in parts if p[0] == _SELECT_FIELD)
        return total_lookup(eid, operand[2], _expr(fresh(), _CONST,
                                                   _len_field(_CONST_STRING, field)))

    changed = False

    def message(span: _Span, kind: str) -> tuple[bytes, list[_Part], int]:
        """The re-encoded message, its parts (field, wire type, payload, Expr id of a child
        Expr or -1) and, for an Expr, its id."""
        nonlocal changed
        children = _CHILDREN.get(kind, {})
        parts: list[_Part] = []
        fields = r.fields(*span)
        eid = next((r.varint(fs)[0] for n, wt, fs, _ in fields if n == _ID and wt == 0), -1)
        for num, wt, start, end in fields:
            if wt == 2 and num in children:
                data, sub_parts, child_id = message((start, end), children[num])
                if kind == "Expr" and num in (_SELECT, _CALL):
                    new = replace(eid, num, sub_parts)
                    if new is not None:
                        changed = True
                        return new, [], eid
                parts.append((num, wt, data, child_id))
            else:
                parts.append((num, wt, r.buf[start:end], -1))
        out = bytearray()
        for num, wt, payload, _ in parts:
            out += _varint(num << 3 | wt)
            if wt == 2:
                out += _varint(len(payload))
            out += payload
        return bytes(out), parts, eid

    rewritten = message((0, len(serialized)), "Any")[0]
    return rewritten if changed else None

"""cel-go ``ext.Strings`` (version 2, cel-go v0.17.8 ext/strings.go) and ``ext.Sets``, in Python.

Not cel-cpp's ``ext_strings``: its ``indexOf``/``lastIndexOf`` declarations collide with the
Kubernetes list functions of the same names. Indexes count Unicode code points (Go runes);
error texts are cel-go's (``index out of range: N``,
``invalid substring range. start: N, end: M``). Every function charges the per-evaluation
cost meter with the characters it reads and writes, so chains such as repeated ``replace``
cannot grow strings without bound.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Final

from cel_expr_python import cel

from kubedra.api.goformat import GO_ESCAPES
from kubedra.cel import _cost
from kubedra.cel._decl import Overloads, overload

T = cel.Type

# unicode.IsSpace (what strings.TrimSpace removes)
_GO_SPACE: Final = (
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
    "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
_ASCII_LOWER: Final = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_ASCII_UPPER: Final = str.maketrans("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _out(s: str, read: int = 0) -> str:
    _cost.charge(read + len(s))
    return s


def _range_error(i: int) -> ValueError:
    return ValueError(f"index out of range: {i}")


def _char_at(s: str, i: int) -> str:
    if i < 0 or i > len(s):
        raise _range_error(i)
    return _out(s[i : i + 1], len(s))


def _index_of_offset(s: str, sub: str, off: int) -> int:
    _cost.charge(len(s) + len(sub))
    if not sub:
        return off
    if off < 0 or off >= len(s):
        raise _range_error(off)
    r = s.find(sub, off)
    return r


def _index_of(s: str, sub: str) -> int:
    return _index_of_offset(s, sub, 0)


def _last_index_of_offset(s: str, sub: str, off: int) -> int:
    _cost.charge(len(s) + len(sub))
    if not sub:
        return off
    if off < 0 or off >= len(s):
        raise _range_error(off)
    off = min(off, len(s) - len(sub))
    if off < 0:
        return -1
    return s.rfind(sub, 0, off + len(sub))


def _last_index_of(s: str, sub: str) -> int:
    if not sub:
        return len(s)
    return _last_index_of_offset(s, sub, len(s) - 1)


def _lower_ascii(s: str) -> str:
    return _out(s.translate(_ASCII_LOWER), len(s))


def _upper_ascii(s: str) -> str:
    return _out(s.translate(_ASCII_UPPER), len(s))


def _replace_n(s: str, old: str, new: str, n: int) -> str:
    # bound the result before building it: at most len(s)+1 matches
    matches = s.count(old) if old else len(s) + 1
    if n >= 0:
        matches = min(matches, n)
    _cost.charge(len(s) + matches * len(new))
    return s.replace(old, new, n if n >= 0 else -1)


def _replace(s: str, old: str, new: str) -> str:
    return _replace_n(s, old, new, -1)


def _split_n(s: str, sep: str, n: int) -> list[str]:
    _cost.charge(len(s) * (1 + _cost.PER_ELEMENT))
    if n == 0:
        return []
    if sep:
        return s.split(sep, n - 1 if n > 0 else -1)
    chars = list(s)
    if 0 < n < len(chars):
        return [*chars[: n - 1], "".join(chars[n - 1 :])]
    return chars


def _split(s: str, sep: str) -> list[str]:
    return _split_n(s, sep, -1)


def _substring(s: str, start: int) -> str:
    if start < 0 or start > len(s):
        raise _range_error(start)
    return _out(s[start:], len(s))


def _substring_range(s: str, start: int, end: int) -> str:
    if start < 0 or start > len(s):
        raise _range_error(start)
    if end < 0 or end > len(s):
        raise _range_error(end)
    if start > end:
        raise ValueError(f"invalid substring range. start: {start}, end: {end}")
    return _out(s[start:end], len(s))


def _trim(s: str) -> str:
    return _out(s.strip(_GO_SPACE), len(s))


def _join(lst: Sequence[str]) -> str:
    return _join_sep(lst, "")


def _join_sep(lst: Sequence[str], sep: str) -> str:
    _cost.charge(len(lst) * (len(sep) + _cost.PER_ELEMENT))
    return _out(sep.join(lst))


def _quote(s: str) -> str:
    return _out('"' + "".join(GO_ESCAPES.get(c, c) for c in s) + '"', len(s))


def _fmt_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "null"
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "+Inf" if v > 0 else "-Inf"
        return repr(v).replace("e+", "e+")
    if isinstance(v, bytes | bytearray):
        return bytes(v).decode("utf-8", "replace")
    if isinstance(v, list):
        return "[" + ", ".join(_fmt_value(x) for x in v) + "]"
    if isinstance(v, dict):
        items = sorted((_fmt_value(k), _fmt_value(x)) for k, x in v.items())
        return "{" + ", ".join(f"{k}:{x}" for k, x in items) + "}"
    return str(v)


def _format(fmt: str, args: Sequence[Any]) -> str:
    """The common ``format`` clauses: %s %d %f %e %x %X %o %b %% (with .N precision)."""
    _cost.charge(len(fmt) + len(args) * _cost.PER_ELEMENT)
    out: list[str] = []
    i = argi = 0
    while i < len(fmt):
        c = fmt[i]
        if c != "%":
            out.append(c)
            i += 1
            continue
        i += 1
        if i < len(fmt) and fmt[i] == "%":
            out.append("%")
            i += 1
            continue
        prec = None
        if i < len(fmt) and fmt[i] == ".":
            j = i + 1
            while j < len(fmt) and fmt[j].isdigit():
                j += 1
            prec = int(fmt[i + 1 : j] or "0")
            i = j
        if i >= len(fmt):
            raise ValueError("could not parse formatting clause: unexpected end of string")
        verb = fmt[i]
        i += 1
        if argi >= len(args):
            raise ValueError(f"index {argi} out of range")
        arg = args[argi]
        argi += 1
        out.append(_format_clause(verb, arg, prec))
        _cost.charge(len(out[-1]))
    return "".join(out)


def _format_clause(verb: str, arg: Any, prec: int | None) -> str:
    if verb == "s":
        return _fmt_value(arg)
    if verb == "d" and isinstance(arg, int) and not isinstance(arg, bool):
        return str(arg)
    if verb in "fe" and isinstance(arg, int | float) and not isinstance(arg, bool):
        return f"{float(arg):.{6 if prec is None else prec}{verb}}"
    if verb in "xXob" and isinstance(arg, int) and not isinstance(arg, bool):
        return format(arg, verb)
    if verb in "xX" and isinstance(arg, str):
        h = arg.encode().hex()
        return h.upper() if verb == "X" else h
    raise ValueError(f'could not parse formatting clause: unrecognized formatting clause "{verb}"')


def _contains_all(a: Sequence[Any], b: Sequence[Any]) -> bool:
    _cost.charge(len(a) * len(b) + (len(a) + len(b)) * _cost.PER_ELEMENT)
    return all(any(x == y for y in a) for x in b)


def _equivalent(a: Sequence[Any], b: Sequence[Any]) -> bool:
    return _contains_all(a, b) and _contains_all(b, a)


def _intersects(a: Sequence[Any], b: Sequence[Any]) -> bool:
    _cost.charge(len(a) * len(b) + (len(a) + len(b)) * _cost.PER_ELEMENT)
    return any(any(x == y for y in a) for x in b)


def string_overloads() -> Overloads:
    s, i, ls = T.STRING, T.INT, T("list<string>")

    return [
        overload("charAt", "string_char_at_int", s, [s, i], _char_at),
        overload("indexOf", "string_index_of_string", i, [s, s], _index_of),
        overload("indexOf", "string_index_of_string_int", i, [s, s, i], _index_of_offset),
        overload("lastIndexOf", "string_last_index_of_string", i, [s, s], _last_index_of),
        overload(
            "lastIndexOf", "string_last_index_of_string_int", i, [s, s, i], _last_index_of_offset
        ),
        overload("lowerAscii", "string_lower_ascii", s, [s], _lower_ascii),
        overload("replace", "string_replace_string_string", s, [s, s, s], _replace),
        overload("replace", "string_replace_string_string_int", s, [s, s, s, i], _replace_n),
        overload("split", "string_split_string", ls, [s, s], _split),
        overload("split", "string_split_string_int", ls, [s, s, i], _split_n),
        overload("substring", "string_substring_int", s, [s, i], _substring),
        overload("substring", "string_substring_int_int", s, [s, i, i], _substring_range),
        overload("trim", "string_trim", s, [s], _trim),
        overload("upperAscii", "string_upper_ascii", s, [s], _upper_ascii),
        overload("format", "string_format", s, [s, T("list<dyn>")], _format),
        overload("strings.quote", "strings_quote", s, [s], _quote, member=False),
        overload("join", "list_join", s, [ls], _join),
        overload("join", "list_join_string", s, [ls, s], _join_sep),
    ]


def set_overloads() -> Overloads:
    b, ld = T.BOOL, T("list<dyn>")
    return [
        overload("sets.contains", "list_sets_contains_list", b, [ld, ld], _contains_all,
                 member=False),
        overload("sets.equivalent", "list_sets_equivalent_list", b, [ld, ld], _equivalent,
                 member=False),
        overload("sets.intersects", "list_sets_intersects_list", b, [ld, ld], _intersects,
                 member=False),
    ]

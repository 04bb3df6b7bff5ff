"""Go's string formats, in one place: ``%q`` quoting (error texts we reproduce embed
quoted values: semver errors, field-error bad values, CEL's ``strings.quote``),
``strconv.ParseBool`` (``--feature-gates``, ``--runtime-config``), ``time.ParseDuration``
(``?timeout=``, ``--request-timeout``) and encoding/json's syntax errors (RawExtension
validation).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, Final

# The backslash escapes Go's ``strconv.Quote`` (and cel-go's ``strings.quote``) write.
GO_ESCAPES: Final = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    "\\": "\\\\",
    '"': '\\"',
}


def go_quote(s: str) -> str:
    """Go ``%q`` / ``strconv.Quote``: printable runes as is, others as ``\\xNN``/``\\uNNNN``."""
    out = ['"']
    for ch in s:
        esc = GO_ESCAPES.get(ch)
        if esc is not None:
            out.append(esc)
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    out.append('"')
    return "".join(out)


def go_quoted_list(items: Iterable[str]) -> str:
    """Go's ``%q`` of a ``[]string``: ``["a" "b"]``."""
    return "[" + " ".join(go_quote(v) for v in items) + "]"


def parse_bool(text: str) -> bool:
    """Go ``strconv.ParseBool``; raises ValueError with its message (``strconv.ParseBool:
    parsing "yes": invalid syntax``)."""
    if text in ("1", "t", "T", "true", "TRUE", "True"):
        return True
    if text in ("0", "f", "F", "false", "FALSE", "False"):
        return False
    raise ValueError(f"strconv.ParseBool: parsing {go_quote(text)}: invalid syntax")


_NUMBER: Final = frozenset("0123456789.")
# Go's time.ParseDuration units, in seconds.
_DURATION_UNITS: Final = {
    "ns": 1e-9, "us": 1e-6, "\u00b5s": 1e-6, "\u03bcs": 1e-6, "ms": 1e-3,
    "s": 1.0, "m": 60.0, "h": 3600.0,
}


def parse_duration(text: str) -> float:
    """Go ``time.ParseDuration`` in seconds (``1m30s``, ``32s``, ``1.5h``, ``0``); raises
    ValueError with Go's message (``time: invalid duration "x"``)."""
    quoted = go_quote(text)
    s = text
    sign = 1.0
    if s[:1] in ("-", "+"):
        sign = -1.0 if s[0] == "-" else 1.0
        s = s[1:]
    if s == "0":
        return 0.0
    if not s:
        raise ValueError(f"time: invalid duration {quoted}")
    total = 0.0
    while s:
        i = 0
        while i < len(s) and s[i] in _NUMBER:
            i += 1
        number = s[:i]
        if number.count(".") > 1 or number.strip(".") == "":
            raise ValueError(f"time: invalid duration {quoted}")
        s = s[i:]
        j = 0
        while j < len(s) and s[j] not in _NUMBER:
            j += 1
        unit = s[:j]
        if not unit:
            raise ValueError(f"time: missing unit in duration {quoted}")
        scale = _DURATION_UNITS.get(unit)
        if scale is None:
            raise ValueError(f"time: unknown unit {go_quote(unit)} in duration {quoted}")
        total += float(number) * scale
        s = s[j:]
    return sign * total


def go_duration(seconds: float) -> str:
    """Go ``time.Duration.String``: ``1h2m3.5s``, ``-1s``, ``500ms``, ``1.5µs``, ``0s``."""
    ns = round(seconds * 1e9)
    sign, ns = ("-", -ns) if ns < 0 else ("", ns)
    if ns == 0:
        return "0s"
    if ns < 1_000_000_000:
        for unit, scale in (("ms", 1_000_000), ("\u00b5s", 1_000), ("ns", 1)):
            if ns >= scale:
                return sign + _decimal(ns, scale) + unit
    hours, rest = divmod(ns, 3_600_000_000_000)
    minutes, rest = divmod(rest, 60_000_000_000)
    text = _decimal(rest, 1_000_000_000) + "s"
    if hours or minutes:
        text = f"{minutes}m" + text
    if hours:
        text = f"{hours}h" + text
    return sign + text


def _decimal(value: int, scale: int) -> str:
    whole, frac = divmod(value, scale)
    if not frac:
        return str(whole)
    digits = str(frac).rjust(len(str(scale)) - 1, "0").rstrip("0")
    return f"{whole}.{digits}"


def _go_quote_char(ch: str) -> str:
    """Go's ``quoteChar`` in encoding/json's syntax errors: ``'x'``, ``'\\''``, ``'"'``."""
    if ch == "'":
        return "'\\''"
    if ch == '"':
        return "'\"'"
    return "'" + go_quote(ch)[1:-1] + "'"


def _innermost_container(text: str, end: int) -> str:
    """``{`` or ``[``: the container open at ``end`` (strings skipped)."""
    stack: list[str] = []
    in_string = escaped = False
    for ch in text[:end]:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            stack.append(ch)
        elif ch in "}]" and stack:
            stack.pop()
    return stack[-1] if stack else ""


def _no_constants(name: str) -> Any:
    raise ValueError(f"Expecting value: line 1 column 1 (char 0){name}")


def go_json_syntax_error(data: bytes) -> str | None:
    """The error Go's ``json.Unmarshal`` reports for ``data`` (``unexpected end of JSON
    input``, ``invalid character 'x' looking for beginning of value``, ...), None if valid."""
    try:
        text = data.decode()
    except UnicodeDecodeError:
        text = data.decode(errors="replace")
    try:
        json.loads(text, parse_constant=_no_constants)
    except json.JSONDecodeError as e:
        pos = e.pos
        rest = text[pos:].lstrip(" \t\r\n")
        if not rest or e.msg.startswith("Unterminated string"):
            return "unexpected end of JSON input"
        ch = _go_quote_char(text[pos])
        if e.msg == "Expecting ':' delimiter":
            return f"invalid character {ch} after object key"
        if e.msg == "Expecting ',' delimiter":
            where = ("object key:value pair" if _innermost_container(text, pos) == "{"
                     else "array element")
            return f"invalid character {ch} after {where}"
        if e.msg.startswith("Expecting property name"):
            return f"invalid character {ch} looking for beginning of object key string"
        if e.msg.startswith("Invalid control character"):
            return f"invalid character {ch} in string literal"
        if e.msg.startswith("Invalid \\escape"):
            return f"invalid character {ch} in string escape code"
        if e.msg == "Extra data":
            return f"invalid character {ch} after top-level value"
        return f"invalid character {ch} looking for beginning of value"
    except ValueError:  # NaN / Infinity, which Go does not accept
        stripped = text.lstrip(" \t\r\n")
        pos = len(text) - len(stripped)
        for const in ("NaN", "Infinity", "-Infinity"):
            at = text.find(const)
            if at >= 0:
                pos = at + (1 if const.startswith("-") else 0)
                break
        return f"invalid character {_go_quote_char(text[pos])} looking for beginning of value"
    return None

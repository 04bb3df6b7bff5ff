"""Go's string formats, in one place: ``%q`` quoting (error texts we reproduce embed
quoted values: semver errors, field-error bad values, CEL's ``strings.quote``),
``strconv.ParseBool`` (``--feature-gates``, ``--runtime-config``) and ``time.ParseDuration``
(``?timeout=``, ``--request-timeout``).
"""

from __future__ import annotations

from typing import Final

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

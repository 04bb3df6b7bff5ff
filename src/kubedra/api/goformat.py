"""Go's string quoting, in one place: error texts we reproduce embed ``%q``-quoted values.

Used by semver errors, field-error bad values and CEL's ``strings.quote``.
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

"""Key-range helpers: a prefix as a half-open ``[start, end)`` range of keys."""

from __future__ import annotations

_MAX_CODE_POINT = 0x10FFFF


def prefix_end(prefix: str) -> str | None:
    """The smallest key greater than every key starting with ``prefix`` (None: unbounded).

    Python compares strings by code point, which is also UTF-8 byte order, so the same bound
    works for SQLite's BINARY collation.
    """
    chars = list(prefix)
    while chars:
        last = ord(chars.pop())
        if last < _MAX_CODE_POINT:
            nxt = last + 1
            if 0xD800 <= nxt <= 0xDFFF:  # surrogates are not valid in UTF-8; skip the block
                nxt = 0xE000
            return "".join(chars) + chr(nxt)
    return None

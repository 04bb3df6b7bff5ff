"""Identity of a new object: uids, timestamps and generated names, as upstream's
``FillObjectMetaSystemFields`` and ``names.SimpleNameGenerator`` make them."""

from __future__ import annotations

import os
import secrets
import time

from kubedra.api.meta import format_time

_VERSION_MASK = ~((0xF << 76) | (0x3 << 62))
_VERSION_4 = (0x4 << 76) | (0x2 << 62)


def uuid4_text(bits: int) -> str:
    """128 random bits as a version 4, RFC 4122 variant UUID, formatted as ``uuid.uuid4()``
    prints one (without building the object)."""
    h = f"{bits & _VERSION_MASK | _VERSION_4:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


class _UidSource:
    """Random v4 UUIDs from a pooled ``os.urandom`` read (one syscall per 256 uids)."""

    def __init__(self) -> None:
        self._pool = b""
        self._at = 0

    def __call__(self) -> str:
        at = self._at
        if at >= len(self._pool):
            self._pool, at = os.urandom(16 * 256), 0
        self._at = at + 16
        return uuid4_text(int.from_bytes(self._pool[at:at + 16]))


new_uid = _UidSource()
_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def now() -> str:
    """The present as metav1.Time marshals it."""
    return format_time(time.time())


_NAME_CHOICES = len(_NAME_ALPHABET) ** 5


def generate_name(base: str) -> str:
    """``names.SimpleNameGenerator``: base (cut to 58 chars) plus 5 random characters, the
    five drawn at once (one read of the system's randomness, not one per character)."""
    n = secrets.randbelow(_NAME_CHOICES)
    suffix = ""
    for _ in range(5):
        n, i = divmod(n, len(_NAME_ALPHABET))
        suffix += _NAME_ALPHABET[i]
    return base[:58] + suffix

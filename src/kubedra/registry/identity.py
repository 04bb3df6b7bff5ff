"""Identity of a new object: uids, timestamps and generated names, as upstream's
``FillObjectMetaSystemFields`` and ``names.SimpleNameGenerator`` make them."""

from __future__ import annotations

import os
import secrets
import time
import uuid


class _UidSource:
    """Random v4 UUIDs from a pooled ``os.urandom`` read (one syscall per 256 uids)."""

    def __init__(self) -> None:
        self._pool = b""

    def __call__(self) -> str:
        if not self._pool:
            self._pool = os.urandom(16 * 256)
        raw, self._pool = self._pool[:16], self._pool[16:]
        return str(uuid.UUID(bytes=raw, version=4))


new_uid = _UidSource()
_last_now: tuple[int, str] = (0, "")
_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def now() -> str:
    """RFC 3339 with seconds and ``Z``, as metav1.Time marshals (formatted once a second)."""
    global _last_now
    second = int(time.time())
    if _last_now[0] != second:
        _last_now = (second, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(second)))
    return _last_now[1]


def generate_name(base: str) -> str:
    """``names.SimpleNameGenerator``: base (cut to 58 chars) plus 5 random characters."""
    return base[:58] + "".join(secrets.choice(_NAME_ALPHABET) for _ in range(5))

"""Keys in the order they changed, for caches that catch up from a mark: they drop or look
again at only what moved since they last looked (the Filter verdicts, the nodes with free
devices), and at everything once they fall too far behind."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Generic, TypeVar

K = TypeVar("K")

KEPT = 4096
"""Changes kept; a reader further behind than that is told to look at everything."""


class ChangeLog(Generic[K]):
    __slots__ = ("_keys", "_start")

    def __init__(self) -> None:
        self._keys: list[K] = []
        self._start = 0  # the position of _keys[0] since the beginning

    def add(self, key: K) -> None:
        keys = self._keys
        keys.append(key)
        if len(keys) > KEPT:
            drop = len(keys) // 2
            del keys[:drop]
            self._start += drop

    @property
    def mark(self) -> int:
        """The mark of now: :meth:`since` it, nothing has changed."""
        return self._start + len(self._keys)

    def since(self, mark: int) -> tuple[Sequence[K] | None, int]:
        """The keys changed since ``mark`` (a mark this log gave; 0: the beginning), in
        order and possibly repeated, and the mark for next time; None when ``mark`` is
        older than the changes kept (the caller looks at everything again)."""
        end = self._start + len(self._keys)
        if mark < self._start:
            return None, end
        return self._keys[mark - self._start:], end

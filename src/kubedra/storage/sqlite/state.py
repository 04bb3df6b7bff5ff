"""The latest committed state, kept by the writer on the event loop.

Point gets and lists at the current revision are answered from here without touching disk.
"""

from __future__ import annotations

import bisect

from kubedra.storage.contract import KeyValue, ListResult
from kubedra.storage.keys import prefix_end


class State:
    """What readers on the loop see: latest live values, current and compacted revision.

    The writer changes it only after a commit. ``_sorted`` (the live keys in
    order, for lists at the current revision) is rebuilt lazily after the key set changed.
    """

    def __init__(self, latest: dict[str, KeyValue], revision: int, compacted: int) -> None:
        self.latest = latest
        self.revision = revision
        self.compacted = compacted
        self._sorted: list[str] | None = None

    def apply(self, changes: dict[str, KeyValue | None], revision: int) -> None:
        """Publish a committed batch."""
        latest = self.latest
        for key, kv in changes.items():
            if kv is None:
                latest.pop(key, None)
                self._sorted = None
            else:
                if key not in latest:
                    self._sorted = None
                latest[key] = kv
        self.revision = revision

    def range(self, prefix: str, start_after: str | None, limit: int) -> ListResult:
        """A list at the current revision from memory."""
        if self._sorted is None:
            self._sorted = sorted(self.latest)
        keys = self._sorted
        if start_after is not None and start_after >= prefix:
            lo = bisect.bisect_right(keys, start_after)
        else:
            lo = bisect.bisect_left(keys, prefix)
        end = prefix_end(prefix)
        hi = len(keys) if end is None else bisect.bisect_left(keys, end, lo)
        more = 0 < limit < hi - lo
        stop = lo + limit if more else hi
        latest = self.latest
        items = [latest[k] for k in keys[lo:stop]]
        return ListResult(items, self.revision, more, hi - stop)

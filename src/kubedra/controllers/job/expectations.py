"""What the Job controller is waiting to see in its informer cache (``ControllerExpectations``
and the Job controller's ``uidTrackingExpectations``): issued pod creations and deletions per
Job, and pods whose tracking finalizer it asked to remove. A Job is not reconciled again
(no new pods) until its issued creations and deletions are observed, so informer lag never
causes extra pods; an expectation also expires after five minutes, as upstream's does."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

EXPECTATIONS_TIMEOUT = 300.0


@dataclass(slots=True)
class _Counts:
    adds: int = 0
    dels: int = 0
    stamp: float = field(default_factory=time.monotonic)


class ControllerExpectations:
    def __init__(self) -> None:
        self._by_key: dict[str, _Counts] = {}

    def satisfied(self, key: str) -> bool:
        counts = self._by_key.get(key)
        if counts is None:
            return True
        if counts.adds <= 0 and counts.dels <= 0:
            return True
        return time.monotonic() - counts.stamp > EXPECTATIONS_TIMEOUT

    def expect_creations(self, key: str, n: int) -> None:
        self._by_key[key] = _Counts(adds=n)

    def expect_deletions(self, key: str, n: int) -> None:
        self._by_key[key] = _Counts(dels=n)

    def creation_observed(self, key: str) -> None:
        counts = self._by_key.get(key)
        if counts is not None:
            counts.adds -= 1

    def deletion_observed(self, key: str) -> None:
        counts = self._by_key.get(key)
        if counts is not None:
            counts.dels -= 1

    def delete(self, key: str) -> None:
        self._by_key.pop(key, None)


class FinalizerExpectations:
    """Pod UIDs per Job whose finalizer removal was issued but not yet observed."""

    def __init__(self) -> None:
        self._by_key: dict[str, set[str]] = {}

    def expect_removed(self, key: str, uids: list[str]) -> None:
        self._by_key.setdefault(key, set()).update(uids)

    def removal_observed(self, key: str, uid: str) -> None:
        uids = self._by_key.get(key)
        if uids is not None:
            uids.discard(uid)
            if not uids:
                del self._by_key[key]

    def expected(self, key: str) -> frozenset[str]:
        return frozenset(self._by_key.get(key, ()))

    def delete(self, key: str) -> None:
        self._by_key.pop(key, None)

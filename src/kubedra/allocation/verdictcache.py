"""The Filter verdict cache both models share: per (what a pod asks, node), the last
verdict and the state of the node's pools it was reached in.

Pods created from one claim template ask for the same thing, so a verdict is reused until
one of the node's pools changes; each scheduling cycle then re-evaluates only the nodes whose
pools changed since the last pod. The models say what "what a pod asks" and "the node's
pools" are (:mod:`.verdicts` for named resources, :mod:`.deviceverdicts` for devices) and
compare the states on their hot paths; this class holds the entries and bounds them.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Generic, TypeVar

S = TypeVar("S")
V = TypeVar("V")

LIMIT = 200_000


class VerdictCache(Generic[S, V]):
    def __init__(self, limit: int = LIMIT) -> None:
        self.entries: dict[tuple[int, str], tuple[S, V]] = {}
        self._ids: dict[Hashable, int] = {}
        self._limit = limit

    def signature_id(self, signature: Hashable) -> int:
        """A small number for what a pod asks (cheap to hash per node)."""
        return self._ids.setdefault(signature, len(self._ids))

    def store(self, sig: int, node: str, state: S, verdict: V) -> V:
        if len(self.entries) >= self._limit:
            self.entries.clear()  # ids stay: cycles in progress hold them
        self.entries[sig, node] = (state, verdict)
        return verdict

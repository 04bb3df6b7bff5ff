"""The Filter verdict cache both models share: per (what a pod asks, node), the last
verdict and the state of the node's pools it was reached in.

Pods created from one claim template ask for the same thing, so a verdict is reused until
one of the node's pools changes; each scheduling cycle then re-evaluates only the nodes whose
pools changed since the last pod. The models say what "what a pod asks" and "the node's
pools" are (:mod:`.verdicts` for named resources, :mod:`.deviceverdicts` for devices) and
compare the states on their hot paths; this class holds the entries and bounds them.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import Generic, TypeVar

from kubedra.allocation.changelog import ChangeLog

S = TypeVar("S")
V = TypeVar("V")
K = TypeVar("K")
F = TypeVar("F")

LIMIT = 200_000

FITTING_KEPT = 64
"""Signatures whose fitting nodes are kept (the templates in use, typically a few)."""


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


class _Kept(Generic[F]):
    __slots__ = ("mark", "nodes", "scope")

    def __init__(self, scope: object, mark: int) -> None:
        self.scope = scope
        self.mark = mark
        self.nodes: dict[str, F] = {}


class Fitting(Generic[K, F]):
    """Per signature, the nodes where its claims fit (with what the model keeps of each),
    carried from pod to pod: Filter passes them without looking at their state. Before each
    pod they catch up with the model's change log, dropping the nodes its changes name (all
    of them when the log no longer reaches back, or the ``scope`` they were found in is
    another); the model adds the nodes it finds its claims fit on."""

    def __init__(self) -> None:
        self._kept: dict[int, _Kept[F]] = {}

    def now(self, sig: int, scope: object, changes: ChangeLog[K],
            nodes_of: Callable[[K], Iterable[str]]) -> dict[str, F]:
        kept = self._kept.get(sig)
        if kept is None or kept.scope is not scope:
            if len(self._kept) >= FITTING_KEPT:
                self._kept.clear()
            kept = self._kept[sig] = _Kept(scope, changes.mark)
            return kept.nodes
        changed, kept.mark = changes.since(kept.mark)
        nodes = kept.nodes
        if changed is None:
            nodes.clear()
        else:
            for key in changed:
                for node in nodes_of(key):
                    nodes.pop(node, None)
        return nodes

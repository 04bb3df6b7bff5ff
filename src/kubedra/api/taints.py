"""Taints and tolerations as core/v1 defines them: the well-known node taint keys and whether a
toleration tolerates a taint (one home for the scheduler, the node lifecycle and taint
eviction controllers and the DefaultTolerationSeconds admission)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from kubedra.api.core import Taint, Toleration

NOT_READY = "node.kubernetes.io/not-ready"
UNREACHABLE = "node.kubernetes.io/unreachable"
UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
MEMORY_PRESSURE = "node.kubernetes.io/memory-pressure"
DISK_PRESSURE = "node.kubernetes.io/disk-pressure"
PID_PRESSURE = "node.kubernetes.io/pid-pressure"
NETWORK_UNAVAILABLE = "node.kubernetes.io/network-unavailable"

NO_SCHEDULE, NO_EXECUTE = "NoSchedule", "NoExecute"


class _Toleration(Protocol):
    @property
    def key(self) -> str | None: ...
    @property
    def operator(self) -> str | None: ...
    @property
    def value(self) -> str | None: ...
    @property
    def effect(self) -> str | None: ...


class _Taint(Protocol):
    @property
    def key(self) -> str | None: ...
    @property
    def value(self) -> str | None: ...
    @property
    def effect(self) -> str | None: ...


def tolerates(toleration: _Toleration, taint: _Taint) -> bool:
    """core/v1 ``Toleration.ToleratesTaint``; DRA's ``resourceclaim.ToleratesTaint`` for a
    device taint is the same rule."""
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    op = toleration.operator or "Equal"
    if op == "Exists":
        return True
    return op == "Equal" and (toleration.value or "") == (taint.value or "")


def matching_tolerations(taints: Sequence[Taint], tolerations: Sequence[Toleration],
                         ) -> list[Toleration] | None:
    """``GetMatchingTolerations``: the tolerations that tolerate some of ``taints``, or None
    when one of ``taints`` is not tolerated."""
    used: list[Toleration] = []
    for taint in taints:
        matched = [t for t in tolerations if tolerates(t, taint)]
        if not matched:
            return None
        used += matched
    return used

"""What the packing score (the scheduler's ``DynamicResourcesPacking``) asks of a pod's
allocation, in either model: per node of a list, the free instances or devices of the
drivers the pod's claims use there. Asked once per pod for every feasible node."""

from __future__ import annotations

from collections.abc import Callable, Sequence

FreeCounts = Callable[[Sequence[str]], list[int]]

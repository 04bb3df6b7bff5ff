"""Per-evaluation work meter for the library functions we implement in Python.

cel-cpp bounds comprehension iterations (10,000 per evaluation) but knows nothing about the
work done inside our functions (list scans, string building). Every Python implementation
charges the size of what it reads or produces; past ``RUNTIME_COST_LIMIT`` units in one
evaluation it raises, which cel-cpp turns into an evaluation error with upstream's text.
The meter is per thread; :func:`reset` is called at the start of each evaluation.
"""

from __future__ import annotations

import threading
from typing import Final

RUNTIME_COST_LIMIT: Final = 1_000_000
# a list element crossing between cel-cpp and Python costs about as much as 5 characters
PER_ELEMENT: Final = 5
COST_LIMIT_EXCEEDED: Final = "operation cancelled: actual cost limit exceeded"


class CostLimitExceeded(RuntimeError):
    """Raised inside a library function when the per-evaluation budget is spent."""

    def __init__(self) -> None:
        super().__init__(COST_LIMIT_EXCEEDED)


class _Meter(threading.local):
    used: int = 0


_METER: Final = _Meter()


def reset() -> None:
    _METER.used = 0


def charge(units: int) -> None:
    """Account ``units`` of work (elements scanned, characters produced) plus one per call."""
    m = _METER
    m.used += units + 1
    if m.used > RUNTIME_COST_LIMIT:
        raise CostLimitExceeded()

"""Per-evaluation work meter for the library functions we implement in Python.

cel-cpp bounds comprehension iterations (10,000 per evaluation) but knows nothing about the
work done inside our functions (list scans, string building). Every Python implementation
charges the size of what it reads or produces; past ``RUNTIME_COST_LIMIT`` units in one
evaluation it raises, which cel-cpp turns into an evaluation error with upstream's text.
The meter is per thread; :func:`reset` is called at the start of each evaluation. As a last
line of defence every charge also checks a wall-clock bound on the evaluation
(``WALL_LIMIT_SECONDS``), so work the meter undercounts still ends with the same error.
"""

from __future__ import annotations

import math
import threading
import time
from typing import Final

RUNTIME_COST_LIMIT: Final = 1_000_000
# a list element crossing between cel-cpp and Python costs about as much as 5 characters
PER_ELEMENT: Final = 5
COST_LIMIT_EXCEEDED: Final = "operation cancelled: actual cost limit exceeded"
WALL_LIMIT_SECONDS: Final = 0.5


class CostLimitExceeded(RuntimeError):
    """Raised inside a library function when the per-evaluation budget is spent."""

    def __init__(self) -> None:
        super().__init__(COST_LIMIT_EXCEEDED)


class _Meter(threading.local):
    used: int = 0
    deadline: float = math.inf  # set by reset() for each evaluation


_METER: Final = _Meter()


def reset() -> None:
    m = _METER
    m.used = 0
    m.deadline = time.monotonic() + WALL_LIMIT_SECONDS


def charge(units: int) -> None:
    """Account ``units`` of work (elements scanned, characters produced) plus one per call."""
    m = _METER
    m.used += units + 1
    if m.used > RUNTIME_COST_LIMIT or time.monotonic() > m.deadline:
        raise CostLimitExceeded()

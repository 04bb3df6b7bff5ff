"""Process-wide settings a component makes at start (``cli/runtime.py``)."""

from __future__ import annotations

import subprocess
import sys


def test_the_cycle_collector_leaves_long_lived_objects_alone() -> None:
    """The start-up heap frozen, young collections every 20,000 allocations and middle ones
    every 200 young ones (docs/deviations.md). In a child process: it is process-wide."""
    code = ("import gc\n"
            "from kubedra.cli.runtime import tune_cycle_collector\n"
            "tune_cycle_collector()\n"
            "print(gc.get_threshold(), gc.get_freeze_count() > 0)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=True)
    assert done.stdout.strip() == "(20000, 200, 20) True"

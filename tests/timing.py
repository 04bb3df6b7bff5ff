"""Wall-clock bounds in tests, every one scaled by a single factor: on a slow or loaded
machine set ``KUBEDRA_TEST_TIME_SCALE`` (default 1) rather than widening a test's own figure.
A test that asserts such a bound carries the ``timing`` marker, so a run can leave them out
(``pytest -m "not timing"``) or run them alone on a quiet machine."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager

SCALE = float(os.environ.get("KUBEDRA_TEST_TIME_SCALE", "1"))


def bound(seconds: float) -> float:
    """``seconds``, scaled by ``KUBEDRA_TEST_TIME_SCALE``."""
    return seconds * SCALE


def check(took: float, seconds: float, what: str = "it") -> None:
    """Fail if ``took`` exceeds the scaled bound of ``seconds``."""
    assert took < bound(seconds), (
        f"{what} took {took:.2f} s, more than {seconds} s x KUBEDRA_TEST_TIME_SCALE={SCALE:g}")


@contextmanager
def within(seconds: float, what: str = "it") -> Iterator[None]:
    """Fail if the block takes longer than the scaled bound of ``seconds``."""
    start = time.monotonic()
    yield
    check(time.monotonic() - start, seconds, what)

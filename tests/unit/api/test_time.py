"""metav1.Time's text from a time in seconds: what ``datetime`` prints for its whole second,
whatever second was asked before (the last second's text is kept)."""

from __future__ import annotations

import datetime
import math

from hypothesis import given
from hypothesis import strategies as st

from kubedra.api.meta import format_time

_seconds = st.floats(min_value=-2e9, max_value=4e9, allow_nan=False)


@given(st.lists(_seconds, min_size=1, max_size=4))
def test_format_time_is_what_datetime_prints(times: list[float]) -> None:
    for seconds in [*times, *times]:  # each asked again after others: the kept text is right
        expected = datetime.datetime.fromtimestamp(math.floor(seconds), datetime.UTC).strftime(
            "%Y-%m-%dT%H:%M:%SZ")
        assert format_time(seconds) == expected


def test_format_time_of_the_epoch_and_just_before() -> None:
    assert format_time(0) == "1970-01-01T00:00:00Z"
    assert format_time(-0.5) == "1969-12-31T23:59:59Z"  # floored, as datetime does
    assert format_time(1714557600.9) == "2024-05-01T10:00:00Z"

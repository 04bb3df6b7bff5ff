"""The one log formatter: klog's header, and a mapping argument rendered as InfoS pairs."""

from __future__ import annotations

import datetime
import logging
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from kubedra.cli.runtime import KlogFormatter


def formatted(level: int, msg: str, *args: object) -> str:
    record = logging.LogRecord("kubedra.test", level, "/x/scheduler.py", 42, msg, args, None)
    return KlogFormatter().format(record)


def test_header_and_plain_message() -> None:
    line = formatted(logging.WARNING, "lost lease %s", "kube-system/kube-scheduler")
    assert re.fullmatch(r"W\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ scheduler\.py:42\] "
                        r"lost lease kube-system/kube-scheduler", line), line


def test_structured_pairs_are_quoted_like_klog() -> None:
    line = formatted(logging.INFO, "Successfully bound pod to node",
                     {"pod": "default/app", "node": "node-0", "feasibleNodes": 3,
                      "ok": True, "err": 'a "quoted" reason'})
    assert line.startswith("I")
    assert line.endswith('] "Successfully bound pod to node" pod="default/app" node="node-0" '
                         'feasibleNodes=3 ok=true err="a \\"quoted\\" reason"')


def test_severity_letters() -> None:
    assert [formatted(level, "m")[0] for level in (
        logging.DEBUG, logging.INFO, logging.WARNING, logging.ERROR, logging.CRITICAL)] == [
        "I", "I", "W", "E", "F"]


def test_values_needing_escapes_are_written_as_json_would() -> None:
    line = formatted(logging.INFO, 'a "message"\n', {"err": "tab\there\\", "name": "ünï"})
    assert line.endswith('] "a \\"message\\"\\n" err="tab\\there\\\\" name="ünï"'), line


@settings(max_examples=500, deadline=None)
@given(st.floats(min_value=0, max_value=4e9, allow_nan=False))
def test_the_time_is_local_and_rounded_as_datetime_writes_it(created: float) -> None:
    record = logging.LogRecord("kubedra.test", logging.INFO, "/x/a.py", 1, "m", None, None)
    record.created = created
    line = KlogFormatter().format(record)
    assert line[1:21] == f"{datetime.datetime.fromtimestamp(created):%m%d %H:%M:%S.%f}"


def test_lines_in_one_second_share_its_formatted_part() -> None:
    formatter = KlogFormatter()
    stamps = []
    for created in (1_700_000_000.25, 1_700_000_000.999_999_7, 1_700_000_001.5):
        record = logging.LogRecord("kubedra.test", logging.INFO, "/x/a.py", 1, "m", None, None)
        record.created = created
        stamps.append(formatter.format(record)[1:21])
    assert stamps == [f"{datetime.datetime.fromtimestamp(t):%m%d %H:%M:%S.%f}"
                      for t in (1_700_000_000.25, 1_700_000_000.999_999_7, 1_700_000_001.5)]

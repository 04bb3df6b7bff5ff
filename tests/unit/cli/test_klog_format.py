"""The one log formatter: klog's header, and a mapping argument rendered as InfoS pairs."""

from __future__ import annotations

import logging
import re

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

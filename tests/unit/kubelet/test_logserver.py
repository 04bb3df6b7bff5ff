"""The kubelet's choice of a container run to read (``validateContainerLogStatus``: texts and
which instance) and its decoding of the query the API server sends."""

from __future__ import annotations

import json
from typing import Any

import pytest
from multidict import MultiDict

from kubedra.api import codec
from kubedra.api.core import Pod
from kubedra.kubelet.logserver import LogUnavailable, instance, parse_options

ENDED = {"terminated": {"exitCode": 1, "reason": "Error"}}


def _pod(status: dict[str, Any] | None) -> Pod:
    statuses = [] if status is None else [{"name": "c", "image": "i", "imageID": "",
                                           "ready": False, **status}]
    return codec.decode(json.dumps({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"},
        "spec": {"containers": [{"name": "c", "image": "i"}]},
        "status": {"containerStatuses": statuses}}).encode(), Pod)


@pytest.mark.parametrize(("status", "previous", "want"), [
    ({"restartCount": 0, "state": {"running": {}}}, False, 0),
    ({"restartCount": 2, "state": {"running": {}}, "lastState": ENDED}, False, 2),
    ({"restartCount": 2, "state": {"running": {}}, "lastState": ENDED}, True, 1),
    ({"restartCount": 0, "state": ENDED}, False, 0),
    ({"restartCount": 1, "state": {"waiting": {"reason": "CrashLoopBackOff"}},
      "lastState": ENDED}, False, 0),
    ({"restartCount": 1, "state": {"waiting": {"reason": "CrashLoopBackOff"}},
      "lastState": ENDED}, True, 0),
])
def test_the_run_read(status: dict[str, Any], previous: bool, want: int) -> None:
    assert instance(_pod(status), "c", previous) == want


@pytest.mark.parametrize(("status", "previous", "text"), [
    (None, False, 'container "c" in pod "p" is not available'),
    ({"restartCount": 0, "state": {"running": {}}}, True,
     'previous terminated container "c" in pod "p" not found'),
    ({"restartCount": 0, "state": {"waiting": {"reason": "ContainerCreating"}}}, False,
     'container "c" in pod "p" is waiting to start: ContainerCreating'),
    ({"restartCount": 0, "state": {}}, False,
     'container "c" in pod "p" is waiting to start - no logs yet'),
])
def test_no_run_to_read(status: dict[str, Any] | None, previous: bool, text: str) -> None:
    with pytest.raises(LogUnavailable, match="^" + text.replace("(", r"\(") + "$"):
        instance(_pod(status), "c", previous)


def test_query() -> None:
    opts, previous = parse_options(MultiDict(follow="true", timestamps="1", tailLines="3",
                                             limitBytes="10", previous="true"))
    assert (opts.follow, opts.timestamps, opts.tail_lines, opts.limit_bytes, previous) == (
        True, True, 3, 10, True)
    assert parse_options(MultiDict(tail="all"))[0].tail_lines is None
    assert parse_options(MultiDict(sinceTime="2026-01-01T00:00:00Z"))[0].since == 1767225600.0
    with pytest.raises(ValueError):
        parse_options(MultiDict(tailLines="x"))
    for bad in ({"tailLines": "-1"}, {"limitBytes": "0"}, {"sinceSeconds": "0"},
                {"sinceSeconds": "5", "sinceTime": "2026-01-01T00:00:00Z"}):
        with pytest.raises(LookupError):
            parse_options(MultiDict(bad))

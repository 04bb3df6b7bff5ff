"""The scheduler's plain-counter histogram exposes what prometheus_client's would, and the
timed profile observes each sampled plugin call once, in the series of its status."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry, Histogram, generate_latest

from kubedra.scheduler.framework import Code, Status
from kubedra.scheduler.metrics import PlainHistogram, TimedPlugin

BUCKETS = tuple(0.00001 * 1.5**i for i in range(20))
LABELS = ["plugin", "extension_point", "status"]


def _exposition(registry: CollectorRegistry) -> list[str]:
    return [line for line in generate_latest(registry).decode().splitlines()
            if "_created" not in line]


@given(st.lists(st.tuples(st.sampled_from(["Success", "Unschedulable"]),
                          st.one_of(st.floats(0, 0.1), st.sampled_from(BUCKETS),
                                    st.just(1e9))), max_size=40))
@settings(max_examples=200, deadline=None)
def test_plain_histogram_exposes_what_prometheus_client_does(
        observations: list[tuple[str, float]]) -> None:
    ours, theirs = CollectorRegistry(), CollectorRegistry()
    plain = PlainHistogram("d", "help text", LABELS, BUCKETS, ours)
    reference = Histogram("d", "help text", LABELS, buckets=BUCKETS, registry=theirs)
    for status, seconds in observations:
        plain.labels("P", "Filter", status).observe(seconds)  # a bound is its own bucket
        reference.labels("P", "Filter", status).observe(seconds)
    assert _exposition(ours) == _exposition(theirs)


class _Plugin:
    name = "P"

    def filter(self, fits: bool) -> Status | None:
        return None if fits else Status(Code.UNSCHEDULABLE, "no")

    def helper(self) -> str:
        return "plain"


def test_timed_plugin_observes_each_call_by_status() -> None:
    class Metrics:
        def __init__(self) -> None:
            self.plugin_duration = PlainHistogram("d", "h", LABELS, BUCKETS,
                                                  CollectorRegistry())

    metrics = Metrics()
    timed = TimedPlugin(_Plugin(), metrics)  # type: ignore[arg-type]
    for fits in (True, True, False):
        timed.filter(fits)
    assert timed.helper() == "plain"
    counts = {status: sum(metrics.plugin_duration.labels("P", "Filter", status).counts)
              for status in ("Success", "Unschedulable")}
    assert counts == {"Success": 2, "Unschedulable": 1}


def test_timed_scores_observe_each_node() -> None:
    """A sampled cycle scores node by node, so each Score call is observed (as upstream's
    per-node Score), not one batch per plugin."""
    class Metrics:
        def __init__(self) -> None:
            self.plugin_duration = PlainHistogram("d", "h", LABELS, BUCKETS,
                                                  CollectorRegistry())

    class Scoring:
        name = "S"

        def score(self, state: object, pod: object, node: int) -> int:
            return node * 10

    metrics = Metrics()
    timed = TimedPlugin(Scoring(), metrics)  # type: ignore[arg-type]
    assert timed.scores(None, None, [1, 2, 3]) == [10, 20, 30]
    assert sum(metrics.plugin_duration.labels("S", "Score", "Success").counts) == 3

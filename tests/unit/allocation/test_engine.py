"""Joint allocation, reasons, shared claims, reserve/unreserve, verdict cache, explanations."""

from __future__ import annotations

import pytest

from kubedra.allocation.engine import (
    JOINT_FAILURE,
    UNSUITABLE,
    AllocationError,
    PodAllocator,
)
from kubedra.allocation.explain import PodExplanation, explain_node, first_failure, to_data
from kubedra.allocation.index import AllocationIndex
from kubedra.allocation.instance import Instance
from kubedra.allocation.selectors import Evaluator, Selectors
from kubedra.cli.simulate import render
from tests.unit.allocation.helpers import make_claim, make_plan, make_slice, predicate


def one_instance_index() -> AllocationIndex:
    index = AllocationIndex()
    index.upsert_slice(make_slice("s", "n", "d", [("i0", {"size": 1})]))
    return index


def test_two_claims_never_share_one_instance() -> None:
    index = one_instance_index()
    plans = [make_plan(i, make_claim(f"c{i}"), {"d": ["true"]}) for i in range(2)]
    verdict = PodAllocator(index, plans).filter("n")
    assert not verdict.ok
    assert verdict.reason == JOINT_FAILURE  # each alone fits; upstream 1.30 said "suitable"
    assert PodAllocator(index, plans[:1]).filter("n").ok


def test_unsuitable_names_first_failing_claim() -> None:
    index = one_instance_index()
    plans = [make_plan(0, make_claim("a"), {"d": ["true"]}),
             make_plan(1, make_claim("b"), {"d": ["size>=2"]})]
    verdict = PodAllocator(index, plans).filter("n")
    assert (verdict.ok, verdict.reason, verdict.claim) == (False, UNSUITABLE, 1)
    assert PodAllocator(index, plans).filter("other-node").reason == UNSUITABLE


def test_evaluation_error_is_unsuitable_instance_and_reason_carries_it() -> None:
    index = AllocationIndex()
    index.upsert_slice(make_slice("s", "n", "d", [("bad", {}), ("good", {"color": "r"})]))
    plan = make_plan(0, make_claim("c"), {"d": ["color==r"]})
    (result,) = PodAllocator(index, [plan]).allocate("n")  # upstream: error on "bad" first
    handles = result.allocation.resource_handles or []
    assert handles[0].structured_data is not None
    assert handles[0].structured_data.results[0].named_resources is not None
    assert handles[0].structured_data.results[0].named_resources.name == "good"
    plan2 = make_plan(0, make_claim("c2"), {"d": ["color==r", "color==r"]})
    verdict = PodAllocator(index, [plan2]).filter("n")
    assert verdict.error == 'checking node "n" and resources of driver "d": ' \
        "evaluate request CEL expression: no such key: color"
    assert verdict.reason == "checking structured parameters failed: " + verdict.error
    with pytest.raises(AllocationError, match="evaluate request CEL expression"):
        PodAllocator(index, [plan2]).allocate("n")


def test_commit_keeps_the_written_claim_counted_and_release_frees_the_rest() -> None:
    index = AllocationIndex()
    index.upsert_slice(make_slice("s", "n", "d", [("i0", {}), ("i1", {}), ("i2", {})]))
    plans = [make_plan(0, make_claim("a"), {"d": ["true"]}),
             make_plan(1, make_claim("b"), {"d": ["true"]})]
    index.upsert_claim(make_claim("a"))
    index.upsert_claim(make_claim("b"))
    alloc = PodAllocator(index, plans)
    first, _ = alloc.reserve("n")
    assert index.is_in_flight("uid-a") and index.free_count("n", "d") == 1
    stored = first.claim
    stored.metadata.resource_version = "2"  # as the API server returns it
    assert alloc.commit(stored)
    assert not index.is_in_flight("uid-a") and index.claim("uid-a") is stored
    alloc.release()  # the second write never happened
    assert not index.is_in_flight("uid-b")
    assert index.free_count("n", "d") == 2  # a's instance stays taken (assumed)
    stale = make_claim("b", rv=0)
    index.upsert_claim(make_claim("b", rv=3))
    assert not PodAllocator(index, plans[1:]).commit(stale)  # older than the informer's


def test_reserve_unreserve_and_shared_claim_consumes_once() -> None:
    index = AllocationIndex()
    index.upsert_slice(make_slice("s", "n", "d", [("i0", {}), ("i1", {})]))
    a = PodAllocator(index, [make_plan(0, make_claim("a"), {"d": ["true"]}, shareable=True)])
    (res,) = a.reserve("n")
    assert res.allocation.shareable is True
    assert res.claim.status.driver_name == "d"
    assert index.free_count("n", "d") == 1
    b = PodAllocator(index, [make_plan(0, make_claim("b"), {"d": ["true", "true"]})])
    assert not b.filter("n").ok
    a.release()
    assert index.free_count("n", "d") == 2
    assert b.filter("n").ok  # the cached verdict is dropped when the index changes
    # the shared claim, allocated and reserved by many pods, holds its instance once
    shared = res.claim
    shared.metadata.resource_version = "5"
    index.upsert_claim(shared)
    index.upsert_claim(shared)
    assert index.free_count("n", "d") == 1
    assert index.holders("n", "d", "i0") == ["default/a"]


def test_result_handles_sorted_by_driver_with_vendor_parameters() -> None:
    index = AllocationIndex()
    for d in ("z-driver", "a-driver"):
        index.upsert_slice(make_slice(f"s-{d}", "n", d, [("i0", {})]))
    plan = make_plan(0, make_claim("c"), {"z-driver": ["true"], "a-driver": ["true"]})
    (res,) = PodAllocator(index, [plan]).allocate("n")
    assert [h.driver_name for h in res.allocation.resource_handles or []] == ["a-driver",
                                                                             "z-driver"]


def test_verdict_cache_survives_unchanged_slice_and_resets_on_change() -> None:
    calls: list[str] = []
    base = predicate("size>=1")

    def compiler(expr: str) -> Evaluator:
        def ev(instance: Instance) -> bool:
            calls.append(expr)
            return base(instance)
        return ev

    index = AllocationIndex()
    index.upsert_slice(make_slice("s", "n", "d", [("i0", {"size": 1}), ("i1", {"size": 1})]))
    sels = Selectors(compiler)
    plan = make_plan(0, make_claim("c"), {"d": ["size>=1", "size>=1"]}, sels=sels)
    assert PodAllocator(index, [plan]).filter("n").ok
    assert len(calls) == 2
    index.upsert_slice(make_slice("s", "n", "d", [("i0", {"size": 1}), ("i1", {"size": 1})]))
    assert PodAllocator(index, [plan]).filter("n").ok
    assert len(calls) == 2  # same instances: verdicts reused
    index.upsert_slice(make_slice("s", "n", "d", [("i0", {"size": 2}), ("i1", {"size": 1})]))
    assert PodAllocator(index, [plan]).filter("n").ok
    assert len(calls) == 4


def test_duplicates_reported_and_not_merged() -> None:
    index = AllocationIndex()
    index.upsert_slice(make_slice("s1", "n", "d", [("x", {})]))
    index.upsert_slice(make_slice("s2", "n", "d", [("x", {})]))
    assert index.duplicates() == [("n", "d", "x")]
    index.upsert_claim(make_claim("a", [("n", "d", "x")]))
    index.upsert_claim(make_claim("b", [("n", "d", "x")]))
    assert index.snapshot() == {"n": {"d": [("x", True), ("x", True)]}}


def test_candidate_nodes_prefilter() -> None:
    index = AllocationIndex()
    index.upsert_slice(make_slice("s1", "n1", "d", [("x", {})]))
    index.upsert_slice(make_slice("s2", "n2", "d", [("x", {}), ("y", {})]))
    alloc = PodAllocator(index, [make_plan(0, make_claim("c"), {"d": ["true", "true"]})])
    assert list(alloc.candidate_nodes() or []) == ["n2"]
    assert PodAllocator(index, []).candidate_nodes() is None


def test_explanation_data_and_table() -> None:
    index = AllocationIndex()
    index.upsert_slice(make_slice("s", "n", "d", [("i0", {"size": 1}), ("i1", {"size": 2}),
                                                   ("i2", {})]))
    index.upsert_claim(make_claim("other", [("n", "d", "i1")]))
    alloc = PodAllocator(index, [make_plan(0, make_claim("c"), {"d": ["size>=1"]},
                                           filters={"d": "true"})])
    ex = explain_node(alloc, alloc.filter("n"))
    (req,) = ex.requests
    assert req.assigned == "i0"
    states = [(i.instance, i.filter, i.selector, i.held_by, i.chosen) for i in req.instances]
    assert states == [("i0", "pass", "pass", None, True),
                      ("i1", "pass", "pass", "default/other", False),
                      ("i2", "pass", "error: no such key: size", None, False)]
    pod = PodExplanation("default/p", ["default/c"], [ex], "fits on n")
    assert to_data(pod)["nodes"][0]["requests"][0]["assigned"] == "i0"
    text = render(pod)
    assert "CHOSEN" in text and "held by default/other" in text


def test_failure_reason_names_the_failing_driver() -> None:
    index = AllocationIndex()
    index.upsert_slice(make_slice("a", "n", "d-a", [("i0", {})]))
    index.upsert_slice(make_slice("b", "n", "d-b", [("i0", {})]))
    plan = make_plan(0, make_claim("c"), {"d-a": ["true"], "d-b": ["color==r"]})
    verdict = PodAllocator(index, [plan]).filter("n")
    assert verdict.error == ('checking node "n" and resources of driver "d-b": '
                             "evaluate request CEL expression: no such key: color")
    assert verdict.cause == "evaluate request CEL expression: no such key: color"


def test_first_failure_names_the_check_explain_shows() -> None:
    index = AllocationIndex()
    index.upsert_slice(make_slice("s", "n", "d", [("i0", {"size": 1, "color": "g"}),
                                                   ("i1", {"size": 2, "color": "r"})]))
    index.upsert_claim(make_claim("other", [("n", "d", "i1")]))

    def why(requests: dict[str, list[str]], filters: dict[str, str] | None = None,
            node: str = "n", plans: int = 1) -> str:
        return first_failure(PodAllocator(index, [
            make_plan(i, make_claim(f"c{i}"), requests, filters) for i in range(plans)]), node)

    assert why({"d": ["size>=1"]}) == ""  # suitable
    assert why({"d": ["size>=1"]}, node="elsewhere") == \
        'default/c0: the node has no instances of driver "d"'
    assert why({"d": ["true"]}, {"d": "color==r"}) == \
        ('default/c0#0: the class filter `color==r` admits none of the free instances of '
         'driver "d"')  # i1, the red one, is held by default/other
    assert why({"d": ["true", "size>=2"]}) == \
        ('default/c0#1: the selector `size>=2` matches none of the free instances of '
         'driver "d" the class admits')
    assert why({"d": ["true", "true"]}) == \
        'default/c0: too few free instances of driver "d" match its 2 requests'
    assert why({"d": ["true"]}, plans=2) == "each claim fits alone, but not all of them together"
    index.upsert_claim(make_claim("last", [("n", "d", "i0")]))
    assert why({"d": ["true"]}) == 'default/c0: every instance of driver "d" is allocated'


def test_first_failure_leaves_evaluation_errors_to_the_reason() -> None:
    index = AllocationIndex()
    index.upsert_slice(make_slice("s", "n", "d", [("i0", {})]))
    alloc = PodAllocator(index, [make_plan(0, make_claim("c"), {"d": ["color==r"]})])
    assert alloc.filter("n").error is not None
    assert first_failure(alloc, "n") == ""

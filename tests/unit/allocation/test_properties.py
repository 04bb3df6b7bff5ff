"""Property tests on small random clusters: soundness, completeness, upstream parity."""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubedra.allocation.engine import PodAllocator
from kubedra.allocation.index import AllocationIndex
from tests.unit.allocation.helpers import (
    PREDICATES,
    make_claim,
    make_plan,
    make_slice,
    selectors,
)

NODES = ["n0", "n1"]
DRIVERS = ["d0", "d1"]
SELECTORS = sorted(PREDICATES)

attrs = st.fixed_dictionaries(
    {}, optional={"size": st.integers(1, 3), "color": st.sampled_from(["r", "g"])}
)
pool_st = st.lists(st.tuples(attrs, st.booleans()), max_size=5)  # (attributes, allocated)
cluster_st = st.dictionaries(st.sampled_from([(n, d) for n in NODES for d in DRIVERS]), pool_st)
claim_st = st.tuples(
    st.dictionaries(st.sampled_from(DRIVERS), st.lists(st.sampled_from(SELECTORS), max_size=3),
                    min_size=1),
    st.dictionaries(st.sampled_from(DRIVERS), st.sampled_from(SELECTORS)),
)
pod_st = st.lists(claim_st, min_size=1, max_size=3)


def _verdict(expr: str, a: dict[str, Any]) -> bool | None:
    """True/False, None = evaluation error (missing attribute)."""
    try:
        return bool(PREDICATES[expr](_Strict(a)))
    except LookupError:
        return None


class _Strict(dict[str, Any]):
    def __missing__(self, key: str) -> Any:
        raise LookupError(key)


def _ok(expr_filter: str | None, expr: str, a: dict[str, Any]) -> bool:
    return (expr_filter is None or _verdict(expr_filter, a) is True) and _verdict(expr, a) is True


def build(cluster: dict[tuple[str, str], list[tuple[dict[str, Any], bool]]]) -> AllocationIndex:
    index = AllocationIndex()
    k = 0
    for (node, driver), insts in sorted(cluster.items()):
        named = [(f"i{j}", a) for j, (a, _) in enumerate(insts)]
        index.upsert_slice(make_slice(f"{node}-{driver}", node, driver, named))
        for j, (_, held) in enumerate(insts):
            if held:
                index.upsert_claim(make_claim(f"held{k}", [(node, driver, f"i{j}")]))
                k += 1
    return index


def brute_force(cands: list[set[int]]) -> bool:
    universe = sorted(set().union(*cands)) if cands else []
    if len(universe) < len(cands):
        return False
    return any(all(p[i] in cands[i] for i in range(len(cands)))
               for p in itertools.permutations(universe, len(cands)))


def upstream_greedy(insts: list[tuple[dict[str, Any], bool]], filt: str | None,
                    reqs: list[str]) -> list[int] | None:
    """v1.30 Controller.allocate: first fit, CEL error aborts, no backtracking."""
    taken = {j for j, (_, held) in enumerate(insts) if held}
    out: list[int] = []
    for expr in reqs:
        for j, (a, _) in enumerate(insts):
            if j in taken:
                continue
            if filt is not None:
                fv = _verdict(filt, a)
                if fv is None:
                    return None
                if not fv:
                    continue
            rv = _verdict(expr, a)
            if rv is None:
                return None
            if rv:
                taken.add(j)
                out.append(j)
                break
    return out if len(out) == len(reqs) else None


@settings(max_examples=150, deadline=None)
@given(cluster_st, pod_st)
def test_sound_complete_and_upstream_compatible(cluster: Any, pod: Any) -> None:
    index = build(cluster)
    sels = selectors()
    plans = [make_plan(i, make_claim(f"c{i}"), reqs, filters, sels)
             for i, (reqs, filters) in enumerate(pod)]
    allocator = PodAllocator(index, plans)
    for node in NODES:
        verdict = allocator.filter(node)
        # brute force per driver over the joint request list
        feasible = True
        for driver in DRIVERS:
            insts = cluster.get((node, driver), [])
            reqs = [(filters.get(driver), e) for reqs_by_d, filters in pod
                    for e in reqs_by_d.get(driver, [])]
            cands = [{j for j, (a, held) in enumerate(insts) if not held and _ok(f, e, a)}
                     for f, e in reqs]
            feasible &= brute_force(cands)
        assert verdict.ok == feasible, (node, verdict)
        if not verdict.ok:
            assert verdict.reason
            continue
        results = allocator.allocate(node)
        used: set[tuple[str, str]] = set()
        for (reqs_by_d, filters), res in zip(pod, results, strict=True):
            for h in res.allocation.resource_handles or []:
                assert h.structured_data is not None and h.structured_data.node_name == node
                insts = cluster[(node, h.driver_name)]
                for e, r in zip(reqs_by_d[h.driver_name], h.structured_data.results, strict=True):
                    assert r.named_resources is not None
                    j = int(r.named_resources.name[1:])
                    a, held = insts[j]
                    assert not held and _ok(filters.get(h.driver_name), e, a)
                    assert (h.driver_name, r.named_resources.name) not in used
                    used.add((h.driver_name, r.named_resources.name))
        if len(pod) == 1:
            reqs_by_d, filters = pod[0]
            for driver, reqs in reqs_by_d.items():
                want = upstream_greedy(cluster.get((node, driver), []), filters.get(driver), reqs)
                if want is None or not reqs:
                    continue
                (res,) = results
                (h,) = [h for h in res.allocation.resource_handles or []
                        if h.driver_name == driver]
                assert h.structured_data is not None
                got = [int(r.named_resources.name[1:]) for r in h.structured_data.results
                       if r.named_resources]
                assert got == want


@settings(max_examples=60, deadline=None)
@given(cluster_st, st.lists(pod_st, min_size=1, max_size=6))
def test_consecutive_pods_never_share_instances(cluster: Any, pods: Any) -> None:
    index = build(cluster)
    sels = selectors()
    for driver in DRIVERS:  # registered before the pods: must follow every change
        index.matching_nodes(driver, sels.get("size>=1"), sels.get("color==r"))
    for p, pod in enumerate(pods):
        plans = [make_plan(i, make_claim(f"p{p}c{i}"), reqs, filters, sels)
                 for i, (reqs, filters) in enumerate(pod)]
        allocator = PodAllocator(index, plans)
        for node in NODES:
            if allocator.filter(node).ok:
                allocator.reserve(node)
                break
    seen: set[tuple[str, str, str]] = set()
    for pool in index.pools():
        for name in pool.by_name:
            holders = index.holders(pool.node, pool.driver, name)
            assert len(holders) <= 1, (pool.node, pool.driver, name, holders)
            if holders:
                seen.add((pool.node, pool.driver, name))
    for pool in index.pools():
        assert pool.free.bit_count() == len(pool.instances) - sum(
            1 for n in pool.by_name if (pool.node, pool.driver, n) in seen)
    for driver in DRIVERS:
        want = {node for node in NODES for j, (a, _) in enumerate(cluster.get((node, driver), []))
                if (node, driver, f"i{j}") not in seen and _ok("size>=1", "color==r", a)}
        got = index.matching_nodes(driver, sels.get("size>=1"), sels.get("color==r"))
        assert set(got) == want

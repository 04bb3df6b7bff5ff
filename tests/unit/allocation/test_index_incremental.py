"""The incremental index equals a from-scratch model after any random sequence of events."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubedra.allocation.index import AllocationIndex
from tests.unit.allocation.helpers import make_claim, make_slice

NODES = ["n0", "n1"]
DRIVERS = ["d0", "d1"]
NAMES = ["a", "b", "c"]

use_st = st.tuples(st.sampled_from(NODES), st.sampled_from(DRIVERS), st.sampled_from(NAMES))
uses_st = st.lists(use_st, max_size=3)
claim_name = st.sampled_from(["c0", "c1", "c2", "c3"])
event_st = st.one_of(
    st.tuples(st.just("slice"), st.sampled_from(["s0", "s1", "s2", "s3"]),
              st.sampled_from(NODES), st.sampled_from(DRIVERS),
              st.lists(st.sampled_from(NAMES), max_size=4)),
    st.tuples(st.just("delslice"), st.sampled_from(["s0", "s1", "s2", "s3"])),
    st.tuples(st.just("claim"), claim_name, uses_st, st.integers(1, 5)),
    st.tuples(st.just("delclaim"), claim_name),
    st.tuples(st.just("inflight"), claim_name, uses_st),
    st.tuples(st.just("clearinflight"), claim_name),
    st.tuples(st.just("assume"), claim_name, uses_st, st.integers(1, 5)),
    st.tuples(st.just("restore"), claim_name),
)


class Reference:
    """What the index must show, computed from scratch (upstream's newResourceModel rules,
    with k allocations of one name occupying k instances of that name)."""

    def __init__(self) -> None:
        self.slices: dict[str, tuple[str, str, list[str]]] = {}
        self.informer: dict[str, tuple[list[Any], int]] = {}
        self.assumed: dict[str, tuple[list[Any], int]] = {}
        self.in_flight: dict[str, list[Any]] = {}

    def effective(self, c: str) -> list[Any]:
        if c in self.in_flight:
            return self.in_flight[c]
        if c in self.assumed:
            return self.assumed[c][0]
        return self.informer.get(c, ([], 0))[0]

    def snapshot(self) -> dict[str, dict[str, list[tuple[str, bool]]]]:
        count: dict[tuple[str, str, str], int] = {}
        for c in set(self.informer) | set(self.assumed) | set(self.in_flight):
            for u in self.effective(c):
                count[u] = count.get(u, 0) + 1
        pools: dict[tuple[str, str], list[str]] = {}
        for name in sorted(self.slices):
            node, driver, insts = self.slices[name]
            pools.setdefault((node, driver), []).extend(insts)
        out: dict[str, dict[str, list[tuple[str, bool]]]] = {}
        for (node, driver), insts in sorted(pools.items()):
            seen: dict[str, int] = {}
            row = []
            for n in insts:
                k = seen.get(n, 0)
                seen[n] = k + 1
                row.append((n, k < count.get((node, driver, n), 0)))
            out.setdefault(node, {})[driver] = row
        return out


@settings(max_examples=200, deadline=None)
@given(st.lists(event_st, max_size=25))
def test_incremental_equals_rebuild(events: list[Any]) -> None:
    index = AllocationIndex()
    ref = Reference()
    for ev in events:
        kind = ev[0]
        if kind == "slice":
            _, name, node, driver, insts = ev
            index.upsert_slice(make_slice(name, node, driver, [(n, {}) for n in insts]))
            ref.slices[name] = (node, driver, list(insts))
        elif kind == "delslice":
            index.delete_slice(ev[1])
            ref.slices.pop(ev[1], None)
        elif kind == "claim":
            _, c, uses, rv = ev
            index.upsert_claim(make_claim(c, uses, rv=rv))
            ref.informer[c] = (uses, rv)
            if c in ref.assumed and rv >= ref.assumed[c][1]:
                del ref.assumed[c]
        elif kind == "delclaim":
            index.delete_claim(make_claim(ev[1]))
            ref.informer.pop(ev[1], None)
            ref.assumed.pop(ev[1], None)
        elif kind == "inflight":
            index.set_in_flight(make_claim(ev[1], ev[2]))
            ref.in_flight[ev[1]] = ev[2]
        elif kind == "clearinflight":
            index.clear_in_flight(f"uid-{ev[1]}")
            ref.in_flight.pop(ev[1], None)
        elif kind == "assume":
            _, c, uses, rv = ev
            if c in ref.informer and rv < ref.informer[c][1]:
                try:
                    index.assume(make_claim(c, uses, rv=rv))
                except ValueError:
                    continue
                raise AssertionError("stale assume accepted")
            index.assume(make_claim(c, uses, rv=rv))
            ref.assumed[c] = (uses, rv)
        else:
            index.restore(f"uid-{ev[1]}")
            ref.assumed.pop(ev[1], None)
        want = ref.snapshot()
        assert index.snapshot() == want
        for node, drivers in want.items():
            for driver, row in drivers.items():
                free = sum(1 for _, used in row if not used)
                assert index.free_count(node, driver) == free
                assert (node in set(index.nodes_with_free(driver))) == (free > 0)
    fresh = AllocationIndex.from_scratch(
        lambda: [make_slice(name, node, driver, [(n, {}) for n in insts])
                 for name, (node, driver, insts) in ref.slices.items()],
        [make_claim(c, ref.effective(c))
         for c in set(ref.informer) | set(ref.assumed) | set(ref.in_flight)],
    )
    assert fresh.snapshot() == index.snapshot()

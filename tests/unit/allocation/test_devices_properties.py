"""Property tests of the devices-model allocator against a brute-force enumerator.

On random small inventories (two drivers, a few pools, devices with a shared-domain ``numa``
attribute) and random claims (``ExactCount``/``All``, ``firstAvailable``, admin access,
``matchAttribute`` across requests and drivers, devices already allocated), the enumerator
tries every subrequest choice in priority order and, for each, every device sequence in
candidate order, keeping upstream's rules (in-use, admin access, constraints). Its first hit is
the preferred allocation; the allocator must return exactly it, and None exactly when the
enumerator finds nothing.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubedra.allocation.matching import lex_first_match
from kubedra.allocation.model.devices import DeviceEntry, lookup_attribute
from kubedra.api.resource.v1 import DeviceClass, ResourceClaim, ResourceSlice
from tests.unit.allocation.devices_support import (
    NODE,
    PREDICATES,
    allocator,
    claim,
    device,
    device_class,
    exactly,
    first_available,
    slice_,
)

NUMA = "example.com/numa"
CLASSES = [device_class("any"), device_class("d0", "driver==d0"), device_class("a", "kind==a")]
EXPRS = ["true", "kind==a", "kind==b", "size>=2"]

dev_st = st.tuples(st.sampled_from(["a", "b"]), st.integers(1, 3),
                   st.one_of(st.none(), st.integers(0, 2)))
pool_st = st.tuples(st.sampled_from(["d0", "d1"]), st.lists(dev_st, min_size=1, max_size=3))
inventory_st = st.lists(pool_st, min_size=1, max_size=3)

exact_st = st.tuples(st.sampled_from(["any", "d0", "a"]), st.integers(1, 2),
                     st.sampled_from(EXPRS), st.sampled_from(["ExactCount"] * 4 + ["All"]),
                     st.sampled_from([None] * 5 + [True]))
request_st = st.one_of(exact_st.map(lambda x: [x]),
                       st.lists(exact_st, min_size=2, max_size=3))
claim_st = st.tuples(st.lists(request_st, min_size=1, max_size=2),
                     st.lists(st.lists(st.integers(0, 1), max_size=2), max_size=2))
case_st = st.tuples(inventory_st, st.lists(claim_st, min_size=1, max_size=2),
                    st.lists(st.integers(0, 8), max_size=3))


def build(case: Any) -> tuple[list[ResourceSlice], list[ResourceClaim]]:
    inventory, claims_spec, _ = case
    slices = []
    for p, (driver, devs) in enumerate(inventory):
        devices = []
        for i, (kind, size, numa) in enumerate(devs):
            d = device(f"dev-{i}", kind=kind, size=size)
            if numa is not None:
                d["attributes"][NUMA] = {"int": numa}
            devices.append(d)
        slices.append(slice_(f"s{p}", driver, f"pool-{p}", devices))
    claims = []
    for c, (requests, constraints) in enumerate(claims_spec):
        reqs: list[dict[str, Any]] = []
        all_names = set()
        for r, alts in enumerate(requests):
            made = []
            for s, (cls, count, expr, mode, admin) in enumerate(alts):
                sub = len(alts) > 1
                made.append(exactly(f"s{s}" if sub else f"r{r}", cls, count, expr, mode=mode,
                                    admin=None if sub else admin))
                if mode == "All":
                    all_names.add(f"r{r}")
            reqs.append(made[0] if len(alts) == 1 else first_available(f"r{r}", *made))
        cons = []
        for names in constraints:  # constraints never cover All requests (that is an error)
            covered = sorted({f"r{i}" for i in names if i < len(requests)} - all_names)
            if covered:
                cons.append({"matchAttribute": NUMA, "requests": covered})
        claims.append(claim(f"claim-{c}", reqs, cons))
    return slices, claims


def allocated_keys(slices: Sequence[ResourceSlice], picks: Sequence[int]) -> set[tuple[str, ...]]:
    keys = [(s.spec.driver, s.spec.pool.name, d.name) for s in slices for d in s.spec.devices]
    return {keys[i] for i in picks if i < len(keys)}


def _matches(cls: DeviceClass, exprs: Sequence[str], e: DeviceEntry) -> bool:
    every = [s.cel.expression for s in cls.spec.selectors or () if s.cel] + list(exprs)
    return all(PREDICATES[x](e) for x in every)


def brute(slices: Sequence[ResourceSlice], claims: Sequence[ResourceClaim],
          allocated: set[tuple[str, ...]]) -> list[list[tuple[str, tuple[str, ...]]]] | None:
    """Every choice vector in priority order, every device sequence in candidate order."""
    classes = {c.metadata.name: c for c in CLASSES}
    ordered = sorted(slices, key=lambda s: (s.spec.driver, s.spec.pool.name))
    entries = [DeviceEntry(s, d) for s in ordered for d in s.spec.devices]
    alternatives = []  # per request: [(claim index, name, cls, exprs, mode, count, admin)]
    for ci, c in enumerate(claims):
        for r in c.spec.devices.requests:
            if r.exactly is not None:
                x = r.exactly
                alternatives.append([(ci, r.name, classes[x.device_class_name],
                                      [s.cel.expression for s in x.selectors or () if s.cel],
                                      x.allocation_mode, x.count, bool(x.admin_access))])
            else:
                alternatives.append([(ci, f"{r.name}/{s.name}", classes[s.device_class_name],
                                      [x.cel.expression for x in s.selectors or () if x.cel],
                                      s.allocation_mode, s.count, False)
                                     for s in r.first_available or ()])
    for vector in itertools.product(*[range(len(a)) for a in alternatives]):
        slots = []  # (claim, name, admin, candidate positions)
        ok = True
        for alts, k in zip(alternatives, vector, strict=True):
            ci, name, cls, exprs, mode, count, admin = alts[k]
            match = [p for p, e in enumerate(entries) if _matches(cls, exprs, e)]
            if mode == "All":
                if not match or (not admin and any(entries[p].key in allocated for p in match)):
                    ok = False
                slots += [(ci, name, admin, [p]) for p in match]
            else:
                free = [p for p in match if admin or entries[p].key not in allocated]
                slots += [(ci, name, admin, free)] * count
        if not ok:
            continue
        for devs in itertools.product(*[s[3] for s in slots]):
            if _valid(claims, entries, slots, devs):
                out: list[list[tuple[str, tuple[str, ...]]]] = [[] for _ in claims]
                for (ci, name, _, _), d in zip(slots, devs, strict=True):
                    out[ci].append((name, entries[d].key))
                return out
    return None


def _valid(claims: Sequence[ResourceClaim], entries: Sequence[DeviceEntry],
           slots: Sequence[Any], devs: Sequence[int]) -> bool:
    taken: set[int] = set()
    mine: dict[int, set[int]] = {}
    for (ci, _, admin, _), d in zip(slots, devs, strict=True):
        if d in (mine.get(ci, set()) if admin else taken):
            return False
        taken.add(d)
        mine.setdefault(ci, set()).add(d)
    for ci, c in enumerate(claims):
        for con in c.spec.devices.constraints or ():
            names = set(con.requests or ())
            values = [lookup_attribute(entries[d], con.match_attribute or "")
                      for (cj, name, _, _), d in zip(slots, devs, strict=True)
                      if cj == ci and (not names or name in names
                                       or name.split("/")[0] in names)]
            if any(v is None for v in values) or len(set(values)) > 1:
                return False
    return True


@settings(max_examples=300, deadline=None)
@given(case_st)
def test_allocator_agrees_with_brute_force(case: Any) -> None:
    slices, claims = build(case)
    allocated = allocated_keys(slices, case[2])
    expected = brute(slices, claims, allocated)
    got = allocator(slices, CLASSES, allocated).allocate(NODE, claims)
    if expected is None:
        assert got is None
        return
    assert got is not None
    assert [[(r.request, (r.driver, r.pool, r.device)) for r in a.devices.results or ()]
            for a in got] == expected


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 63), min_size=1, max_size=5))
def test_lex_first_match_is_the_first_of_all_matchings(candidates: list[int]) -> None:
    every = [list(p) for p in itertools.product(*[[i for i in range(6) if m >> i & 1]
                                                 for m in candidates])
             if len(set(p)) == len(p)]
    assert lex_first_match(candidates) == (min(every) if every else None)

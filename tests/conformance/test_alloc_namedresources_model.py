"""alloc-namedresources-model.json: building one node+driver pool (AddResources/AddAllocation)."""

from __future__ import annotations

from typing import Any

from kubedra.allocation.index import AllocationIndex
from tests.conformance.alloc_support import holding_claim, slice_obj
from tests.vectors import load, vector_cases

CASES = load("alloc-namedresources-model.json")["cases"]


@vector_cases("alloc-namedresources-model.json", CASES)
def test_model(case: dict[str, Any]) -> None:
    index = AllocationIndex()
    for i, res in enumerate(case["resources"]):
        if res is not None:
            index.upsert_slice(slice_obj(i, "node", "driver", res))
    for i, alloc in enumerate(case["allocations"]):
        if alloc is not None:
            index.upsert_claim(holding_claim(f"c{i}", "node", "driver", [alloc["name"]]))
    pool = index.pool("node", "driver")
    got = [] if pool is None else [
        {"name": inst.name, "allocated": not (pool.free >> i) & 1}
        for i, inst in enumerate(pool.instances)
    ]
    assert got == case["expect_instances"]

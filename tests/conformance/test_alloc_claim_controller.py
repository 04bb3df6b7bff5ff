"""alloc-claim-controller.json: per-claim nodeIsSuitable/allocate with exact texts and results."""

from __future__ import annotations

from typing import Any

import pytest

from kubedra.allocation.engine import AllocationError, PodAllocator
from kubedra.allocation.index import AllocationIndex
from kubedra.allocation.model.namedresources import ClaimPlanError
from tests.conformance.alloc_support import builtins, load_model, plan
from tests.vectors import load, vector_cases

CASES = load("alloc-claim-controller.json")["cases"]


@vector_cases("alloc-claim-controller.json", CASES)
def test_claim_controller(case: dict[str, Any]) -> None:
    index = AllocationIndex()
    n = 0
    for node, drivers in case["resources"].items():
        for driver, model in drivers.items():
            load_model(index, node, driver, model, slice_number=n)
            n += 1
    try:
        claim_plan = plan(case["class"], case["classParameters"], case["claimParameters"])
    except ClaimPlanError as err:
        assert str(err) == case["expect_create_error_v1_30_0"]
        return
    assert "expect_create_error_v1_30_0" not in case
    allocator = PodAllocator(index, [claim_plan])
    for node, want in case["expect_node_results"].items():
        verdict = allocator.filter(node)
        if "suitableErr" in want:
            assert not verdict.ok
            assert verdict.error == want["suitableErr"]
            continue
        assert verdict.error is None
        assert verdict.ok is want["isSuitable"]
        if "allocateErr" in want:
            with pytest.raises(AllocationError) as info:
                allocator.allocate(node)
            assert str(info.value) == want["allocateErr"]
            continue
        (result,) = allocator.allocate(node)
        assert result.driver_name == want["driverName"]
        assert builtins(result.allocation) == want["allocation"]
        assert builtins(result.claim.status.allocation) == want["allocation"]
        assert result.claim.status.driver_name == want["driverName"]

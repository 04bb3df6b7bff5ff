"""Turning the alloc-* vector fixtures into index events and claim plans."""

from __future__ import annotations

import functools
from typing import Any

from kubedra.allocation.celadapter import cel_selectors
from kubedra.allocation.index import AllocationIndex
from kubedra.allocation.model.namedresources import ClaimPlan, class_filter, plan_claim
from kubedra.allocation.selectors import Selectors
from kubedra.api.codec import decode, to_builtins
from kubedra.api.resource.v1alpha2 import (
    ResourceClaim,
    ResourceClaimParameters,
    ResourceClass,
    ResourceClassParameters,
    ResourceSlice,
)


@functools.cache
def selectors() -> Selectors:
    """One shared compile cache for all cases (the real CEL adapter)."""
    return cel_selectors()


def slice_obj(i: int, node: str, driver: str, named: dict[str, Any] | None) -> ResourceSlice:
    """Slice ``i``; names sort in list order, so pool order = the vector's lister order."""
    raw: dict[str, Any] = {"metadata": {"name": f"slice-{i:04d}"}, "nodeName": node,
                           "driverName": driver}
    if named is not None:
        raw["namedResources"] = named
    return decode(raw, ResourceSlice)


def claim_obj(uid: str, status: dict[str, Any]) -> ResourceClaim:
    return decode({"metadata": {"uid": uid, "name": uid, "namespace": "default"},
                   "status": status}, ResourceClaim)


def holding_claim(uid: str, node: str, driver: str, names: list[str]) -> ResourceClaim:
    """A claim whose allocation names ``names`` on node+driver."""
    results = [{"namedResources": {"name": n}} for n in names]
    return claim_obj(uid, {"driverName": driver, "allocation": {"resourceHandles": [
        {"driverName": driver, "structuredData": {"nodeName": node, "results": results}}]}})


def load_model(index: AllocationIndex, node: str, driver: str, model: list[dict[str, Any]],
               slice_number: int = 0) -> None:
    """A vector model (ordered {name, allocated, attributes}) as one slice + holder claims."""
    instances = [{k: v for k, v in m.items() if k in ("name", "attributes")} for m in model]
    index.upsert_slice(slice_obj(slice_number, node, driver, {"instances": instances}))
    held = [m["name"] for m in model if m.get("allocated")]
    for k, name in enumerate(held):
        index.upsert_claim(holding_claim(f"held-{node}-{driver}-{slice_number}-{k}", node, driver,
                                         [name]))


def plan(class_obj: dict[str, Any], class_params: dict[str, Any],
         claim_params: dict[str, Any]) -> ClaimPlan:
    claim = decode({"metadata": {"name": "claim", "namespace": "default", "uid": "claim-uid"},
                    "spec": {"resourceClassName": "class"}}, ResourceClaim)
    return plan_claim(0, claim, decode(class_obj, ResourceClass),
                      decode(class_params, ResourceClassParameters),
                      decode(claim_params, ResourceClaimParameters), selectors())


def simple_plan(filter_selector: str | None, request_selectors: list[str]) -> ClaimPlan:
    filters = [] if filter_selector is None else [
        {"driverName": "driver", "namedResources": {"selector": filter_selector}}]
    reqs = [{"namedResources": {"selector": s}} for s in request_selectors]
    drs = [{"driverName": "driver", "requests": reqs}] if reqs else []
    class_params = decode({"filters": filters}, ResourceClassParameters)
    # NewClaimController compiles the filter even without requests (a claim-level plan
    # only compiles it for drivers that have requests).
    class_filter(class_params, "driver", selectors())
    return plan({"driverName": "driver"}, {"filters": filters}, {"driverRequests": drs})


def without_nulls(v: Any) -> Any:
    """Drop null members: Go test structs leave unset RawExtensions out."""
    if isinstance(v, dict):
        return {k: without_nulls(x) for k, x in v.items() if x is not None}
    if isinstance(v, list):
        return [without_nulls(x) for x in v]
    return v


def builtins(obj: Any) -> Any:
    return without_nulls(to_builtins(obj))

"""Builders for allocation unit tests and a tiny selector language for property tests.

The property tests check the allocation algorithm, not CEL, so selectors are Python predicates
named by short strings; a missing attribute raises like CEL's map lookup does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from kubedra.allocation.model.namedresources import ClaimPlan, plan_claim
from kubedra.allocation.selectors import (
    Evaluator,
    SelectorCompileError,
    SelectorEvalError,
    Selectors,
)
from kubedra.api.codec import decode
from kubedra.api.resource.v1alpha2 import (
    NamedResourcesAttribute,
    ResourceClaim,
    ResourceClaimParameters,
    ResourceClass,
    ResourceClassParameters,
    ResourceSlice,
)


def _attrs(attributes: Sequence[NamedResourcesAttribute]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for a in attributes:
        out[a.name] = a.int_ if a.int_ is not None else a.string
    return out


class _Missing(dict[str, Any]):
    def __missing__(self, key: str) -> Any:
        raise SelectorEvalError(f"no such key: {key}")


PREDICATES: dict[str, Callable[[dict[str, Any]], bool]] = {
    "true": lambda a: True,
    "false": lambda a: False,
    "size>=2": lambda a: bool(a["size"] >= 2),
    "size>=1": lambda a: bool(a["size"] >= 1),
    "size==1": lambda a: bool(a["size"] == 1),
    "color==r": lambda a: bool(a["color"] == "r"),
    "color==g": lambda a: bool(a["color"] == "g"),
}


def predicate(expr: str) -> Evaluator:
    fn = PREDICATES[expr]
    return lambda instance: fn(_Missing(_attrs(instance.attributes)))


def fake_compiler(expr: str) -> Evaluator:
    if expr not in PREDICATES:
        raise SelectorCompileError(f"unknown test selector {expr!r}")
    return predicate(expr)


def selectors() -> Selectors:
    return Selectors(fake_compiler)


def make_slice(name: str, node: str, driver: str,
               instances: Sequence[tuple[str, dict[str, Any]]]) -> ResourceSlice:
    insts = []
    for inst_name, attrs in instances:
        al = [{"name": k, "int" if isinstance(v, int) else "string": v} for k, v in attrs.items()]
        insts.append({"name": inst_name, "attributes": al})
    return decode({"metadata": {"name": name}, "nodeName": node, "driverName": driver,
                   "namedResources": {"instances": insts}}, ResourceSlice)


def make_claim(name: str, uses: Sequence[tuple[str, str, str]] = (), *, rv: int = 1,
               class_name: str = "class") -> ResourceClaim:
    """A claim in ``default``; ``uses`` = (node, driver, instance) of its allocation."""
    status: dict[str, Any] = {}
    if uses:
        handles: dict[tuple[str, str], dict[str, Any]] = {}
        for node, driver, inst in uses:
            h = handles.setdefault((node, driver), {"driverName": driver, "structuredData": {
                "nodeName": node, "results": []}})
            h["structuredData"]["results"].append({"namedResources": {"name": inst}})
        status = {"driverName": uses[0][1], "allocation": {"resourceHandles": list(
            handles.values())}}
    return decode({"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}",
                                "resourceVersion": str(rv)},
                   "spec": {"resourceClassName": class_name}, "status": status}, ResourceClaim)


def make_plan(position: int, claim: ResourceClaim, driver_requests: dict[str, list[str]],
              filters: dict[str, str] | None = None, sels: Selectors | None = None,
              shareable: bool = False) -> ClaimPlan:
    cls = decode({"metadata": {"name": "class"}, "driverName": next(iter(driver_requests), "d"),
                  "structuredParameters": True}, ResourceClass)
    class_params = decode({"filters": [
        {"driverName": d, "namedResources": {"selector": s}} for d, s in (filters or {}).items()
    ]}, ResourceClassParameters)
    claim_params = decode({"shareable": shareable, "driverRequests": [
        {"driverName": d, "requests": [{"namedResources": {"selector": s}} for s in reqs]}
        for d, reqs in driver_requests.items()
    ]}, ResourceClaimParameters)
    return plan_claim(position, claim, cls, class_params, claim_params, sels or selectors())

"""Builders for the devices-model allocator's tests, with selectors as Python predicates.

The tests here check the allocation algorithm, not CEL: a selector is a short name of a
predicate over the device's attributes (the conformance test runs real CEL).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from kubedra.allocation.deviceallocator import DeviceAllocator
from kubedra.allocation.features import Features
from kubedra.allocation.model.devices import DeviceEntry, DeviceSelectors, Evaluator
from kubedra.allocation.selectors import SelectorCompileError, SelectorEvalError
from kubedra.api.codec import decode
from kubedra.api.core import Node
from kubedra.api.resource.v1 import DeviceClass, ResourceClaim, ResourceSlice

NODE = decode({"metadata": {"name": "node-1", "labels": {"zone": "z1"}}}, Node)


def _attr(e: DeviceEntry, name: str) -> Any:
    a = (e.device.attributes or {}).get(name)
    if a is None:
        raise SelectorEvalError(f"no such key: {name}")
    return a.int_ if a.int_ is not None else a.string


PREDICATES: dict[str, Callable[[DeviceEntry], bool]] = {
    "true": lambda e: True,
    "false": lambda e: False,
    "kind==a": lambda e: bool(_attr(e, "kind") == "a"),
    "kind==b": lambda e: bool(_attr(e, "kind") == "b"),
    "size>=2": lambda e: bool(_attr(e, "size") >= 2),
    "driver==d0": lambda e: e.key[0] == "d0",
}


def fake_compiler(expr: str) -> Evaluator:
    if expr not in PREDICATES:
        raise SelectorCompileError(f"unknown test selector {expr!r}")
    return PREDICATES[expr]


def selectors() -> DeviceSelectors:
    return DeviceSelectors(fake_compiler)


def device(name: str, **attributes: int | str) -> dict[str, Any]:
    attrs = {k: ({"int": v} if isinstance(v, int) else {"string": v})
             for k, v in attributes.items()}
    return {"name": name, "attributes": attrs} if attrs else {"name": name}


def slice_(name: str, driver: str, pool: str, devices: Iterable[dict[str, Any]],
           node: str | None = "node-1", generation: int = 1, count: int = 1,
           **where: Any) -> ResourceSlice:
    spec: dict[str, Any] = {"driver": driver, "devices": list(devices),
                            "pool": {"name": pool, "generation": generation,
                                     "resourceSliceCount": count}}
    if node is not None and not where:
        spec["nodeName"] = node
    spec.update(where)
    return decode({"metadata": {"name": name}, "spec": spec}, ResourceSlice)


def device_class(name: str, *exprs: str, config: Sequence[dict[str, Any]] = ()) -> DeviceClass:
    spec: dict[str, Any] = {"selectors": [{"cel": {"expression": e}} for e in exprs]}
    if config:
        spec["config"] = list(config)
    return decode({"metadata": {"name": name}, "spec": spec}, DeviceClass)


def exactly(name: str, cls: str = "c", count: int = 1, *exprs: str, mode: str = "ExactCount",
            admin: bool | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"deviceClassName": cls, "allocationMode": mode}
    if mode == "ExactCount":
        body["count"] = count
    if exprs:
        body["selectors"] = [{"cel": {"expression": e}} for e in exprs]
    if admin is not None:
        body["adminAccess"] = admin
    return {"name": name, "exactly": body}


def first_available(name: str, *subs: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "firstAvailable": [{"name": s["name"], **s["exactly"]} for s in subs]}


def claim(name: str, requests: Sequence[dict[str, Any]],
          constraints: Sequence[dict[str, Any]] = (), config: Sequence[dict[str, Any]] = (),
          namespace: str | None = "default") -> ResourceClaim:
    devices: dict[str, Any] = {"requests": list(requests)}
    if constraints:
        devices["constraints"] = list(constraints)
    if config:
        devices["config"] = list(config)
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    return decode({"metadata": meta, "spec": {"devices": devices}}, ResourceClaim)


ALL_ON = Features(admin_access=True, prioritized_list=True)


def allocator(slices: Sequence[ResourceSlice], classes: Sequence[DeviceClass],
              allocated: Iterable[tuple[str, str, str]] = (),
              features: Features = ALL_ON) -> DeviceAllocator:
    return DeviceAllocator(features, set(allocated),
                           {c.metadata.name or "": c for c in classes}, slices, selectors())

"""kubelet-noderesources-sync.json: the node resources controller's reconciliation of one
driver's reported models with this node's ResourceSlices (create, reuse by update, delete)."""

from __future__ import annotations

import json
from typing import Any

from kubedra.api import codec
from kubedra.api.core import Node
from kubedra.api.meta import ObjectMeta
from kubedra.api.resource.v1alpha2 import NamedResourcesResources, ResourceSlice
from kubedra.kubelet.noderesources import plan_sync
from tests.vectors import load, vector_cases

FILE = "kubelet-noderesources-sync.json"
V = load(FILE)
NODE = Node(metadata=ObjectMeta(name=V["node"]["name"], uid=V["node"]["uid"]))


def _model(m: dict[str, Any]) -> NamedResourcesResources:
    return codec.decode(json.dumps(m["namedResources"]).encode(), NamedResourcesResources)


def _slice(s: dict[str, Any]) -> ResourceSlice:
    body = {"metadata": {"name": s["name"]}, "driverName": s["driverName"],
            "namedResources": s["namedResources"]}
    return codec.decode(json.dumps(body).encode(), ResourceSlice)


def _json(s: ResourceSlice) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(codec.encode(s))
    out.pop("apiVersion", None)
    out.pop("kind", None)
    return out


@vector_cases(FILE, V["scenarios"])
def test_sync(case: dict[str, Any]) -> None:
    desired = None if case["desired"] is None else [_model(m) for m in case["desired"]]
    plan = plan_sync(NODE, case["driver"], desired, [_slice(s) for s in case["existingSlices"]])
    assert [_json(s) for s in plan.create] == case["expect"]["create"]
    assert [{"name": s.metadata.name, "namedResources": _json(s)["namedResources"]}
            for s in plan.update] == case["expect"]["update"]
    assert plan.delete == case["expect"]["delete"]

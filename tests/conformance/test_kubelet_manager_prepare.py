"""kubelet-manager-prepare.json: how the claim manager turns an allocated ResourceClaim into
per-driver ``NodePrepareResources`` batches (structured handle in its single-entry field, an
empty handle for claims without handles, one batch per handle driver)."""

from __future__ import annotations

import json
from typing import Any

from kubedra.api import codec
from kubedra.api.resource.v1alpha2 import ResourceClaim
from kubedra.kubelet.manager import claim_info, requests
from tests.vectors import load, vector_cases

FILE = "kubelet-manager-prepare.json"
V = load(FILE)


def _raw(pb: Any, name: str, out: dict[str, Any]) -> None:
    if pb.HasField(name) and getattr(pb, name).raw:
        out[name] = json.loads(getattr(pb, name).raw)


def _structured(pb: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    _raw(pb, "vendorClassParameters", out)
    _raw(pb, "vendorClaimParameters", out)
    out["nodeName"] = pb.nodeName
    results = []
    for r in pb.results:
        result: dict[str, Any] = {}
        _raw(r, "vendorRequestParameters", result)
        result["namedResources"] = {"name": r.allocationResultModel.namedResources.name}
        results.append(result)
    out["results"] = results
    return out


def _claim(pb: Any) -> dict[str, Any]:
    return {"namespace": pb.namespace, "uid": pb.uid, "name": pb.name,
            "resource_handle": pb.resource_handle,
            "structured_resource_handle": [_structured(s) for s in pb.structured_resource_handle]}


@vector_cases(FILE, V["examples"])
def test_prepare_batches(case: dict[str, Any]) -> None:
    claim = codec.decode(json.dumps(case["claim"]).encode(), ResourceClaim)
    got = {driver: [_claim(c) for c in claims]
           for driver, claims in requests(claim_info(claim)).items()}
    assert got == case["expectBatches"]

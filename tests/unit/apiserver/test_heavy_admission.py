"""Admission that may compile CEL: on the event loop when every selector is compiled already,
on the admission thread (bounded, 429 past it) only when something must be compiled."""

from __future__ import annotations

import uuid

import pytest

from kubedra.api.features import FeatureGates
from kubedra.api.release import R1_34
from kubedra.apiserver import admission
from tests.unit.apiserver.conftest import MakeEnv

CLAIMS = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims"
CLASSES = "/apis/resource.k8s.io/v1/deviceclasses"
MERGE = "application/merge-patch+json"


def claim(name: str, expression: str) -> dict[str, object]:
    return {"metadata": {"name": name}, "spec": {"devices": {"requests": [{
        "name": "gpu", "exactly": {"deviceClassName": "gpu",
                                   "selectors": [{"cel": {"expression": expression}}]}}]}}}


async def test_a_full_queue_refuses_only_writes_that_compile(
        make_env: MakeEnv, monkeypatch: pytest.MonkeyPatch) -> None:
    env = await make_env(gates=FeatureGates.for_release(R1_34))
    status, _ = await env.call("POST", CLASSES, {"metadata": {"name": "gpu"}})
    assert status == 201
    seen = 'device.driver == "seen.example.com"'
    status, _ = await env.call("POST", CLAIMS, claim("first", seen))
    assert status == 201, "compiled on the admission thread"
    status, _ = await env.call("PATCH", f"{CLAIMS}/first", {"metadata": {
        "labels": {"a": "b"}}}, MERGE)
    assert status == 200, "an update checks stored expressions in their own environment"

    monkeypatch.setattr(admission, "_waiting", admission.HEAVY_WAITING)  # the queue is full
    status, _ = await env.call("POST", CLAIMS, claim("second", seen))
    assert status == 201  # its selector is compiled: admitted on the event loop
    status, _ = await env.call("PATCH", f"{CLAIMS}/second", {"metadata": {
        "labels": {"a": "b"}}}, MERGE)
    assert status == 200
    new = f'device.driver == "{uuid.uuid4().hex}.example.com"'
    status, body = await env.call("POST", CLAIMS, claim("third", new))
    assert status == 429 and body["reason"] == "TooManyRequests"  # it must compile: refused
    status, _ = await env.call("GET", f"{CLAIMS}/third")
    assert status == 404  # and nothing stored

    monkeypatch.setattr(admission, "_waiting", 0)
    bad = 'device.driver == "x" &&'
    status, body = await env.call("POST", CLAIMS, claim("fourth", bad))
    assert status == 422  # a compile error is still found (on the thread), as before
    assert "compilation failed" in body["message"] or "syntax error" in body["message"], body

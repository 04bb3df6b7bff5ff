"""``--runtime-config resource.k8s.io/v1beta1=true`` on ``--emulated-version 1.34``: an object
written as v1beta1 reads back identically as v1beta1 and, converted, as v1 (and the
reverse), field errors name the fields of the version the client sent, and without the
flag ``/apis/resource.k8s.io/v1beta1`` is a 404."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.e2e.conftest import apiserver_process, kubeconfig_session, wait_ready

G = "/apis/resource.k8s.io"


@pytest.fixture(scope="module")
def beta_on(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with apiserver_process(tmp_path_factory.mktemp("v1beta1-on"), "--emulated-version",
                           "1.34", "--runtime-config",
                           "resource.k8s.io/v1beta1=true") as kubeconfig:
        wait_ready(kubeconfig)
        yield kubeconfig


@pytest.fixture
async def http(beta_on: Path) -> AsyncIterator[aiohttp.ClientSession]:
    async with kubeconfig_session(beta_on) as session:
        yield session


async def call(http: aiohttp.ClientSession, method: str, path: str,
               body: Any = None) -> tuple[int, Any]:
    async with http.request(method, path, json=body) as resp:
        return resp.status, await resp.json(content_type=None)


def _meta_free(obj: dict[str, Any]) -> dict[str, Any]:
    """The object without what the server owns (metadata) and its type meta."""
    return {k: v for k, v in obj.items() if k not in ("metadata", "apiVersion", "kind")}


BETA_SLICE = {
    "driver": "gpu.example.com", "nodeName": "node-a",
    "pool": {"name": "pool-a", "generation": 1, "resourceSliceCount": 1},
    "devices": [{"name": "gpu-0", "basic": {
        "attributes": {"model": {"string": "a100"}},
        "capacity": {"memory": {"value": "40Gi"}}}}],
}
V1_SLICE = {
    "driver": "gpu.example.com", "nodeName": "node-a",
    "pool": {"name": "pool-a", "generation": 1, "resourceSliceCount": 1},
    "devices": [{"name": "gpu-0", "attributes": {"model": {"string": "a100"}},
                 "capacity": {"memory": {"value": "40Gi"}}}],
}


async def test_a_slice_written_as_v1beta1_reads_back_as_both(
        http: aiohttp.ClientSession) -> None:
    name = "beta-" + uuid.uuid4().hex[:6]
    status, made = await call(http, "POST", f"{G}/v1beta1/resourceslices", {
        "apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceSlice",
        "metadata": {"name": name}, "spec": BETA_SLICE})
    assert status == 201, made
    assert made["apiVersion"] == "resource.k8s.io/v1beta1"
    assert made["spec"] == BETA_SLICE
    status, beta = await call(http, "GET", f"{G}/v1beta1/resourceslices/{name}")
    assert status == 200 and beta == made
    status, v1 = await call(http, "GET", f"{G}/v1/resourceslices/{name}")
    assert status == 200
    assert v1["apiVersion"] == "resource.k8s.io/v1" and v1["kind"] == "ResourceSlice"
    assert v1["spec"] == V1_SLICE
    assert v1["metadata"] == beta["metadata"]


async def test_a_claim_written_as_v1_reads_back_as_both(http: aiohttp.ClientSession) -> None:
    ns = "rt-" + uuid.uuid4().hex[:6]
    assert (await call(http, "POST", "/api/v1/namespaces", {"metadata": {"name": ns}}))[0] \
        == 201
    spec_v1 = {"devices": {"requests": [{"name": "gpu", "exactly": {
        "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 2}}]}}
    spec_beta = {"devices": {"requests": [{
        "name": "gpu", "deviceClassName": "gpu", "allocationMode": "ExactCount",
        "count": 2}]}}
    status, made = await call(http, "POST", f"{G}/v1/namespaces/{ns}/resourceclaims", {
        "metadata": {"name": "c"}, "spec": spec_v1})
    assert status == 201, made
    status, beta = await call(http, "GET", f"{G}/v1beta1/namespaces/{ns}/resourceclaims/c")
    assert status == 200
    assert beta["apiVersion"] == "resource.k8s.io/v1beta1"
    assert _meta_free(beta) == {"spec": spec_beta, "status": {}}
    assert beta["metadata"] == made["metadata"]
    # a list and a v1beta1 update, read back as v1
    status, items = await call(http, "GET", f"{G}/v1beta1/namespaces/{ns}/resourceclaims")
    assert status == 200 and items["kind"] == "ResourceClaimList"
    assert items["apiVersion"] == "resource.k8s.io/v1beta1"
    assert [_meta_free(i) for i in items["items"]] == [{"spec": spec_beta, "status": {}}]
    beta["metadata"]["labels"] = {"via": "v1beta1"}
    status, updated = await call(http, "PUT", f"{G}/v1beta1/namespaces/{ns}/resourceclaims/c",
                                 beta)
    assert status == 200, updated
    status, v1 = await call(http, "GET", f"{G}/v1/namespaces/{ns}/resourceclaims/c")
    assert v1["metadata"]["labels"] == {"via": "v1beta1"}
    assert v1["spec"] == spec_v1
    # a merge patch in the client's version
    async with http.patch(f"{G}/v1beta1/namespaces/{ns}/resourceclaims/c",
                          json={"metadata": {"labels": {"patched": "yes"}}},
                          headers={"Content-Type": "application/merge-patch+json"}) as resp:
        assert resp.status == 200
        patched = await resp.json()
    assert patched["apiVersion"] == "resource.k8s.io/v1beta1"
    assert patched["spec"] == spec_beta


async def test_field_errors_name_the_clients_fields(http: aiohttp.ClientSession) -> None:
    spec = {"driver": "gpu.example.com", "allNodes": True,
            "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": "Not_A_Label", "basic": {}}]}
    status, body = await call(http, "POST", f"{G}/v1beta1/resourceslices", {
        "metadata": {"name": "bad-" + uuid.uuid4().hex[:6]}, "spec": spec})
    assert status == 422, body
    fields = [c["field"] for c in body["details"]["causes"]]
    assert "spec.devices[0].name" in fields
    status, body = await call(http, "POST", f"{G}/v1beta1/resourceslices", {
        "metadata": {"name": "bad-" + uuid.uuid4().hex[:6]},
        "spec": {**spec, "devices": [{"name": "d", "basic": {
            "attributes": {"a": {"string": "x" * 65}}}}]}})
    assert status == 422, body
    fields = [c["field"] for c in body["details"]["causes"]]
    assert fields == ["spec.devices[0].basic.attributes[a].string"], body


async def test_unserved_versions_are_404(http: aiohttp.ClientSession,
                                         tmp_path: Path) -> None:
    assert (await call(http, "GET", f"{G}/v1beta1"))[0] == 200
    assert (await call(http, "GET", f"{G}/v1beta2"))[0] == 404
    with apiserver_process(tmp_path, "--emulated-version", "1.34") as kubeconfig:
        wait_ready(kubeconfig)
        async with kubeconfig_session(kubeconfig) as plain:
            assert (await call(plain, "GET", f"{G}/v1beta1"))[0] == 404
            assert (await call(plain, "GET", f"{G}/v1beta1/resourceslices"))[0] == 404
            assert (await call(plain, "GET", f"{G}/v1alpha2"))[0] == 404
            status, group = await call(plain, "GET", G)
            assert status == 200
            assert [v["version"] for v in group["versions"]] == ["v1"]

"""Abuse found by fault testing, against the session's real ``kubedra apiserver`` process:
each test fails on the server as it was before its fix."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from kubedra.client import kubeconfig
from tests.e2e.conftest import Server

RS = "/apis/resource.k8s.io/v1alpha2"


@pytest.fixture
async def http(apiserver: Server) -> AsyncIterator[aiohttp.ClientSession]:
    cfg = kubeconfig.load(apiserver.kubeconfig)
    headers = {"Authorization": f"Bearer {cfg.token}"} if cfg.token else {}
    connector = aiohttp.TCPConnector(ssl=cfg.ssl_context())
    async with aiohttp.ClientSession(cfg.server, headers=headers, connector=connector) as s:
        yield s


@pytest.fixture
async def ns(http: aiohttp.ClientSession) -> str:
    name = "h-" + uuid.uuid4().hex[:8]
    status, _ = await send(http, "POST", "/api/v1/namespaces", {"metadata": {"name": name}})
    assert status == 201
    return name


async def send(http: aiohttp.ClientSession, method: str, path: str, body: Any = None, *,
               data: bytes | None = None,
               content_type: str = "application/json") -> tuple[int, Any]:
    payload = data if data is not None else json.dumps(body).encode()
    async with http.request(method, path, data=payload,
                            headers={"Content-Type": content_type}) as resp:
        text = await resp.text()
        return resp.status, json.loads(text) if text.startswith("{") else text


# --- integers beyond their Go type ------------------------------------------------------------


async def test_integers_beyond_int64_are_rejected(http: aiohttp.ClientSession, ns: str) -> None:
    pod = b'{"metadata":{"name":"big","generation":' + b"9" * 400 + b'},' \
          b'"spec":{"containers":[{"name":"c","image":"i"}]}}'
    status, err = await send(http, "POST", f"/api/v1/namespaces/{ns}/pods", data=pod)
    assert status == 400, err
    assert err["reason"] == "BadRequest"
    assert "metadata.generation" in err["message"]
    status, _ = await send(http, "GET", f"/api/v1/namespaces/{ns}/pods/big")
    assert status == 404

    attr = {"name": "n", "int": -9223372036854775809}
    body = {"apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceSlice",
            "metadata": {"name": "s-" + ns}, "nodeName": "n1", "driverName": "d.example.com",
            "namedResources": {"instances": [{"name": "i", "attributes": [attr]}]}}
    status, err = await send(http, "POST", f"{RS}/resourceslices", body)
    assert status == 400, err
    assert "namedResources.instances[0].attributes[0].int" in err["message"]
    attr["int"] = -9223372036854775808  # the edge itself is an int64
    status, err = await send(http, "POST", f"{RS}/resourceslices", body)
    assert status == 201, err
    assert err["namedResources"]["instances"][0]["attributes"][0]["int"] == -(2**63)


async def test_int32_fields_are_range_checked_on_patch(
    http: aiohttp.ClientSession, ns: str
) -> None:
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
           "spec": {"template": {"spec": {"restartPolicy": "Never",
                                          "containers": [{"name": "c", "image": "i"}]}}}}
    status, err = await send(http, "POST", f"/apis/batch/v1/namespaces/{ns}/jobs", job)
    assert status == 201, err
    status, err = await send(http, "PATCH", f"/apis/batch/v1/namespaces/{ns}/jobs/j",
                             {"spec": {"parallelism": 2**31}},
                             content_type="application/merge-patch+json")
    assert status == 400, err
    assert "spec.parallelism" in err["message"]

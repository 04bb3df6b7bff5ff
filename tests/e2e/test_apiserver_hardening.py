"""Abuse found by fault testing, against the session's real ``kubedra apiserver`` process:
each test fails on the server as it was before its fix."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml

from kubedra.client import kubeconfig
from tests.e2e.conftest import Server, kubeconfig_session
from tests.timing import check

RS = "/apis/resource.k8s.io/v1alpha2"


@pytest.fixture
async def http(apiserver: Server) -> AsyncIterator[aiohttp.ClientSession]:
    async with kubeconfig_session(apiserver.kubeconfig) as s:
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


# --- watch-cache memory -----------------------------------------------------------------------


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


async def test_watch_cache_is_bounded_by_bytes(tmp_path: Path) -> None:
    """600 create/delete cycles of 100 KB objects: before the bound, the window kept every
    event (about 0.7 MiB a cycle, 400 MiB here); now the server stays near its bound."""
    kc = tmp_path / "kubeconfig"
    log = (tmp_path / "log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "kubedra", "apiserver", "--data-dir", str(tmp_path),
         "--port", "0", "--kubeconfig", str(kc), "--watch-cache-bytes", "16Mi",
         "--emulated-version", "1.30"],
        stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while not kc.exists():
            assert proc.poll() is None and time.monotonic() < deadline, "server did not start"
            await asyncio.sleep(0.05)
        cfg = kubeconfig.load(kc)
        url = f"{cfg.server}/apis/resource.k8s.io/v1alpha2/namespaces/default/" \
              "resourceclaimparameters"
        blob = "x" * 100_000
        async with kubeconfig_session(kc) as http:
            async def cycle(body: dict[str, Any]) -> None:
                async with http.post(url, json=body) as resp:
                    assert resp.status == 201, await resp.text()
                async with http.delete(url + "/p") as resp:
                    assert resp.status == 200, await resp.text()

            request = {"driverName": "d.example.com",
                       "requests": [{"namedResources": {"selector": "true"}}]}
            base = {"apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClaimParameters"}
            await cycle({**base, "metadata": {"name": "p"}, "driverRequests": [request]})
            start = _rss_mib(proc.pid)
            for i in range(600):
                if i % 2:
                    body = {**base, "metadata": {"name": "p", "annotations": {"a": blob}},
                            "driverRequests": [request]}
                else:
                    body = {**base, "metadata": {"name": "p"},
                            "driverRequests": [{**request, "vendorParameters": {"b": blob}}]}
                await cycle(body)
            grown = _rss_mib(proc.pid) - start
            async with http.get(f"{cfg.server}/metrics") as resp:
                metrics = await resp.text()
        window = next(float(line.split()[1]) for line in metrics.splitlines()
                      if line.startswith("apiserver_watch_cache_window_bytes "))
        assert 0 < window <= 16 << 20
        assert grown < 16 + 100, f"the server grew by {grown:.0f} MiB"
    finally:
        proc.terminate()
        proc.wait(10)
        log.close()


# --- warnings that a header cannot carry ------------------------------------------------------


async def test_unknown_field_with_a_control_character_is_answered(
    http: aiohttp.ClientSession, ns: str
) -> None:
    """The write is stored and answered; the warning names the field as Go's %q does."""
    body = b'{"metadata":{"name":"w"},"spec":{"containers":[{"name":"c","image":"i"}],' \
           b'"x\\u0001\\ny":1}}'
    async with http.post(f"/api/v1/namespaces/{ns}/pods?fieldValidation=Warn", data=body,
                         headers={"Content-Type": "application/json"}) as resp:
        assert resp.status == 201, await resp.text()
        warnings = resp.headers.getall("Warning")
    assert warnings == ['299 - "unknown field \\"spec.x\\\\x01\\\\ny\\""']
    async with http.post(f"/api/v1/namespaces/{ns}/pods?fieldValidation=Strict",
                         data=body.replace(b'"w"', b'"s"'),
                         headers={"Content-Type": "application/json"}) as resp:
        err = await resp.json()
    assert resp.status == 400
    assert err["message"].endswith('strict decoding error: unknown field "spec.x\\x01\\ny"')


# --- media types ------------------------------------------------------------------------------

ACCEPTED = ("the body of the request was in an unknown format - accepted media types include: "
            "application/json, application/yaml, application/vnd.kubernetes.protobuf")


@pytest.mark.parametrize("content_type", [
    "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
    "application/octet-stream", "application/merge-patch+json",
])
async def test_bodies_that_are_neither_json_nor_yaml_nor_protobuf_get_415(
    http: aiohttp.ClientSession, ns: str, content_type: str
) -> None:
    pod = {"metadata": {"name": "m"}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
    status, err = await send(http, "POST", f"/api/v1/namespaces/{ns}/pods", pod,
                             content_type=content_type)
    assert status == 415, err
    assert err["reason"] == "UnsupportedMediaType" and err["message"] == ACCEPTED
    status, _ = await send(http, "GET", f"/api/v1/namespaces/{ns}/pods/m")
    assert status == 404


async def test_yaml_and_untyped_bodies_are_read(http: aiohttp.ClientSession, ns: str) -> None:
    manifest = b"metadata:\n  name: y\nspec:\n  containers:\n  - name: c\n    image: i\n"
    status, pod = await send(http, "POST", f"/api/v1/namespaces/{ns}/pods", data=manifest,
                             content_type="application/yaml; charset=utf-8")
    assert status == 201, pod
    pod["metadata"]["labels"] = {"via": "yaml"}
    status, pod = await send(http, "PUT", f"/api/v1/namespaces/{ns}/pods/y",
                             data=yaml.safe_dump(pod).encode(), content_type="application/yaml")
    assert status == 200, pod
    assert pod["metadata"]["labels"] == {"via": "yaml"}
    # a request without Content-Type is read as JSON, as kube-apiserver does
    body = json.dumps({"metadata": {"name": "n"},
                       "spec": {"containers": [{"name": "c", "image": "i"}]}}).encode()
    async with http.post(f"/api/v1/namespaces/{ns}/pods", data=body,
                         skip_auto_headers=["Content-Type"]) as resp:
        assert resp.status == 201, await resp.text()
    status, err = await send(http, "POST", f"/api/v1/namespaces/{ns}/pods", data=b"a: [",
                             content_type="application/yaml")
    assert status == 400 and "yaml parse error" in err["message"], err
    dup = manifest + b"metadata:\n  name: z\n"
    status, err = await send(http, "POST",
                             f"/api/v1/namespaces/{ns}/pods?fieldValidation=Strict", data=dup,
                             content_type="application/yaml")
    assert status == 400 and 'duplicate field "metadata"' in err["message"], err


async def test_no_cross_origin_grant(http: aiohttp.ClientSession, ns: str) -> None:
    """CORS is off, as kube-apiserver's default: a page from another origin is never told
    it may read an answer or send a JSON body."""
    origin = {"Origin": "https://evil.example", "Access-Control-Request-Method": "POST",
              "Access-Control-Request-Headers": "content-type"}
    async with http.options(f"/api/v1/namespaces/{ns}/pods", headers=origin) as resp:
        assert "Access-Control-Allow-Origin" not in resp.headers
    async with http.get(f"/api/v1/namespaces/{ns}/pods", headers=origin) as resp:
        assert resp.status == 200
        assert "Access-Control-Allow-Origin" not in resp.headers


# --- CPU-heavy admission ----------------------------------------------------------------------


def _heavy_selector(i: int) -> str:
    """About 4.5 KB of CEL that compiles in tens of milliseconds (distinct, so uncached)."""
    return " && ".join(
        f'(attributes.string["model-{j}"] == "m{i}-{j}" || attributes.int["n{j}"] > {i}{j})'
        for j in range(60)
    )


@pytest.mark.timing
async def test_heavy_validation_leaves_the_server_responsive(
    http: aiohttp.ClientSession, ns: str
) -> None:
    """300 heavy selectors (seconds of compiling) are admitted off the event loop: GETs sent
    meanwhile are answered at once; the request's compile budget ends its validation."""
    requests = [{"namedResources": {"selector": _heavy_selector(i)}} for i in range(300)]
    body = {"apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClaimParameters",
            "metadata": {"name": "heavy"},
            "driverRequests": [{"driverName": "d.example.com", "requests": requests}]}
    url = f"{RS}/namespaces/{ns}/resourceclaimparameters"
    create = asyncio.create_task(send(http, "POST", url, body))
    latencies: list[float] = []
    while not create.done():
        start = time.monotonic()
        async with http.get(f"/api/v1/namespaces/{ns}") as resp:
            assert resp.status == 200
        latencies.append(time.monotonic() - start)
        await asyncio.sleep(0.02)
    status, err = await create
    assert status == 422, err
    causes = err["details"]["causes"]
    assert causes[-1]["message"].endswith(
        "validation failed due to running out of cost budget, no further validation rules "
        "will be run")
    assert causes[-1]["field"] == "driverRequests[0].requests[299].namedResources.selector"
    assert len(latencies) >= 10
    # 45 ms measured on a loaded 2-core machine; the bound leaves room for a busier one
    check(max(latencies), 0.25, "a GET")

"""Kubernetes' protobuf wire format over HTTP, against the session's ``kubedra apiserver``:
bodies and answers negotiated as kube-apiserver does, a protobuf watch, and fuzzed bad
bodies (never a 5xx, nothing stored)."""

from __future__ import annotations

import asyncio
import random
import uuid
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from kubedra.proto import kube
from kubedra.proto.generated import apimachinery_meta_v1_pb2 as meta_pb2
from kubedra.proto.generated import apimachinery_runtime_pb2 as runtime_pb2
from kubedra.proto.generated import core_v1_pb2
from tests.e2e.conftest import Server, kubeconfig_session

PB = "application/vnd.kubernetes.protobuf"
JSON = "application/json"


@pytest.fixture
async def http(apiserver: Server) -> AsyncIterator[aiohttp.ClientSession]:
    async with kubeconfig_session(apiserver.kubeconfig) as s:
        yield s


@pytest.fixture
async def ns(http: aiohttp.ClientSession) -> str:
    name = "pb-" + uuid.uuid4().hex[:8]
    obj = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    status, _, _ = await call(http, "POST", "/api/v1/namespaces", kube.encode(obj), PB, PB)
    assert status == 201
    return name


async def call(http: aiohttp.ClientSession, method: str, path: str, body: bytes | None = None,
               content_type: str = JSON, accept: str = f"{PB},{JSON}",
               ) -> tuple[int, str, bytes]:
    headers = {"Accept": accept, "Content-Type": content_type}
    async with http.request(method, path, data=body, headers=headers) as resp:
        return resp.status, resp.headers.get("Content-Type", ""), await resp.read()


def pod(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "nginx",
                                     "resources": {"limits": {"cpu": "1"}}}]}}


async def test_a_protobuf_body_is_stored_and_read_back_in_protobuf(
        http: aiohttp.ClientSession, ns: str) -> None:
    status, ctype, data = await call(http, "POST", f"/api/v1/namespaces/{ns}/pods",
                                     kube.encode(pod("p")), PB)
    assert (status, ctype) == (201, PB), data
    # read by the runtime's own classes, not by our converter
    unknown = runtime_pb2.Unknown.FromString(data[4:])
    assert data[:4] == b"k8s\x00" and unknown.typeMeta.kind == "Pod"
    got = core_v1_pb2.Pod.FromString(unknown.raw)
    assert got.metadata.namespace == ns and got.metadata.uid and got.metadata.resourceVersion
    assert got.spec.containers[0].resources.limits["cpu"].string == "1"
    status, ctype, data = await call(http, "GET", f"/api/v1/namespaces/{ns}/pods/p", accept=JSON)
    assert (status, ctype) == (200, JSON)
    status, ctype, data = await call(http, "GET", f"/api/v1/namespaces/{ns}/pods")
    assert (status, ctype) == (200, PB)
    listed = kube.decode(data)
    assert listed["kind"] == "PodList" and [p["metadata"]["name"] for p in listed["items"]] == ["p"]


async def test_field_validation_of_a_protobuf_body(http: aiohttp.ClientSession, ns: str) -> None:
    """A protobuf body names only fields its message has: under ``Strict`` it is stored
    without a warning (upstream's protobuf decoder is its strict one too), and the
    parameter itself is still checked."""
    path = f"/api/v1/namespaces/{ns}/pods"
    headers = {"Accept": PB, "Content-Type": PB}
    async with http.post(path, params={"fieldValidation": "Strict"}, headers=headers,
                         data=kube.encode(pod("strict"))) as resp:
        assert resp.status == 201 and "Warning" not in resp.headers, await resp.read()
    async with http.post(path, params={"fieldValidation": "Loose"}, headers=headers,
                         data=kube.encode(pod("loose"))) as resp:
        assert resp.status == 400
        assert 'fieldValidation must be one of "Ignore", "Warn", or "Strict", got "Loose"' in (
            kube.decode(await resp.read())["message"])
    assert "loose" not in await stored_pods(http, ns)


async def test_delete_options_in_protobuf(http: aiohttp.ClientSession, ns: str) -> None:
    """A typed Go client's DELETE carries its DeleteOptions in protobuf."""
    path = f"/api/v1/namespaces/{ns}/pods"
    assert (await call(http, "POST", path, kube.encode(pod("d")), PB))[0] == 201
    wrong = kube.encode({"apiVersion": "v1", "kind": "DeleteOptions",
                         "preconditions": {"uid": "not-its-uid"}})
    status, _, _ = await call(http, "DELETE", f"{path}/d", wrong, PB)
    assert status == 409
    options = kube.encode({"apiVersion": "v1", "kind": "DeleteOptions",
                           "gracePeriodSeconds": 0})
    status, _, _ = await call(http, "DELETE", f"{path}/d", options, PB)
    assert status == 200
    assert "d" not in await stored_pods(http, ns)


async def test_answers_in_the_first_acceptable_type(http: aiohttp.ClientSession, ns: str) -> None:
    path = f"/api/v1/namespaces/{ns}"
    assert (await call(http, "GET", path, accept=f"{JSON},{PB}"))[1] == JSON
    assert (await call(http, "GET", path, accept=f"{PB};q=0,*/*"))[1] == JSON
    assert (await call(http, "GET", path, accept="*/*"))[1] == JSON
    status, ctype, body = await call(http, "GET", path, accept="text/html")
    assert (status, ctype) == (406, JSON)  # a failed negotiation is answered in JSON
    assert kube_or_json(body)["message"] == ("only the following media types are accepted: "
                                             f"{JSON}, application/yaml, {PB}")


def status_of(ctype: str, data: bytes) -> meta_pb2.Status:
    """A protobuf Status answer, read by the runtime's own classes."""
    assert ctype == PB and data[:4] == b"k8s\x00", data
    unknown = runtime_pb2.Unknown.FromString(data[4:])
    assert (unknown.typeMeta.apiVersion, unknown.typeMeta.kind) == ("v1", "Status")
    return meta_pb2.Status.FromString(unknown.raw)


async def test_errors_are_answered_in_the_negotiated_type(
        http: aiohttp.ClientSession, ns: str) -> None:
    """A Go client accepting protobuf first gets its errors as a protobuf Status, as
    kube-apiserver's ErrorNegotiated writes them."""
    pods = f"/api/v1/namespaces/{ns}/pods"
    status, ctype, data = await call(http, "GET", f"{pods}/missing")
    got = status_of(ctype, data)
    assert (status, got.code, got.reason, got.status) == (404, 404, "NotFound", "Failure")
    assert got.message == 'pods "missing" not found'
    assert (got.details.name, got.details.kind) == ("missing", "pods")
    assert (await call(http, "POST", pods, kube.encode(pod("twice")), PB))[0] == 201
    status, ctype, data = await call(http, "POST", pods, kube.encode(pod("twice")), PB)
    got = status_of(ctype, data)
    assert (status, got.code, got.reason) == (409, 409, "AlreadyExists")
    assert got.message == 'pods "twice" already exists'
    bad = pod("Bad_Name")
    bad["spec"]["containers"][0]["image"] = ""
    status, ctype, data = await call(http, "POST", pods, kube.encode(bad), PB)
    got = status_of(ctype, data)
    assert (status, got.code, got.reason) == (422, 422, "Invalid")
    assert got.message.startswith('Pod "Bad_Name" is invalid: ')
    assert {(c.field, c.reason) for c in got.details.causes} >= {
        ("metadata.name", "FieldValueInvalid"),
        ("spec.containers[0].image", "FieldValueRequired")}
    # errors with no kind in sight: an unknown path, a kind without a message
    status, ctype, data = await call(http, "GET", "/api/v1/nothings")
    assert (status, status_of(ctype, data).reason) == (404, "NotFound")
    claims = f"/apis/resource.k8s.io/v1alpha2/namespaces/{ns}/resourceclaims/none"
    status, ctype, data = await call(http, "GET", claims)
    assert (status, status_of(ctype, data).reason) == (404, "NotFound")
    # JSON first: JSON errors
    status, ctype, data = await call(http, "GET", f"{pods}/missing", accept=f"{JSON},{PB}")
    assert (status, ctype) == (404, JSON) and kube_or_json(data)["reason"] == "NotFound"


def kube_or_json(body: bytes) -> Any:
    import json
    return kube.decode(body) if body.startswith(b"k8s\x00") else json.loads(body)


async def test_watch_in_protobuf(http: aiohttp.ClientSession, ns: str) -> None:
    path = f"/api/v1/namespaces/{ns}/pods?watch=1&timeoutSeconds=30"
    async with http.get(path, headers={"Accept": f"{PB},{JSON}"}) as resp:
        assert resp.headers["Content-Type"] == f"{PB};stream=watch"
        status, _, _ = await call(http, "POST", f"/api/v1/namespaces/{ns}/pods",
                                  kube.encode(pod("w")), PB)
        assert status == 201
        buf = bytearray()
        async with asyncio.timeout(30):
            while True:
                buf += await resp.content.readany()
                events = list(kube.watch_events(buf))
                if events:
                    break
    assert events[0][0] == "ADDED" and events[0][1]["metadata"]["name"] == "w"


async def stored_pods(http: aiohttp.ClientSession, ns: str) -> list[str]:
    _, _, data = await call(http, "GET", f"/api/v1/namespaces/{ns}/pods")
    return [p["metadata"]["name"] for p in kube.decode(data).get("items", [])]


async def test_bad_protobuf_bodies_get_400_and_store_nothing(
        http: aiohttp.ClientSession, ns: str) -> None:
    path = f"/api/v1/namespaces/{ns}/pods"
    good = kube.encode(pod("fuzz"))
    status, _, body = await call(http, "POST", path, b"\x00\x01garbage", PB)
    assert status == 400 and kube_or_json(body)["message"] == (
        "the object provided is unrecognized (must be of type Pod): provided data does not "
        "appear to be a protobuf message, expected prefix [107 56 115 0] "
        "(000167617262616765)")  # the body in hex
    other = kube.encode({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}})
    status, _, body = await call(http, "POST", path, other, PB)
    assert status == 400, body
    for n in range(0, len(good), 5):  # every truncation
        status, _, body = await call(http, "POST", path, good[:n], PB)
        assert 400 <= status < 500, (n, status, body)
    huge = b"k8s\x00" + b"\x12" + b"\xff" * 4 * 1024 * 1024
    assert (await call(http, "POST", path, huge, PB))[0] in (400, 413)
    assert await stored_pods(http, ns) == []
    rng = random.Random(46)
    for _ in range(120):  # corrupted bytes: a 4xx, or (rarely) still a valid pod
        flipped = bytearray(good)
        for _ in range(rng.randint(1, 3)):
            flipped[rng.randrange(len(flipped))] = rng.randrange(256)
        status, _, body = await call(http, "POST", path, bytes(flipped), PB)
        assert status < 500, body

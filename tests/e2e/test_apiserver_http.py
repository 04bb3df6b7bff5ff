"""The API server's REST semantics over HTTP, against a real ``kubedra apiserver`` process.

The server runs with a tiny watch cache and fast compaction so that 410 answers can be
provoked; every test works in a namespace of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import urllib.parse
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.e2e.conftest import apiserver_process, kubeconfig_session

RS = "/apis/resource.k8s.io/v1alpha2"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
AGG = ("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
       "application/json")


@pytest.fixture(scope="module")
def admin_kubeconfig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    data = tmp_path_factory.mktemp("apiserver-http")
    with apiserver_process(data, "--watch-cache-size", "40", "--compaction-interval", "0.3",
                           "--compaction-retain", "30") as kubeconfig:
        yield kubeconfig


@pytest.fixture
async def http(admin_kubeconfig: Path) -> AsyncIterator[aiohttp.ClientSession]:
    async with kubeconfig_session(admin_kubeconfig) as session:
        yield session


@pytest.fixture
async def ns(http: aiohttp.ClientSession) -> str:
    name = "t-" + uuid.uuid4().hex[:8]
    status, _ = await call(http, "POST", "/api/v1/namespaces", {"metadata": {"name": name}})
    assert status == 201
    return name


async def call(
    http: aiohttp.ClientSession, method: str, path: str, body: Any = None, *,
    headers: dict[str, str] | None = None, data: bytes | None = None,
) -> tuple[int, Any]:
    kwargs: dict[str, Any] = {"headers": headers or {}}
    if data is not None:
        kwargs["data"] = data
    elif body is not None:
        kwargs["json"] = body
    async with http.request(method, path, **kwargs) as resp:
        text = await resp.text()
        return resp.status, json.loads(text) if text.startswith(("{", "[")) else text


def slice_body(name: str, node: str = "n1", driver: str = "gpu.example.com",
               **meta: Any) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceSlice",
            "metadata": {"name": name, **meta}, "nodeName": node, "driverName": driver,
            "namedResources": {"instances": [{"name": "gpu-0"}]}}


def pod_body(name: str, **meta: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, **meta},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]}}


def uniq(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


async def watch_lines(
    http: aiohttp.ClientSession, path: str, count: int, timeout: float = 5.0,
    headers: dict[str, str] | None = None,
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    async with http.get(path, headers=headers or {}) as resp:
        assert resp.status == 200
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                async for line in resp.content:
                    out.append(json.loads(line))
                    if len(out) >= count:
                        break
    return out


# --- CRUD and errors ------------------------------------------------------------------------


async def test_crud_round_trip(http: aiohttp.ClientSession) -> None:
    name = uniq("s")
    status, created = await call(http, "POST", f"{RS}/resourceslices", slice_body(name))
    assert status == 201
    meta = created["metadata"]
    assert meta["uid"] and meta["creationTimestamp"].endswith("Z") and meta["resourceVersion"]
    status, got = await call(http, "GET", f"{RS}/resourceslices/{name}")
    assert status == 200 and got["metadata"]["uid"] == meta["uid"]
    got["driverName"] = "other.example.com"
    status, upd = await call(http, "PUT", f"{RS}/resourceslices/{name}", got)
    assert status == 422  # driverName is immutable
    got["driverName"] = "gpu.example.com"
    got["metadata"]["labels"] = {"a": "b"}
    status, upd = await call(http, "PUT", f"{RS}/resourceslices/{name}", got)
    assert status == 200
    assert int(upd["metadata"]["resourceVersion"]) > int(meta["resourceVersion"])
    status, deleted = await call(http, "DELETE", f"{RS}/resourceslices/{name}")
    assert status == 200 and deleted["kind"] == "ResourceSlice"  # returns the object
    status, missing = await call(http, "GET", f"{RS}/resourceslices/{name}")
    assert status == 404
    assert missing["message"] == f'resourceslices.resource.k8s.io "{name}" not found'
    assert missing["details"] == {"name": name, "group": "resource.k8s.io",
                                  "kind": "resourceslices"}


async def test_body_without_type_meta_takes_it_from_the_url(
    http: aiohttp.ClientSession, ns: str
) -> None:
    status, obj = await call(http, "POST", f"/api/v1/namespaces/{ns}/pods", pod_body("p"))
    assert status == 201
    assert (obj["apiVersion"], obj["kind"]) == ("v1", "Pod")
    assert obj["status"]["phase"] == "Pending"


async def test_conflict_and_already_exists(http: aiohttp.ClientSession) -> None:
    name = uniq("s")
    _, created = await call(http, "POST", f"{RS}/resourceslices", slice_body(name))
    status, dup = await call(http, "POST", f"{RS}/resourceslices", slice_body(name))
    assert status == 409 and dup["reason"] == "AlreadyExists"
    assert dup["message"] == f'resourceslices.resource.k8s.io "{name}" already exists'
    stale = dict(created, metadata=dict(created["metadata"], labels={"x": "1"}))
    assert (await call(http, "PUT", f"{RS}/resourceslices/{name}", stale))[0] == 200
    status, err = await call(http, "PUT", f"{RS}/resourceslices/{name}", stale)
    assert status == 409 and err["reason"] == "Conflict"
    assert err["message"] == (
        f'Operation cannot be fulfilled on resourceslices.resource.k8s.io "{name}": the object '
        "has been modified; please apply your changes to the latest version and try again"
    )
    await call(http, "DELETE", f"{RS}/resourceslices/{name}")


async def test_missing_namespace_is_404(http: aiohttp.ClientSession) -> None:
    status, err = await call(http, "POST", "/api/v1/namespaces/nope-x/pods", pod_body("p"))
    assert status == 404
    assert err["message"] == 'namespaces "nope-x" not found'
    assert err["details"] == {"name": "nope-x", "kind": "namespaces"}


async def test_generate_name(http: aiohttp.ClientSession, ns: str) -> None:
    names = set()
    for _ in range(5):
        status, obj = await call(http, "POST", f"/api/v1/namespaces/{ns}/pods",
                                 {"metadata": {"generateName": "web-"},
                                  "spec": pod_body("x")["spec"]})
        assert status == 201
        names.add(obj["metadata"]["name"])
    assert len(names) == 5 and all(n.startswith("web-") and len(n) == 9 for n in names)


async def test_422_lists_every_cause(http: aiohttp.ClientSession, ns: str) -> None:
    body = pod_body("Bad_Name", labels={"bad key": "v", "ok": "bad value!"})
    status, err = await call(http, "POST", f"/api/v1/namespaces/{ns}/pods", body)
    assert status == 422 and err["reason"] == "Invalid"
    fields = sorted(c["field"] for c in err["details"]["causes"])
    assert fields == ["metadata.labels", "metadata.labels", "metadata.name"]
    assert err["message"].startswith('Pod "Bad_Name" is invalid: [')
    assert err["details"]["kind"] == "Pod" and err["details"]["name"] == "Bad_Name"


async def test_400_413_415_405(http: aiohttp.ClientSession, ns: str) -> None:
    status, err = await call(http, "POST", f"/api/v1/namespaces/{ns}/pods", data=b"{nope",
                             headers={"Content-Type": "application/json"})
    assert status == 400 and err["reason"] == "BadRequest"
    status, err = await call(http, "POST", f"/api/v1/namespaces/{ns}/pods",
                             {"metadata": {"name": 5}})
    assert status == 400
    big = json.dumps({"metadata": {"name": "big", "annotations": {"a": "x" * (3 << 20)}}})
    status, err = await call(http, "POST", f"/api/v1/namespaces/{ns}/pods", data=big.encode(),
                             headers={"Content-Type": "application/json"})
    assert status == 413 and err["reason"] == "RequestEntityTooLarge"
    status, err = await call(http, "PATCH", f"/api/v1/namespaces/{ns}/pods/x", data=b"{}",
                             headers={"Content-Type": "application/xml"})
    assert status == 415 and err["reason"] == "UnsupportedMediaType"
    assert err["message"].startswith(
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json"
    )
    status, err = await call(http, "POST", f"/api/v1/namespaces/{ns}/pods/x", pod_body("x"))
    assert status == 405 and err["reason"] == "MethodNotAllowed"
    status, _ = await call(http, "GET", "/apis/nope.example.com/v1/things")
    assert status == 404


async def test_field_validation_strict_and_warn(http: aiohttp.ClientSession) -> None:
    body = slice_body(uniq("s"))
    body["spec"] = {"foo": 1}
    status, err = await call(http, "POST", f"{RS}/resourceslices?fieldValidation=Strict", body)
    assert status == 400
    # upstream's transformDecodeError prefix (issue 11 item 8)
    assert err["message"] == ('ResourceSlice in version "v1alpha2" cannot be handled as a '
                              'ResourceSlice: strict decoding error: unknown field "spec"')
    async with http.post(f"{RS}/resourceslices?fieldValidation=Warn", json=body) as resp:
        assert resp.status == 201
        assert resp.headers.getall("Warning") == ['299 - "unknown field \\"spec\\""']
        created = await resp.json()
    assert "spec" not in created
    await call(http, "DELETE", f"{RS}/resourceslices/{created['metadata']['name']}")


async def test_dry_run_stores_nothing(http: aiohttp.ClientSession) -> None:
    name = uniq("s")
    status, _ = await call(http, "POST", f"{RS}/resourceslices?dryRun=All", slice_body(name))
    assert status == 201
    assert (await call(http, "GET", f"{RS}/resourceslices/{name}"))[0] == 404
    status, _err = await call(http, "POST", f"{RS}/resourceslices?dryRun=Some", slice_body(name))
    assert status == 422


# --- patch ----------------------------------------------------------------------------------


async def test_patch_types(http: aiohttp.ClientSession, ns: str) -> None:
    path = f"/api/v1/namespaces/{ns}/pods/p"
    await call(http, "POST", f"/api/v1/namespaces/{ns}/pods", pod_body("p"))
    status, obj = await call(http, "PATCH", path, data=b'{"metadata":{"labels":{"a":"1"}}}',
                             headers={"Content-Type": "application/merge-patch+json"})
    assert status == 200 and obj["metadata"]["labels"] == {"a": "1"}
    ops = b'[{"op":"add","path":"/metadata/labels/b","value":"2"}]'
    status, obj = await call(http, "PATCH", path, data=ops,
                             headers={"Content-Type": "application/json-patch+json"})
    assert status == 200 and obj["metadata"]["labels"] == {"a": "1", "b": "2"}
    smp = b'{"spec":{"containers":[{"name":"c","image":"busybox:2"}]}}'
    status, obj = await call(http, "PATCH", path, data=smp,
                             headers={"Content-Type": "application/strategic-merge-patch+json"})
    assert status == 200 and obj["spec"]["containers"][0]["image"] == "busybox:2"
    stale = b'{"metadata":{"resourceVersion":"1","labels":{"c":"3"}}}'
    status, _err = await call(http, "PATCH", path, data=stale,
                             headers={"Content-Type": "application/merge-patch+json"})
    assert status == 409


async def test_server_side_apply_creates_then_updates(http: aiohttp.ClientSession) -> None:
    name = uniq("s")
    headers = {"Content-Type": "application/apply-patch+yaml"}
    path = f"{RS}/resourceslices/{name}?fieldManager=test&fieldValidation=Strict&force=false"
    status, obj = await call(http, "PATCH", path, data=json.dumps(slice_body(name)).encode(),
                             headers=headers)
    assert status == 201
    assert obj["metadata"]["managedFields"][0]["manager"] == "test"
    changed = slice_body(name)
    changed["metadata"]["labels"] = {"x": "y"}
    status, obj = await call(http, "PATCH", path, data=json.dumps(changed).encode(),
                             headers=headers)
    assert status == 200 and obj["metadata"]["labels"] == {"x": "y"}
    status, _err = await call(http, "PATCH", f"{RS}/resourceslices/{name}",
                             data=json.dumps(changed).encode(), headers=headers)
    assert status == 422  # apply needs a field manager
    await call(http, "DELETE", f"{RS}/resourceslices/{name}")


# --- status, binding, finalizers, GC ----------------------------------------------------------


async def test_status_subresource_separation(http: aiohttp.ClientSession, ns: str) -> None:
    base = f"/api/v1/namespaces/{ns}/pods/p"
    _, pod = await call(http, "POST", f"/api/v1/namespaces/{ns}/pods", pod_body("p"))
    pod["status"] = {"phase": "Running"}
    status, out = await call(http, "PUT", base, pod)
    assert status == 200 and out["status"]["phase"] == "Pending"  # main resource ignores status
    out["status"] = {"phase": "Running"}
    out["metadata"]["labels"] = {"ignored": "no"}
    status, out2 = await call(http, "PUT", base + "/status", out)
    assert status == 200 and out2["status"]["phase"] == "Running"
    status, got = await call(http, "GET", base + "/status")
    assert got["status"]["phase"] == "Running"


async def test_pod_binding(http: aiohttp.ClientSession, ns: str) -> None:
    await call(http, "POST", f"/api/v1/namespaces/{ns}/pods", pod_body("p"))
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p"},
               "target": {"apiVersion": "v1", "kind": "Node", "name": "node-a"}}
    status, out = await call(http, "POST", f"/api/v1/namespaces/{ns}/pods/p/binding", binding)
    assert status == 201 and out["status"] == "Success"
    status, err = await call(http, "POST", f"/api/v1/namespaces/{ns}/pods/p/binding", binding)
    assert status == 409 and "already assigned" in err["message"]
    status, lst = await call(http, "GET",
                             f"/api/v1/namespaces/{ns}/pods?fieldSelector=spec.nodeName=node-a")
    assert [p["metadata"]["name"] for p in lst["items"]] == ["p"]
    status, lst = await call(http, "GET", "/api/v1/pods?fieldSelector=spec.nodeName=node-b")
    assert lst["items"] == []
    status, err = await call(http, "GET", "/api/v1/pods?fieldSelector=spec.bogus=1")
    assert status == 400 and err["message"] == "field label not supported: spec.bogus"


async def test_finalizers_hold_deletion(http: aiohttp.ClientSession) -> None:
    name = uniq("s")
    path = f"{RS}/resourceslices/{name}"
    await call(http, "POST", f"{RS}/resourceslices",
               slice_body(name, finalizers=["example.com/hold"]))
    status, obj = await call(http, "DELETE", path)
    assert status == 200 and obj["metadata"]["deletionTimestamp"]
    status, obj = await call(http, "GET", path)
    assert status == 200 and obj["metadata"]["finalizers"] == ["example.com/hold"]
    status, _ = await call(http, "PATCH", path, data=b'{"metadata":{"finalizers":null}}',
                           headers={"Content-Type": "application/merge-patch+json"})
    assert status == 200
    assert (await call(http, "GET", path))[0] == 404


async def _eventually_gone(http: aiohttp.ClientSession, path: str) -> None:
    for _ in range(100):
        if (await call(http, "GET", path))[0] == 404:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{path} still exists")


async def test_gc_deletes_dependents_of_deleted_owner(http: aiohttp.ClientSession) -> None:
    node = uniq("node")
    _, n = await call(http, "POST", "/api/v1/nodes", {"metadata": {"name": node}})
    owner = {"apiVersion": "v1", "kind": "Node", "name": node, "uid": n["metadata"]["uid"],
             "controller": True}
    name = uniq("s")
    await call(http, "POST", f"{RS}/resourceslices", slice_body(name, node, ownerReferences=[
        owner]))
    status, _ = await call(http, "DELETE", f"/api/v1/nodes/{node}")
    assert status == 200
    await _eventually_gone(http, f"{RS}/resourceslices/{name}")


async def test_gc_orphan_policy_keeps_dependents(http: aiohttp.ClientSession) -> None:
    node = uniq("node")
    _, n = await call(http, "POST", "/api/v1/nodes", {"metadata": {"name": node}})
    owner = {"apiVersion": "v1", "kind": "Node", "name": node, "uid": n["metadata"]["uid"]}
    name = uniq("s")
    await call(http, "POST", f"{RS}/resourceslices", slice_body(name, node, ownerReferences=[
        owner]))
    status, _ = await call(http, "DELETE", f"/api/v1/nodes/{node}",
                           {"propagationPolicy": "Orphan"})
    assert status == 200
    await _eventually_gone(http, f"/api/v1/nodes/{node}")
    status, s = await call(http, "GET", f"{RS}/resourceslices/{name}")
    assert status == 200 and "ownerReferences" not in s["metadata"]


async def test_namespace_deletion_removes_content(http: aiohttp.ClientSession, ns: str) -> None:
    await call(http, "POST", f"/api/v1/namespaces/{ns}/pods", pod_body("p"))
    status, obj = await call(http, "DELETE", f"/api/v1/namespaces/{ns}")
    assert status == 200 and obj["status"]["phase"] == "Terminating"
    await _eventually_gone(http, f"/api/v1/namespaces/{ns}")
    assert (await call(http, "GET", f"/api/v1/namespaces/{ns}/pods/p"))[0] == 404


# --- list and watch -------------------------------------------------------------------------


async def test_pagination(http: aiohttp.ClientSession, ns: str) -> None:
    for i in range(7):
        await call(http, "POST", f"/api/v1/namespaces/{ns}/pods", pod_body(f"p{i}"))
    names: list[str] = []
    token = ""
    pages = 0
    while True:
        q = f"?limit=3&continue={token}" if token else "?limit=3"
        status, page = await call(http, "GET", f"/api/v1/namespaces/{ns}/pods{q}")
        assert status == 200
        pages += 1
        names += [p["metadata"]["name"] for p in page["items"]]
        token = page["metadata"].get("continue", "")
        if not token:
            break
        assert page["metadata"]["remainingItemCount"] == 7 - len(names)
    assert pages == 3 and names == [f"p{i}" for i in range(7)]
    status, _err = await call(http, "GET", f"/api/v1/namespaces/{ns}/pods?continue=garbage")
    assert status == 400


async def test_label_selectors(http: aiohttp.ClientSession, ns: str) -> None:
    for name, labels in (("a", {"app": "web", "tier": "f"}), ("b", {"app": "db"}), ("c", {})):
        await call(http, "POST", f"/api/v1/namespaces/{ns}/pods", pod_body(name, labels=labels))
    cases = {"app=web": ["a"], "app!=web": ["b", "c"], "app in (web,db)": ["a", "b"],
             "app notin (web)": ["b", "c"], "tier": ["a"], "!app": ["c"], "app==db": ["b"]}
    for selector, expected in cases.items():
        _, lst = await call(http, "GET", f"/api/v1/namespaces/{ns}/pods?labelSelector="
                            + urllib.parse.quote(selector))
        assert [p["metadata"]["name"] for p in lst["items"]] == expected, selector
    status, _ = await call(http, "GET", f"/api/v1/namespaces/{ns}/pods?labelSelector=a%20in")
    assert status == 400


async def test_resource_slice_field_selectors(http: aiohttp.ClientSession) -> None:
    driver = uniq("drv") + ".example.com"
    for name, node in ((uniq("s"), "na"), (uniq("s"), "nb")):
        await call(http, "POST", f"{RS}/resourceslices", slice_body(name, node, driver))
    _, lst = await call(http, "GET",
                        f"{RS}/resourceslices?fieldSelector=driverName={driver},nodeName=nb")
    assert [s["nodeName"] for s in lst["items"]] == ["nb"]
    for label in ("spec.x", "metadata.namespace"):
        status, err = await call(http, "GET", f"{RS}/resourceslices?fieldSelector={label}=1")
        assert status == 400 and err["message"] == (
            f"field label not supported for resource.k8s.io/v1alpha2, Kind=ResourceSlice: {label}")


async def test_list_resource_version_semantics(http: aiohttp.ClientSession, ns: str) -> None:
    _, first = await call(http, "POST", f"/api/v1/namespaces/{ns}/pods", pod_body("a"))
    rv = first["metadata"]["resourceVersion"]
    await call(http, "POST", f"/api/v1/namespaces/{ns}/pods", pod_body("b"))
    q = f"?resourceVersion={rv}&resourceVersionMatch=Exact"
    _, exact = await call(http, "GET", f"/api/v1/namespaces/{ns}/pods{q}")
    assert [p["metadata"]["name"] for p in exact["items"]] == ["a"]
    assert exact["metadata"]["resourceVersion"] == rv
    _, newer = await call(http, "GET", f"/api/v1/namespaces/{ns}/pods?resourceVersion={rv}")
    assert len(newer["items"]) == 2
    status, _ = await call(http, "GET", f"/api/v1/namespaces/{ns}/pods?resourceVersion=x")
    assert status == 400
    status, _err = await call(http, "GET", f"/api/v1/namespaces/{ns}/pods?resourceVersionMatch="
                                          "Exact")
    assert status == 422


async def test_watch_resume_and_initial_events(http: aiohttp.ClientSession, ns: str) -> None:
    pods = f"/api/v1/namespaces/{ns}/pods"
    await call(http, "POST", pods, pod_body("a"))
    _, lst = await call(http, "GET", pods)
    rv = lst["metadata"]["resourceVersion"]
    _, _b = await call(http, "POST", pods, pod_body("b"))
    await call(http, "PATCH", f"{pods}/b", data=b'{"metadata":{"labels":{"x":"y"}}}',
               headers={"Content-Type": "application/merge-patch+json"})
    await call(http, "DELETE", f"{pods}/b")
    events = await watch_lines(http, f"{pods}?watch=True&resourceVersion={rv}", 3)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
        ("ADDED", "b"), ("MODIFIED", "b"), ("DELETED", "b")]
    revs = [int(e["object"]["metadata"]["resourceVersion"]) for e in events]
    assert revs == sorted(revs) and revs[0] > int(rv)
    initial = await watch_lines(http, f"{pods}?watch=1", 1)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in initial] == [("ADDED", "a")]
    initial = await watch_lines(http, f"{pods}?watch=t&resourceVersion=0", 1)
    assert initial[0]["type"] == "ADDED"


async def test_watch_selector_transitions(http: aiohttp.ClientSession, ns: str) -> None:
    pods = f"/api/v1/namespaces/{ns}/pods"
    _, lst = await call(http, "GET", pods)
    rv = lst["metadata"]["resourceVersion"]
    await call(http, "POST", pods, pod_body("a"))
    merge = {"Content-Type": "application/merge-patch+json"}
    await call(http, "PATCH", f"{pods}/a", data=b'{"metadata":{"labels":{"x":"y"}}}',
               headers=merge)
    await call(http, "PATCH", f"{pods}/a", data=b'{"metadata":{"labels":{"x":"z"}}}',
               headers=merge)
    events = await watch_lines(http, f"{pods}?watch=true&resourceVersion={rv}&labelSelector=x%3Dy",
                               2)
    assert [e["type"] for e in events] == ["ADDED", "DELETED"]


async def test_watch_timeout_and_bookmarks(http: aiohttp.ClientSession, ns: str) -> None:
    q = "?watch=true&timeoutSeconds=1&allowWatchBookmarks=true&sendInitialEvents=true"
    async with http.get(f"/api/v1/namespaces/{ns}/pods{q}") as resp, asyncio.timeout(60):
        body = await resp.read()  # to the end of the stream, which the server ends
    events = [json.loads(line) for line in body.splitlines()]
    assert events[-1]["type"] == "BOOKMARK"
    ann = events[-1]["object"]["metadata"]["annotations"]
    assert ann == {"k8s.io/initial-events-end": "true"}


async def test_watch_too_old_resource_version_is_410(http: aiohttp.ClientSession) -> None:
    name = uniq("s")
    _, first = await call(http, "POST", f"{RS}/resourceslices", slice_body(name))
    old = first["metadata"]["resourceVersion"]
    for i in range(60):  # more than the 40-event watch cache
        await call(http, "PATCH", f"{RS}/resourceslices/{name}",
                   data=json.dumps({"metadata": {"labels": {"i": str(i)}}}).encode(),
                   headers={"Content-Type": "application/merge-patch+json"})
    await asyncio.sleep(1.0)  # let compaction pass the old revision
    events = await watch_lines(http, f"{RS}/resourceslices?watch=true&resourceVersion={old}", 1)
    assert events[0]["type"] == "ERROR"
    status = events[0]["object"]
    assert status["code"] == 410 and status["reason"] == "Expired"
    assert status["message"].startswith(f"too old resource version: {old} (")
    await call(http, "DELETE", f"{RS}/resourceslices/{name}")


async def test_continue_token_expires_with_compaction(
    http: aiohttp.ClientSession, ns: str
) -> None:
    for i in range(3):
        await call(http, "POST", f"/api/v1/namespaces/{ns}/pods", pod_body(f"p{i}"))
    _, page = await call(http, "GET", f"/api/v1/namespaces/{ns}/pods?limit=1")
    token = page["metadata"]["continue"]
    for i in range(40):
        await call(http, "PATCH", f"/api/v1/namespaces/{ns}/pods/p0",
                   data=json.dumps({"metadata": {"labels": {"i": str(i)}}}).encode(),
                   headers={"Content-Type": "application/merge-patch+json"})
    await asyncio.sleep(1.0)
    status, err = await call(http, "GET", f"/api/v1/namespaces/{ns}/pods?limit=1&continue={token}")
    assert status == 410 and err["reason"] == "Expired"


# --- discovery, tables, metrics ---------------------------------------------------------------


async def test_discovery_content_types(http: aiohttp.ClientSession) -> None:
    for path, legacy in (("/api", True), ("/apis", False)):
        async with http.get(path, headers={"Accept": AGG}) as resp:
            assert resp.headers["Content-Type"] == (
                "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")
            doc = await resp.json(content_type=None)
        assert doc["kind"] == "APIGroupDiscoveryList"
        names = [i["metadata"]["name"] for i in doc["items"]]
        assert (names == [""]) if legacy else ("resource.k8s.io" in names)
    _, legacy_doc = await call(http, "GET", "/apis")
    assert legacy_doc["kind"] == "APIGroupList"
    _status, lst = await call(http, "GET", f"{RS}")
    assert lst["kind"] == "APIResourceList" and lst["groupVersion"] == "resource.k8s.io/v1alpha2"
    _, idx = await call(http, "GET", "/openapi/v3")
    url = idx["paths"]["apis/resource.k8s.io/v1alpha2"]["serverRelativeURL"]
    _, doc3 = await call(http, "GET", url)
    patch = doc3["paths"]["/apis/resource.k8s.io/v1alpha2/resourceslices/{name}"]["patch"]
    assert patch["x-kubernetes-group-version-kind"]["kind"] == "ResourceSlice"
    assert any(p["name"] == "fieldValidation" for p in patch["parameters"])
    _, version = await call(http, "GET", "/version")
    assert (version["major"], version["minor"]) == ("1", "30")
    for probe in ("/healthz", "/livez", "/readyz"):
        assert (await call(http, "GET", probe)) == (200, "ok")


async def test_table_output_for_list_and_watch(http: aiohttp.ClientSession, ns: str) -> None:
    await call(http, "POST", f"/api/v1/namespaces/{ns}/pods", pod_body("p"))
    _, tbl = await call(http, "GET", f"/api/v1/namespaces/{ns}/pods",
                        headers={"Accept": TABLE})
    assert tbl["kind"] == "Table"
    assert [c["name"] for c in tbl["columnDefinitions"] if c["priority"] == 0] == [
        "Name", "Ready", "Status", "Restarts", "Age"]
    assert tbl["rows"][0]["cells"][:4] == ["p", "0/1", "Pending", 0]
    events = await watch_lines(http, f"/api/v1/namespaces/{ns}/pods?watch=true", 1,
                               headers={"Accept": TABLE})
    assert events[0]["object"]["kind"] == "Table"
    assert events[0]["object"]["rows"][0]["cells"][0] == "p"


async def test_metrics_count_requests(http: aiohttp.ClientSession) -> None:
    await call(http, "GET", f"{RS}/resourceslices")
    _, text = await call(http, "GET", "/metrics")
    assert 'apiserver_request_total{code="200",group="resource.k8s.io",resource=' \
           '"resourceslices",verb="list"}' in text
    assert "apiserver_request_duration_seconds_bucket" in text


async def test_all_namespaces_path_only_lists(http: aiohttp.ClientSession, ns: str) -> None:
    await call(http, "POST", f"/api/v1/namespaces/{ns}/pods", pod_body("p"))
    status, lst = await call(http, "GET", "/api/v1/pods?labelSelector=x%3Dnone")
    assert status == 200 and lst["kind"] == "PodList"
    assert (await call(http, "POST", "/api/v1/pods", pod_body("q")))[0] == 405
    assert (await call(http, "DELETE", "/api/v1/pods"))[0] == 405
    assert (await call(http, "GET", "/api/v1/pods/p"))[0] == 404


async def test_single_object_watch_path(http: aiohttp.ClientSession, ns: str) -> None:
    for name in ("a", "ab"):
        await call(http, "POST", f"/api/v1/namespaces/{ns}/pods", pod_body(name))
    events = await watch_lines(http, f"/api/v1/watch/namespaces/{ns}/pods/a", 2, timeout=1)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "a")]

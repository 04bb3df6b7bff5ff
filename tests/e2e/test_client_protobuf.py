"""Our client with ``--kube-api-content-type application/vnd.kubernetes.protobuf``'s wire
(``proto/kube.py`` handed to ``client/rest.py``): against the session's API server every
verb works, errors arrive as protobuf Status, a watch is read from protobuf frames; against
a recording stand-in, what the client sends (bodies in protobuf, patches in JSON, an object
the messages cannot carry in JSON, ``Accept`` protobuf then JSON)."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest
from aiohttp import web

from kubedra.api.core import Container, Namespace, Node, Pod, PodSpec
from kubedra.api.kinds import lookup
from kubedra.api.meta import ObjectMeta
from kubedra.api.resource.v1alpha2 import ResourceClaim, ResourceClaimSpec
from kubedra.client import kubeconfig
from kubedra.client.errors import ApiError
from kubedra.client.rest import Client, kind_of
from kubedra.proto import kube
from tests.e2e.conftest import Server, stand_in_server

PB = kube.MEDIA_TYPE


def _pod(name: str, namespace: str) -> Pod:
    return Pod(metadata=ObjectMeta(name=name, namespace=namespace),
               spec=PodSpec(containers=[Container(name="c", image="busybox")]))


async def test_every_verb_over_protobuf(apiserver: Server) -> None:
    async with Client(kubeconfig.load(apiserver.kubeconfig), wire=kube.Wire()) as client:
        ns = "cpb-" + uuid.uuid4().hex[:8]
        await client.create(Namespace(metadata=ObjectMeta(name=ns)))
        events: list[tuple[str, str]] = []

        async def watch() -> None:
            async for ev in client.watch(Pod, ns, timeout_seconds=20):
                events.append((ev.type, ev.object.metadata.name or ""))
                if ev.type == "DELETED":
                    return

        watcher = asyncio.create_task(watch())
        await asyncio.sleep(0.3)
        created = await client.create(_pod("p", ns))
        assert created.metadata.uid and created.spec.containers[0].image == "busybox"
        got = await client.get(Pod, "p", ns)
        got.metadata.labels = {"a": "b"}
        updated = await client.update(got)
        assert updated.metadata.labels == {"a": "b"}
        patched = await client.patch(Pod, "p", {"metadata": {"labels": {"c": "d"}}},
                                     namespace=ns)
        assert patched.metadata.labels == {"a": "b", "c": "d"}
        page = await client.list(Pod, ns)
        assert [p.metadata.name for p in page.items] == ["p"] and page.resource_version
        await client.bind(ns, "p", "node-x")
        assert (await client.get(Pod, "p", ns)).spec.node_name == "node-x"
        with pytest.raises(ApiError) as missing:
            await client.get(Pod, "nope", ns)
        assert (missing.value.code, missing.value.reason) == (404, "NotFound")
        assert missing.value.status.message == 'pods "nope" not found'
        with pytest.raises(ApiError) as twice:
            await client.create(_pod("p", ns))
        assert (twice.value.code, twice.value.reason) == (409, "AlreadyExists")
        events_kind = lookup("events")
        assert events_kind is not None
        event = await client.create_raw(events_kind, {
            "apiVersion": "v1", "kind": "Event", "metadata": {"name": "e", "namespace": ns},
            "involvedObject": {"kind": "Pod", "name": "p", "namespace": ns},
            "reason": "Tested", "message": "over protobuf", "type": "Normal",
            "reportingComponent": "t", "reportingInstance": "t"}, ns)
        assert event["metadata"]["uid"] and event["message"] == "over protobuf"
        await client.delete(Pod, "p", ns, grace_period_seconds=0)
        await asyncio.wait_for(watcher, 20)
        assert events[0] == ("ADDED", "p") and events[-1] == ("DELETED", "p")
        assert ("MODIFIED", "p") in events
        claim = await client.create(ResourceClaim(
            metadata=ObjectMeta(name="c", namespace=ns),
            spec=ResourceClaimSpec(resource_class_name="gpu")))
        assert claim.metadata.uid
        assert [c.metadata.name for c in (await client.list(ResourceClaim, ns)).items] == ["c"]


async def test_what_the_client_sends(tmp_path: Path) -> None:
    seen: list[tuple[str, str, str, str]] = []

    async def answer(request: web.Request) -> web.StreamResponse:
        body = await request.read()
        seen.append((request.method, request.path, request.headers.get("Accept", ""),
                     request.headers.get("Content-Type", "")))
        if request.query.get("watch"):
            resp = web.StreamResponse(headers={"Content-Type": kube.WATCH_MEDIA_TYPE})
            await resp.prepare(request)
            node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}
            frame = kube.watch_frame("ADDED", kube.encode(node)) + kube.watch_frame(
                "BOOKMARK", kube.encode({**node, "metadata": {"resourceVersion": "9"}}))
            for i in range(0, len(frame), 7):  # frames split across chunks
                await resp.write(frame[i:i + 7])
            await resp.write_eof()
            return resp
        if body.startswith(kube.MAGIC):  # a protobuf body: the object back, in protobuf
            return web.Response(body=kube.encode(kube.decode(body)), content_type=PB)
        return web.Response(body=body or b"{}", content_type="application/json")

    async with stand_in_server(answer, tmp_path / "kubeconfig") as path, \
            Client(kubeconfig.load(path), wire=kube.Wire()) as client:
        node = await client.create(Node(metadata=ObjectMeta(name="n1", labels={"x": "y"})))
        assert node.metadata.labels == {"x": "y"}
        await client.patch(Node, "n1", {"metadata": {"labels": None}})
        await client.create(ResourceClaim(metadata=ObjectMeta(name="c", namespace="d")))
        nodes = kind_of(Node)
        await client.create_raw(nodes, {"apiVersion": "v1", "kind": "Node",
                                        "metadata": {"name": "n2"}, "spec": {"future": 1}})
        watched = [(ev.type, ev.object.metadata.name, ev.object.metadata.resource_version)
                   async for ev in client.watch(Node)]
    accept = f"{PB},application/json"
    assert seen[:4] == [
        ("POST", "/api/v1/nodes", accept, PB),
        ("PATCH", "/api/v1/nodes/n1", accept, "application/merge-patch+json"),
        ("POST", "/apis/resource.k8s.io/v1alpha2/namespaces/d/resourceclaims", accept, PB),
        ("POST", "/api/v1/nodes", accept, "application/json")]
    assert watched == [("ADDED", "n1", None), ("BOOKMARK", None, "9")]



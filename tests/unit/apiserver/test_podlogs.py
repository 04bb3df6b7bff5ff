"""``pods/<name>/log`` through an in-process API server to a real node log server over TLS
(the cluster CA, the node's serving certificate, the API server's kubelet client certificate):
upstream's option checks, container choice and texts, the kubelet's own answers, and a
followed stream."""

from __future__ import annotations

import asyncio
import json
import ssl
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import pytest

from kubedra.api import codec
from kubedra.api.core import Pod
from kubedra.apiserver.pki import ClusterPki, client_context
from kubedra.cli.credentials import KUBELET_CLIENT, KUBELET_CLIENT_FILES, write_node_serving
from kubedra.kubelet.containerlogs import ContainerLogs
from kubedra.kubelet.logserver import LogServer, serving_context
from tests.unit.apiserver.conftest import Env, MakeEnv

PODS = "/api/v1/namespaces/default/pods"
MERGE = "application/merge-patch+json"
RUNNING = {"running": {"startedAt": "2026-01-01T00:00:00Z"}}
TERMINATED = {"terminated": {"exitCode": 1, "reason": "Error", "startedAt":
                             "2026-01-01T00:00:00Z", "finishedAt": "2026-01-01T00:00:01Z"}}


@dataclass
class Node:
    env: Env
    logs: ContainerLogs
    pods: dict[str, Pod]
    pki: ClusterPki
    port: int

    async def pod(self, name: str, containers: list[str], node: str = "node-0",
                  statuses: list[dict[str, object]] | None = None) -> Pod:
        body = {"metadata": {"name": name}, "spec": {
            "nodeName": node or None,
            "containers": [{"name": c, "image": "busybox"} for c in containers]}}
        code, _ = await self.env.call("POST", PODS, body)
        assert code == 201
        if statuses is not None:
            code, got = await self.env.call("PATCH", f"{PODS}/{name}/status", {"status": {
                "containerStatuses": [{"image": "busybox", "imageID": "", "ready": False,
                                       "restartCount": 0, **s} for s in statuses]}}, MERGE)
            assert code == 200, got
        _, stored = await self.env.call("GET", f"{PODS}/{name}")
        pod = codec.decode(json.dumps(stored).encode(), Pod)
        self.pods[name] = pod
        return pod


@pytest.fixture
async def node(make_env: MakeEnv, tmp_path: Path) -> AsyncIterator[Node]:
    pki = ClusterPki(tmp_path / "pki")
    cert, key = pki.ensure_client(KUBELET_CLIENT_FILES, KUBELET_CLIENT.user)
    env = await make_env(kubelet_tls=client_context(cert, key, pki.ca_cert))
    served = write_node_serving(pki, tmp_path, "node-0")
    logs = ContainerLogs(tmp_path / "root")
    pods: dict[str, Pod] = {}
    server = LogServer(logs, lambda ns, name: pods.get(name), serving_context(
        *served, pki.ca_cert), "127.0.0.1")
    port = await server.start()
    code, _ = await env.call("POST", "/api/v1/nodes", {"metadata": {"name": "node-0"}})
    assert code == 201
    code, _ = await env.call("PATCH", "/api/v1/nodes/node-0/status", {"status": {
        "addresses": [{"type": "InternalIP", "address": "127.0.0.1"},
                      {"type": "Hostname", "address": "node-0"}],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": port}}}}, MERGE)
    assert code == 200
    yield Node(env, logs, pods, pki, port)
    await server.stop()


async def test_logs_of_a_running_container(node: Node) -> None:
    pod = await node.pod("p", ["a"], statuses=[{"name": "a", "state": RUNNING}])
    node.logs.start(node.logs.path(pod, "a", 0), lambda: ["hello", "world"])
    assert await node.env.call("GET", f"{PODS}/p/log") == (200, "hello\nworld\n")
    assert await node.env.call("GET", f"{PODS}/p/log?tailLines=1") == (200, "world\n")
    code, text = await node.env.call("GET", f"{PODS}/p/log?timestamps=true&limitBytes=5")
    assert code == 200 and len(text) == 5 and text.startswith("20")


async def test_upstream_texts(node: Node) -> None:
    await node.pod("two", ["a", "b"], statuses=[{"name": "a", "state": RUNNING},
                                                 {"name": "b", "state": RUNNING}])
    call = node.env.call
    code, status = await call("GET", f"{PODS}/two/log")
    assert (code, status["message"]) == (400, "a container name must be specified for pod "
                                               "two, choose one of: [a b]")
    code, status = await call("GET", f"{PODS}/two/log?container=nope")
    assert (code, status["message"]) == (400, "container nope is not valid for pod two")
    code, status = await call("GET", f"{PODS}/two/log?container=a&tailLines=-1")
    assert (code, status["reason"], status["message"]) == (
        422, "Invalid", 'PodLogOptions "two" is invalid: tailLines: Invalid value: -1: must '
                        "be greater than or equal to 0")
    code, status = await call("GET", f"{PODS}/two/log?container=a&limitBytes=0"
                                     "&sinceSeconds=0")
    assert code == 422 and status["message"] == (
        'PodLogOptions "two" is invalid: [limitBytes: Invalid value: 0: must be greater than '
        "0, sinceSeconds: Invalid value: 0: must be greater than 0]")
    code, status = await call("GET", f"{PODS}/two/log?container=a&follow=maybe")
    assert code == 400 and "strconv.ParseBool" in status["message"]
    code, status = await call("GET", f"{PODS}/gone/log")
    assert (code, status["message"]) == (404, 'pods "gone" not found')
    code, status = await call("GET", f"{PODS}/two/log?container=a&previous=true")
    assert (code, status["message"]) == (
        400, 'previous terminated container "a" in pod "two" not found')


async def test_what_the_kubelet_answers(node: Node) -> None:
    call = node.env.call
    await node.pod("waiting", ["a"], statuses=[{"name": "a", "state": {
        "waiting": {"reason": "ContainerCreating"}}}])
    code, status = await call("GET", f"{PODS}/waiting/log")
    assert (code, status["message"]) == (
        400, 'container "a" in pod "waiting" is waiting to start: ContainerCreating')
    pod = await node.pod("crashed", ["a"], statuses=[{
        "name": "a", "restartCount": 1, "lastState": TERMINATED,
        "state": {"waiting": {"reason": "CrashLoopBackOff"}}}])
    node.logs.start(node.logs.path(pod, "a", 0), lambda: ["first run"])
    node.logs.end(node.logs.path(pod, "a", 0))
    assert await call("GET", f"{PODS}/crashed/log?previous=true") == (200, "first run\n")
    assert await call("GET", f"{PODS}/crashed/log") == (200, "first run\n")
    await node.pod("elsewhere", ["a"], statuses=[{"name": "a", "state": RUNNING}])
    del node.pods["elsewhere"]  # the node does not run it (yet)
    code, status = await call("GET", f"{PODS}/elsewhere/log")
    assert (code, status["reason"], status["message"]) == (
        404, "NotFound", "the server could not find the requested resource "
                         "( pods/log elsewhere)")
    await node.pod("unscheduled", ["a"], node="")  # no node: an empty answer, as upstream
    assert await call("GET", f"{PODS}/unscheduled/log") == (200, "")


async def test_follow_streams_through_the_server(node: Node) -> None:
    pod = await node.pod("f", ["a"], statuses=[{"name": "a", "state": RUNNING}])
    path = node.logs.path(pod, "a", 0)
    node.logs.start(path, lambda: ["start"])
    async with node.env.http.get(f"{PODS}/f/log?follow=true") as resp:
        assert resp.status == 200 and resp.headers["Content-Type"] == "text/plain"
        assert await asyncio.wait_for(resp.content.readline(), 10) == b"start\n"
        node.logs.append(path, ["more"])
        assert await asyncio.wait_for(resp.content.readline(), 10) == b"more\n"
        node.logs.end(path, ["bye"])
        assert await asyncio.wait_for(resp.content.read(), 10) == b"bye\n"


async def test_the_node_serves_the_api_server_only(node: Node) -> None:
    """No certificate: 401; a certificate of another user: the kubelet's 403."""
    pod = await node.pod("p", ["a"], statuses=[{"name": "a", "state": RUNNING}])
    node.logs.start(node.logs.path(pod, "a", 0), lambda: ["secret"])
    url = f"https://127.0.0.1:{node.port}/containerLogs/default/p/a"
    anonymous = ssl.create_default_context(cafile=str(node.pki.ca_cert))
    jane = node.pki.directory / "jane"
    jane.mkdir()
    pair = node.pki.authority().issue("jane", ("system:masters",))
    (jane / "c.crt").write_bytes(pair.cert)
    (jane / "c.key").write_bytes(pair.key)
    as_jane = client_context(jane / "c.crt", jane / "c.key", node.pki.ca_cert)
    async with aiohttp.ClientSession() as http:
        async with http.get(url, ssl=anonymous) as resp:
            assert (resp.status, await resp.text()) == (401, "Unauthorized")
        async with http.get(url, ssl=as_jane) as resp:
            assert (resp.status, await resp.text()) == (
                403, "Forbidden (user=jane, verb=get, resource=nodes, subresource=proxy)")


async def test_a_node_agent_away_is_a_500(node: Node) -> None:
    """Nothing listens at the Node's kubelet port: an answer at once, never a hang."""
    await node.pod("p", ["a"], statuses=[{"name": "a", "state": RUNNING}])
    code, _ = await node.env.call("PATCH", "/api/v1/nodes/node-0/status", {"status": {
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 1}}}}, MERGE)
    assert code == 200
    code, status = await asyncio.wait_for(node.env.call("GET", f"{PODS}/p/log"), 30)
    assert code == 500 and status["message"].startswith(
        'Internal error occurred: Get "https://127.0.0.1:1/containerLogs/default/p/a":')

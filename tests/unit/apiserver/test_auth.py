"""The Node authorizer for ResourceSlices, over HTTP with token users."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from kubedra.apiserver.auth import ADMIN, User
from kubedra.apiserver.authn import AuthnOptions
from tests.unit.apiserver.conftest import MakeEnv

SLICES = "/apis/resource.k8s.io/v1alpha2/resourceslices"
NODES = ("system:nodes",)


def slice_body(name: str, node: str) -> dict[str, Any]:
    return {"metadata": {"name": name}, "nodeName": node, "driverName": "d.example.com",
            "namedResources": {"instances": []}}


async def test_node_authorizer_over_http(make_env: MakeEnv) -> None:
    env = await make_env(authn=AuthnOptions(tokens={
        "admin-token": ADMIN,
        "n0": User("system:node:node0", NODES), "n1": User("system:node:node1", NODES),
        "fake": User("system:node:node0", ()),
    }))

    async def call(token: str, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        data = json.dumps(body).encode() if body is not None else None
        async with env.http.request(method, path, data=data, headers=headers) as resp:
            return resp.status, await resp.json(content_type=None)

    assert (await call("", "GET", SLICES))[0] == 401
    assert (await call("wrong", "GET", SLICES))[0] == 401
    for name, node in (("s0", "node0"), ("s1", "node1")):
        assert (await call("admin-token", "POST", SLICES, slice_body(name, node)))[0] == 201
    for _ in range(100):  # the authorizer's graph follows the store: eventually consistent
        if env.server.authz.graph.has_edge("s1", "node1"):
            break
        await asyncio.sleep(0.01)

    assert (await call("n0", "GET", f"{SLICES}/s0"))[0] == 200
    status, err = await call("n0", "GET", f"{SLICES}/s1")
    assert status == 403 and err["reason"] == "Forbidden"
    assert err["message"] == (
        'resourceslices.resource.k8s.io "s1" is forbidden: User "system:node:node0" cannot get '
        'resource "resourceslices" in API group "resource.k8s.io" at the cluster scope: no '
        "relationship found between node 'node0' and this object")
    assert (await call("n0", "GET", SLICES))[0] == 200  # list: allowed whatever the selector
    assert (await call("n0", "DELETE", SLICES))[0] == 403  # deletecollection: never
    status, err = await call("n0", "POST", SLICES, slice_body("s2", "node1"))
    assert status == 403
    assert err["message"] == ('resourceslices.resource.k8s.io "s2" is forbidden: can only '
                              "create ResourceSlice with the same NodeName as the requesting "
                              "node")
    assert (await call("n0", "POST", SLICES, slice_body("s3", "node0")))[0] == 201
    assert (await call("n1", "DELETE", f"{SLICES}/s1"))[0] == 200
    # a user named like a node but outside system:nodes is not a node: no restriction
    assert (await call("fake", "GET", f"{SLICES}/s3"))[0] == 200
    # other resources are not restricted for nodes (there is no RBAC)
    assert (await call("n0", "GET", "/api/v1/namespaces"))[0] == 200

"""Authorization over HTTP with token users: the Node authorizer for ResourceSlices, RBAC,
access reviews."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from kubedra.apiserver.app import ApiServer, Options
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
        if env.server.authz.graph.slices.has_edge("s1", "node1"):
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
    # a user named like a node but outside system:nodes is not a node: RBAC grants it nothing
    assert (await call("fake", "GET", f"{SLICES}/s3"))[0] == 403
    # what the static node rules do not grant, RBAC does not either
    status, err = await call("n0", "GET", "/api/v1/namespaces")
    assert status == 403 and err["message"] == (
        'namespaces is forbidden: User "system:node:node0" cannot list resource "namespaces" '
        'in API group "" at the cluster scope')


async def test_bootstrap_policy_reconciled_on_restart(make_env: MakeEnv) -> None:
    """Roles are created once, labelled and annotated; aggregated roles are filled; a second
    server over the same store writes nothing."""
    env = await make_env()
    status, admin = await env.call("GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles/admin")
    assert status == 200
    assert admin["metadata"]["labels"]["kubernetes.io/bootstrapping"] == "rbac-defaults"
    assert admin["metadata"]["annotations"][
        "rbac.authorization.kubernetes.io/autoupdate"] == "true"
    resources = {r for rule in admin["rules"] for r in rule.get("resources", ())}
    assert {"roles", "pods", "resourceclaims"} <= resources  # from admin, edit and view
    status, crb = await env.call(
        "GET", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/cluster-admin")
    assert crb["subjects"] == [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group",
                                "name": "system:masters"}]
    before = await env.store.current_revision()
    again = ApiServer(env.store, Options(gc=False))
    await again.prepare()
    await again.stop()
    assert await env.store.current_revision() == before


async def test_access_reviews(make_env: MakeEnv) -> None:
    bob = User("bob", ("system:authenticated",))
    env = await make_env(authn=AuthnOptions(tokens={"admin-token": ADMIN, "t": bob}))
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
              "spec": {"resourceAttributes": {"verb": "list", "resource": "pods",
                                              "namespace": "default"}}}
    path = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
    headers = {"Content-Type": "application/json", "Authorization": "Bearer t"}
    async with env.http.post(path, data=json.dumps(review), headers=headers) as resp:
        assert resp.status == 201
        assert (await resp.json())["status"] == {"allowed": False}
    review["spec"] = {}
    async with env.http.post(path, data=json.dumps(review), headers=headers) as resp:
        body = await resp.json()
        assert resp.status == 422 and "exactly one of nonResourceAttributes or " \
            "resourceAttributes must be specified" in body["message"]
    async with env.http.get("/version", headers=headers) as resp:
        assert resp.status == 200  # system:public-info-viewer
    async with env.http.get("/metrics", headers=headers) as resp:
        assert resp.status == 403
        assert (await resp.json())["message"] == (
            'forbidden: User "bob" cannot get path "/metrics"')


async def test_rbac_view_survives_being_dropped_by_the_hub(make_env: MakeEnv) -> None:
    """A subscriber the hub drops reads its prefix again and keeps following."""
    env = await make_env(authn=AuthnOptions(tokens={"admin-token": ADMIN,
                                                    "t": User("carol", ())}))
    for sub in list(env.server.hub.subs):
        if sub.prefix.startswith("/registry/rbac.authorization.k8s.io/"):
            sub.expire(0)
    binding = {"metadata": {"name": "carol"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                           "name": "view"},
               "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                             "name": "carol"}]}
    headers = {"Content-Type": "application/json", "Authorization": "Bearer admin-token"}
    async with env.http.post("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
                             data=json.dumps(binding), headers=headers) as resp:
        assert resp.status == 201
    for _ in range(200):
        async with env.http.get("/api/v1/namespaces/default/pods",
                                headers={"Authorization": "Bearer t"}) as resp:
            if resp.status == 200:
                return
        await asyncio.sleep(0.02)
    raise AssertionError("carol never got view")

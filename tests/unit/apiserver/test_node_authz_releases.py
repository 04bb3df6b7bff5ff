"""The Node authorizer's graph and the bootstrap policy under each emulated release, on a
real server and store: 1.34 slices name their node in ``spec.nodeName`` and 1.34 pods their
claims without ``source``; the roles carry each release's DRA rows."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from kubedra.api.features import FeatureGates
from kubedra.api.release import R1_30, R1_34
from kubedra.apiserver.auth import User
from kubedra.apiserver.authz import policy
from kubedra.apiserver.authz.attributes import Attributes, Decision
from kubedra.apiserver.authz.node import NODE_RULES, RELEASES
from tests.unit.apiserver.conftest import Env, MakeEnv

NODE0 = User("system:node:node0", ("system:nodes",))
RBAC = "/apis/rbac.authorization.k8s.io/v1"


async def _put(env: Env, key: str, obj: dict[str, Any]) -> None:
    await env.store.create(key, json.dumps(obj).encode())


async def _until(check: Any) -> None:
    """The graph follows the store: eventually consistent."""
    for _ in range(500):
        if check():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the node graph did not catch up")


def _slice(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": name},
            "spec": {"driver": "d.example.com", "pool": {"name": "p", "generation": 1,
                                                         "resourceSliceCount": 1},
                     "devices": [], **spec}}


def _pod(name: str, node: str, claims: list[dict[str, Any]],
         statuses: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "i"}],
                     "resourceClaims": claims},
            "status": {"resourceClaimStatuses": statuses or []}}


def _decide(env: Env, verb: str, resource: str, name: str = "", namespace: str = "",
            field_selector: str = "") -> tuple[Decision, str]:
    verdict = env.server.authz.chain.decide(Attributes(
        NODE0, verb, True, "resource.k8s.io", resource, "", namespace, name,
        field_selector=field_selector))
    return verdict.decision, verdict.reason


async def test_1_34_graph_slices_and_claims(make_env: MakeEnv) -> None:
    env = await make_env(gates=FeatureGates.for_release(R1_34))
    graph = env.server.authz.graph
    assert graph.release is RELEASES[R1_34]
    prefix = graph.slices_prefix
    await _put(env, prefix + "mine", _slice("mine", nodeName="node0"))
    await _put(env, prefix + "theirs", _slice("theirs", nodeName="node1"))
    await _put(env, prefix + "everywhere", _slice("everywhere", allNodes=True))
    await _put(env, prefix + "selected", _slice("selected", nodeSelector={
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                                "values": ["node0"]}]}]}))
    await _put(env, "/registry/core/pods/default/p0", _pod("p0", "node0", [
        {"name": "direct", "resourceClaimName": "shared"},
        {"name": "templated", "resourceClaimTemplateName": "t"},
        {"name": "pending", "resourceClaimTemplateName": "t"},
    ], [{"name": "templated", "resourceClaimName": "p0-templated-x1"}]))
    await _put(env, "/registry/core/pods/default/p1", _pod("p1", "node1", [
        {"name": "direct", "resourceClaimName": "theirs"}]))
    await _until(lambda: graph.claim_on_node("default", "theirs", "node1")
                 and graph.slices.has_edge("theirs", "node1"))

    no_edge = (Decision.NO_OPINION, "no relationship found between node 'node0' and this object")
    assert _decide(env, "update", "resourceslices", "mine") == (Decision.ALLOW, "")
    for other in ("theirs", "everywhere", "selected"):
        assert _decide(env, "delete", "resourceslices", other) == no_edge
    assert _decide(env, "list", "resourceslices",
                   field_selector="spec.nodeName=node0")[0] is Decision.ALLOW
    assert _decide(env, "watch", "resourceslices", field_selector="spec.nodeName==node0"
                   )[0] is Decision.ALLOW
    selector = (Decision.NO_OPINION, "can only list/watch/deletecollection resourceslices "
                "with nodeName field selector")
    assert _decide(env, "list", "resourceslices") == selector
    assert _decide(env, "list", "resourceslices", field_selector="spec.nodeName!=node0"
                   ) == selector
    assert _decide(env, "list", "resourceslices", field_selector="spec.nodeName=node0,junk"
                   ) == selector  # unparsable: no requirements

    for claim in ("shared", "p0-templated-x1"):
        assert _decide(env, "get", "resourceclaims", claim, "default") == (Decision.ALLOW, "")
    assert _decide(env, "get", "resourceclaims", "theirs", "default") == no_edge
    assert _decide(env, "list", "resourceclaims", namespace="default") == (
        Decision.NO_OPINION, "can only get individual resources of this type")
    verdict = env.server.authz.chain.decide(Attributes(
        NODE0, "get", True, "resource.k8s.io", "resourceclaims", "status", "default", "shared"))
    assert verdict.reason == "cannot get subresource"  # authorizeGet, every release

    # deviation: reads of pods and Nodes keep the static node rules (no selector needed)
    assert env.server.authz.chain.decide(Attributes(NODE0, "list", True, "", "pods")
                                         ).decision is Decision.ALLOW

    # the pod leaves the node: its claims are no longer reachable
    await env.store.delete("/registry/core/pods/default/p0")
    await _until(lambda: not graph.claim_on_node("default", "shared", "node0"))
    assert _decide(env, "get", "resourceclaims", "shared", "default") == no_edge


async def test_1_30_graph_reads_the_1_30_shapes(make_env: MakeEnv) -> None:
    env = await make_env()
    graph = env.server.authz.graph
    assert graph.release is RELEASES[R1_30]
    assert graph.slices_prefix == "/registry/resource.k8s.io/resourceslices/"
    # a 1.34-shaped pod names no claim a 1.30 server knows of
    await _put(env, "/registry/core/pods/default/p0", _pod("p0", "node0", [
        {"name": "direct", "resourceClaimName": "flat"},
        {"name": "old", "source": {"resourceClaimName": "sourced"}}]))
    await _until(lambda: graph.claim_on_node("default", "sourced", "node0"))
    assert not graph.claim_on_node("default", "flat", "node0")
    assert _decide(env, "list", "resourceslices")[0] is Decision.ALLOW  # 1.30: open


def _rules(roles: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return next(r["rules"] for r in roles if r["metadata"]["name"] == name)


def _grants(rules: list[dict[str, Any]], verb: str, group: str, resource: str) -> bool:
    return any(verb in r.get("verbs", ()) and group in r.get("apiGroups", ())
               and resource in r.get("resources", ()) for r in rules)


def test_policy_by_release() -> None:
    old = policy.cluster_roles(R1_30, NODE_RULES)
    new = policy.cluster_roles(R1_34, RELEASES[R1_34].rules)
    rg = "resource.k8s.io"
    for resource in ("deviceclasses", "resourceslices"):
        assert _grants(_rules(new, "system:kube-scheduler"), "watch", rg, resource)
    assert _grants(_rules(new, "system:kube-scheduler"), "update", rg, "resourceclaims")
    assert _grants(_rules(new, "system:kube-scheduler"), "patch", rg, "resourceclaims/status")
    assert _grants(_rules(new, "system:kube-scheduler"), "update", "", "pods/finalizers")
    assert not _grants(_rules(new, "system:kube-scheduler"), "get", rg, "podschedulingcontexts")
    assert _grants(_rules(old, "system:kube-scheduler"), "create", rg, "podschedulingcontexts")
    assert _grants(_rules(new, "system:node"), "deletecollection", rg, "resourceslices")
    assert not _grants(_rules(old, "system:node"), "deletecollection", rg, "resourceslices")
    assert _grants(_rules(new, "system:aggregate-to-edit"), "create", rg,
                   "resourceclaimtemplates")
    assert not _grants(_rules(new, "system:aggregate-to-view"), "get", rg,
                       "resourceclaimparameters")

    claims = _rules(new, "system:controller:resource-claim-controller")
    assert _grants(claims, "create", rg, "resourceclaims")
    assert _grants(claims, "patch", rg, "resourceclaims/status")
    assert _grants(claims, "update", "", "pods/finalizers")
    assert not _grants(claims, "update", rg, "resourceslices")
    assert "system:controller:resource-claim-controller" not in {
        r["metadata"]["name"] for r in old}
    binding = next(b for b in policy.cluster_role_bindings(R1_34)
                   if b["metadata"]["name"] == "system:controller:resource-claim-controller")
    assert binding["subjects"] == [{"kind": "ServiceAccount",
                                    "name": "resource-claim-controller",
                                    "namespace": "kube-system"}]
    assert len(policy.cluster_role_bindings(R1_30)) + 1 == len(
        policy.cluster_role_bindings(R1_34))


async def test_1_34_bootstrap_roles_and_access_reviews(make_env: MakeEnv) -> None:
    """The API server keeps the 1.34 roles; a SubjectAccessReview (``kubectl auth can-i
    --as``) answers with them and with the Node authorizer."""
    env = await make_env(gates=FeatureGates.for_release(R1_34))
    status, role = await env.call(
        "GET", f"{RBAC}/clusterroles/system:controller:resource-claim-controller")
    assert status == 200 and role["metadata"]["annotations"][
        "rbac.authorization.kubernetes.io/autoupdate"] == "true"
    status, _ = await env.call(
        "GET", f"{RBAC}/clusterrolebindings/system:controller:resource-claim-controller")
    assert status == 200

    async def can(user: str, groups: list[str], verb: str, resource: str,
                  namespace: str = "", name: str = "") -> bool:
        review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
                  "spec": {"user": user, "groups": groups, "resourceAttributes": {
                      "verb": verb, "group": "resource.k8s.io", "resource": resource,
                      "namespace": namespace, "name": name}}}
        status, body = await env.call(
            "POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", review)
        assert status == 201, body
        return bool(body["status"]["allowed"])

    sa = "system:serviceaccount:kube-system:resource-claim-controller"
    sa_groups = ["system:serviceaccounts", "system:serviceaccounts:kube-system"]
    assert await can(sa, sa_groups, "create", "resourceclaims", "default")
    assert not await can(sa, sa_groups, "create", "resourceslices")
    assert await can("system:kube-scheduler", [], "list", "deviceclasses")
    assert not await can("system:kube-scheduler", [], "list", "podschedulingcontexts")
    # kubectl 1.30 sends no field selector: a node may not list slices in 1.34
    assert not await can("system:node:node0", ["system:nodes"], "list", "resourceslices")
    assert await can("system:node:node0", ["system:nodes"], "create", "resourceslices")

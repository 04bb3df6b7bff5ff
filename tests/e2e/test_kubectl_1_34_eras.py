"""kubectl 1.34 against both eras' servers (``--emulated-version 1.30`` and ``1.34``):
``run``, ``create job``/``token``, ``auth can-i``, ``get`` and ``describe`` of every kind
the era serves that kubectl lists, ``apply``, ``delete``, ``wait --for``, and ``cordon`` /
``uncordon`` / ``drain`` of a simulated node (a Node object with pods bound to it), whose
pods go through the ``pods/eviction`` subresource (policy/v1 Eviction: kubectl sends it in
JSON; a Go client with protobuf content sends it in protobuf, read too)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml

from kubedra.proto import kube
from tests.e2e.conftest import Kubectl, Server, kubeconfig_session

DRIVER = "gpu.example.com"


def _core(ns: str, node: str) -> list[dict[str, Any]]:
    """One object of each core, batch, coordination and RBAC kind, in ``ns``."""
    rule = [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]
    return [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": node}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": ns},
         "spec": {"containers": [{"name": "c", "image": "nginx"}]}},
        {"apiVersion": "v1", "kind": "ServiceAccount",
         "metadata": {"name": "robot", "namespace": ns}},
        {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "ev", "namespace": ns},
         "involvedObject": {"kind": "Pod", "name": "web", "namespace": ns},
         "reason": "Tested", "message": "by kubectl", "type": "Normal"},
        {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "job", "namespace": ns},
         "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [
             {"name": "c", "image": "busybox"}]}}}},
        {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
         "metadata": {"name": "lease", "namespace": ns}, "spec": {"holderIdentity": "me"}},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
         "metadata": {"name": "reader", "namespace": ns}, "rules": rule},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
         "metadata": {"name": "reader", "namespace": ns},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                     "name": "reader"},
         "subjects": [{"kind": "User", "name": "bob"}]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
         "metadata": {"name": f"reader-{ns}"}, "rules": rule},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
         "metadata": {"name": f"reader-{ns}"},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                     "name": f"reader-{ns}"},
         "subjects": [{"kind": "User", "name": "bob"}]},
    ]


def _resource(era: str, ns: str, node: str) -> list[dict[str, Any]]:
    """The era's resource.k8s.io kinds, one object each."""
    if era == "1.34":
        v1 = "resource.k8s.io/v1"
        request = [{"name": "gpu", "exactly": {"deviceClassName": f"gpu-{ns}"}}]
        return [
            {"apiVersion": v1, "kind": "DeviceClass", "metadata": {"name": f"gpu-{ns}"}},
            {"apiVersion": v1, "kind": "ResourceSlice", "metadata": {"name": f"slice-{ns}"},
             "spec": {"driver": DRIVER, "nodeName": node, "devices": [{"name": "gpu-0"}],
                      "pool": {"name": node, "generation": 1, "resourceSliceCount": 1}}},
            {"apiVersion": v1, "kind": "ResourceClaim", "metadata": {"name": "claim",
                                                                     "namespace": ns},
             "spec": {"devices": {"requests": request}}},
            {"apiVersion": v1, "kind": "ResourceClaimTemplate",
             "metadata": {"name": "tpl", "namespace": ns},
             "spec": {"spec": {"devices": {"requests": request}}}},
        ]
    a2 = "resource.k8s.io/v1alpha2"
    return [
        {"apiVersion": a2, "kind": "ResourceClass", "metadata": {"name": f"gpu-{ns}"},
         "driverName": DRIVER, "structuredParameters": True},
        {"apiVersion": a2, "kind": "ResourceSlice", "metadata": {"name": f"slice-{ns}"},
         "nodeName": node, "driverName": DRIVER,
         "namedResources": {"instances": [{"name": "gpu-0"}]}},
        {"apiVersion": a2, "kind": "ResourceClaim", "metadata": {"name": "claim",
                                                                 "namespace": ns},
         "spec": {"resourceClassName": f"gpu-{ns}"}},
        {"apiVersion": a2, "kind": "ResourceClaimTemplate",
         "metadata": {"name": "tpl", "namespace": ns},
         "spec": {"spec": {"resourceClassName": f"gpu-{ns}"}}},
        {"apiVersion": a2, "kind": "ResourceClaimParameters",
         "metadata": {"name": "params", "namespace": ns},
         "driverRequests": [{"driverName": DRIVER, "requests": [
             {"namedResources": {"selector": "true"}}]}]},
        {"apiVersion": a2, "kind": "ResourceClassParameters",
         "metadata": {"name": "params", "namespace": ns},
         "filters": [{"driverName": DRIVER, "namedResources": {"selector": "true"}}]},
        {"apiVersion": a2, "kind": "PodSchedulingContext",
         "metadata": {"name": "web", "namespace": ns}, "spec": {"selectedNode": node}},
    ]


def _era(kubectl: Kubectl) -> str:
    return "1.34" if "v1.34" in kubectl.run("version", "-o", "yaml").stdout.split(
        "serverVersion")[1] else "1.30"


@pytest.fixture
def applied(kubectl_134_any_era: Kubectl) -> tuple[Kubectl, str, str, list[dict[str, Any]]]:
    kubectl = kubectl_134_any_era
    ns = "k34-" + uuid.uuid4().hex[:6]
    node = f"node-{ns}"
    kubectl.run("create", "namespace", ns)
    objs = _core(ns, node) + _resource(_era(kubectl), ns, node)
    out = kubectl.run("apply", "-f", "-", stdin=yaml.safe_dump_all(objs)).stdout
    assert out.count(" created") == len(objs), out
    return kubectl, ns, node, objs


def test_get_and_describe_every_kind(
        applied: tuple[Kubectl, str, str, list[dict[str, Any]]]) -> None:
    kubectl, ns, _, objs = applied
    served = {line.split()[-1]: line.split()[0] for line in kubectl.run(
        "api-resources", "--verbs=list", "--no-headers").stdout.splitlines()}
    listed = set()
    for obj in [*objs, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
                {"apiVersion": "v1", "kind": "Service",
                 "metadata": {"name": "kubernetes", "namespace": "default"}}]:
        kind, name = obj["kind"], obj["metadata"]["name"]
        group = obj["apiVersion"].rpartition("/")[0]
        resource = served[kind] + (f".{group}" if group else "")
        where = ["-n", obj["metadata"]["namespace"]] if "namespace" in obj["metadata"] else []
        table = kubectl.run("get", resource, *where).stdout
        assert len(table.splitlines()) >= 2, (resource, table)  # a header and rows
        names = kubectl.run("get", resource, *where, "-o", "name").stdout.split()
        assert any(n.endswith(f"/{name}") for n in names), (resource, names)
        described = kubectl.run("describe", resource, name, *where).stdout
        assert described.startswith("Name:") and name in described.splitlines()[0], described
        listed.add(kind)
    # everything kubectl lists of these groups was covered
    groups = {"", "batch", "coordination.k8s.io", "rbac.authorization.k8s.io",
              "resource.k8s.io"}
    lines = kubectl.run("api-resources", "--verbs=list", "-o", "wide",
                        "--no-headers").stdout.splitlines()
    kinds = set()
    for line in lines:
        fields = line.split()
        version = next(f for f in fields if f == "v1" or "/" in f)
        if version.rpartition("/")[0] in groups:
            kinds.add(fields[fields.index(version) + 2])
    assert kinds - listed <= {"ConfigMap", "Secret", "Endpoints", "PersistentVolumeClaim",
                              "PersistentVolume", "ReplicationController", "ResourceQuota",
                              "LimitRange", "PodTemplate", "ComponentStatus", "CronJob"}, (
        kinds - listed)


def test_imperative_commands_speak_protobuf(
        applied: tuple[Kubectl, str, str, list[dict[str, Any]]]) -> None:
    """``run``, ``create job``, ``create token`` and ``auth can-i`` (the last two kubectl's
    typed clients, which send and accept protobuf)."""
    kubectl, ns, _, _ = applied
    assert "pod/solo created" in kubectl.run("run", "solo", "-n", ns, "--image", "busybox",
                                             "--restart", "Never").stdout
    assert "job.batch/once created" in kubectl.run("create", "job", "once", "-n", ns,
                                                   "--image", "busybox").stdout
    assert kubectl.json("get", "job", "once", "-n", ns)["spec"]["template"]["spec"][
        "containers"][0]["image"] == "busybox"
    token = kubectl.run("create", "token", "robot", "-n", ns, "-v=8")
    assert token.stdout.strip().count(".") == 2, token.stdout  # a signed JWT
    assert f"Content-Type: {kube.MEDIA_TYPE}" in token.stderr
    assert kubectl.run("auth", "can-i", "create", "pods", "-n", ns).stdout.strip() == "yes"
    assert kubectl.run("auth", "can-i", "create", "pods", "-n", ns,
                       "--as", "bob", check=False).stdout.strip() == "no"
    assert "*.*" in kubectl.run("auth", "can-i", "--list", "-n", ns).stdout


def test_apply_wait_and_delete(
        applied: tuple[Kubectl, str, str, list[dict[str, Any]]]) -> None:
    kubectl, ns, _, objs = applied
    # applied again: unchanged
    out = kubectl.run("apply", "-f", "-", stdin=yaml.safe_dump_all(objs)).stdout
    assert "pod/web unchanged" in out
    # a condition set on the status while kubectl waits for it
    waiter = kubectl.popen("wait", "--for=condition=Ready", "pod/web", "-n", ns,
                           "--timeout=60s")
    status = {"status": {"conditions": [{"type": "Ready", "status": "True"}]}}
    kubectl.run("patch", "pod", "web", "-n", ns, "--subresource", "status", "--type",
                "merge", "-p", yaml.safe_dump(status))
    stdout, stderr = waiter.communicate(timeout=90)
    assert waiter.returncode == 0 and "pod/web condition met" in stdout, stderr
    out = kubectl.run("delete", "-f", "-", stdin=yaml.safe_dump_all(objs)).stdout
    assert 'pod "web" deleted' in out and out.count(" deleted") == len(objs), out
    kubectl.run("wait", "--for=delete", "pod/web", "-n", ns, "--timeout=60s")


def test_cordon_drain_uncordon(
        applied: tuple[Kubectl, str, str, list[dict[str, Any]]]) -> None:
    kubectl, ns, node, _ = applied
    pods = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"on-node-{i}",
                                                             "namespace": ns},
             "spec": {"nodeName": node, "containers": [{"name": "c", "image": "nginx"}]}}
            for i in range(2)]
    kubectl.run("apply", "-f", "-", stdin=yaml.safe_dump_all(pods))
    assert "cordoned" in kubectl.run("cordon", node).stdout
    assert kubectl.json("get", "node", node)["spec"]["unschedulable"] is True
    drain = kubectl.run("drain", node, "--ignore-daemonsets", "--force", "--grace-period=0",
                        "--timeout=60s", "-v=9", timeout=120)
    assert f"node/{node} drained" in drain.stdout, drain.stderr[-3000:]
    # each pod evicted: a policy/v1 Eviction in JSON, answered 201
    lines = drain.stderr.splitlines()
    sent = [line for line in lines if "-XPOST" in line and "/eviction" in line]
    answered = [line for line in lines if '"Response"' in line and "/eviction" in line]
    assert len(sent) == len(answered) == 2, lines[-40:]
    assert all("Content-Type: application/json" in line for line in sent), sent
    assert all('status="201 Created"' in line for line in answered), answered
    for pod in pods:
        assert f'evicting pod {ns}/{pod["metadata"]["name"]}' in drain.stdout
    assert kubectl.run("get", "pods", "-n", ns, "--field-selector", f"spec.nodeName={node}",
                       "-o", "name").stdout == ""
    assert "uncordoned" in kubectl.run("uncordon", node).stdout
    assert not kubectl.json("get", "node", node)["spec"].get("unschedulable")


@pytest.fixture
async def http(apiserver: Server) -> AsyncIterator[aiohttp.ClientSession]:
    async with kubeconfig_session(apiserver.kubeconfig) as s:
        yield s


async def test_eviction_as_kube_apiserver_answers(http: aiohttp.ClientSession,
                                                  tmp_path: Path) -> None:
    """A bound pod is deleted gracefully (it stays until its node agent is done); the
    answer is 201 with a Success Status; the body must name the URL's pod."""
    ns = "ev-" + uuid.uuid4().hex[:6]
    async with http.post("/api/v1/namespaces", json={"metadata": {"name": ns}}) as r:
        assert r.status == 201
    pod = {"metadata": {"name": "p"}, "spec": {"nodeName": "somewhere", "containers": [
        {"name": "c", "image": "nginx"}]}}
    async with http.post(f"/api/v1/namespaces/{ns}/pods", json=pod) as r:
        assert r.status == 201
    path = f"/api/v1/namespaces/{ns}/pods/p/eviction"
    wrong = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "q"}}
    async with http.post(path, json=wrong) as r:
        assert r.status == 400
        assert (await r.json())["message"] == "name in URL does not match name in Eviction object"
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction",
                "metadata": {"name": "p", "namespace": ns}}
    async with http.post(path, json=eviction) as r:
        assert r.status == 201
        assert await r.json() == {"kind": "Status", "apiVersion": "v1", "metadata": {},
                                  "status": "Success", "code": 201}
    async with http.get(f"/api/v1/namespaces/{ns}/pods/p") as r:
        got = await r.json()
    assert got["metadata"]["deletionTimestamp"] and got["metadata"][
        "deletionGracePeriodSeconds"] == 30
    # in protobuf, with deleteOptions: gone at once
    body = kube.encode({**eviction, "deleteOptions": {"gracePeriodSeconds": 0}})
    async with http.post(path, data=body, headers={"Content-Type": kube.MEDIA_TYPE}) as r:
        assert r.status == 201, await r.text()
    async with http.get(f"/api/v1/namespaces/{ns}/pods/p") as r:
        assert r.status == 404
    async with http.post(path, json=eviction) as r:
        assert r.status == 404 and (await r.json())["message"] == 'pods "p" not found'
    async with http.get("/api/v1") as r:
        resources = {res["name"]: res for res in (await r.json())["resources"]}
    assert resources["pods/eviction"] == {
        "name": "pods/eviction", "singularName": "", "namespaced": True, "group": "policy",
        "version": "v1", "kind": "Eviction", "verbs": ["create"]}

"""Authorization end to end under ``--authorization-mode Node,RBAC``: the real scheduler,
controller manager and node agent run with the client certificates ``kubedra up`` gives them
(``system:kube-scheduler``, ``system:kube-controller-manager`` and ``system:node:node-0``;
the test's own requests use ``--token-auth-file`` users of the same names) and
a Job whose pod uses a DRA claim completes; a node may touch only its own ResourceSlices; a
user bound to a namespace Role reads claims there and nothing else, cannot grant more than
it holds; ``kubectl auth can-i`` answers for three users."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests
import yaml

from kubedra.apiserver.pki import ClusterPki
from kubedra.cli import credentials
from kubedra.cli.kubectl import KubectlUnavailable, ensure_kubectl
from kubedra.client import kubeconfig as kubeconfig_file
from tests.e2e.conftest import Kubectl, _kubedra_command, _stop, apiserver_process
from tests.e2e.node_support import socket_root

DRIVER = "gpu.example.com"
SLICES = "/apis/resource.k8s.io/v1alpha2/resourceslices"
RBAC = "/apis/rbac.authorization.k8s.io/v1"
USERS = {
    "admin": ("kubernetes-admin", "system:masters"),
    "scheduler": ("system:kube-scheduler", ""),
    "cm": ("system:kube-controller-manager", ""),
    "node0": ("system:node:node-0", "system:nodes"),
    "node1": ("system:node:node-1", "system:nodes"),
    "alice": ("alice", ""),
}


@dataclass
class Cluster:
    url: str
    ca: str
    kubeconfigs: dict[str, Path]
    logs: list[Path]

    def call(self, who: str, method: str, path: str, body: Any = None,
             content_type: str = "application/json") -> tuple[int, Any]:
        resp = requests.request(method, self.url + path, verify=self.ca, timeout=10,
                                data=json.dumps(body) if body is not None else None,
                                headers={"Authorization": f"Bearer tok-{who}",
                                         "Content-Type": content_type})
        return resp.status_code, resp.json()

    def wait(self, what: str, check: Any, timeout: float = 60.0) -> Any:
        deadline = time.monotonic() + timeout
        while not (value := check()):
            assert time.monotonic() < deadline, f"timed out waiting for {what}"
            time.sleep(0.2)
        return value


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    data = tmp_path_factory.mktemp("authz")
    tokens = data / "tokens.csv"
    tokens.write_text("".join(f'tok-{who},{user},uid-{who},"{groups}"\n'
                              for who, (user, groups) in USERS.items()))
    with socket_root() as nodes, apiserver_process(
        data, "--token", "tok-admin", "--token-auth-file", str(tokens),
    ) as admin:
        url = kubeconfig_file.load(admin).server
        pki = ClusterPki(data / "pki")
        kubeconfigs = {}
        for who in USERS:
            doc = yaml.safe_load(admin.read_text())
            doc["users"][0]["user"] = {"token": f"tok-{who}"}
            kubeconfigs[who] = data / f"{who}.kubeconfig"
            kubeconfigs[who].write_text(yaml.safe_dump(doc))
        for who, identity in (("scheduler", credentials.SCHEDULER),
                              ("cm", credentials.CONTROLLER_MANAGER),
                              ("node0", credentials.node_identity("node-0"))):
            credentials.write_kubeconfig(pki, data / f"{who}-cert.kubeconfig", url, identity)
        procs, logs = [], []
        for name, args in (
            ("scheduler", ["scheduler", "--kubeconfig", str(data / "scheduler-cert.kubeconfig")]),
            ("cm", ["controller-manager", "--kubeconfig", str(data / "cm-cert.kubeconfig")]),
            ("node0", ["node-pool", "--kubeconfig", str(data / "node0-cert.kubeconfig"),
                       "--root-dir",
                       str(nodes), "--count", "1", "--driver-name", DRIVER,
                       "--instances", "2"]),
        ):
            log = data / f"{name}.log"
            logs.append(log)
            with log.open("wb") as out:
                procs.append(subprocess.Popen([*_kubedra_command(), *args], stdout=out,
                                              stderr=subprocess.STDOUT))
        try:
            yield Cluster(url, str(pki.ca_cert), kubeconfigs, logs)
        finally:
            for p in procs:
                _stop(p)
        for log in logs:
            text = log.read_text(errors="replace")
            assert "Traceback" not in text and "forbidden" not in text.lower(), text[-3000:]


def _slice(name: str, node: str) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceSlice",
            "metadata": {"name": name}, "nodeName": node, "driverName": DRIVER,
            "namedResources": {"instances": [{"name": "x"}]}}


def test_components_under_their_own_identities(cluster: Cluster) -> None:
    """Scheduler, controller manager and node agent hold just enough: a Job whose pod needs
    a claim from a template is scheduled, allocated, run and completed."""
    c = cluster
    assert c.call("admin", "POST", "/apis/resource.k8s.io/v1alpha2/resourceclasses", {
        "metadata": {"name": "gpu"}, "driverName": DRIVER, "structuredParameters": True,
    })[0] == 201
    assert c.call("admin", "POST",
                  "/apis/resource.k8s.io/v1alpha2/namespaces/default/resourceclaimtemplates",
                  {"metadata": {"name": "gpu"},
                   "spec": {"spec": {"resourceClassName": "gpu"}}})[0] == 201
    spec = {"restartPolicy": "Never",
            "containers": [{"name": "c", "image": "busybox",
                            "resources": {"claims": [{"name": "gpu"}]}}],
            "resourceClaims": [{"name": "gpu", "source": {"resourceClaimTemplateName": "gpu"}}]}
    assert c.call("admin", "POST", "/apis/batch/v1/namespaces/default/jobs", {
        "metadata": {"name": "gpu"},
        "spec": {"template": {"metadata": {"annotations": {"kubedra.io/run-seconds": "0.2"}},
                              "spec": spec}}})[0] == 201

    def complete() -> bool:
        _, job = c.call("admin", "GET", "/apis/batch/v1/namespaces/default/jobs/gpu")
        return any(cond["type"] == "Complete" and cond["status"] == "True"
                   for cond in job.get("status", {}).get("conditions") or ())
    c.wait("the Job complete", complete, 120)
    _, pods = c.call("admin", "GET", "/api/v1/namespaces/default/pods?labelSelector=job-name=gpu")
    pod = pods["items"][0]
    assert pod["spec"]["nodeName"] == "node-0" and pod["status"]["phase"] == "Succeeded"
    claim = pod["status"]["resourceClaimStatuses"][0]["resourceClaimName"]
    # the Node authorizer's graph: the claim of a pod on node-0 is node-0's to read only
    path = f"/apis/resource.k8s.io/v1alpha2/namespaces/default/resourceclaims/{claim}"
    assert c.call("node0", "GET", path)[0] in (200, 404)  # 404 once the Job's pod let it go
    status, err = c.call("node1", "GET", path)
    assert status == 403 and err["message"].endswith(
        "no relationship found between node 'node-1' and this object")
    status, err = c.call("node1", "DELETE", f"/api/v1/namespaces/default/pods/"
                         f"{pod['metadata']['name']}")
    assert status == 403 and err["message"].endswith(
        'node "node-1" can only delete pods with spec.nodeName set to itself')


def test_nodes_touch_only_their_own_slices(cluster: Cluster) -> None:
    c = cluster
    theirs = c.wait("node-0's slice", lambda: c.call(
        "admin", "GET", f"{SLICES}?fieldSelector=nodeName=node-0")[1]["items"])[0]
    name = theirs["metadata"]["name"]
    assert c.call("node1", "POST", SLICES, _slice("mine", "node-1"))[0] == 201
    status, err = c.call("node1", "POST", SLICES, _slice("not-mine", "node-0"))
    assert status == 403 and err["message"] == (
        'resourceslices.resource.k8s.io "not-mine" is forbidden: can only create '
        "ResourceSlice with the same NodeName as the requesting node")
    status, err = c.call("node1", "DELETE", f"{SLICES}/{name}")
    assert status == 403 and err["message"] == (
        f'resourceslices.resource.k8s.io "{name}" is forbidden: User "system:node:node-1" '
        'cannot delete resource "resourceslices" in API group "resource.k8s.io" at the '
        "cluster scope: no relationship found between node 'node-1' and this object")
    assert c.call("node1", "PUT", f"{SLICES}/{name}", theirs)[0] == 403
    # the graph follows the store: the own slice is reachable once it has seen it
    mine = c.wait("the own slice readable", lambda: (
        r[1] if (r := c.call("node1", "GET", f"{SLICES}/mine"))[0] == 200 else None))
    mine["namedResources"]["instances"].append({"name": "y"})
    assert c.call("node1", "PUT", f"{SLICES}/mine", mine)[0] == 200
    assert c.call("node1", "DELETE", f"{SLICES}/mine")[0] == 200
    # NodeRestriction: another node's Node is out of reach, and so are its pods
    patch = {"metadata": {"labels": {"x": "y"}}}
    status, err = c.call("node1", "PATCH", "/api/v1/nodes/node-0", patch,
                         "application/merge-patch+json")
    assert status == 403 and err["message"] == (
        'nodes "node-0" is forbidden: node "node-1" is not allowed to modify node "node-0"')
    assert c.call("node0", "PATCH", "/api/v1/nodes/node-0", patch,
                  "application/merge-patch+json")[0] == 200
    assert c.call("node1", "POST", "/api/v1/namespaces/default/pods", {
        "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i"}]},
    })[1]["message"] == ('pods "p" is forbidden: pod does not have "kubernetes.io/config.mirror" '
                         'annotation, node "node-1" can only create mirror pods')


def test_namespace_role_and_escalation(cluster: Cluster) -> None:
    c = cluster
    assert c.call("admin", "POST", "/api/v1/namespaces", {"metadata": {"name": "team"}})[0] \
        == 201
    role = {"metadata": {"name": "claims-reader"}, "rules": [
        {"apiGroups": ["resource.k8s.io"], "resources": ["resourceclaims"],
         "verbs": ["get", "list", "watch"]},
        {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles"],
         "verbs": ["create", "patch"]}]}
    assert c.call("admin", "POST", f"{RBAC}/namespaces/team/roles", role)[0] == 201
    binding = {"metadata": {"name": "alice"},
               "roleRef": {"kind": "Role", "name": "claims-reader"},
               "subjects": [{"kind": "User", "name": "alice"}]}
    status, stored = c.call("admin", "POST", f"{RBAC}/namespaces/team/rolebindings", binding)
    assert status == 201
    assert stored["roleRef"]["apiGroup"] == "rbac.authorization.k8s.io"  # defaulted

    claims = "/apis/resource.k8s.io/v1alpha2/namespaces/team/resourceclaims"
    c.wait("alice reads claims in team", lambda: c.call("alice", "GET", claims)[0] == 200)
    status, err = c.call("alice", "GET", "/api/v1/namespaces/team/pods")
    assert status == 403 and err["message"] == (
        'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the '
        'namespace "team"')
    assert err["details"] == {"kind": "pods"}
    assert c.call("alice", "GET",
                  "/apis/resource.k8s.io/v1alpha2/namespaces/default/resourceclaims")[0] == 403
    # a role with what alice holds is fine; one with more is an escalation
    narrow = {"metadata": {"name": "narrow"}, "rules": [role["rules"][0]]}
    assert c.call("alice", "POST", f"{RBAC}/namespaces/team/roles", narrow)[0] == 201
    wide = {"metadata": {"name": "wide"}, "rules": [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "delete"]}]}
    status, err = c.call("alice", "POST", f"{RBAC}/namespaces/team/roles", wide)
    assert status == 403 and err["message"] == (
        'roles.rbac.authorization.k8s.io "wide" is forbidden: user "alice" '
        '(groups=["system:authenticated"]) is attempting to grant RBAC permissions not '
        'currently held:\n{APIGroups:[""], Resources:["pods"], Verbs:["get" "delete"]}')
    # so is widening a role by a patch (admission judges the patched role)
    status, err = c.call("alice", "PATCH", f"{RBAC}/namespaces/team/roles/narrow",
                         {"rules": wide["rules"]}, "application/merge-patch+json")
    assert status == 403 and err["message"] == (
        'roles.rbac.authorization.k8s.io "narrow" is forbidden: user "alice" '
        '(groups=["system:authenticated"]) is attempting to grant RBAC permissions not '
        'currently held:\n{APIGroups:[""], Resources:["pods"], Verbs:["get" "delete"]}')
    # validation with upstream's texts
    status, err = c.call("admin", "POST", f"{RBAC}/namespaces/team/roles", {
        "metadata": {"name": "bad"}, "rules": [{"verbs": []}]})
    assert status == 422 and "rules[0].verbs: Required value: verbs must contain at least " \
        "one value" in err["message"]


@pytest.fixture(scope="module")
def kubectl_bin() -> Path:
    try:
        return ensure_kubectl("1.30")
    except KubectlUnavailable as err:
        pytest.skip(str(err))


def _kubectl(cluster: Cluster, binary: Path, who: str) -> Kubectl:
    return Kubectl(binary, {"PATH": "/usr/bin:/bin", "HOME": str(cluster.kubeconfigs[who].parent),
                            "KUBECONFIG": str(cluster.kubeconfigs[who])})


def _can_i(cluster: Cluster, binary: Path, who: str, *args: str) -> str:
    return _kubectl(cluster, binary, who).run("auth", "can-i", *args, check=False).stdout.strip()


def test_kubectl_auth_can_i(cluster: Cluster, kubectl_bin: Path) -> None:
    c = cluster
    c.wait("alice's binding seen", lambda: c.call(
        "alice", "GET", "/apis/resource.k8s.io/v1alpha2/namespaces/team/resourceclaims")[0]
        == 200)
    assert _can_i(c, kubectl_bin, "admin", "*", "*") == "yes"
    assert _can_i(c, kubectl_bin, "alice", "list", "resourceclaims.resource.k8s.io",
                  "-n", "team") == "yes"
    assert _can_i(c, kubectl_bin, "alice", "list", "resourceclaims.resource.k8s.io",
                  "-n", "default") == "no"
    assert _can_i(c, kubectl_bin, "alice", "delete", "pods", "-n", "team") == "no"
    assert _can_i(c, kubectl_bin, "scheduler", "create", "pods", "--subresource=binding",
                  "-n", "default") == "yes"
    assert _can_i(c, kubectl_bin, "scheduler", "delete", "jobs.batch", "-n", "default") == "no"
    listed = _can_i(c, kubectl_bin, "alice", "--list", "-n", "team")
    assert "resourceclaims.resource.k8s.io" in listed and "selfsubjectaccessreviews" in listed
    assert "pods " not in listed
    admin = _kubectl(c, kubectl_bin, "admin")
    table = admin.run("get", "rolebindings", "-n", "team", "-o", "wide").stdout
    assert "Role/claims-reader" in table and "alice" in table
    assert "*.*" in admin.run("auth", "can-i", "--list").stdout
    # kubectl's own RBAC commands, and explain from the served OpenAPI
    admin.run("create", "role", "pod-reader", "-n", "team", "--verb=get,list",
              "--resource=pods")
    admin.run("create", "rolebinding", "bob-reads", "-n", "team", "--role=pod-reader",
              "--user=bob")
    assert "aggregationRule" in admin.run("explain", "clusterroles").stdout

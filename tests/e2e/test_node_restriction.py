"""NodeRestriction on Nodes and pods, end to end: a real ``kubedra apiserver`` under the
default ``--authorization-mode Node,RBAC``, nodes ``system:node:node-0`` and ``node-1`` (token
users in ``system:nodes``), raw HTTP and kubectl 1.30. A node may not register with, add,
change or remove labels outside the kubelet's set, touch its own taints, create a mirror pod
that names a ResourceClaim, or change a pod's labels or ``resourceClaimStatuses`` through its
status; each refusal is a 403 with kube-apiserver v1.30's text."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests
import yaml

from kubedra.apiserver.pki import ClusterPki
from kubedra.cli.kubectl import KubectlUnavailable, ensure_kubectl
from kubedra.client import kubeconfig as kubeconfig_file
from tests.e2e.conftest import apiserver_process

USERS = {
    "admin": ("kubernetes-admin", "system:masters"),
    "node0": ("system:node:node-0", "system:nodes"),
    "node1": ("system:node:node-1", "system:nodes"),
}
MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
NODES = "/api/v1/nodes"
PODS = "/api/v1/namespaces/default/pods"
TAINT = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}


@dataclass
class Api:
    url: str
    ca: str
    data: Path

    def call(self, who: str, method: str, path: str, body: Any = None,
             content_type: str = "application/json") -> tuple[int, Any]:
        resp = requests.request(method, self.url + path, verify=self.ca, timeout=10,
                                data=json.dumps(body) if body is not None else None,
                                headers={"Authorization": f"Bearer tok-{who}",
                                         "Content-Type": content_type})
        return resp.status_code, resp.json()

    def refused(self, who: str, method: str, path: str, body: Any,
                content_type: str = "application/json") -> str:
        status, answer = self.call(who, method, path, body, content_type)
        assert status == 403, answer
        assert answer["reason"] == "Forbidden"
        return str(answer["message"])


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    data = tmp_path_factory.mktemp("noderestriction")
    tokens = data / "tokens.csv"
    tokens.write_text("".join(f'tok-{who},{user},uid-{who},"{groups}"\n'
                              for who, (user, groups) in USERS.items()))
    with apiserver_process(data, "--token-auth-file", str(tokens)) as admin:
        yield Api(kubeconfig_file.load(admin).server, str(ClusterPki(data / "pki").ca_cert),
                  data)


def _node(name: str, labels: dict[str, str], taints: list[dict[str, str]] | None = None
          ) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": labels},
            "spec": {"taints": taints} if taints else {}}


def test_register_with_forbidden_labels(api: Api) -> None:
    labels = {"node-restriction.kubernetes.io/gpu": "yes", "team.k8s.io/owner": "x",
              "kubernetes.io/hostname": "node-1", "example.com/rack": "r1"}
    assert api.refused("node1", "POST", NODES, _node("node-1", labels)) == (
        'nodes "node-1" is forbidden: node "node-1" is not allowed to set the following '
        "labels: node-restriction.kubernetes.io/gpu, team.k8s.io/owner")
    assert api.call("admin", "GET", f"{NODES}/node-1")[0] == 404  # nothing was stored
    allowed = {"kubernetes.io/hostname": "node-1", "kubernetes.io/os": "linux",
               "node.kubernetes.io/instance-type": "big", "kubelet.kubernetes.io/x": "1",
               "topology.kubernetes.io/zone": "z1", "example.com/rack": "r1"}
    assert api.call("node1", "POST", NODES, _node("node-1", allowed, [TAINT]))[0] == 201


def test_labels_outside_the_kubelet_set(api: Api) -> None:
    api.call("node0", "POST", NODES, _node("node-0", {"kubernetes.io/hostname": "node-0"}))
    patch = {"metadata": {"labels": {"node-restriction.kubernetes.io/pool": "a",
                                     "node-role.kubernetes.io/control-plane": ""}}}
    assert api.refused("node0", "PATCH", f"{NODES}/node-0", patch, MERGE) == (
        'nodes "node-0" is forbidden: is not allowed to modify labels: '
        "node-restriction.kubernetes.io/pool, node-role.kubernetes.io/control-plane")
    node = api.call("admin", "GET", f"{NODES}/node-0")[1]
    assert "node-restriction.kubernetes.io/pool" not in node["metadata"]["labels"]
    # the admin sets one; the node may neither change nor remove it (strategic, in place)
    assert api.call("admin", "PATCH", f"{NODES}/node-0",
                    {"metadata": {"labels": {"node-restriction.kubernetes.io/pool": "a"}}},
                    MERGE)[0] == 200
    removal = {"metadata": {"labels": {"node-restriction.kubernetes.io/pool": None}}}
    assert api.refused("node0", "PATCH", f"{NODES}/node-0", removal, STRATEGIC) == (
        'nodes "node-0" is forbidden: is not allowed to modify labels: '
        "node-restriction.kubernetes.io/pool")
    # the kubelet's own labels and labels outside kubernetes.io / k8s.io stay writable
    mine = {"metadata": {"labels": {"node.kubernetes.io/exclude-from-lb": "true",
                                    "topology.kubernetes.io/region": "r",
                                    "example.com/rack": "r7"}}}
    assert api.call("node0", "PATCH", f"{NODES}/node-0", mine, STRATEGIC)[0] == 200


def test_taints_are_out_of_reach(api: Api) -> None:
    """Whatever the verb or patch type: removing, adding or changing a taint is refused."""
    assert api.call("admin", "PATCH", f"{NODES}/node-0", {"spec": {"taints": [TAINT]}},
                    MERGE)[0] == 200
    refused = 'nodes "node-0" is forbidden: node "node-0" is not allowed to modify taints'
    assert api.refused("node0", "PATCH", f"{NODES}/node-0", {"spec": {"taints": None}},
                       MERGE) == refused
    assert api.refused("node0", "PATCH", f"{NODES}/node-0",
                       {"spec": {"$retainKeys": ["taints"], "taints": []}},
                       STRATEGIC) == refused
    node = api.call("node0", "GET", f"{NODES}/node-0")[1]
    node["spec"]["taints"][0]["effect"] = "PreferNoSchedule"
    assert api.refused("node0", "PUT", f"{NODES}/node-0", node) == refused
    node["spec"]["taints"] = [TAINT, {"key": "extra", "effect": "NoExecute"}]
    assert api.refused("node0", "PUT", f"{NODES}/node-0/status", node) == refused
    assert api.call("admin", "GET", f"{NODES}/node-0")[1]["spec"]["taints"] == [TAINT]
    # an update that leaves the taints alone goes through
    status = {"status": {"conditions": [{"type": "Ready", "status": "True"}]}}
    assert api.call("node0", "PATCH", f"{NODES}/node-0/status", status, MERGE)[0] == 200


def test_mirror_pod_naming_a_claim(api: Api) -> None:
    pod = {"metadata": {"name": "static", "annotations": {"kubernetes.io/config.mirror": "x"}},
           "spec": {"nodeName": "node-0",
                    "containers": [{"name": "c", "image": "i",
                                    "resources": {"claims": [{"name": "gpu"}]}}],
                    "resourceClaims": [{"name": "gpu",
                                        "source": {"resourceClaimName": "someone-elses"}}]}}
    assert api.refused("node0", "POST", PODS, pod) == (
        'pods "static" is forbidden: node "node-0" can not create pods that reference '
        "resourceclaims")
    assert api.call("admin", "GET", f"{PODS}/static")[0] == 404


def test_pod_status_keeps_labels_and_claim_statuses(api: Api) -> None:
    pod = {"metadata": {"name": "worker", "labels": {"app": "w"}},
           "spec": {"nodeName": "node-0", "containers": [{"name": "c", "image": "i"}],
                    "resourceClaims": [{"name": "gpu",
                                        "source": {"resourceClaimTemplateName": "t"}}]}}
    assert api.call("admin", "POST", PODS, pod)[0] == 201
    claims = {"status": {"resourceClaimStatuses": [{"name": "gpu",
                                                    "resourceClaimName": "stolen"}]}}
    assert api.refused("node0", "PATCH", f"{PODS}/worker/status", claims, MERGE) == (
        'pods "worker" is forbidden: node "node-0" cannot update resource claim statues')
    labels = {"metadata": {"labels": {"app": "other"}}}
    assert api.refused("node0", "PATCH", f"{PODS}/worker/status", labels, MERGE) == (
        'pods "worker" is forbidden: node "node-0" cannot update labels through pod status')
    phase = {"status": {"phase": "Running"}}
    assert api.call("node0", "PATCH", f"{PODS}/worker/status", phase, MERGE)[0] == 200


def test_kubectl_as_the_node(api: Api) -> None:
    """kubectl's strategic merge patches (label, taint) get the same answers."""
    try:
        kubectl = ensure_kubectl("1.30")
    except KubectlUnavailable as err:
        pytest.skip(str(err))
    doc = yaml.safe_load((api.data / "kubeconfig").read_text())
    doc["users"][0]["user"] = {"token": "tok-node0"}
    config = api.data / "node0.kubeconfig"
    config.write_text(yaml.safe_dump(doc))

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(kubectl), "--kubeconfig", str(config), *args],
                              capture_output=True, text=True, timeout=60)

    out = run("label", "node", "node-0", "node-restriction.kubernetes.io/x=y")
    assert out.returncode == 1
    assert out.stderr.strip() == (
        'Error from server (Forbidden): nodes "node-0" is forbidden: is not allowed to modify '
        "labels: node-restriction.kubernetes.io/x")
    out = run("taint", "node", "node-0", "dedicated-")
    assert out.returncode == 1
    assert out.stderr.strip() == (
        'Error from server (Forbidden): nodes "node-0" is forbidden: node "node-0" is not '
        "allowed to modify taints")
    assert run("label", "node", "node-0", "example.com/ok=1").returncode == 0

"""Node authorization under ``--emulated-version 1.34``, end to end: a real ``kubedra
apiserver`` with the default ``--authorization-mode Node,RBAC``; nodes ``node-0`` and
``node-1``, the scheduler and the admin present client certificates from the cluster CA (as
``kubedra up`` gives them). A node writes its own ``resource.k8s.io/v1`` ResourceSlices only,
never another node's nor an ``allNodes``/``nodeSelector`` one, lists and deletes them only by
``spec.nodeName``, reads the claims of its pods only; every refusal is a 403 with
kube-apiserver v1.34's text, and kubectl 1.30's ``auth can-i`` agrees."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest
import requests

from kubedra.apiserver.pki import ClusterPki
from kubedra.cli import credentials
from kubedra.cli.kubectl import KubectlUnavailable, ensure_kubectl
from kubedra.client import kubeconfig as kubeconfig_file
from tests.e2e.conftest import Kubectl, apiserver_process

V1 = "/apis/resource.k8s.io/v1"
SLICES = f"{V1}/resourceslices"
CLAIMS = f"{V1}/namespaces/default/resourceclaims"
PODS = "/api/v1/namespaces/default/pods"
DRIVER = "gpu.example.com"
WHO = {
    "admin": credentials.ADMIN,
    "scheduler": credentials.SCHEDULER,
    "node0": credentials.node_identity("node-0"),
    "node1": credentials.node_identity("node-1"),
}
T = TypeVar("T")


@dataclass
class Cluster:
    url: str
    ca: str
    certs: dict[str, tuple[str, str]]
    kubeconfigs: dict[str, Path]

    def call(self, who: str, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        resp = requests.request(method, self.url + path, verify=self.ca, timeout=10,
                                cert=self.certs[who],
                                data=json.dumps(body) if body is not None else None,
                                headers={"Content-Type": "application/json"})
        return resp.status_code, resp.json()

    def refused(self, who: str, method: str, path: str, body: Any = None) -> str:
        status, answer = self.call(who, method, path, body)
        assert status == 403, answer
        assert answer["reason"] == "Forbidden"
        return str(answer["message"])

    @staticmethod
    def wait(what: str, check: Callable[[], T | None], timeout: float = 60.0) -> T:
        """The Node authorizer's graph follows the store: poll until it has caught up."""
        deadline = time.monotonic() + timeout
        while (value := check()) is None or value is False:
            assert time.monotonic() < deadline, f"timed out waiting for {what}"
            time.sleep(0.1)
        return value


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    data = tmp_path_factory.mktemp("nodeauthz134")
    with apiserver_process(data, "--emulated-version", "1.34") as admin:
        url = kubeconfig_file.load(admin).server
        pki = ClusterPki(data / "pki")
        certs, kubeconfigs = {}, {}
        for who, identity in WHO.items():
            creds, _ = credentials.certificate(pki, identity)
            assert creds.client_cert is not None and creds.client_key is not None
            (data / f"{who}.crt").write_bytes(creds.client_cert)
            (data / f"{who}.key").write_bytes(creds.client_key)
            certs[who] = (str(data / f"{who}.crt"), str(data / f"{who}.key"))
            kubeconfigs[who] = data / f"{who}.kubeconfig"
            credentials.write_kubeconfig(pki, kubeconfigs[who], url, identity)
        yield Cluster(url, str(pki.ca_cert), certs, kubeconfigs)


def _slice(name: str, **where: Any) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": name},
            "spec": {"driver": DRIVER, "pool": {"name": name, "generation": 1,
                                                "resourceSliceCount": 1},
                     "devices": [{"name": "gpu-0"}], **where}}


SELECTOR = {"nodeSelectorTerms": [{"matchExpressions": [
    {"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-0"]}]}]}


def _forbidden(name: str, user: str, verb: str, reason: str) -> str:
    return (f'resourceslices.resource.k8s.io "{name}" is forbidden: User "{user}" cannot '
            f'{verb} resource "resourceslices" in API group "resource.k8s.io" at the cluster '
            f"scope: {reason}")


NO_EDGE = "no relationship found between node '{}' and this object"


def test_a_node_writes_only_its_own_slices(cluster: Cluster) -> None:
    c = cluster
    assert c.call("node0", "POST", SLICES, _slice("n0-a", nodeName="node-0"))[0] == 201
    assert c.call("admin", "POST", SLICES, _slice("everywhere", allNodes=True))[0] == 201
    assert c.call("admin", "POST", SLICES, _slice("selected", nodeSelector=SELECTOR))[0] == 201
    # NodeRestriction: a node creates slices naming itself only
    create = ("can only create ResourceSlice with the same NodeName as the requesting node")
    for name, where in (("n1-by-n0", {"nodeName": "node-1"}), ("all-by-n0", {"allNodes": True}),
                        ("sel-by-n0", {"nodeSelector": SELECTOR})):
        assert c.refused("node0", "POST", SLICES, _slice(name, **where)) == (
            f'resourceslices.resource.k8s.io "{name}" is forbidden: {create}')
        assert c.call("admin", "GET", f"{SLICES}/{name}")[0] == 404  # nothing stored

    mine = c.wait("node-0's slice in the graph", lambda: (
        r[1] if (r := c.call("node0", "GET", f"{SLICES}/n0-a"))[0] == 200 else None))
    assert mine["metadata"]["generation"] == 1
    mine["spec"]["devices"].append({"name": "gpu-1"})
    status, updated = c.call("node0", "PUT", f"{SLICES}/n0-a", mine)
    assert status == 200 and updated["metadata"]["generation"] == 2

    # another node's slice, and the slices for all nodes or a selector, are no node's
    for who, user, name in (("node1", "system:node:node-1", "n0-a"),
                            ("node0", "system:node:node-0", "everywhere"),
                            ("node0", "system:node:node-0", "selected")):
        node = user.rsplit(":", 1)[1]
        for verb, method, body in (("get", "GET", None), ("update", "PUT", mine),
                                   ("delete", "DELETE", None)):
            assert c.refused(who, method, f"{SLICES}/{name}", body) == _forbidden(
                name, user, verb, NO_EDGE.format(node))
    assert c.call("admin", "GET", f"{SLICES}/everywhere")[0] == 200  # still there

    assert c.call("node0", "DELETE", f"{SLICES}/n0-a")[0] == 200


def test_collections_by_node_name(cluster: Cluster) -> None:
    c = cluster
    for name in ("n1-a", "n1-b"):
        assert c.call("node1", "POST", SLICES, _slice(name, nodeName="node-1"))[0] == 201
    assert c.call("node0", "POST", SLICES, _slice("n0-keep", nodeName="node-0"))[0] == 201
    reason = "can only list/watch/deletecollection resourceslices with nodeName field selector"
    for verb, method in (("list", "GET"), ("deletecollection", "DELETE")):
        assert c.refused("node1", method, SLICES) == (
            f'resourceslices.resource.k8s.io is forbidden: User "system:node:node-1" cannot '
            f'{verb} resource "resourceslices" in API group "resource.k8s.io" at the cluster '
            f"scope: {reason}")
    assert c.refused("node1", "GET", f"{SLICES}?fieldSelector=spec.nodeName%3Dnode-0"
                     ).endswith(reason)
    status, listed = c.call("node1", "GET", f"{SLICES}?fieldSelector=spec.nodeName%3Dnode-1")
    assert status == 200
    assert sorted(s["metadata"]["name"] for s in listed["items"]) == ["n1-a", "n1-b"]
    # the kubelet's wipe: DeleteCollection of its own slices
    assert c.call("node1", "DELETE", f"{SLICES}?fieldSelector=spec.nodeName%3Dnode-1")[0] == 200
    _, left = c.call("admin", "GET", SLICES)
    names = {s["metadata"]["name"] for s in left["items"]}
    assert "n1-a" not in names and "n1-b" not in names and "n0-keep" in names


def test_claims_of_the_nodes_pods(cluster: Cluster) -> None:
    c = cluster
    assert c.call("admin", "POST", f"{V1}/deviceclasses",
                  {"metadata": {"name": "gpu"}, "spec": {}})[0] == 201
    claim = {"metadata": {"name": "shared"}, "spec": {"devices": {"requests": [
        {"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}
    assert c.call("admin", "POST", CLAIMS, claim)[0] == 201
    pod = {"metadata": {"name": "uses-shared"},
           "spec": {"nodeName": "node-0",
                    "containers": [{"name": "c", "image": "i",
                                    "resources": {"claims": [{"name": "gpu"}]}}],
                    "resourceClaims": [{"name": "gpu", "resourceClaimName": "shared"}]}}
    status, stored = c.call("admin", "POST", PODS, pod)
    assert status == 201, stored
    assert stored["spec"]["resourceClaims"] == [{"name": "gpu", "resourceClaimName": "shared"}]
    c.wait("the claim reachable from node-0", lambda: c.call(
        "node0", "GET", f"{CLAIMS}/shared")[0] == 200)
    assert c.refused("node1", "GET", f"{CLAIMS}/shared") == (
        'resourceclaims.resource.k8s.io "shared" is forbidden: User "system:node:node-1" '
        'cannot get resource "resourceclaims" in API group "resource.k8s.io" in the '
        f"namespace \"default\": {NO_EDGE.format('node-1')}")
    assert c.refused("node0", "GET", CLAIMS).endswith(
        "can only get individual resources of this type")


@pytest.fixture(scope="module")
def kubectl_bin() -> Path:
    try:
        return ensure_kubectl("1.30")
    except KubectlUnavailable as err:
        pytest.skip(str(err))


def _can_i(cluster: Cluster, binary: Path, who: str, *args: str) -> str:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cluster.kubeconfigs[who].parent),
           "KUBECONFIG": str(cluster.kubeconfigs[who])}
    return Kubectl(binary, env).run("auth", "can-i", *args, check=False).stdout.strip()


def test_kubectl_auth_can_i(cluster: Cluster, kubectl_bin: Path) -> None:
    c, k = cluster, kubectl_bin
    assert c.call("node0", "POST", SLICES, _slice("n0-can", nodeName="node-0"))[0] == 201
    c.wait("n0-can in the graph", lambda: c.call("node0", "GET", f"{SLICES}/n0-can")[0] == 200)
    assert _can_i(c, k, "node0", "create", "resourceslices.resource.k8s.io") == "yes"
    assert _can_i(c, k, "node0", "delete", "resourceslices.resource.k8s.io/n0-can") == "yes"
    # kubectl prints the Node authorizer's reason after a "no"
    assert _can_i(c, k, "node1", "delete", "resourceslices.resource.k8s.io/n0-can") == (
        "no - " + NO_EDGE.format("node-1"))
    # kubectl 1.30 sends no field selector: listing every slice is not a node's
    assert _can_i(c, k, "node0", "list", "resourceslices.resource.k8s.io") == (
        "no - can only list/watch/deletecollection resourceslices with nodeName field selector")
    assert _can_i(c, k, "scheduler", "list", "deviceclasses.resource.k8s.io") == "yes"
    assert _can_i(c, k, "scheduler", "update", "resourceclaims.resource.k8s.io",
                  "--subresource=status", "-n", "default") == "yes"
    assert _can_i(c, k, "scheduler", "create", "resourceslices.resource.k8s.io") == "no"
    controller = "system:serviceaccount:kube-system:resource-claim-controller"
    assert _can_i(c, k, "admin", "create", "resourceclaims.resource.k8s.io", "-n", "default",
                  "--as", controller) == "yes"
    assert _can_i(c, k, "admin", "create", "resourceslices.resource.k8s.io",
                  "--as", controller) == "no"

"""``kubectl cluster-info`` works: the API server keeps the ``kubernetes`` Service in
``default`` pointing at itself, as kube-apiserver does; Services are served read-only."""

from __future__ import annotations

import re

import yaml

from tests.e2e.conftest import Kubectl


def test_cluster_info_and_the_kubernetes_service(kubectl: Kubectl) -> None:
    server = yaml.safe_load(kubectl.run("config", "view", "--minify", "-o", "yaml").stdout)[
        "clusters"][0]["cluster"]["server"]
    info = kubectl.run("cluster-info")
    plain = re.sub(r"\x1b\[[0-9;]*m", "", info.stdout)  # cluster-info colours its output
    assert plain.splitlines()[0] == f"Kubernetes control plane is running at {server}"
    assert info.stderr == ""

    svc = kubectl.json("get", "service", "kubernetes", "-n", "default")
    assert svc["spec"]["ports"] == [{"name": "https", "protocol": "TCP", "port": 443,
                                     "targetPort": int(server.rpartition(":")[2])}]
    assert svc["spec"]["clusterIP"] == "10.0.0.1" and svc["spec"]["type"] == "ClusterIP"
    assert svc["metadata"]["labels"] == {"component": "apiserver", "provider": "kubernetes"}
    table = kubectl.run("get", "svc", "-n", "default").stdout.splitlines()
    assert table[0].split() == ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"]
    assert table[1].split()[:5] == ["kubernetes", "ClusterIP", "10.0.0.1", "<none>", "443/TCP"]

    created = kubectl.run("create", "service", "clusterip", "web", "--tcp=80:8080",
                          check=False)
    assert created.returncode != 0
    assert "the server does not allow this method on the requested resource" in created.stderr
    deleted = kubectl.run("delete", "service", "kubernetes", "-n", "default", check=False)
    assert deleted.returncode != 0
    assert "the server does not allow this method on the requested resource" in deleted.stderr
    assert kubectl.json("get", "service", "kubernetes", "-n", "default")["metadata"][
        "uid"] == svc["metadata"]["uid"]

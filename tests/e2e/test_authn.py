"""HTTPS and authentication of a real ``kubedra apiserver``: kubectl 1.30 and the official
client verify the server with the CA of the written kubeconfig (no insecure-skip-tls-verify)
and authenticate with its client certificate; a request without credentials gets 401; a
ServiceAccount token made with ``kubectl create token`` authenticates kubectl as the
ServiceAccount (RBAC then grants it what a RoleBinding says) until the ServiceAccount is
deleted."""

from __future__ import annotations

import base64
import http.client
import json
import ssl
import time
from pathlib import Path
from typing import Any

import yaml

from tests.e2e.conftest import Kubectl, Server, apiserver_process

UNAUTHORIZED = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": "Unauthorized", "reason": "Unauthorized", "code": 401}


def _raw_get(server: str, path: str, ctx: ssl.SSLContext | None) -> tuple[int, Any]:
    host, port = server.split("//")[1].rsplit(":", 1)
    conn = (http.client.HTTPSConnection(host, int(port), context=ctx, timeout=10) if ctx
            else http.client.HTTPConnection(host, int(port), timeout=10))
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        body = resp.read()
        return resp.status, json.loads(body) if body.startswith(b"{") else body
    finally:
        conn.close()


def test_written_kubeconfig_verifies_tls_and_carries_a_certificate(apiserver: Server) -> None:
    from kubernetes import client, config

    doc = yaml.safe_load(apiserver.kubeconfig.read_text())
    cluster, user = doc["clusters"][0]["cluster"], doc["users"][0]["user"]
    assert cluster["server"].startswith("https://127.0.0.1:")
    assert "insecure-skip-tls-verify" not in cluster and "token" not in user
    ca_pem = base64.b64decode(cluster["certificate-authority-data"])
    assert ca_pem == (apiserver.data_dir / "pki" / "ca.crt").read_bytes()
    assert user["client-certificate-data"] and user["client-key-data"]
    for key in ("ca.key", "apiserver.key", "sa.key"):
        assert (apiserver.data_dir / "pki" / key).stat().st_mode & 0o777 == 0o600

    api = config.new_client_from_config(config_file=str(apiserver.kubeconfig))
    try:
        assert api.configuration.verify_ssl
        names = [n.metadata.name for n in client.CoreV1Api(api).list_namespace().items]
        assert "default" in names
    finally:
        api.close()

    ctx = ssl.create_default_context(cadata=ca_pem.decode())  # verified, no credentials
    assert _raw_get(cluster["server"], "/api/v1/namespaces", ctx) == (401, UNAUTHORIZED)
    # the probes too, without anonymous access (upstream's 401)
    assert _raw_get(cluster["server"], "/readyz", ctx) == (401, UNAUTHORIZED)


def test_kubectl_with_a_service_account_token(kubectl: Kubectl, apiserver: Server,
                                              tmp_path: Path) -> None:
    kubectl.run("create", "serviceaccount", "e2e-robot")
    assert kubectl.json("get", "serviceaccount", "e2e-robot")["kind"] == "ServiceAccount"
    assert kubectl.run("get", "sa", "e2e-robot").stdout.split()[:4] == [
        "NAME", "SECRETS", "AGE", "e2e-robot"]
    token = kubectl.run("create", "token", "e2e-robot", "--duration", "20m").stdout.strip()
    doc = yaml.safe_load(apiserver.kubeconfig.read_text())
    doc["users"][0]["user"] = {"token": token}
    robot = tmp_path / "robot.kubeconfig"
    robot.write_text(yaml.safe_dump(doc))
    as_robot = Kubectl(kubectl.binary, {**kubectl.env, "KUBECONFIG": str(robot)})
    denied = as_robot.run("get", "serviceaccounts", check=False)
    assert denied.returncode != 0 and ('User "system:serviceaccount:default:e2e-robot" cannot '
                                       'list resource "serviceaccounts"') in denied.stderr
    kubectl.run("create", "role", "e2e-sa-reader", "--verb=get,list",
                "--resource=serviceaccounts")
    kubectl.run("create", "rolebinding", "e2e-robot", "--role=e2e-sa-reader",
                "--serviceaccount=default:e2e-robot")
    deadline = time.monotonic() + 10  # the RBAC index follows the store
    while (seen := as_robot.run("get", "serviceaccounts", check=False)).returncode:
        assert time.monotonic() < deadline, seen.stderr
        time.sleep(0.1)
    assert "e2e-robot" in seen.stdout
    kubectl.run("delete", "serviceaccount", "e2e-robot")
    denied = as_robot.run("get", "serviceaccounts", check=False)
    assert denied.returncode != 0 and "Unauthorized" in denied.stderr
    too_short = kubectl.run("create", "serviceaccount", "e2e-short", check=False)
    assert too_short.returncode == 0
    short = kubectl.run("create", "token", "e2e-short", "--duration", "5m", check=False)
    assert short.returncode != 0
    assert "may not specify a duration less than 10 minutes" in short.stderr


def test_no_tls_serves_plain_http_with_a_warning_and_a_token(tmp_path: Path) -> None:
    """Plain HTTP only when asked for; the kubeconfig then carries an admin token."""
    with apiserver_process(tmp_path, "--no-tls") as kubeconfig:
        doc = yaml.safe_load(kubeconfig.read_text())
        server = doc["clusters"][0]["cluster"]["server"]
        assert server.startswith("http://") and doc["users"][0]["user"]["token"]
        assert _raw_get(server, "/api/v1/namespaces", None) == (401, UNAUTHORIZED)
    assert "--no-tls" in (tmp_path / "log").read_text()

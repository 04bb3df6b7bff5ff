"""Impersonation, ``kubectl auth whoami`` and the health endpoints end to end: a real
``kubedra apiserver`` (``Node,RBAC``, no anonymous access, an audit log) and kubectl 1.30 as
the administrator the server's kubeconfig names (a client certificate in
``system:masters``, as ``kubedra up``'s), and as token users without rights (alice) or with
the right to impersonate one user (bob)."""

from __future__ import annotations

import json
import os
import ssl
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubedra.cli.kubectl import KubectlUnavailable, ensure_kubectl
from kubedra.client import kubeconfig as kubeconfig_file
from tests.e2e.conftest import Kubectl, apiserver_process

TOKENS = {"alice": ("alice", ""), "bob": ("bob", "")}


@dataclass
class Cluster:
    server: str
    ca: str
    audit_log: Path
    admin: Kubectl
    users: dict[str, Kubectl]

    def get(self, path: str, token: str = "") -> tuple[int, str]:
        """A GET with the cluster CA and, if given, a bearer token (else no credentials)."""
        request = urllib.request.Request(self.server + path)
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(request, timeout=10, context=ssl.create_default_context(
                    cafile=self.ca)) as resp:
                return resp.status, resp.read().decode()
        except urllib.error.HTTPError as err:
            return err.code, err.read().decode()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    try:
        binary = ensure_kubectl("1.30")
    except KubectlUnavailable as err:
        pytest.skip(str(err))
    data = tmp_path_factory.mktemp("impersonation")
    tokens = data / "tokens.csv"
    tokens.write_text("".join(f'tok-{who},{user},uid-{who},"{groups}"\n'
                              for who, (user, groups) in TOKENS.items()))
    audit_log = data / "audit.log"
    with apiserver_process(data, "--token-auth-file", str(tokens),
                           "--audit-log-path", str(audit_log)) as admin_config:
        config = kubeconfig_file.load(admin_config)
        assert config.ca_data is not None
        ca = data / "ca.crt"
        ca.write_bytes(config.ca_data)

        def kubectl(config_path: Path) -> Kubectl:
            home = data / f"home-{config_path.stem}"
            home.mkdir()
            return Kubectl(binary, {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                                    "HOME": str(home), "KUBECONFIG": str(config_path),
                                    "KUBECACHEDIR": str(home / "cache")})

        users = {}
        for who in TOKENS:
            doc = yaml.safe_load(admin_config.read_text())
            doc["users"][0]["user"] = {"token": f"tok-{who}"}
            path = data / f"{who}.kubeconfig"
            path.write_text(yaml.safe_dump(doc))
            users[who] = kubectl(path)
        yield Cluster(config.server, str(ca), audit_log, kubectl(admin_config), users)


def _forbidden(kubectl: Kubectl, *args: str) -> str:
    proc = kubectl.run(*args, check=False)
    assert proc.returncode == 1, proc.stdout
    return proc.stderr.strip()


def test_can_i_answers_for_the_impersonated_user(cluster: Cluster) -> None:
    admin = cluster.admin
    assert admin.run("auth", "can-i", "delete", "nodes").stdout.strip() == "yes"
    proc = admin.run("auth", "can-i", "delete", "nodes", "--as=nobody", check=False)
    assert (proc.returncode, proc.stdout.strip()) == (1, "no")
    assert admin.run("auth", "can-i", "delete", "nodes", "--as=nobody",
                     "--as-group=system:masters").stdout.strip() == "yes"


def test_requests_run_as_the_impersonated_user(cluster: Cluster) -> None:
    assert _forbidden(cluster.admin, "get", "pods", "--as=jane") == (
        'Error from server (Forbidden): pods is forbidden: User "jane" cannot list resource '
        '"pods" in API group "" in the namespace "default"')
    assert _forbidden(cluster.admin, "get", "nodes",
                      "--as=system:serviceaccount:default:robot") == (
        'Error from server (Forbidden): nodes is forbidden: User '
        '"system:serviceaccount:default:robot" cannot list resource "nodes" in API group "" at '
        'the cluster scope')


PODS = "/api/v1/namespaces/default/pods"


def test_impersonating_needs_the_impersonate_verb(cluster: Cluster) -> None:
    """Every request is refused, discovery's too: ``kubectl get pods`` then says only
    ``Forbidden: unknown`` (as against kube-apiserver); ``--raw`` shows the server's text."""
    alice = cluster.users["alice"]
    assert _forbidden(alice, "get", "pods", "--as=jane").endswith(
        "Error from server (Forbidden): unknown")
    assert _forbidden(alice, "get", "--raw", PODS, "--as=jane") == (
        'Error from server (Forbidden): users "jane" is forbidden: User "alice" cannot '
        'impersonate resource "users" in API group "" at the cluster scope')
    assert _forbidden(alice, "get", "--raw", PODS,
                      "--as=system:serviceaccount:kube-system:robot") == (
        'Error from server (Forbidden): serviceaccounts "robot" is forbidden: User "alice" '
        'cannot impersonate resource "serviceaccounts" in API group "" in the namespace '
        '"kube-system"')


def test_rbac_grants_impersonating_one_user(cluster: Cluster) -> None:
    admin, bob = cluster.admin, cluster.users["bob"]
    admin.run("create", "clusterrole", "impersonate-jane", "--verb=impersonate",
              "--resource=users", "--resource-name=jane")
    admin.run("create", "clusterrolebinding", "bob-impersonates-jane",
              "--clusterrole=impersonate-jane", "--user=bob")
    jane_text = ('Error from server (Forbidden): pods is forbidden: User "jane" cannot list '
                 'resource "pods" in API group "" in the namespace "default"')
    deadline = time.monotonic() + 30
    while (text := _forbidden(bob, "get", "pods", "--as=jane")) != jane_text:
        assert time.monotonic() < deadline, text  # the RBAC view follows the store
        time.sleep(0.2)
    assert _forbidden(bob, "get", "--raw", PODS, "--as=joe") == (
        'Error from server (Forbidden): users "joe" is forbidden: User "bob" cannot '
        'impersonate resource "users" in API group "" at the cluster scope')
    assert _forbidden(bob, "get", "--raw", PODS, "--as=jane",
                      "--as-group=system:masters") == (
        'Error from server (Forbidden): groups "system:masters" is forbidden: User "bob" '
        'cannot impersonate resource "groups" in API group "" at the cluster scope')
    assert _whoami(bob, "--as=jane") == {"Username": "jane", "Groups": "[system:authenticated]"}


def _whoami(kubectl: Kubectl, *args: str) -> dict[str, str]:
    lines = kubectl.run("auth", "whoami", *args).stdout.splitlines()
    assert lines[0].split() == ["ATTRIBUTE", "VALUE"]
    return dict(line.split(None, 1) if not line.startswith("Extra: ") else
                ("Extra: " + line.split()[1], line.split(None, 2)[2]) for line in lines[1:])


def test_whoami(cluster: Cluster) -> None:
    assert _whoami(cluster.admin) == {
        "Username": "kubernetes-admin", "Groups": "[system:masters system:authenticated]"}
    assert _whoami(cluster.users["alice"]) == {
        "Username": "alice", "UID": "uid-alice", "Groups": "[system:authenticated]"}
    assert _whoami(cluster.admin, "--as=jane", "--as-group=devs", "--as-uid=u-1") == {
        "Username": "jane", "UID": "u-1", "Groups": "[devs system:authenticated]"}
    review = json.loads(cluster.admin.run("auth", "whoami", "-o", "json",
                                          "--as=jane").stdout)
    assert review["apiVersion"] == "authentication.k8s.io/v1"
    assert review["status"] == {"userInfo": {"username": "jane",
                                             "groups": ["system:authenticated"]}}
    resources = cluster.admin.run("api-resources", "--api-group=authentication.k8s.io",
                                  "-o", "wide").stdout.splitlines()
    assert resources[1].split() == ["selfsubjectreviews", "authentication.k8s.io/v1", "false",
                                    "SelfSubjectReview", "create"]


def test_the_audit_log_records_the_impersonated_user(cluster: Cluster) -> None:
    _forbidden(cluster.admin, "get", "pods", "--as=audited", "--as-group=auditors")
    deadline = time.monotonic() + 30
    while True:
        events = [json.loads(line) for line in cluster.audit_log.read_text().splitlines()]
        found = [e for e in events if e.get("impersonatedUser", {}).get("username") == "audited"]
        if found:
            break
        assert time.monotonic() < deadline, "no audit event for the impersonated request"
        time.sleep(0.2)
    event = found[-1]
    assert event["user"] == {"username": "kubernetes-admin",
                             "groups": ["system:masters", "system:authenticated"]}
    assert event["impersonatedUser"] == {"username": "audited",
                                         "groups": ["auditors", "system:authenticated"]}
    assert event["objectRef"]["resource"] == "pods" and event["responseStatus"]["code"] == 403


def test_health_endpoints_need_credentials_without_anonymous_access(cluster: Cluster) -> None:
    unauthorized: dict[str, Any] = {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "Unauthorized", "reason": "Unauthorized", "code": 401}
    for path in ("/healthz", "/livez", "/readyz", "/readyz?verbose", "/livez/etcd"):
        status, body = cluster.get(path)
        assert (status, json.loads(body)) == (401, unauthorized)
    assert cluster.get("/readyz", "tok-alice") == (200, "ok")
    assert cluster.get("/readyz?verbose", "tok-alice") == (
        200, "[+]ping ok\n[+]log ok\n[+]etcd ok\nreadyz check passed\n")
    raw = cluster.admin.run("get", "--raw", "/livez?verbose").stdout
    assert raw == "[+]ping ok\n[+]log ok\n[+]etcd ok\nlivez check passed\n"
    assert cluster.admin.run("get", "--raw", "/readyz/etcd").stdout == "ok"

"""Impersonation as kube-apiserver v1.30's filter: the headers parsed (groups, extras or a uid
without a user, percent-encoded extra keys, ServiceAccount names), each part authorized with
the ``impersonate`` verb, the user the request then acts as; over HTTP with RBAC, the audit
log and SelfSubjectReview."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from multidict import CIMultiDict, CIMultiDictProxy

from kubedra.apiserver import errors
from kubedra.apiserver.audit import AuditLogConfig
from kubedra.apiserver.auth import ADMIN, User
from kubedra.apiserver.authn import AuthnOptions
from kubedra.apiserver.authz.attributes import Attributes, forbidden
from kubedra.apiserver.impersonation import Part, acting_as, parts
from tests.unit.apiserver.conftest import Env, MakeEnv

DEV = User("dev", ("wheel", "system:authenticated"))
RBAC = "/apis/rbac.authorization.k8s.io/v1"
PODS = "/api/v1/namespaces/default/pods"


def _headers(*pairs: tuple[str, str]) -> CIMultiDictProxy[str]:
    return CIMultiDictProxy(CIMultiDict(pairs))


def _allow_all(asked: list[Attributes]) -> Any:
    return asked.append


def _bad_request(*pairs: tuple[str, str]) -> str:
    with pytest.raises(errors.ApiError) as caught:
        parts(_headers(*pairs))
    assert caught.value.code == 400 and caught.value.status["reason"] == "BadRequest"
    return str(caught.value.status["message"])


def test_groups_extras_or_uid_without_a_user_are_refused() -> None:
    assert _bad_request(("Impersonate-Group", "some-group")) == (
        "requested [{Group  some-group    }] without impersonating a user")
    assert _bad_request(("Impersonate-Extra-Scopes", "scope-a")) == (
        "requested [{UserExtra  scope-a  authentication.k8s.io/v1  scopes}] without "
        "impersonating a user")
    assert _bad_request(("Impersonate-Uid", "some-uid"), ("Impersonate-Group", "g")) == (
        "requested [{Group  g    } {UID  some-uid  authentication.k8s.io/v1  }] without "
        "impersonating a user")
    assert _bad_request(("Impersonate-User", ""), ("Impersonate-Group", "g")).startswith(
        "requested [{Group  g    }]")  # an empty user is no user


def test_parts_in_upstream_order_with_service_accounts_and_extra_keys() -> None:
    got = parts(_headers(
        ("impersonate-uid", "u-9"), ("Impersonate-Extra-Example.com%2Fescaped%e1%9b%84scopes", "a"),
        ("Impersonate-Group", "g1"), ("Impersonate-User", "system:serviceaccount:ns1:robot"),
        ("Impersonate-Group", "g2"), ("IMPERSONATE-EXTRA-example.com%2fescaped%E1%9B%84scopes",
                                      "b"),
        ("Impersonate-Extra-almost%zzpercent%2Fencoded", "c")))
    assert got == [
        Part("ServiceAccount", "robot", "ns1"), Part("Group", "g1"), Part("Group", "g2"),
        Part("UserExtra", "a", key="example.com/escapedᛄscopes"),
        Part("UserExtra", "b", key="example.com/escapedᛄscopes"),
        Part("UserExtra", "c", key="almost%zzpercent%2fencoded"),  # malformed: kept, lowercased
        Part("UID", "u-9")]
    for name in ("system:serviceaccount:ns1", "system:serviceaccount:a:b:c",
                 "system:serviceaccount:NS:x", "system:serviceaccount::x",
                 "system:serviceaccount:a.b:x"):
        assert parts(_headers(("Impersonate-User", name))) == [Part("User", name)]
    assert parts(_headers(("Impersonate-User", "system:serviceaccount:a:b.c"))) == [
        Part("ServiceAccount", "b.c", "a")]


def test_what_the_authorizer_is_asked() -> None:
    asked: list[Attributes] = []
    acting_as(DEV, _headers(("Impersonate-User", "system:serviceaccount:ns1:robot"),
                            ("Impersonate-Extra-Scopes", "s"), ("Impersonate-Uid", "u")),
              _allow_all(asked))
    assert [(a.user, a.verb, a.api_group, a.combined_resource, a.namespace, a.name)
            for a in asked] == [
        (DEV, "impersonate", "", "serviceaccounts", "ns1", "robot"),
        (DEV, "impersonate", "authentication.k8s.io", "userextras/scopes", "", "s"),
        (DEV, "impersonate", "authentication.k8s.io", "uids", "", "u")]
    assert all(a.resource_request for a in asked)


def test_the_user_acted_as() -> None:
    def act(*pairs: tuple[str, str]) -> User | None:
        return acting_as(DEV, _headers(*pairs), _allow_all([]))

    assert act() is None
    assert act(("Impersonate-Future", "x"), ("Accept", "*/*")) is None
    assert act(("Impersonate-User", "jane")) == User("jane", ("system:authenticated",))
    assert act(("Impersonate-User", "jane"), ("Impersonate-Group", "devs"),
               ("Impersonate-Uid", "u-1"), ("Impersonate-Extra-Scopes", "a"),
               ("Impersonate-Extra-scopes", "b")) == User(
        "jane", ("devs", "system:authenticated"), "u-1", {"scopes": ("a", "b")})
    assert act(("Impersonate-User", "jane"), ("Impersonate-Group", "system:authenticated"),
               ("Impersonate-Group", "x")) == User("jane", ("system:authenticated", "x"))
    assert act(("Impersonate-User", "unknown"),
               ("Impersonate-Group", "system:unauthenticated")) == User(
        "unknown", ("system:unauthenticated",))
    assert act(("Impersonate-User", "system:anonymous")) == User(
        "system:anonymous", ("system:unauthenticated",))
    assert act(("Impersonate-User", "system:serviceaccount:ns1:robot")) == User(
        "system:serviceaccount:ns1:robot",
        ("system:serviceaccounts", "system:serviceaccounts:ns1", "system:authenticated"))
    # groups given are the authority: the ServiceAccount's own groups are not added
    assert act(("Impersonate-User", "system:serviceaccount:ns1:robot"),
               ("Impersonate-Group", "g")) == User(
        "system:serviceaccount:ns1:robot", ("g", "system:authenticated"))


def test_the_first_refused_part_is_the_answer() -> None:
    asked: list[Attributes] = []

    def deny_groups(a: Attributes) -> None:
        asked.append(a)
        if a.resource == "groups":
            raise forbidden(a)

    with pytest.raises(errors.ApiError) as caught:
        acting_as(DEV, _headers(("Impersonate-User", "jane"), ("Impersonate-Group", "g"),
                                ("Impersonate-Uid", "u")), deny_groups)
    assert caught.value.code == 403 and [a.resource for a in asked] == ["users", "groups"]


# --- over HTTP, under RBAC ------------------------------------------------------------------


async def _rbac_env(make_env: MakeEnv, **options: Any) -> Env:
    return await make_env(authn=AuthnOptions(tokens={
        "admin": ADMIN, "alice": User("alice", ("system:authenticated",)),
        "bob": User("bob", ("system:authenticated",))}), **options)


def _as(user: str, *more: tuple[str, str]) -> tuple[tuple[str, str], ...]:
    return (("Impersonate-User", user), *more)


async def _grant_bob_jane(env: Env) -> None:
    """bob may impersonate the user jane, and nobody else."""
    role = {"metadata": {"name": "impersonate-jane"},
            "rules": [{"verbs": ["impersonate"], "apiGroups": [""], "resources": ["users"],
                       "resourceNames": ["jane"]}]}
    binding = {"metadata": {"name": "bob-jane"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                           "name": "impersonate-jane"},
               "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                             "name": "bob"}]}
    assert (await env.call("POST", f"{RBAC}/clusterroles", role, token="admin"))[0] == 201
    assert (await env.call("POST", f"{RBAC}/clusterrolebindings", binding,
                           token="admin"))[0] == 201
    for _ in range(200):  # the RBAC view follows the store
        if (await env.call("GET", "/version", token="bob", headers=_as("jane")))[0] == 200:
            return
        await asyncio.sleep(0.02)
    raise AssertionError("bob never became allowed to impersonate jane")


async def test_impersonation_over_http(make_env: MakeEnv, tmp_path: Path) -> None:
    log = tmp_path / "audit.log"
    env = await _rbac_env(make_env, audit_log=AuditLogConfig(str(log)))
    # the administrator (system:masters) may; the request then runs as jane, who may not
    status, err = await env.call("GET", PODS, token="admin", headers=_as("jane"))
    assert status == 403 and err["message"] == (
        'pods is forbidden: User "jane" cannot list resource "pods" in API group "" in the '
        'namespace "default"')
    # a user without the impersonate verb gets upstream's 403 for the part refused
    status, err = await env.call("GET", PODS, token="alice", headers=_as("nobody"))
    assert status == 403 and err["reason"] == "Forbidden" and err["message"] == (
        'users "nobody" is forbidden: User "alice" cannot impersonate resource "users" in API '
        'group "" at the cluster scope')
    assert err["details"] == {"name": "nobody", "kind": "users"}
    status, err = await env.call("GET", PODS, token="alice",
                                 headers=_as("system:serviceaccount:default:robot"))
    assert status == 403 and err["message"] == (
        'serviceaccounts "robot" is forbidden: User "alice" cannot impersonate resource '
        '"serviceaccounts" in API group "" in the namespace "default"')
    status, err = await env.call("GET", PODS, token="admin",
                                 headers=(("Impersonate-Group", "system:masters"),))
    assert status == 400 and err["message"] == (
        "requested [{Group  system:masters    }] without impersonating a user")

    await _grant_bob_jane(env)
    assert (await env.call("GET", "/version", token="bob", headers=_as("joe")))[0] == 403
    status, err = await env.call("GET", "/version", token="bob",
                                 headers=_as("jane", ("Impersonate-Group", "system:masters")))
    assert status == 403 and err["message"] == (
        'groups "system:masters" is forbidden: User "bob" cannot impersonate resource "groups" '
        'in API group "" at the cluster scope')
    status, err = await env.call("GET", "/version", token="bob",
                                 headers=_as("jane", ("Impersonate-Extra-Scopes", "s")))
    assert status == 403 and err["message"] == (
        'userextras.authentication.k8s.io "s" is forbidden: User "bob" cannot impersonate '
        'resource "userextras/scopes" in API group "authentication.k8s.io" at the cluster scope')

    # whoami: the user the request acts as
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    path = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
    status, got = await env.call("POST", path, review, token="bob", headers=_as("jane"))
    assert status == 201 and got["status"] == {
        "userInfo": {"username": "jane", "groups": ["system:authenticated"]}}
    assert got["kind"] == "SelfSubjectReview" and "creationTimestamp" in got["metadata"]
    status, got = await env.call("POST", path, review, token="admin", headers=_as(
        "joe", ("Impersonate-Uid", "u-7"), ("Impersonate-Extra-Example.com%2Fteam", "t1"),
        ("Impersonate-Group", "devs")))
    assert status == 201 and got["status"]["userInfo"] == {
        "username": "joe", "uid": "u-7", "groups": ["devs", "system:authenticated"],
        "extra": {"example.com/team": ["t1"]}}

    events = [json.loads(line) for line in await _audit_lines(log)]
    impersonated = [e for e in events if "impersonatedUser" in e]
    assert impersonated and all(e["user"]["username"] in ("admin", "bob") for e in impersonated)
    jane_pods = next(e for e in impersonated if e["requestURI"] == PODS)
    assert jane_pods["user"] == {"username": "admin",
                                 "groups": ["system:masters", "system:authenticated"]}
    assert jane_pods["impersonatedUser"] == {"username": "jane",
                                             "groups": ["system:authenticated"]}
    assert jane_pods["responseStatus"]["code"] == 403
    refused = next(e for e in events if e["user"]["username"] == "alice")
    assert "impersonatedUser" not in refused


async def _audit_lines(log: Path) -> list[bytes]:
    """Every line, once the writer thread has caught up with the requests made."""
    for _ in range(250):
        if log.exists():
            lines = log.read_bytes().splitlines()
            if any(b"example.com/team" in line for line in lines):
                return lines
        await asyncio.sleep(0.02)
    raise AssertionError("the audit log never showed the last request")

"""Authentication: the bearer header as upstream parses it, the token file, client
certificates over TLS, ServiceAccount tokens and TokenRequest, anonymous requests."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import ssl
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from kubedra.apiserver import pki
from kubedra.apiserver.app import ApiServer, Options
from kubedra.apiserver.auth import ADMIN, User
from kubedra.apiserver.authn import AuthnOptions
from kubedra.apiserver.authn.bearer import SPACE_BEFORE_TOKEN, bearer_token
from kubedra.apiserver.authn.serviceaccount import Subject, TokenKeys, service_account_user
from kubedra.apiserver.authn.tokenfile import AuthFileError, parse_token_file
from kubedra.apiserver.authn.x509 import certificate_user
from kubedra.storage.sqlite import SQLiteStore
from tests.unit.apiserver.conftest import Env, MakeEnv

UNAUTHORIZED = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": "Unauthorized", "reason": "Unauthorized", "code": 401}
SAS = "/api/v1/namespaces/default/serviceaccounts"
ALICE = User("alice", ("devs",), "u-1")
#: Authentication tests need no authorization; those with RBAC read the user from the 403.
ALLOW = ("AlwaysAllow",)


async def whoami(env: Env, token: str) -> str | None:
    """The user a token authenticates (None: 401), as RBAC's 403 for it names it."""
    status, err = await env.call("GET", "/api/v1/nodes", token=token)
    if status == 401:
        return None
    assert status == 403, err
    return str(err["message"]).split('User "')[1].split('"')[0]


@pytest.mark.parametrize(("header", "token", "warning"), [
    ("Bearer abc", "abc", None),
    ("bearer abc", "abc", None),
    ("  Bearer abc \t", "abc", None),
    ("Bearer  abc", None, SPACE_BEFORE_TOKEN),  # a space before the token: no token
    ("Bearer abc extra", "abc", None),  # upstream splits into at most 3, takes the second
    ("Bearer", None, None),
    ("Bearer ", None, None),
    ("Basic abc", None, None),
    ("", None, None),
])
def test_bearer_header(header: str, token: str | None, warning: str | None) -> None:
    assert bearer_token(header) == (token, warning)


def test_token_file() -> None:
    users = parse_token_file('# comment\nt1,system:node:n0,u1,"system:nodes"\n\nt2,alice,u2\n')
    assert users["t1"] == User("system:node:n0", ("system:nodes",), "u1")
    assert users["t2"] == User("alice", (), "u2")
    with pytest.raises(AuthFileError, match="at least 3 columns"):
        parse_token_file("onlytoken\n")
    with pytest.raises(AuthFileError, match="duplicate token"):
        parse_token_file("t,a,1\nt,b,2\n")


async def _raw(env: Env, header: bytes) -> tuple[int, Any]:
    """A request written byte by byte (clients refuse to send non-ASCII headers)."""
    reader, writer = await asyncio.open_connection(*env.server.address.split(":"))
    writer.write(b"GET /api/v1/namespaces HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                 + header + b"\r\n\r\n")
    data = await reader.read()
    writer.close()
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body) if body.startswith(b"{") else body


async def test_token_users_and_upstream_header_parsing(make_env: MakeEnv) -> None:
    env = await make_env(authn=AuthnOptions(tokens={"t": ALICE}), authorization_modes=ALLOW)
    assert await env.call("GET", "/api/v1/namespaces") == (401, UNAUTHORIZED)
    assert (await env.call("GET", "/api/v1/namespaces", token="t"))[0] == 200
    assert (await env.call("GET", "/api/v1/namespaces", token="wrong"))[0] == 401
    assert await _raw(env, b"Authorization: Bearer  t") == (401, UNAUTHORIZED)
    assert await _raw(env, b"Authorization: Bearer t\xff") == (401, UNAUTHORIZED)
    assert await _raw(env, "Authorization: Bearer tä".encode()) == (401, UNAUTHORIZED)
    assert await _raw(env, b"Authorization: Bearer \xc3\x28.x.y") == (401, UNAUTHORIZED)
    assert (await _raw(env, b"Authorization: bearer t"))[0] == 200
    for path in ("/healthz", "/livez", "/readyz"):  # no anonymous access: as upstream, 401
        assert await env.call("GET", path) == (401, UNAUTHORIZED)
        assert await env.call("GET", path, token="t") == (200, "ok")


async def test_anonymous_auth(make_env: MakeEnv) -> None:
    env = await make_env(authn=AuthnOptions(tokens={"t": ALICE}, anonymous=True),
                         authorization_modes=ALLOW)
    assert (await env.call("GET", "/api/v1/namespaces"))[0] == 200
    # credentials that fail are not turned into an anonymous request
    assert await env.call("GET", "/api/v1/namespaces", token="wrong") == (401, UNAUTHORIZED)


async def test_anonymous_probes_under_rbac(make_env: MakeEnv) -> None:
    """system:public-info-viewer grants the probes to system:unauthenticated, not the
    single checks under them."""
    env = await make_env(authn=AuthnOptions(anonymous=True))
    for path in ("/healthz", "/livez", "/readyz"):
        assert await env.call("GET", path) == (200, "ok")
    status, err = await env.call("GET", "/readyz/etcd")
    assert status == 403 and err["message"] == (
        'forbidden: User "system:anonymous" cannot get path "/readyz/etcd"')


# --- client certificates ------------------------------------------------------------------------


def test_certificate_user_reads_cn_and_o_within_validity() -> None:
    cert = {"subject": ((("organizationName", "system:nodes"),),
                        (("organizationName", "team"),), (("commonName", "system:node:n1"),)),
            "notBefore": "Jan  1 00:00:00 2026 GMT", "notAfter": "Jan  1 00:00:00 2027 GMT"}
    mid = dt.datetime(2026, 6, 1, tzinfo=dt.UTC).timestamp()
    known = certificate_user(cert, mid)
    assert known is not None and known[0] == User("system:node:n1", ("system:nodes", "team"))
    assert certificate_user(cert, dt.datetime(2027, 1, 2, tzinfo=dt.UTC).timestamp()) is None
    assert certificate_user(cert, dt.datetime(2025, 1, 2, tzinfo=dt.UTC).timestamp()) is None
    assert certificate_user({**cert, "subject": ((("organizationName", "x"),),)}, mid) is None
    assert certificate_user(None) is None


@pytest.fixture
async def tls_server(tmp_path: Path) -> Any:
    cluster = pki.ClusterPki(tmp_path / "pki")
    cluster.ensure_serving("127.0.0.1")
    store = await SQLiteStore.open(tmp_path / "db", compact_interval=0)
    server = ApiServer(store, Options(authn=AuthnOptions(), authorization_modes=ALLOW))
    port = await server.start("127.0.0.1", 0,
                              ssl_context=cluster.server_context(cluster.ca_cert))
    yield cluster, f"https://127.0.0.1:{port}"
    await server.stop()
    await store.close()


def _client_context(cluster: pki.ClusterPki, pair: pki.Pair | None, tmp: Path) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=str(cluster.ca_cert))
    if pair is not None:
        (tmp / "c.crt").write_bytes(pair.cert)
        (tmp / "c.key").write_bytes(pair.key)
        ctx.load_cert_chain(tmp / "c.crt", tmp / "c.key")
    return ctx


async def _get(url: str, ctx: ssl.SSLContext) -> int:
    async with aiohttp.ClientSession() as http, http.get(url, ssl=ctx) as resp:
        return resp.status


async def test_client_certificates(tls_server: Any, tmp_path: Path) -> None:
    cluster, url = tls_server
    namespaces = url + "/api/v1/namespaces"
    ca = cluster.authority()
    assert cluster.ca_key.stat().st_mode & 0o777 == 0o600
    assert cluster.serving_key.stat().st_mode & 0o777 == 0o600
    assert await _get(namespaces, _client_context(cluster, None, tmp_path)) == 401
    good = ca.issue("alice", ("devs",))
    assert await _get(namespaces, _client_context(cluster, good, tmp_path)) == 200
    # a certificate the cluster CA did not sign, or an expired one, fails the handshake
    # (Python's TLS cannot ask for a certificate without verifying it; see deviations)
    other = pki.Authority.create("other-ca").issue("alice", ("system:masters",))
    expired = ca.issue("alice", days=1,
                       not_before=dt.datetime.now(dt.UTC) - dt.timedelta(days=2))
    for bad in (other, expired):
        with pytest.raises(aiohttp.ClientError):
            await _get(namespaces, _client_context(cluster, bad, tmp_path))
    # the same CA directory gives the same CA on the next start
    assert pki.ClusterPki(cluster.directory).authority().pem == ca.pem


def test_serving_certificate_is_made_again_for_a_new_address(tmp_path: Path) -> None:
    cluster = pki.ClusterPki(tmp_path)
    cluster.ensure_serving("127.0.0.1")
    first = cluster.serving_cert.read_bytes()
    cluster.ensure_serving("127.0.0.1")
    assert cluster.serving_cert.read_bytes() == first
    cluster.ensure_serving("10.1.2.3")
    assert cluster.serving_cert.read_bytes() != first


# --- ServiceAccount tokens -------------------------------------------------------------------


async def _token(env: Env, name: str, body: dict[str, Any] | None = None) -> tuple[int, Any]:
    return await env.call("POST", f"{SAS}/{name}/token",
                          {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                           **(body or {"spec": {}})}, token="admin")


async def test_service_account_tokens(make_env: MakeEnv) -> None:
    keys = TokenKeys(pki.new_key())
    env = await make_env(authn=AuthnOptions(tokens={"admin": ADMIN}), service_account_keys=keys)
    status, sa = await env.call("POST", SAS, {"metadata": {"name": "robot"}}, token="admin")
    assert status == 201
    status, tr = await _token(env, "robot")
    assert status == 201 and tr["kind"] == "TokenRequest"
    assert tr["spec"]["audiences"] == [keys.issuer] and tr["spec"]["expirationSeconds"] == 3600
    created = dt.datetime.fromisoformat(tr["metadata"]["creationTimestamp"])
    expires = dt.datetime.fromisoformat(tr["status"]["expirationTimestamp"])
    assert (expires - created).total_seconds() == 3600
    token = tr["status"]["token"]
    assert await whoami(env, token) == "system:serviceaccount:default:robot"

    async def uid(resource: str, namespace: str, name: str) -> str | None:
        return str(sa["metadata"]["uid"]) if (resource, name) == ("serviceaccounts",
                                                                  "robot") else None

    user = await service_account_user(keys, token, uid)
    assert user is not None
    assert (user.name, user.groups, user.uid) == (
        "system:serviceaccount:default:robot",
        ("system:serviceaccounts", "system:serviceaccounts:default"), sa["metadata"]["uid"])

    subject = Subject("default", "robot", sa["metadata"]["uid"])
    expired, _ = keys.issue(subject, [keys.issuer], 600, now=0)
    other_signer, _ = TokenKeys(pki.new_key()).issue(subject, [keys.issuer], 600)
    other_audience, _ = keys.issue(subject, ["someone-else"], 600)
    for bad in (expired, other_signer, other_audience, token + "x", "a.b.c"):
        assert await whoami(env, bad) is None

    # the token ends with its ServiceAccount, and does not come back with a new one
    assert (await env.call("DELETE", f"{SAS}/robot", token="admin"))[0] == 200
    assert await whoami(env, token) is None
    assert (await env.call("POST", SAS, {"metadata": {"name": "robot"}}, token="admin"))[0] == 201
    assert await whoami(env, token) is None


async def test_pod_bound_token_ends_with_the_pod(make_env: MakeEnv) -> None:
    env = await make_env(authn=AuthnOptions(tokens={"admin": ADMIN}))
    await env.call("POST", SAS, {"metadata": {"name": "robot"}}, token="admin")
    pod = {"metadata": {"name": "p"}, "spec": {"serviceAccountName": "robot",
                                               "containers": [{"name": "c", "image": "x"}]}}
    status, stored = await env.call("POST", "/api/v1/namespaces/default/pods", pod,
                                    token="admin")
    assert status == 201
    ref = {"kind": "Pod", "apiVersion": "v1", "name": "p"}
    status, tr = await _token(env, "robot", {"spec": {"boundObjectRef": ref}})
    assert status == 201
    token = tr["status"]["token"]
    assert await whoami(env, token) == "system:serviceaccount:default:robot"
    status, err = await _token(env, "robot", {"spec": {"boundObjectRef": {**ref, "uid": "x"}}})
    assert status == 409 and "does not match the UID in record" in err["message"]
    await env.call("POST", SAS, {"metadata": {"name": "other"}}, token="admin")
    status, err = await _token(env, "other", {"spec": {"boundObjectRef": ref}})
    assert (status, err["message"]) == (400, 'cannot bind token for serviceaccount "other" to '
                                             "pod running with different serviceaccount name.")
    status, err = await _token(env, "robot", {"spec": {"boundObjectRef": {
        "kind": "ConfigMap", "apiVersion": "v1", "name": "p"}}})
    assert (status, err["message"]) == (400, "cannot bind token to object of type /v1, "
                                             "Kind=ConfigMap")
    assert (await env.call("DELETE", "/api/v1/namespaces/default/pods/p?gracePeriodSeconds=0",
                           token="admin"))[0] == 200
    assert stored["metadata"]["uid"]
    assert await whoami(env, token) is None


async def test_token_request_validation(make_env: MakeEnv) -> None:
    env = await make_env(authn=AuthnOptions(tokens={"admin": ADMIN}))
    await env.call("POST", SAS, {"metadata": {"name": "robot"}}, token="admin")
    status, err = await _token(env, "robot", {"spec": {"expirationSeconds": 599}})
    assert (status, err["message"]) == (422, (
        'TokenRequest.authentication.k8s.io "robot" is invalid: spec.expirationSeconds: '
        "Invalid value: 599: may not specify a duration less than 10 minutes"))
    status, err = await _token(env, "robot", {"spec": {"expirationSeconds": (1 << 32) + 1}})
    assert status == 422 and "larger than 2^32 seconds" in err["message"]
    status, err = await _token(env, "robot", {"metadata": {"name": "x"}, "spec": {}})
    assert status == 422 and err["details"]["causes"][0]["field"] == "metadata.name"
    status, err = await _token(env, "ghost")
    assert (status, err["message"]) == (404, 'serviceaccounts "ghost" not found')
    status, _ = await env.call("GET", f"{SAS}/robot/token", token="admin")
    assert status == 405
    status, tr = await _token(env, "robot", {"spec": {"audiences": ["a", "b"],
                                                     "expirationSeconds": 600}})
    assert status == 201 and tr["spec"]["audiences"] == ["a", "b"]

"""The audit log: audit.k8s.io/v1 Events of real requests to a server on 127.0.0.1, the
Audit-Id header, lumberjack-style rotation, and a log that cannot be written."""

from __future__ import annotations

import asyncio
import json
import re
import time
from pathlib import Path
from typing import Any

import pytest

from kubedra.apiserver.audit import AuditLogConfig, RotatingWriter
from kubedra.apiserver.auth import User
from kubedra.apiserver.authn import AuthnOptions
from tests.unit.apiserver.conftest import Env, MakeEnv

LEASES = "/apis/coordination.k8s.io/v1/namespaces/default/leases"
ALICE = User("alice", ("dev", "system:authenticated"), "u-1")
AUTH = {"Authorization": "Bearer alice-token", "User-Agent": "audit-test/1.0"}
# What alice may do is not the audit log's business (RBAC would refuse her writes).
ALLOW_ALL: dict[str, Any] = {"authorization_modes": ("AlwaysAllow",)}
MICRO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")


async def _send(env: Env, method: str, path: str, body: Any = None,
                headers: dict[str, str] | None = None) -> tuple[int, str]:
    data = json.dumps(body).encode() if body is not None else None
    hdrs = {**AUTH, "Content-Type": "application/json", **(headers or {})}
    async with env.http.request(method, path, data=data, headers=hdrs) as resp:
        await resp.read()
        return resp.status, resp.headers.get("Audit-Id", "")


async def _events(path: Path, count: int) -> list[dict[str, Any]]:
    """The first ``count`` events once the writer thread has written them."""
    for _ in range(200):
        if path.exists():
            lines = path.read_bytes().splitlines()
            if len(lines) >= count:
                return [json.loads(line) for line in lines]
        await asyncio.sleep(0.02)
    raise AssertionError(f"fewer than {count} audit events in {path}")


async def test_events_of_each_verb(make_env: MakeEnv, tmp_path: Path) -> None:
    log = tmp_path / "audit.log"
    env = await make_env(audit_log=AuditLogConfig(str(log)),
                         authn=AuthnOptions(tokens={"alice-token": ALICE}), **ALLOW_ALL)
    status, created_id = await _send(env, "POST", LEASES, {"metadata": {"name": "l1"}})
    assert status == 201
    assert (await _send(env, "GET", f"{LEASES}/l1"))[0] == 200
    assert (await _send(env, "GET", f"{LEASES}/none"))[0] == 404
    assert (await _send(env, "GET", f"{LEASES}?watch=1&timeoutSeconds=1"))[0] == 200
    assert (await _send(env, "DELETE", f"{LEASES}/l1"))[0] == 200
    events = await _events(log, 6)
    first = events[0]
    assert first == {
        "kind": "Event", "apiVersion": "audit.k8s.io/v1", "level": "Metadata",
        "auditID": created_id, "stage": "ResponseComplete", "requestURI": LEASES,
        "verb": "create",
        "user": {"username": "alice", "uid": "u-1", "groups": ["dev", "system:authenticated"]},
        "sourceIPs": ["127.0.0.1"], "userAgent": "audit-test/1.0",
        "objectRef": {"resource": "leases", "namespace": "default",
                      "apiGroup": "coordination.k8s.io", "apiVersion": "v1"},
        "responseStatus": {"metadata": {}, "code": 201},
        "requestReceivedTimestamp": first["requestReceivedTimestamp"],
        "stageTimestamp": first["stageTimestamp"],
    }
    assert MICRO.match(first["requestReceivedTimestamp"]) and MICRO.match(first["stageTimestamp"])
    assert [(e["verb"], e["stage"], e["responseStatus"]["code"]) for e in events] == [
        ("create", "ResponseComplete", 201), ("get", "ResponseComplete", 200),
        ("get", "ResponseComplete", 404), ("watch", "ResponseStarted", 200),
        ("watch", "ResponseComplete", 200), ("delete", "ResponseComplete", 200)]
    missing = events[2]
    assert missing["objectRef"]["name"] == "none"
    assert missing["responseStatus"] == {
        "metadata": {}, "status": "Failure",
        "message": 'leases.coordination.k8s.io "none" not found', "reason": "NotFound",
        "details": {"name": "none", "group": "coordination.k8s.io", "kind": "leases"},
        "code": 404}
    assert events[3]["auditID"] == events[4]["auditID"]
    assert events[3]["stageTimestamp"] < events[4]["stageTimestamp"]


async def test_audit_id_header_and_failures(make_env: MakeEnv, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "audit.log"
    env = await make_env(audit_log=AuditLogConfig(str(log)),
                         authn=AuthnOptions(tokens={"alice-token": ALICE}), **ALLOW_ALL)
    status, audit_id = await _send(env, "GET", "/version", headers={"Audit-ID": "given-id"})
    assert status == 200 and audit_id == "given-id"  # the client's ID is kept
    status, _ = await _send(env, "GET", LEASES, headers={"Authorization": "Bearer wrong"})
    assert status == 401

    async def broken(*_: Any, **__: Any) -> Any:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(env.store, "list", broken)
    assert (await _send(env, "GET", LEASES))[0] == 500
    events = await _events(log, 3)
    assert events[0]["verb"] == "get" and "objectRef" not in events[0]
    assert events[0]["auditID"] == "given-id"
    assert events[1]["user"] == {} and events[1]["responseStatus"]["code"] == 401
    assert events[2]["stage"] == "Panic"
    assert events[2]["responseStatus"]["reason"] == "InternalError"


async def test_audit_id_without_a_log(env: Env) -> None:
    async with env.http.get("/version") as resp:
        assert re.fullmatch(r"[0-9a-f-]{36}", resp.headers["Audit-Id"])


async def test_an_unwritable_log_fails_no_request_and_recovers(
    make_env: MakeEnv, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "logs"
    blocker.write_text("a file where the log's directory should be")
    log = blocker / "audit.log"
    env = await make_env(audit_log=AuditLogConfig(str(log)),
                         authn=AuthnOptions(tokens={"alice-token": ALICE}), **ALLOW_ALL)
    for _ in range(3):
        assert (await _send(env, "GET", LEASES))[0] == 200
    for _ in range(100):
        if "cannot be written" in caplog.text:
            break
        await asyncio.sleep(0.02)
    assert "cannot be written" in caplog.text
    blocker.unlink()
    assert (await _send(env, "GET", f"{LEASES}?limit=1"))[0] == 200
    events = await _events(log, 1)
    assert events[-1]["requestURI"] == f"{LEASES}?limit=1"
    assert "writable again" in caplog.text


def test_rotation_as_lumberjack(tmp_path: Path) -> None:
    path = tmp_path / "audit.log"
    writer = RotatingWriter(AuditLogConfig(str(path), max_backups=2))
    writer.max_bytes = 100
    for n in range(5):
        writer.write(b"%d" % n * 60 + b"\n")
        time.sleep(0.002)  # backup names carry milliseconds
    writer.close()
    backups = sorted(p.name for p in tmp_path.iterdir() if p.name != "audit.log")
    assert len(backups) == 2  # the oldest two were removed
    for name in backups:
        assert re.fullmatch(r"audit-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}\.log", name)
    assert path.read_bytes() == b"4" * 60 + b"\n"
    assert (tmp_path / backups[-1]).read_bytes() == b"3" * 60 + b"\n"

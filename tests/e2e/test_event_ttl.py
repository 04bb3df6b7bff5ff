"""Events expire (``kubedra apiserver --event-ttl``), on SQLite and on a real etcd: an Event
is deleted once the TTL has passed since its last write, never before; watchers see it
DELETED; other objects stay."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from kubedra.apiserver.pki import ClusterPki
from kubedra.client import kubeconfig as kubeconfig_file
from tests.e2e.conftest import apiserver_process
from tests.etcd_processes import etcd_single

__all__ = ["etcd_single"]

TTL = 3
EVENTS = "/api/v1/namespaces/default/events"


class Api:
    def __init__(self, kubeconfig: Path, data: Path) -> None:
        self.url = kubeconfig_file.load(kubeconfig).server
        self.ca = str(ClusterPki(data / "pki").ca_cert)

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        resp = requests.request(method, self.url + path, json=body, verify=self.ca,
                                headers={"Authorization": "Bearer tok"}, timeout=30)
        return resp.status_code, resp.json()


@pytest.fixture(params=["sqlite", "etcd"])
def api(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Api]:
    args = ["--token", "tok", "--event-ttl", f"{TTL}s"]
    if request.param == "etcd":
        args += ["--etcd-servers", request.getfixturevalue("etcd_single").urls]
    with apiserver_process(tmp_path, *args) as kubeconfig:
        yield Api(kubeconfig, tmp_path)


def _event(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name}, "reason": "Started", "message": "Started container c",
            "type": "Normal", "involvedObject": {"kind": "Pod", "name": "p",
                                                  "namespace": "default"}}


def test_events_expire(api: Api) -> None:
    name = f"ev-{uuid.uuid4().hex[:8]}"
    keep = f"keep-{uuid.uuid4().hex[:8]}"
    status, created = api.call("POST", EVENTS, _event(name))
    assert status == 201, created
    written = time.monotonic()
    assert api.call("POST", "/api/v1/namespaces", {"metadata": {"name": keep}})[0] == 201
    while api.call("GET", f"{EVENTS}/{name}")[0] == 200:
        assert time.monotonic() - written < TTL + 20, "the Event did not expire"
        time.sleep(0.2)
    assert time.monotonic() - written >= TTL - 0.5  # never early
    assert api.call("GET", f"/api/v1/namespaces/{keep}")[0] == 200
    # a watch from the Event's creation sees it deleted
    rv = created["metadata"]["resourceVersion"]
    resp = requests.get(f"{api.url}{EVENTS}?watch=1&resourceVersion={rv}&timeoutSeconds=2",
                        verify=api.ca, headers={"Authorization": "Bearer tok"}, timeout=30)
    seen = [(e["type"], e["object"]["metadata"]["name"])
            for e in map(json.loads, resp.text.splitlines())]
    assert ("DELETED", name) in seen, seen


def test_a_write_renews_the_ttl(api: Api) -> None:
    name = f"ev-{uuid.uuid4().hex[:8]}"
    assert api.call("POST", EVENTS, _event(name))[0] == 201
    time.sleep(TTL / 2)
    status, event = api.call("GET", f"{EVENTS}/{name}")
    assert status == 200
    event["count"] = 2
    assert api.call("PUT", f"{EVENTS}/{name}", event)[0] == 200
    renewed = time.monotonic()
    while api.call("GET", f"{EVENTS}/{name}")[0] == 200:
        assert time.monotonic() - renewed < TTL + 20, "the Event did not expire"
        time.sleep(0.2)
    assert time.monotonic() - renewed >= TTL - 0.5

"""Fuzz the API server: random bodies, query strings and content types on every route.

Properties: no answer is a 5xx (bad input is never a server error), every error body is a
``Status``, and a 4xx answer leaves the store untouched (its revision does not move).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import urllib3
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubedra.api.kinds import KINDS
from kubedra.client import kubeconfig as kubeconfig_file

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False)
    | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=12), children, max_size=4),
    max_leaves=20,
)
KEYS = ["metadata", "spec", "status", "apiVersion", "kind", "name", "labels", "nodeName",
        "driverName", "namedResources", "instances", "finalizers", "containers", "target",
        "resourceVersion", "generateName", "namespace", "ownerReferences", "propagationPolicy",
        "gracePeriodSeconds", "preconditions", "op", "path", "value", "$patch",
        "$setElementOrder/containers", "managedFields", "uid", "deletionTimestamp"]
OBJECTS = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=8)
    | st.sampled_from(["x", "n1", "default", "Never", "v1", "Pod", "/metadata/name", "add"]),
    lambda children: st.lists(children, max_size=3)
    | st.dictionaries(st.sampled_from(KEYS), children, max_size=5),
    max_leaves=25,
)
VALID: list[dict[str, Any]] = [
    {"metadata": {"name": "fz"}, "spec": {"containers": [{"name": "c", "image": "b"}]}},
    {"metadata": {"name": "fz"}, "nodeName": "n1", "driverName": "d.example.com",
     "namedResources": {"instances": [{"name": "i"}]}},
    {"metadata": {"name": "fz"}, "spec": {"template": {"spec": {
        "restartPolicy": "Never", "containers": [{"name": "c", "image": "b"}]}}}},
    {"metadata": {"name": "fz"}, "spec": {"resourceClassName": "rc"}},
    {"metadata": {"name": "fz"}, "target": {"name": "n1"}},
    {"metadata": {"name": "fz"}, "spec": {"holderIdentity": "x"}},
    [{"op": "add", "path": "/metadata/labels", "value": {"a": "b"}}],
    {"propagationPolicy": "Background", "gracePeriodSeconds": 0},
]


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    """A valid-looking body with one subtree replaced by random JSON."""
    doc = json.loads(json.dumps(draw(st.sampled_from(VALID))))
    node: Any = doc
    for _ in range(draw(st.integers(0, 3))):
        if isinstance(node, dict) and node:
            key = draw(st.sampled_from(sorted(node)))
            if draw(st.booleans()):
                node[key] = draw(OBJECTS)
                break
            node = node[key]
        elif isinstance(node, list) and node:
            node = node[0]
    return json.dumps(doc).encode()


BODIES = (
    mutated()
    | JSON_VALUES.map(lambda v: json.dumps(v).encode())
    | OBJECTS.map(lambda v: json.dumps(v).encode())
    | st.binary(max_size=64)
    | st.just(b"")
)
PARAM_NAMES = ["watch", "labelSelector", "fieldSelector", "limit", "continue", "resourceVersion",
               "resourceVersionMatch", "timeoutSeconds", "fieldValidation", "fieldManager",
               "force", "dryRun", "gracePeriodSeconds", "propagationPolicy", "orphanDependents",
               "allowWatchBookmarks", "sendInitialEvents"]
PARAM_VALUES = st.sampled_from(["", "0", "1", "-1", "True", "false", "x", "a=b", "a in (b",
                                "metadata.name=x", "Exact", "NotOlderThan", "Strict", "All",
                                "Orphan", "99999999999", "!x", "a,b", "%zz", "eyJ2IjoxfQ"])
QUERIES = st.dictionaries(st.sampled_from(PARAM_NAMES), PARAM_VALUES, max_size=4)
CONTENT_TYPES = st.sampled_from([
    "application/json", "application/merge-patch+json", "application/json-patch+json",
    "application/strategic-merge-patch+json", "application/apply-patch+yaml", "text/plain",
    "", "application/yaml",
])
METHODS = st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"])


def _paths() -> list[str]:
    out = ["/api", "/apis", "/api/v1", "/apis/batch/v1", "/version", "/openapi/v3",
           "/api/v2/pods", "/apis/x/y/z", "/api/v1/namespaces/default/bindings"]
    for k in KINDS:
        base = f"/apis/{k.group}/{k.version}" if k.group else f"/api/{k.version}"
        ns = "namespaces/default/" if k.namespaced else ""
        out += [f"{base}/{ns}{k.plural}", f"{base}/{ns}{k.plural}/fz",
                f"{base}/{ns}{k.plural}/fz/status", f"{base}/{ns}{k.plural}/fz/binding",
                f"{base}/watch/{ns}{k.plural}", f"{base}/{ns}{k.plural}/fz/x/y"]
    return out


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory,
           ) -> Iterator[tuple[str, Path, urllib3.PoolManager]]:
    data = tmp_path_factory.mktemp("apiserver-fuzz")
    kubeconfig = data / "kubeconfig"
    log_path = data / "log"
    log = log_path.open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-c", "from kubedra.cli.main import main; main()", "apiserver",
         "--data-dir", str(data), "--port", "0", "--kubeconfig", str(kubeconfig),
         "--emulated-version", "1.30"],
        stdout=log, stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 30
        while not kubeconfig.exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(log_path.read_text())
            time.sleep(0.05)
        config = kubeconfig_file.load(kubeconfig)
        # the administrator's client certificate, the cluster CA verifying the server
        pool = urllib3.PoolManager(maxsize=2, retries=False, ssl_context=config.ssl_context(),
                                   timeout=urllib3.Timeout(total=10))
        yield config.server, log_path, pool
    finally:
        proc.terminate()
        proc.wait(10)
        log.close()


def _revision(pool: urllib3.PoolManager, url: str) -> str:
    resp = pool.request("GET", url + "/api/v1/namespaces?limit=1")
    return str(json.loads(resp.data)["metadata"]["resourceVersion"])


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(method=METHODS, path=st.sampled_from(_paths()), query=QUERIES, body=BODIES,
       content_type=CONTENT_TYPES)
def test_random_requests_never_fail_the_server(
    server: tuple[str, Path, urllib3.PoolManager], method: str, path: str,
    query: dict[str, str], body: bytes,
    content_type: str,
) -> None:
    url, _, pool = server
    if method == "GET" or "watch" in path:
        query = dict(query, timeoutSeconds="1")  # bound any watch the fuzzer opens
    before = _revision(pool, url)
    headers = {"Content-Type": content_type} if content_type else {}
    full = url + path + ("?" + urllib.parse.urlencode(query) if query else "")
    resp = pool.request(method, full, body=body or None, headers=headers, preload_content=False)
    try:
        data = resp.read()
    finally:
        resp.release_conn()
    assert resp.status < 500, (resp.status, data[:500])
    if resp.status >= 400 and method != "HEAD":
        status: Any = json.loads(data)
        assert status["kind"] == "Status" and status["code"] == resp.status, data[:300]
        assert _revision(pool, url) == before


def test_fuzz_left_no_traceback(server: tuple[str, Path, urllib3.PoolManager]) -> None:
    _, log_path, _ = server
    text = log_path.read_text(errors="replace")
    assert "Traceback" not in text, text[-3000:]

"""kubectl v1.30.0 against a real ``kubedra apiserver``: for every manifest in ``examples/``,
client-side apply (twice, with a change), server-side apply, get (table, yaml, json, watch),
label, patch (strategic, merge, json), delete and wait --for=delete."""

from __future__ import annotations

import copy
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.conftest import Kubectl
from tests.vectors import EXAMPLES, example_files

MANIFESTS = [str(p.relative_to(EXAMPLES)) for p in example_files()]
NAMESPACE_FILE = "00-namespace.yaml"


def _docs(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def _write(path: Path, docs: list[dict[str, Any]]) -> Path:
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    return path


def _resource(doc: dict[str, Any]) -> str:
    group = doc["apiVersion"].rpartition("/")[0]
    return f"{doc['kind'].lower()}.{group}" if group else doc["kind"].lower()


def _target(doc: dict[str, Any]) -> list[str]:
    meta = doc["metadata"]
    ns = ["-n", meta["namespace"]] if meta.get("namespace") else []
    return [_resource(doc), meta["name"], *ns]


def _labelled(docs: list[dict[str, Any]], key: str, value: str) -> list[dict[str, Any]]:
    out = copy.deepcopy(docs)
    for d in out:
        d["metadata"].setdefault("labels", {})[key] = value
    return out


def _changed(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A second version of the manifest: a new label everywhere, plus a list change where
    the kind allows one (strategic merge patch of containers / atomic instances)."""
    out = _labelled(docs, "e2e.kubedra.io/change", "two")
    for d in out:
        if d["kind"] == "Pod":
            d["spec"]["containers"][0]["image"] += "-changed"
        if d["kind"] == "ResourceSlice" and len(d["namedResources"]["instances"]) > 1:
            d["namedResources"]["instances"].pop()
    return out


def _items(k: Kubectl, path: Path, *extra: str) -> list[dict[str, Any]]:
    got = k.json("get", "-f", str(path), *extra)
    return list(got["items"]) if got.get("kind") == "List" else [got]


@pytest.fixture(scope="session")
def example_namespace(kubectl: Kubectl) -> None:
    """Namespaces the examples live in must exist first."""
    kubectl.run("apply", "-f", str(EXAMPLES / NAMESPACE_FILE))


def _prepare(name: str, tmp_path: Path) -> list[dict[str, Any]]:
    docs = _docs(EXAMPLES / name)
    if name == NAMESPACE_FILE:  # exercise a copy: the original must outlive this test
        for d in docs:
            d["metadata"]["name"] += "-e2e"
    return docs


def test_examples_present() -> None:
    assert MANIFESTS, f"no manifests in {EXAMPLES}"


@pytest.mark.parametrize("name", MANIFESTS)
def test_manifest_lifecycle(kubectl: Kubectl, example_namespace: None, name: str,
                            tmp_path: Path) -> None:
    k = kubectl
    docs = _prepare(name, tmp_path)
    first = _write(tmp_path / "v1.yaml", docs)

    out = k.run("apply", "-f", str(first)).stdout
    assert out.count(" created") == len(docs), out
    items = _items(k, first)
    assert [i["metadata"]["name"] for i in items] == [d["metadata"]["name"] for d in docs]
    for item in items:
        assert "kubectl.kubernetes.io/last-applied-configuration" in item["metadata"][
            "annotations"]

    second = _write(tmp_path / "v2.yaml", _changed(docs))
    out = k.run("apply", "-f", str(second)).stdout
    assert out.count(" configured") == len(docs), out
    for item, want in zip(_items(k, second), _changed(docs), strict=True):
        assert item["metadata"]["labels"]["e2e.kubedra.io/change"] == "two"
        if want["kind"] == "Pod":
            assert item["spec"]["containers"][0]["image"] == want["spec"]["containers"][0][
                "image"]
        if want["kind"] == "ResourceSlice":
            assert item["namedResources"] == want["namedResources"]
    # A pod listing its own tolerations is "configured" again, as upstream: kubectl's patch
    # replaces the list, which DefaultTolerationSeconds has extended; nothing changes.
    versions = [i["metadata"]["resourceVersion"] for i in _items(k, second)]
    own_tolerations = sum(1 for d in docs if d["kind"] == "Pod" and d["spec"].get("tolerations"))
    assert k.run("apply", "-f", str(second)).stdout.count(" unchanged") == len(docs) - (
        own_tolerations)
    assert [i["metadata"]["resourceVersion"] for i in _items(k, second)] == versions

    third = _write(tmp_path / "v3.yaml", _labelled(_changed(docs), "e2e.kubedra.io/change",
                                                    "three"))
    out = k.run("apply", "--server-side", "-f", str(third)).stdout
    assert out.count("serverside-applied") == len(docs), out
    for item in _items(k, third, "--show-managed-fields"):
        assert item["metadata"]["labels"]["e2e.kubedra.io/change"] == "three"
        managers = {(m["manager"], m["operation"]) for m in item["metadata"]["managedFields"]}
        assert ("kubectl", "Apply") in managers

    table = k.run("get", "-f", str(first)).stdout
    assert table.splitlines()[0].startswith("NAME"), table
    for d in docs:
        assert d["metadata"]["name"] in table
    as_yaml = yaml.safe_load(k.run("get", "-f", str(first), "-o", "yaml").stdout)
    names = [i["metadata"]["name"] for i in as_yaml.get("items", [as_yaml])]
    assert names == [d["metadata"]["name"] for d in docs]

    assert "labeled" in k.run("label", "-f", str(first), "e2e.kubedra.io/label=yes").stdout
    for ptype, body in (
        ("strategic", {"metadata": {"labels": {"e2e.kubedra.io/smp": "1"}}}),
        ("merge", {"metadata": {"labels": {"e2e.kubedra.io/merge": "1"}}}),
        ("json", [{"op": "add", "path": "/metadata/labels/e2e.kubedra.io~1json", "value": "1"}]),
    ):
        out = k.run("patch", "-f", str(first), "--type", ptype, "-p", json.dumps(body)).stdout
        assert "patched" in out, (ptype, out)
    for item in _items(k, first):
        labels = item["metadata"]["labels"]
        for key in ("label", "smp", "merge", "json"):
            assert f"e2e.kubedra.io/{key}" in labels, (key, labels)

    _watch_sees_update(k, docs[0])

    out = k.run("delete", "-f", str(first), "--wait=false").stdout
    assert out.count("deleted") == len(docs), out
    k.run("wait", "--for=delete", "-f", str(first), "--timeout=30s")
    gone = k.run("get", "-f", str(first), check=False)
    assert gone.returncode != 0 and "NotFound" in gone.stderr, gone.stderr


def _watch_sees_update(k: Kubectl, doc: dict[str, Any]) -> None:
    """``kubectl get -w`` prints the object, then again after a change."""
    proc = k.popen("get", *_target(doc), "-w", "--output-watch-events")
    lines: list[str] = []

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 20
        while not any(doc["metadata"]["name"] in ln for ln in lines):
            assert time.monotonic() < deadline, f"watch printed nothing: {lines}"
            time.sleep(0.1)
        k.run("label", "--overwrite", *_target(doc), "e2e.kubedra.io/watch=1")
        while not any("MODIFIED" in ln for ln in lines):
            assert time.monotonic() < deadline, f"watch missed the update: {lines}"
            time.sleep(0.1)
    finally:
        proc.terminate()
        proc.wait(10)
        reader.join(5)
    assert "ADDED" in lines[0] or "NAME" in lines[0]


def test_server_side_apply_conflict_and_force(kubectl: Kubectl, tmp_path: Path) -> None:
    """Two managers applying different values to one field: 409 naming the owner, then
    --force-conflicts takes it over."""
    doc = {"apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClass",
           "metadata": {"name": "e2e-ssa-conflict"}, "driverName": "gpu.example.com",
           "structuredParameters": True}
    path = _write(tmp_path / "a.yaml", [doc])
    kubectl.run("apply", "--server-side", "--field-manager", "alice", "-f", str(path))
    changed = copy.deepcopy(doc)
    changed["structuredParameters"] = False
    path_b = _write(tmp_path / "b.yaml", [changed])
    out = kubectl.run("apply", "--server-side", "--field-manager", "bob", "-f", str(path_b),
                      check=False)
    assert out.returncode != 0
    assert 'conflict with "alice": .structuredParameters' in out.stderr, out.stderr
    kubectl.run("apply", "--server-side", "--field-manager", "bob", "--force-conflicts",
                "-f", str(path_b))
    got = kubectl.json("get", "resourceclass", "e2e-ssa-conflict")
    assert got["structuredParameters"] is False
    kubectl.run("delete", "resourceclass", "e2e-ssa-conflict")


def test_strategic_patch_merges_pod_containers_by_name(kubectl: Kubectl, tmp_path: Path
                                                       ) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "e2e-smp-pod", "namespace": "default"},
           "spec": {"containers": [
               {"name": "a", "image": "busybox:1", "env": [{"name": "X", "value": "1"}]},
               {"name": "b", "image": "busybox:1"}]}}
    path = _write(tmp_path / "pod.yaml", [pod])
    kubectl.run("apply", "-f", str(path))
    patch = {"spec": {"containers": [{"name": "b", "image": "busybox:2"}]}}
    kubectl.run("patch", "pod", "e2e-smp-pod", "-n", "default", "-p", json.dumps(patch))
    got = kubectl.json("get", "pod", "e2e-smp-pod", "-n", "default")
    containers = {c["name"]: c for c in got["spec"]["containers"]}
    assert [c["name"] for c in got["spec"]["containers"]] == ["a", "b"]
    assert containers["a"]["image"] == "busybox:1"
    assert containers["a"]["env"] == [{"name": "X", "value": "1"}]
    assert containers["b"]["image"] == "busybox:2"
    # a merge patch replaces the whole list: pod validation refuses the changed container set
    bad = kubectl.run("patch", "pod", "e2e-smp-pod", "-n", "default", "--type", "merge", "-p",
                      json.dumps(patch), check=False)
    assert bad.returncode != 0 and "Forbidden" in bad.stderr, bad.stderr
    kubectl.run("delete", "pod", "e2e-smp-pod", "-n", "default")

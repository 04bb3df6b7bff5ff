"""kubectl 1.34 against ``kubedra apiserver --emulated-version 1.34``: apply, get (``-o
wide``, ``-w``), patch (merge, JSON, strategic, server-side apply), explain and delete of the
four ``resource.k8s.io/v1`` kinds, and the registry rules kubectl shows (generation, status
reset, the admin-access namespace label)."""

from __future__ import annotations

import subprocess
import time
import uuid

import pytest
import yaml

from tests.e2e.conftest import Kubectl

DRIVER = "gpu.example.com"


def _manifests(ns: str, suffix: str) -> str:
    return yaml.safe_dump_all([
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
         "metadata": {"name": f"gpu-{suffix}"},
         "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
         "metadata": {"name": f"node-a-{suffix}"},
         "spec": {"driver": DRIVER, "nodeName": f"node-a-{suffix}",
                  "pool": {"name": f"pool-{suffix}", "generation": 1, "resourceSliceCount": 1},
                  "devices": [{"name": "gpu-0", "attributes": {"model": {"string": "a100"}},
                               "capacity": {"memory": {"value": "40Gi"}}}]}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
         "metadata": {"name": "one-gpu", "namespace": ns},
         "spec": {"devices": {"requests": [
             {"name": "gpu", "exactly": {"deviceClassName": f"gpu-{suffix}"}}]}},
         # a create through the main resource starts from an empty status
         "status": {"reservedFor": [{"resource": "pods", "name": "p", "uid": "u1"}]}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
         "metadata": {"name": "gpu-template", "namespace": ns},
         "spec": {"spec": {"devices": {"requests": [
             {"name": "gpu", "exactly": {"deviceClassName": f"gpu-{suffix}",
                                         "allocationMode": "ExactCount", "count": 1}}]}}}},
    ])


@pytest.fixture
def applied(kubectl_134: Kubectl) -> tuple[str, str]:
    """A namespace and a suffix, with the four kinds applied by kubectl 1.34."""
    suffix = uuid.uuid4().hex[:6]
    ns = f"v1-{suffix}"
    # (`kubectl create namespace` sends protobuf, which kubedra does not read)
    kubectl_134.run("apply", "-f", "-", stdin=yaml.safe_dump(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}))
    out = kubectl_134.run("apply", "-f", "-", stdin=_manifests(ns, suffix)).stdout
    assert f"deviceclass.resource.k8s.io/gpu-{suffix} created" in out
    assert f"resourceslice.resource.k8s.io/node-a-{suffix} created" in out
    assert "resourceclaim.resource.k8s.io/one-gpu created" in out
    assert "resourceclaimtemplate.resource.k8s.io/gpu-template created" in out
    return ns, suffix


def test_apply_then_get_reads_back_v1_with_the_registry_rules(
        kubectl_134: Kubectl, applied: tuple[str, str]) -> None:
    ns, suffix = applied
    cls = kubectl_134.json("get", "deviceclass", f"gpu-{suffix}")
    assert cls["apiVersion"] == "resource.k8s.io/v1"
    assert cls["metadata"]["generation"] == 1
    slice_ = kubectl_134.json("get", "resourceslice", f"node-a-{suffix}")
    assert slice_["metadata"]["generation"] == 1
    assert slice_["spec"]["devices"][0]["capacity"]["memory"]["value"] == "40Gi"
    claim = kubectl_134.json("get", "resourceclaim", "one-gpu", "-n", ns)
    assert claim.get("status", {}) == {}
    # defaulted: allocationMode ExactCount, count 1
    exactly = claim["spec"]["devices"]["requests"][0]["exactly"]
    assert exactly["allocationMode"] == "ExactCount" and exactly["count"] == 1
    tpl = kubectl_134.json("get", "resourceclaimtemplate", "gpu-template", "-n", ns)
    assert tpl["spec"]["spec"]["devices"]["requests"][0]["name"] == "gpu"


def _header_and_row(out: str, name: str) -> tuple[list[str], list[str]]:
    lines = out.splitlines()
    row = next(line for line in lines if line.split()[0] == name)
    return lines[0].split(), row.split()


def test_get_wide_prints_the_columns_of_kube_apiserver_1_34(
        kubectl_134: Kubectl, applied: tuple[str, str]) -> None:
    ns, suffix = applied
    header, row = _header_and_row(
        kubectl_134.run("get", "resourceslices", "-o", "wide").stdout, f"node-a-{suffix}")
    assert header == ["NAME", "NODE", "DRIVER", "POOL", "AGE"]
    assert row[1:4] == [f"node-a-{suffix}", DRIVER, f"pool-{suffix}"]
    header, row = _header_and_row(
        kubectl_134.run("get", "resourceclaims", "-n", ns, "-o", "wide").stdout, "one-gpu")
    assert header == ["NAME", "STATE", "AGE"]
    assert row[1] == "pending"
    header, _ = _header_and_row(
        kubectl_134.run("get", "deviceclasses", "-o", "wide").stdout, f"gpu-{suffix}")
    assert header == ["NAME", "AGE"]
    header, _ = _header_and_row(
        kubectl_134.run("get", "resourceclaimtemplates", "-n", ns).stdout, "gpu-template")
    assert header == ["NAME", "AGE"]


def test_get_watch_sees_a_change(kubectl_134: Kubectl, applied: tuple[str, str]) -> None:
    ns, _ = applied
    watcher = kubectl_134.popen("get", "resourceclaims", "-n", ns, "-w",
                                "--output-watch-events")
    try:
        assert watcher.stdout is not None
        header = watcher.stdout.readline()
        assert header.split() == ["EVENT", "NAME", "STATE", "AGE"], header
        first = watcher.stdout.readline()
        assert first.split()[:3] == ["ADDED", "one-gpu", "pending"], first
        kubectl_134.run("label", "resourceclaim", "one-gpu", "-n", ns, "seen=yes")
        deadline = time.monotonic() + 30
        lines = []
        while time.monotonic() < deadline:
            line = watcher.stdout.readline()
            lines.append(line)
            if line.startswith("MODIFIED") and "one-gpu" in line:
                break
        else:
            pytest.fail(f"no MODIFIED event: {lines}")
    finally:
        watcher.terminate()
        watcher.wait(10)


def test_patches_of_every_type(kubectl_134: Kubectl, applied: tuple[str, str]) -> None:
    ns, suffix = applied
    # merge patch of metadata: no generation bump
    kubectl_134.run("patch", "deviceclass", f"gpu-{suffix}", "--type", "merge",
                    "-p", '{"metadata":{"labels":{"tier":"gold"}}}')
    cls = kubectl_134.json("get", "deviceclass", f"gpu-{suffix}")
    assert cls["metadata"]["labels"] == {"tier": "gold"}
    assert cls["metadata"]["generation"] == 1
    # JSON patch of the spec: the generation goes up by one
    kubectl_134.run("patch", "resourceslice", f"node-a-{suffix}", "--type", "json", "-p",
                    '[{"op":"replace","path":"/spec/pool/generation","value":2}]')
    slice_ = kubectl_134.json("get", "resourceslice", f"node-a-{suffix}")
    assert slice_["spec"]["pool"]["generation"] == 2
    assert slice_["metadata"]["generation"] == 2
    # strategic merge patch (kubectl's default type) of the status: reservedFor merges by uid
    allocation = {"devices": {"results": [
        {"request": "gpu", "driver": DRIVER, "pool": f"pool-{suffix}", "device": "gpu-0"}]}}
    status = {"status": {"allocation": allocation,
                         "reservedFor": [{"resource": "pods", "name": "a", "uid": "uid-a"}]}}
    kubectl_134.run("patch", "resourceclaim", "one-gpu", "-n", ns, "--subresource", "status",
                    "--type", "merge", "-p", yaml.safe_dump(status))
    kubectl_134.run("patch", "resourceclaim", "one-gpu", "-n", ns, "--subresource", "status",
                    "-p", '{"status":{"reservedFor":[{"resource":"pods","name":"b",'
                    '"uid":"uid-b"}]}}')
    claim = kubectl_134.json("get", "resourceclaim", "one-gpu", "-n", ns)
    assert sorted(r["uid"] for r in claim["status"]["reservedFor"]) == ["uid-a", "uid-b"]
    # server-side apply of a changed spec
    applied_cls = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                   "metadata": {"name": f"gpu-{suffix}"},
                   "spec": {"selectors": [{"cel": {"expression": "true"}}]}}
    kubectl_134.run("apply", "--server-side", "--force-conflicts", "-f", "-",
                    stdin=yaml.safe_dump(applied_cls))
    cls = kubectl_134.json("get", "deviceclass", f"gpu-{suffix}", "--show-managed-fields")
    assert cls["spec"]["selectors"] == [{"cel": {"expression": "true"}}]
    assert cls["metadata"]["generation"] == 2
    assert any(m["manager"] == "kubectl" and m["operation"] == "Apply"
               for m in cls["metadata"]["managedFields"])


def test_explain_deviceclass_spec(kubectl_134: Kubectl) -> None:
    out = kubectl_134.run("explain", "deviceclass.spec").stdout
    assert "GROUP:      resource.k8s.io" in out
    assert "VERSION:    v1" in out
    assert "FIELD: spec <DeviceClassSpec>" in out
    assert "selectors\t<[]DeviceSelector>" in out
    out = kubectl_134.run("explain", "resourceclaims.spec.devices.requests.exactly").stdout
    assert "FIELD: exactly <ExactDeviceRequest>" in out
    assert "deviceClassName\t<string> -required-" in out
    out = kubectl_134.run("explain", "deviceclass").stdout
    assert "spec\t<DeviceClassSpec> -required-" in out
    assert "metadata\t<ObjectMeta>\n" in out


def test_delete_every_kind(kubectl_134: Kubectl, applied: tuple[str, str]) -> None:
    ns, suffix = applied
    out = kubectl_134.run("delete", "-f", "-", stdin=_manifests(ns, suffix)).stdout
    for what in (f"deviceclass.resource.k8s.io \"gpu-{suffix}\" deleted",
                 f"resourceslice.resource.k8s.io \"node-a-{suffix}\" deleted",
                 "resourceclaim.resource.k8s.io \"one-gpu\" deleted",
                 "resourceclaimtemplate.resource.k8s.io \"gpu-template\" deleted"):
        assert what in out, out
    gone = kubectl_134.run("get", "resourceclaims", "-n", ns, "-o", "name").stdout
    assert gone == ""


def test_admin_access_needs_the_namespace_label(kubectl_134: Kubectl,
                                                applied: tuple[str, str]) -> None:
    ns, suffix = applied
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": "admin", "namespace": ns},
             "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                 "deviceClassName": f"gpu-{suffix}", "adminAccess": True}}]}}}
    refused = kubectl_134.run("create", "-f", "-", stdin=yaml.safe_dump(claim), check=False)
    assert refused.returncode != 0
    assert ("spec.devices.requests[0].adminAccess: Forbidden: admin access to devices "
            "requires the `resource.kubernetes.io/admin-access: true` label on the "
            "containing namespace") in refused.stderr
    kubectl_134.run("label", "namespace", ns, "resource.kubernetes.io/admin-access=true")
    kubectl_134.run("create", "-f", "-", stdin=yaml.safe_dump(claim))
    got = kubectl_134.json("get", "resourceclaim", "admin", "-n", ns)
    assert got["spec"]["devices"]["requests"][0]["exactly"]["adminAccess"] is True


def test_kubectl_1_34_reads_discovery_of_the_release(kubectl_134: Kubectl) -> None:
    out = kubectl_134.run("api-resources", "--api-group", "resource.k8s.io").stdout
    names = {line.split()[0] for line in out.splitlines()[1:]}
    assert names == {"deviceclasses", "resourceclaims", "resourceclaimtemplates",
                     "resourceslices"}
    versions = kubectl_134.run("api-versions").stdout.split()
    assert "resource.k8s.io/v1" in versions
    assert not any(v.startswith("resource.k8s.io/v1beta") or v == "resource.k8s.io/v1alpha2"
                   for v in versions)
    proc = subprocess.run([str(kubectl_134.binary), "version", "-o", "json"],
                          capture_output=True, text=True, env=kubectl_134.env, timeout=60,
                          check=True)
    assert yaml.safe_load(proc.stdout)["serverVersion"]["gitVersion"].startswith("v1.34")


def test_an_upper_case_driver_name_is_accepted_with_a_warning(kubectl_134: Kubectl) -> None:
    name = "upper-" + uuid.uuid4().hex[:6]
    slice_ = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
              "metadata": {"name": name},
              "spec": {"driver": "GPU.example.com", "allNodes": True, "devices": [],
                       "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1}}}
    proc = kubectl_134.run("create", "-f", "-", stdin=yaml.safe_dump(slice_))
    assert ('Warning: spec.driver: driver names should be lowercase; "GPU.example.com" '
            "contains uppercase characters") in proc.stderr
    kubectl_134.run("delete", "resourceslice", name)


def test_kubectl_1_34_typed_commands_speak_protobuf(kubectl_134_any_era: Kubectl) -> None:
    """kubectl 1.34's typed commands send protobuf bodies and ask for protobuf answers;
    kubedra reads and writes upstream's wire format for those kinds, in both eras."""
    kubectl = kubectl_134_any_era
    name = "pb-" + uuid.uuid4().hex[:6]
    out = kubectl.run("create", "namespace", name, "-v=8").stderr
    assert "Content-Type: application/vnd.kubernetes.protobuf" in out
    assert 'status="201 Created"' in out
    ns = kubectl.json("get", "namespace", name)
    assert ns["metadata"]["name"] == name and ns["status"]["phase"] == "Active"
    assert "generateName" not in ns["metadata"] and "generation" not in ns["metadata"]
    kubectl.run("create", "serviceaccount", "robot", "-n", name)
    token = kubectl.run("create", "token", "robot", "-n", name, "--duration", "10m").stdout
    assert token.strip().count(".") == 2  # a JWT
    assert kubectl.run("auth", "can-i", "create", "pods", "-n", name).stdout.strip() == "yes"
    rules = kubectl.run("auth", "can-i", "--list", "-n", name).stdout
    assert "Resources" in rules and "*.*" in rules
    kubectl.run("run", "web", "--image", "nginx", "--labels", "app=web", "-n", name)
    pod = kubectl.json("get", "pod", "web", "-n", name)
    assert pod["spec"]["containers"][0]["image"] == "nginx"
    assert pod["spec"]["terminationGracePeriodSeconds"] == 30
    kubectl.run("create", "job", "j1", "--image", "busybox", "-n", name)
    job = kubectl.json("get", "job", "j1", "-n", name)
    assert job["spec"]["template"]["spec"]["restartPolicy"] == "Never"
    assert "Completion Mode:  NonIndexed" in kubectl.run("describe", "job", "j1", "-n",
                                                          name).stdout
    assert "Image:        nginx" in kubectl.run("describe", "pod", "web", "-n", name).stdout
    kubectl.run("apply", "-n", name, "-f", "-", stdin=yaml.safe_dump(
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "applied"}}))
    kubectl.run("create", "role", "reader", "--verb=get", "--resource=pods", "-n", name)
    kubectl.run("create", "rolebinding", "reader", "--role=reader", "--user=bob", "-n", name)
    binding = kubectl.json("get", "rolebinding", "reader", "-n", name)
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                                  "name": "reader"}
    kubectl.run("delete", "pod", "web", "-n", name, "--wait=false")
    kubectl.run("delete", "namespace", name, "--wait=false")

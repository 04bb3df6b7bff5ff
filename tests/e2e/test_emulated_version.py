"""``--emulated-version`` and ``--runtime-config`` with real processes: a 1.34 API server (the
default, or named) answers ``/version`` as v1.34.0 and serves no ``resource.k8s.io/v1alpha2``
(404, absent from discovery and OpenAPI); bad flag values are refused before serving, with
upstream's texts; ``kubedra up --emulated-version 1.34`` comes up, its node agents say in one
line that they run without their v1alpha2 DRA parts (the controller manager's claim controller
and the scheduler's DynamicResources serve v1), and a Job of two pods completes on its node
agents; its nodes (agents or fake) report v1.34.0."""

from __future__ import annotations

import asyncio
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client as k8s
from kubernetes import config as kconfig

from kubedra.cli.kubectl import KubectlUnavailable, ensure_kubectl
from kubedra.kubelet.runtime import EXIT_CODE
from tests.e2e.conftest import _kubedra_command, apiserver_process, kubeconfig_session
from tests.e2e.node_support import socket_root
from tests.e2e.test_jobs import EXTERNAL, NS, job_body, terminal, wait_for
from tests.e2e.test_up import BANNER_END, UP, read_until, start_up
from tests.unit.cli.test_makefile import REPO

AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
V1ALPHA2 = "resource.k8s.io/v1alpha2"


async def _get(session: Any, path: str, accept: str = "application/json") -> tuple[int, Any]:
    async with session.get(path, headers={"Accept": accept}) as resp:
        body = await resp.json(content_type=None) if resp.status == 200 else None
        return resp.status, body


EXAMPLES_1_34 = REPO / "examples" / "v1.34"


def _group_versions(group_list: Any) -> set[str]:
    return {v["groupVersion"] for g in group_list["groups"] for v in g["versions"]}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("release", [None, "1.34"], ids=["default", "named"])
async def test_a_1_34_server_serves_the_1_34_api_only(tmp_path: Path,
                                                     release: str | None) -> None:
    with apiserver_process(tmp_path, release=release) as kubeconfig:
        async with kubeconfig_session(kubeconfig) as session:
            status, version = await _get(session, "/version")
            assert status == 200
            assert (version["gitVersion"], version["major"], version["minor"]) == (
                "v1.34.0", "1", "34")
            _, groups = await _get(session, "/apis")
            assert V1ALPHA2 not in _group_versions(groups)
            assert {"batch/v1", "coordination.k8s.io/v1"} <= _group_versions(groups)
            _, aggregated = await _get(session, "/apis", AGGREGATED)
            assert not any(item["metadata"]["name"] == "resource.k8s.io"
                           and any(v["version"] == "v1alpha2" for v in item["versions"])
                           for item in aggregated["items"])
            for path in ("/apis/resource.k8s.io/v1alpha2",
                         "/apis/resource.k8s.io/v1alpha2/resourceclaims",
                         "/apis/resource.k8s.io/v1alpha2/namespaces/default/resourceclaims",
                         "/openapi/v3/apis/resource.k8s.io/v1alpha2"):
                assert (await _get(session, path))[0] == 404, path
            _, index = await _get(session, "/openapi/v3")
            assert "apis/resource.k8s.io/v1alpha2" not in index["paths"]
            assert "apis/batch/v1" in index["paths"]
            _, v2 = await _get(session, "/openapi/v2")
            assert v2["info"]["version"] == "v1.34.0"
            assert not any("/resource.k8s.io/v1alpha2/" in p for p in v2["paths"])
            # the core API works as under 1.30
            status, pods = await _get(session, "/api/v1/namespaces/default/pods")
            assert status == 200 and pods["items"] == []
    log = (tmp_path / "log").read_text()
    assert "(Kubernetes v1.34.0)" in log


@pytest.mark.timeout(120)
async def test_a_1_30_server_is_unchanged(tmp_path: Path) -> None:
    with apiserver_process(tmp_path, "--emulated-version", "1.30") as kubeconfig:
        async with kubeconfig_session(kubeconfig) as session:
            _, version = await _get(session, "/version")
            assert (version["gitVersion"], version["minor"]) == ("v1.30.0", "30")
            _, groups = await _get(session, "/apis")
            assert V1ALPHA2 in _group_versions(groups)
            assert (await _get(session, "/apis/resource.k8s.io/v1alpha2"))[0] == 200


@pytest.mark.timeout(120)
async def test_runtime_config_turns_a_version_off(tmp_path: Path) -> None:
    with apiserver_process(tmp_path, "--emulated-version", "1.34", "--runtime-config",
                           "batch/v1=false") as kubeconfig:
        async with kubeconfig_session(kubeconfig) as session:
            _, groups = await _get(session, "/apis")
            assert "batch/v1" not in _group_versions(groups)
            assert (await _get(session, "/apis/batch/v1/namespaces/default/jobs"))[0] == 404
            assert (await _get(session, "/apis/coordination.k8s.io/v1"))[0] == 200


@pytest.mark.parametrize(("args", "message"), [
    (["--emulated-version", "1.31"],
     "Invalid value for --emulated-version: unsupported emulated version '1.31': kubedra "
     "emulates 1.30, 1.34"),
    (["--emulated-version", "1.34", "--runtime-config", "batch/v1beta1=true"],
     "Invalid value for --runtime-config: group version batch/v1beta1 that has not been "
     "registered"),
    (["--emulated-version", "1.30", "--runtime-config", "resource.k8s.io/v1=true"],
     "Invalid value for --runtime-config: group version resource.k8s.io/v1 that has not "
     "been registered"),
    (["--runtime-config", "api/all=false"],
     "Invalid value for --runtime-config: invalid key with only api/all=false"),
    (["--runtime-config", "example.com/v1=true"],
     "Invalid value for --runtime-config: unknown api groups example.com"),
    (["--runtime-config", "batch/v1=maybe"],
     "Invalid value for --runtime-config: invalid value of batch/v1: maybe, err: "
     'strconv.ParseBool: parsing "maybe": invalid syntax'),
    (["--emulated-version", "1.30", "--feature-gates", "DRAAdminAccess=true"],
     "Invalid value for --feature-gates: unrecognized feature gate: DRAAdminAccess"),
    (["--emulated-version", "1.34", "--feature-gates", "JobReadyPods=true"],
     "Invalid value for --feature-gates: unrecognized feature gate: JobReadyPods"),
])
def test_bad_flags_are_refused_before_serving(tmp_path: Path, args: list[str],
                                              message: str) -> None:
    done = subprocess.run(
        [*_kubedra_command(), "apiserver", "--data-dir", str(tmp_path / "data"), "--port", "0",
         *args], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert message in " ".join(done.stderr.split()), done.stderr
    assert not (tmp_path / "data").exists()  # nothing written


def test_up_refuses_an_unknown_release(tmp_path: Path) -> None:
    done = subprocess.run([*UP, "--data-dir", str(tmp_path / "data"), "--emulated-version",
                           "1.29"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "unsupported emulated version '1.29'" in done.stderr


@pytest.mark.timeout(240)
def test_up_1_34_runs_a_job_to_completion() -> None:
    with socket_root() as root:
        data, out = root / "data", root / "up.out"
        with out.open("wb") as log:
            proc = subprocess.Popen(
                [*UP, "--data-dir", str(data), "--port", "0", "--nodes", "2",
                 "--emulated-version", "1.34", "--feature-gates", ""],
                stdout=log, stderr=subprocess.STDOUT)
        try:
            wait_for("kubedra up", lambda: BANNER_END in out.read_text(errors="replace")
                     or proc.poll() is not None, 90)
            assert proc.poll() is None, out.read_text(errors="replace")
            api = kconfig.new_client_from_config(config_file=str(data / "kubeconfig"))
            try:
                _run_a_job(api)
            finally:
                api.close()
            logs = data / "logs"
            for name in ("scheduler-0.log", "controller-manager.log", "nodes-0.log"):
                text = (logs / name).read_text(errors="replace")
                lines = [line for line in text.splitlines()
                         if "does not serve resource.k8s.io/v1alpha2" in line]
                # the claim controller, the scheduler and the node agents all speak v1
                assert lines == [], (name, text[-2000:])
                assert "Traceback" not in text, (name, text[-3000:])
            proc.send_signal(signal.SIGINT)
            assert proc.wait(40) == 0, out.read_text(errors="replace")
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def _run_a_job(api: Any) -> None:
    core, batch_api = k8s.CoreV1Api(api), k8s.BatchV1Api(api)
    assert k8s.VersionApi(api).get_code().git_version == "v1.34.0"
    wait_for("two Ready nodes", lambda: len([
        n for n in core.list_node().items
        if any(c.type == "Ready" and c.status == "True" for c in n.status.conditions or ())
    ]) == 2, 60)
    assert {n.status.node_info.kubelet_version for n in core.list_node().items} == {"v1.34.0"}
    # JobManagedBy is on by default in 1.34 (no --feature-gates): a Job another controller
    # manages is left alone
    batch_api.create_namespaced_job(NS, job_body("elsewhere", managedBy=EXTERNAL))
    batch_api.create_namespaced_job(NS, job_body("pair", completions=2, parallelism=2))
    batch_api.create_namespaced_job(NS, job_body("failing", annotations={EXIT_CODE: "1"},
                                                 backoffLimit=1))
    job = wait_for("the Job finished", terminal(batch_api, "pair"), 120)
    assert (job.status.succeeded, job.status.failed) == (2, None)
    # 1.31+: the success criteria are met first, Complete follows once no pod is left
    assert [c.type for c in job.status.conditions] == ["SuccessCriteriaMet", "Complete"]
    failing = wait_for("the failing Job finished", terminal(batch_api, "failing"), 120)
    assert failing.status.failed == 2
    assert [(c.type, c.reason) for c in failing.status.conditions] == [
        ("FailureTarget", "BackoffLimitExceeded"), ("Failed", "BackoffLimitExceeded")]
    assert failing.status.terminating in (None, 0)
    elsewhere = batch_api.read_namespaced_job("elsewhere", NS)
    assert elsewhere.spec.managed_by == EXTERNAL
    assert elsewhere.status.conditions is None and elsewhere.status.active is None
    assert core.list_namespaced_pod(NS, label_selector="job-name=elsewhere").items == []



@pytest.mark.timeout(300)
async def test_up_1_34_fake_nodes_publish_v1_slices(tmp_path: Path) -> None:
    """``up --fake-nodes`` on 1.34: each fake Node gets the example driver's devices in a v1
    ResourceSlice of its own pool, as the driver would publish them, so ``kubectl apply -f
    examples/v1.34/`` gets devices and nodes for the pod and the Job's pods (which stay
    Pending: no agent runs them)."""
    try:
        kubectl = ensure_kubectl("1.34")
    except KubectlUnavailable as err:
        pytest.skip(str(err))
    data = tmp_path / "data"
    proc = await start_up(data, "--port", "0", "--fake-nodes", "3", "--instances", "4",
                          "--emulated-version", "1.34")
    assert proc.stdout is not None
    try:
        banner = await read_until(proc.stdout, BANNER_END, 60)
        assert "ResourceSlices" not in banner, banner
        async with kubeconfig_session(data / "kubeconfig") as session:
            for _ in range(100):  # the fake nodes' status comes with their first beat
                _, nodes = await _get(session, "/api/v1/nodes")
                versions = [n.get("status", {}).get("nodeInfo", {}).get("kubeletVersion")
                            for n in nodes["items"]]
                if versions == ["v1.34.0"] * 3:
                    break
                await asyncio.sleep(0.2)
            assert versions == ["v1.34.0"] * 3
            uids = {n["metadata"]["name"]: n["metadata"]["uid"] for n in nodes["items"]}
            _, slices = await _get(session, "/apis/resource.k8s.io/v1/resourceslices")
            assert sorted(s["metadata"]["name"] for s in slices["items"]) == [
                f"node-{i}-gpu.example.com-0" for i in range(3)]
            for item in slices["items"]:
                node = item["spec"]["nodeName"]
                assert item["metadata"]["ownerReferences"] == [{
                    "apiVersion": "v1", "kind": "Node", "name": node, "uid": uids[node],
                    "controller": True}]
                assert item["spec"]["pool"] == {"name": node, "generation": 1,
                                                "resourceSliceCount": 1}
                assert [d["name"] for d in item["spec"]["devices"]] == [
                    "device-00", "device-01", "device-02", "device-03"]
            env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
                   "KUBECONFIG": str(data / "kubeconfig")}
            applied = await asyncio.to_thread(
                subprocess.run, [str(kubectl), "apply", "-f", str(EXAMPLES_1_34)], env=env,
                capture_output=True, text=True, timeout=120, check=False)
            assert applied.returncode == 0, applied.stderr
            pods: list[Any] = []
            for _ in range(300):
                _, listed = await _get(session, "/api/v1/namespaces/default/pods")
                pods = [p for p in listed["items"] if p["spec"].get("nodeName")]
                if len(pods) == 3:
                    break
                await asyncio.sleep(0.2)
            assert len(pods) == 3, listed
            _, claims = await _get(session,
                                   "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims")
            devices = sorted((r["pool"], r["device"]) for c in claims["items"]
                             for r in c["status"]["allocation"]["devices"]["results"])
            assert len(devices) == 3 and len(set(devices)) == 3
            assert {device for _, device in devices} <= {"device-01", "device-03"}  # numa 1
    finally:
        proc.send_signal(signal.SIGINT)
        await asyncio.wait_for(proc.wait(), 40)
    assert proc.returncode == 0

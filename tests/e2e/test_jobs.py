"""Jobs end to end on ``kubedra up --nodes 2`` (API server, scheduler, controller manager with
``--controller-manager-metrics-port``, two node agents whose simulated runtime runs the pods
for their ``kubedra.io/run-seconds`` and exits them with ``kubedra.io/exit-code``), the official
client as the user and as an external controller: the issue's acceptance bullets, down to a
SIGKILL of the cluster's controller manager in the middle of a 50-pod Job (``up`` restarts it).
One cluster serves the module."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client as k8s
from kubernetes import config as kconfig

from kubedra.api import batch
from kubedra.kubelet.runtime import EXIT_CODE, RUN_SECONDS
from tests.e2e.node_support import apiserver_requests, socket_root
from tests.e2e.test_up import BANNER_END, DRIVER, UP, pids_using

NS = "default"
EXTERNAL = "example.com/dispatcher"


@dataclass
class Cluster:
    data: Path
    out: Path
    api: Any

    @property
    def batch(self) -> Any:
        return k8s.BatchV1Api(self.api)

    @property
    def core(self) -> Any:
        return k8s.CoreV1Api(self.api)

    def output(self) -> str:
        return self.out.read_text(errors="replace")

    def metric(self, sample: str) -> float:
        """One sample of the (current) controller manager's metrics, 0 when absent."""
        log = (self.data / "logs" / "controller-manager.log").read_text(errors="replace")
        port = re.findall(r"metrics on http://127\.0\.0\.1:(\d+)/metrics", log)[-1]
        url = f"http://127.0.0.1:{port}/metrics"
        with urllib.request.urlopen(url, timeout=5) as resp:
            text = resp.read().decode()
        for line in text.splitlines():
            key, _, value = line.rpartition(" ")
            if key == sample:
                return float(value)
        return 0.0


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    with socket_root() as root:
        data, out = root / "data", root / "up.out"
        with out.open("wb") as log:
            proc = subprocess.Popen(
                [*UP, "--data-dir", str(data), "--port", "0", "--nodes", "2", "--instances", "2",
                 "--controller-manager-metrics-port", "0"],
                stdout=log, stderr=subprocess.STDOUT)
        try:
            wait_for("kubedra up", lambda: BANNER_END in out.read_text(errors="replace")
                     or proc.poll() is not None, 60)
            assert proc.poll() is None, out.read_text(errors="replace")
            api = kconfig.new_client_from_config(config_file=str(data / "kubeconfig"))
            try:
                up = Cluster(data, out, api)
                _create_gpu_template(api)
                wait_for("two Ready nodes", lambda: len([
                    n for n in up.core.list_node().items
                    if any(c.type == "Ready" and c.status == "True"
                           for c in n.status.conditions or ())]) == 2, 60)
                yield up
            finally:
                api.close()
            proc.send_signal(signal.SIGINT)
            assert proc.wait(40) == 0, out.read_text(errors="replace")
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def _create_gpu_template(api: Any) -> None:
    custom = k8s.CustomObjectsApi(api)
    custom.create_cluster_custom_object(
        "resource.k8s.io", "v1alpha2", "resourceclasses",
        {"apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClass",
         "metadata": {"name": "gpu"}, "driverName": DRIVER, "structuredParameters": True})
    custom.create_namespaced_custom_object(
        "resource.k8s.io", "v1alpha2", NS, "resourceclaimtemplates",
        {"apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClaimTemplate",
         "metadata": {"name": "gpu"}, "spec": {"spec": {"resourceClassName": "gpu"}}})


def job_body(name: str, *, annotations: dict[str, str] | None = None, gpu: bool = False,
             **spec: Any) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "main", "image": "busybox"}
    pod: dict[str, Any] = {"restartPolicy": "Never", "containers": [container]}
    if gpu:
        container["resources"] = {"claims": [{"name": "gpu"}]}
        pod["resourceClaims"] = [{"name": "gpu", "source": {"resourceClaimTemplateName": "gpu"}}]
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": {"template": {
                "metadata": {"annotations": {RUN_SECONDS: "0.5", **(annotations or {})}},
                "spec": pod}, **spec}}


def wait_for(what: str, check: Callable[[], Any], timeout: float = 90.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (result := check()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(0.2)
    return result


def terminal(batch_api: Any, name: str) -> Callable[[], Any]:
    def check() -> Any:
        job = batch_api.read_namespaced_job(name, NS)
        finished = any(c.type in ("Complete", "Failed") and c.status == "True"
                       for c in job.status.conditions or ())
        return job if finished else None
    return check


def pods_of(core: Any, job: Any) -> list[Any]:
    selector = f"batch.kubernetes.io/controller-uid={job.metadata.uid}"
    return list(core.list_namespaced_pod(NS, label_selector=selector).items)


def _claims(api: Any) -> list[dict[str, Any]]:
    return list(k8s.CustomObjectsApi(api).list_namespaced_custom_object(
        "resource.k8s.io", "v1alpha2", NS, "resourceclaims")["items"])


@pytest.mark.timeout(240)
def test_jobs_run_on_node_agents(cluster: Cluster) -> None:
    batch_api, core = cluster.batch, cluster.core
    create = batch_api.create_namespaced_job
    create(NS, job_body("external", managedBy=EXTERNAL, completions=2))
    create(NS, job_body("plain", completions=3, parallelism=2))
    create(NS, job_body("gpu", gpu=True, completions=3, parallelism=2))
    create(NS, job_body("failing", annotations={EXIT_CODE: "1"}, backoffLimit=1))
    create(NS, job_body("policy", annotations={EXIT_CODE: "42"}, podFailurePolicy={
        "rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}}]}))
    create(NS, job_body("indexed", completions=3, parallelism=3, completionMode="Indexed"))
    create(NS, job_body("paused", suspend=True))

    plain = wait_for("plain finished", terminal(batch_api, "plain"))
    st = plain.status
    assert (st.succeeded, st.failed or 0, st.active or 0, st.ready or 0) == (3, 0, 0, 0)
    assert [(c.type, c.status, c.reason) for c in st.conditions] == [("Complete", "True", None)]
    assert st.start_time <= st.completion_time == st.conditions[0].last_transition_time
    pods = pods_of(core, plain)
    assert len(pods) == 3 and {p.status.phase for p in pods} == {"Succeeded"}
    assert {p.spec.node_name for p in pods} <= {"node-0", "node-1"}

    gpu = wait_for("gpu finished", terminal(batch_api, "gpu"))
    assert (gpu.status.succeeded, gpu.status.failed) == (3, None)
    assert gpu.status.conditions[-1].type == "Complete"
    # every pod had its own claim from the template; finished pods give theirs back
    gpu_pods = pods_of(core, gpu)
    assert len({p.status.resource_claim_statuses[0].resource_claim_name for p in gpu_pods}) == 3
    wait_for("the GPU claims released", lambda: all(
        not c.get("status", {}).get("allocation") for c in _claims(cluster.api)), 60)

    failing = wait_for("failing finished", terminal(batch_api, "failing"))
    assert failing.status.conditions[-1].reason == "BackoffLimitExceeded"
    assert failing.status.failed == 2

    policy = wait_for("policy finished", terminal(batch_api, "policy"))
    assert (policy.status.conditions[-1].type, policy.status.conditions[-1].reason) == (
        "Failed", "PodFailurePolicy")
    assert policy.status.failed == 1

    indexed = wait_for("indexed finished", terminal(batch_api, "indexed"))
    assert (indexed.status.completed_indexes, indexed.status.succeeded) == ("0-2", 3)
    indexes = sorted(p.metadata.annotations[batch.JOB_COMPLETION_INDEX_ANNOTATION]
                     for p in pods_of(core, indexed))
    assert indexes == ["0", "1", "2"], "every index ran exactly once"

    paused = batch_api.read_namespaced_job("paused", NS)
    assert [c.type for c in paused.status.conditions] == ["Suspended"]
    assert pods_of(core, paused) == []
    batch_api.patch_namespaced_job("paused", NS, {"spec": {"suspend": False}})
    resumed = wait_for("resumed finished", terminal(batch_api, "paused"))
    assert resumed.status.succeeded == 1
    suspended = next(c for c in resumed.status.conditions if c.type == "Suspended")
    assert (suspended.status, suspended.reason) == ("False", "JobResumed")
    assert resumed.status.start_time >= suspended.last_transition_time

    # The external Job was never touched (no pods, no status) while we drive it.
    external = batch_api.read_namespaced_job("external", NS)
    assert external.status.to_dict() == k8s.V1JobStatus().to_dict()
    assert pods_of(core, external) == []
    started = plain.status.start_time.isoformat().replace("+00:00", "Z")
    batch_api.patch_namespaced_job_status("external", NS, {"status": {
        "startTime": started, "active": 2, "ready": 1}})
    time.sleep(1.5)
    external = batch_api.read_namespaced_job("external", NS)
    assert (external.status.active, external.status.ready) == (2, 1)
    assert external.status.conditions is None
    assert pods_of(core, external) == []
    assert cluster.metric("job_controller_jobs_by_external_controller_total"
                          f'{{controller_name="{EXTERNAL}"}}') == 1
    assert cluster.metric('workqueue_adds_total{name="job"}') > 0
    assert cluster.metric('workqueue_adds_total{name="resource_claim"}') > 0

    # Deleting a running Job leaves no pod holding the tracking finalizer.
    create(NS, job_body("doomed", completions=4, parallelism=4,
                        annotations={RUN_SECONDS: "30"}))
    doomed = wait_for("doomed running", lambda: _running(batch_api, core, "doomed", 4))
    batch_api.delete_namespaced_job("doomed", NS, propagation_policy="Background")

    def released() -> bool:
        return all(batch.JOB_TRACKING_FINALIZER not in (p.metadata.finalizers or ())
                   for p in pods_of(core, doomed))
    wait_for("no tracking finalizer left", released)

    # The node agents share one watch of bound pods (node-pool): each pod is run by its own
    # node's agent alone, which writes its status at most twice (Running, then finished; a
    # deleted pod is not reported finished), not once per agent of the process.
    pods_created = apiserver_requests(cluster.api, "create", "pods")
    assert pods_created <= apiserver_requests(cluster.api, "patch", "pods/status") <= (
        2 * pods_created)


def _running(batch_api: Any, core: Any, name: str, n: int) -> Any:
    job = batch_api.read_namespaced_job(name, NS)
    running = [p for p in pods_of(core, job) if p.status.phase == "Running"]
    return job if len(running) >= n else None


def _controller_manager(data: Path) -> int | None:
    """The pid of the cluster's controller manager process (None between two of them)."""
    for pid in pids_using(data):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"controller-manager" in argv:
            return pid
    return None


@pytest.mark.timeout(240)
def test_controller_manager_killed_mid_job(cluster: Cluster) -> None:
    batch_api, core = cluster.batch, cluster.core
    batch_api.create_namespaced_job(NS, job_body(
        "fifty", completions=50, parallelism=10, annotations={RUN_SECONDS: "0.3"}))
    wait_for("15 pods counted", lambda: (
        batch_api.read_namespaced_job("fifty", NS).status.succeeded or 0) >= 15)
    killed = _controller_manager(cluster.data)
    assert killed is not None, "no controller manager running"
    os.kill(killed, signal.SIGKILL)  # in the middle of the Job
    wait_for("the controller manager restarted by up",
             lambda: "controller-manager exited with -9; restarting." in cluster.output()
             and _controller_manager(cluster.data) not in (None, killed), 30)

    job = wait_for("fifty finished", terminal(batch_api, "fifty"), timeout=120)
    assert job.status.conditions[-1].type == "Complete"
    pods = pods_of(core, job)
    # Nothing lost (every completion counted) and nothing counted twice (never more successes
    # than pods that succeeded, no failures). Creations the killed process had sent may land
    # after its successor listed the pods, so a few extra pods are possible (as upstream).
    assert 50 <= job.status.succeeded <= len(pods) <= 60
    assert (job.status.failed or 0) == 0
    assert all(p.status.phase == "Succeeded" for p in pods)
    assert all(batch.JOB_TRACKING_FINALIZER not in (p.metadata.finalizers or ()) for p in pods)

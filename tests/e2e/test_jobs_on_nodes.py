"""Jobs through ``kubedra up --nodes 2`` with the official client: the built-in Job controller
creates pods, the node agents' simulated runtime runs them (one gets a GPU through a claim
template and gives it back), and the Job completes; a Job managed by another controller is
never touched."""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client as k8s
from kubernetes import config as kconfig

from tests.e2e.node_support import socket_root
from tests.e2e.test_up import DRIVER, read_until, start_up

NS = "default"


def _job(name: str, *, claim: bool = False, managed_by: str | None = None) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "c", "image": "busybox"}
    spec: dict[str, Any] = {"restartPolicy": "Never", "containers": [container]}
    if claim:
        container["resources"] = {"claims": [{"name": "gpu"}]}
        spec["resourceClaims"] = [{"name": "gpu",
                                   "source": {"resourceClaimTemplateName": "gpu"}}]
    job: dict[str, Any] = {
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
        "spec": {"completions": 3, "parallelism": 2,
                 "template": {"metadata": {"annotations": {"kubedra.io/run-seconds": "0.5"}},
                              "spec": spec}}}
    if managed_by:
        job["spec"]["managedBy"] = managed_by
    return job


def _wait(what: str, check: Any, timeout: float) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := check()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)
    return value


def _conditions(job: Any) -> dict[str, str]:
    return {c.type: c.status for c in job.status.conditions or ()}


@pytest.mark.timeout(240)
async def test_jobs_complete_on_simulated_nodes() -> None:
    with socket_root() as data:
        proc = await start_up(data, "--port", "0", "--nodes", "2", "--instances", "2")
        assert proc.stdout is not None
        try:
            await read_until(proc.stdout, "Press Ctrl-C to stop.", 60)
            await asyncio.to_thread(_scenario, data)
            proc.send_signal(signal.SIGINT)
            await read_until(proc.stdout, "kubedra stopped.", 40)
            assert await asyncio.wait_for(proc.wait(), 30) == 0
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()


def _scenario(data: Path) -> None:
    api = kconfig.new_client_from_config(config_file=str(data / "kubeconfig"))
    try:
        batch, core = k8s.BatchV1Api(api), k8s.CoreV1Api(api)
        custom = k8s.CustomObjectsApi(api)
        custom.create_cluster_custom_object(
            "resource.k8s.io", "v1alpha2", "resourceclasses",
            {"apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClass",
             "metadata": {"name": "gpu"}, "driverName": DRIVER, "structuredParameters": True})
        custom.create_namespaced_custom_object(
            "resource.k8s.io", "v1alpha2", NS, "resourceclaimtemplates",
            {"apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClaimTemplate",
             "metadata": {"name": "gpu"}, "spec": {"spec": {"resourceClassName": "gpu"}}})
        _wait("two Ready nodes", lambda: len([
            n for n in core.list_node().items
            if any(c.type == "Ready" and c.status == "True" for c in n.status.conditions or ())
        ]) == 2, 60)

        batch.create_namespaced_job(NS, _job("external", managed_by="example.com/dispatcher"))
        batch.create_namespaced_job(NS, _job("plain"))
        batch.create_namespaced_job(NS, _job("gpu", claim=True))
        for name in ("plain", "gpu"):
            job = _wait(f"job {name} complete", lambda n=name: (
                j if _conditions(j := batch.read_namespaced_job(n, NS)).get("Complete") == "True"
                else None), 120)
            assert job.status.succeeded == 3 and not job.status.failed, job.status
            assert job.status.start_time and job.status.completion_time

        pods = core.list_namespaced_pod(NS, label_selector="job-name=gpu").items
        assert len(pods) == 3 and {p.status.phase for p in pods} == {"Succeeded"}
        assert {p.spec.node_name for p in pods} <= {"node-0", "node-1"}
        # every pod had its own claim from the template; done pods give theirs back
        assert all(p.status.resource_claim_statuses[0].resource_claim_name for p in pods)
        _wait("the GPU claims released", lambda: all(
            not c.get("status", {}).get("allocation")
            for c in custom.list_namespaced_custom_object(
                "resource.k8s.io", "v1alpha2", NS, "resourceclaims")["items"]), 60)

        external = batch.read_namespaced_job("external", NS)
        assert external.status.active is None and not external.status.conditions
        assert core.list_namespaced_pod(NS, label_selector="job-name=external").items == []
    finally:
        api.close()

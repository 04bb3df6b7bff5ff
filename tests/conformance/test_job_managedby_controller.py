"""job-managedby-controller.json: when the built-in Job controller steps aside for
``spec.managedBy`` (the decision table, one ``syncJob`` with intercepted writes, the upstream
integration cases and scenarios against a real API server, the orphan-pod decisions)."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from kubedra.api import batch, codec
from kubedra.api.batch import Job
from kubedra.api.core import Pod
from kubedra.api.features import FeatureGates
from kubedra.api.meta import OwnerReference
from kubedra.client.rest import Client
from kubedra.controllers.job.controller import JobController, managed_by_external_controller
from kubedra.controllers.metrics import controller_metrics
from tests.conformance.job_support import gates
from tests.job_env import FAST, api, finish_pod, job_controller, job_pods, wait_for
from tests.vectors import load, vector_cases

FILE = "job-managedby-controller.json"
DATA = load(FILE)
METRIC = "job_controller_jobs_by_external_controller_total"
LATENCY = 1.0  # upstream's sleepDurationForControllerLatency


@vector_cases(FILE, DATA["managedByExternalController"])
def test_managed_by_external_controller(case: dict[str, Any]) -> None:
    job = codec.decode({"spec": {"managedBy": case["spec.managedBy"]}}, Job)
    gate = FeatureGates(job_managed_by=case["gate_JobManagedBy"])
    name = managed_by_external_controller(job, gate)
    assert name == case["external_controller_name"]
    assert (name is None) == case["builtin_reconciles"]


class RecordingClient:
    """Upstream's unit test intercepts status updates and pod creations; so does this."""

    def __init__(self) -> None:
        self.status_writes: list[Job] = []
        self.created: list[Pod] = []

    async def update_status(self, job: Job) -> Job:
        self.status_writes.append(codec.decode(codec.encode(job), Job))
        return job

    async def create(self, pod: Pod) -> Pod:
        self.created.append(pod)
        pod.metadata.name = f"{pod.metadata.generate_name}{len(self.created)}"
        return pod

    async def create_raw(self, *_: Any, **__: Any) -> dict[str, Any]:
        return {}


@vector_cases(FILE, DATA["syncJobCases"])
async def test_sync_job(case: dict[str, Any]) -> None:
    client = RecordingClient()
    config = dataclasses.replace(FAST, gates=gates(case["gates"]))
    controller = JobController(client, config,  # type: ignore[arg-type]
                               metrics=controller_metrics(CollectorRegistry()))
    job = codec.decode(case["job"], Job)
    controller.jobs.store["default/foobar"] = job
    await controller.sync_job("default/foobar")
    expect = case["expect"]
    assert bool(client.status_writes) == expect["statusUpdateCalled"]
    assert len(client.created) == expect["podCreations"]
    final = client.status_writes[-1] if client.status_writes else job
    assert codec.to_builtins(final.status) == expect["status"]


def _integration_job(raw: dict[str, Any]) -> Job:
    """The vector's Job as upstream's integration helper creates it (named, restartPolicy
    Never, which the API requires)."""
    job = codec.decode({**raw, "metadata": {"name": "custom-job-test", "namespace": "default"}},
                       Job)
    job.spec.template.spec.restart_policy = "Never"
    return job


def _counts(job: Job) -> dict[str, Any]:
    status = codec.to_builtins(job.status)
    return {k: status.get(k, 0) for k in ("active", "ready", "terminating")}


async def _status_after_wait(client: Client, name: str) -> dict[str, Any]:
    await asyncio.sleep(LATENCY)
    job = await client.get(Job, name, "default")
    result: dict[str, Any] = codec.to_builtins(job.status)
    return result


@vector_cases(FILE, DATA["integrationCases"])
async def test_integration(case: dict[str, Any], tmp_path: Path) -> None:
    g = gates(case["gates"])
    async with api(tmp_path, g) as client, job_controller(
            client, dataclasses.replace(FAST, gates=g)) as running:
        await client.create(_integration_job(case["job"]))
        expect = case["expect"]
        if expect["reconciledByBuiltIn"]:
            async def reconciled() -> bool:
                job = await client.get(Job, "custom-job-test", "default")
                return _counts(job) == expect["status"]
            await wait_for("the built-in controller's status", reconciled)
        else:
            assert await _status_after_wait(client, "custom-job-test") == expect["statusAfterWait"]
        label = expect["metric"]["labels"][0]
        assert running.metric(METRIC, controller_name=label) == expect["metric"]["value"]


SCENARIOS = {s["name"]: s for s in DATA["scenarios"]}
EXTERNAL = "example.com/custom-job-controller"
GATE_ON = FeatureGates(job_managed_by=True)
GATE_OFF = FeatureGates(job_managed_by=False)


def _config(g: FeatureGates) -> Any:
    return dataclasses.replace(FAST, gates=g)


@pytest.mark.vectors(FILE)
async def test_scenario_reenabling(tmp_path: Path) -> None:
    steps = SCENARIOS["TestManagedBy_Reenabling"]["steps"]
    async with api(tmp_path, GATE_ON) as client:
        job = _integration_job(SCENARIOS["TestManagedBy_Reenabling"]["job"])
        async with job_controller(client, _config(GATE_ON)) as running:
            job = await client.create(job)
            assert await _status_after_wait(client, "custom-job-test") == \
                steps[0]["expect"]["statusAfterWait"]
            assert running.metric(METRIC, controller_name=EXTERNAL) == 1
        async with job_controller(client, _config(GATE_OFF)) as running:
            async def reconciled() -> bool:
                got = await client.get(Job, "custom-job-test", "default")
                return _counts(got) == steps[1]["expect"]["status"]
            await wait_for("reconciled with the gate off", reconciled)
            assert running.metric(METRIC, controller_name=EXTERNAL) == 0
        async with job_controller(client, _config(GATE_ON)) as running:
            (pod,) = await job_pods(client, job)
            await finish_pod(client, pod)
            status = await _status_after_wait(client, "custom-job-test")
            expected = steps[2]["expect"]["statusAfterWait"]
            assert {k: status.get(k, 0) for k in expected} == expected
            assert running.metric(METRIC, controller_name=EXTERNAL) == 1


@pytest.mark.vectors(FILE)
async def test_scenario_recreated_job(tmp_path: Path) -> None:
    steps = SCENARIOS["TestManagedBy_RecreatedJob"]["steps"]
    async with api(tmp_path, GATE_ON) as client, job_controller(
            client, dataclasses.replace(_config(GATE_ON), sync_batch_period=1.0)) as running:
        spec = {"completions": 1, "parallelism": 1, "template": {"spec": {
            "restartPolicy": "Never", "containers": [{"name": "main-container", "image": "foo"}]}}}
        meta = {"name": "custom-job-test", "namespace": "default"}
        job = await client.create(codec.decode({"metadata": meta, "spec": spec}, Job))

        async def reconciled() -> bool:
            got = await client.get(Job, "custom-job-test", "default")
            return _counts(got) == steps[0]["expect"]["status"]
        await wait_for("first job reconciled", reconciled)
        (pod,) = await job_pods(client, job)
        await finish_pod(client, pod)  # queues a batched sync ~1 s later
        await client.delete(Job, "custom-job-test", "default", propagation_policy="Background")
        await client.create(codec.decode(
            {"metadata": meta, "spec": {**spec, "managedBy": EXTERNAL}}, Job))
        await asyncio.sleep(1.0)
        assert await _status_after_wait(client, "custom-job-test") == \
            steps[1]["expect"]["statusAfterWait"]
        assert running.metric(METRIC, controller_name=EXTERNAL) == 1


def _owned_pod(job: Job, name: str) -> Pod:
    return codec.decode({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default",
                     "finalizers": [batch.JOB_TRACKING_FINALIZER],
                     "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job",
                                          "name": job.metadata.name, "uid": job.metadata.uid,
                                          "controller": True}]},
        "spec": {"containers": [{"name": "main", "image": "foo"}]}}, Pod)


async def _complete(client: Client, job: Job) -> Job:
    job = await client.get(Job, job.metadata.name or "", job.metadata.namespace)
    stamp = "2024-01-01T00:00:00Z"
    job.status = codec.decode({"startTime": stamp, "completionTime": stamp, "conditions": [
        {"type": "Complete", "status": "True", "lastTransitionTime": stamp}]},
        batch.JobStatus)
    return await client.update_status(job)


@pytest.mark.vectors(FILE)
async def test_scenario_using_reserved_job_finalizers(tmp_path: Path) -> None:
    steps = SCENARIOS["TestManagedBy_UsingReservedJobFinalizers"]["steps"]
    async with api(tmp_path, GATE_ON) as client, job_controller(client, _config(GATE_ON)):
        job = await client.create(codec.decode({
            "metadata": {"name": "custom-job-test", "namespace": "default"},
            "spec": {"managedBy": EXTERNAL, "template": {"spec": {
                "restartPolicy": "Never", "containers": [{"name": "c", "image": "foo"}]}}}},
            Job))
        pod = await client.create(_owned_pod(job, "external-pod"))
        await finish_pod(client, pod)
        await _complete(client, job)
        await client.patch(Pod, "external-pod", {"status": {"conditions": [
            {"type": "CustomCondition", "status": "True"}]}}, namespace="default",
            subresource="status")
        await asyncio.sleep(LATENCY)
        pod = await client.get(Pod, "external-pod", "default")
        assert pod.metadata.finalizers == steps[2]["expect"]["pod.metadata.finalizers"]


ORPHAN_CASES = DATA["syncOrphanPodDecisions_derived"]


@vector_cases(FILE, ORPHAN_CASES)
async def test_sync_orphan_pod(case: dict[str, Any], tmp_path: Path) -> None:
    pod_spec, expect = case["pod"], case["expect"]
    async with api(tmp_path, GATE_ON) as client:
        controller = JobController(client, _config(GATE_ON),
                                   metrics=controller_metrics(CollectorRegistry()))
        pod = None
        if pod_spec != "not in informer cache":
            ref = pod_spec.get("controllerRef") if pod_spec["hasFinalizer"] else None
            external = ref is not None and "custom managedBy" in ref
            job = await client.create(codec.decode({
                "metadata": {"name": "owner", "namespace": "default"},
                "spec": {**({"managedBy": EXTERNAL} if external else {}), "suspend": True,
                         "template": {"spec": {"restartPolicy": "Never",
                                               "containers": [{"name": "c", "image": "foo"}]}}}},
                Job))
            if pod_spec.get("jobFinished"):
                job = await _complete(client, job)
            pod = _owned_pod(job, "orphan")
            if ref is None:
                pod.metadata.owner_references = None
            elif ref.startswith("job not found"):
                pod.metadata.owner_references = [
                    OwnerReference(api_version="batch/v1", kind="Job", name="owner",
                                   uid="00000000-0000-0000-0000-000000000000", controller=True)]
            if not pod_spec["hasFinalizer"]:
                pod.metadata.finalizers = None
            await client.create(pod)
        for informer in (controller.jobs, controller.pods):
            informer.start()
            await informer.wait_synced(10)
        try:
            await controller.sync_orphan_pod("default/orphan")
        finally:
            await controller.stop()
        if pod is None:
            return
        # The API server's collector deletes a pod whose owner is gone: once its finalizer
        # is dropped, the pod goes.
        live = (await client.list(Pod, "default")).items
        kept = any(batch.JOB_TRACKING_FINALIZER in (p.metadata.finalizers or ()) for p in live)
        assert kept == expect.startswith("skip"), expect

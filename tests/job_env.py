"""Test harness for the Job controllers: an in-process API server on 127.0.0.1 over SQLite in
tmp_path, the controller running in-process against it with its own metrics registry, and the
test acting as kubelet (pod status through the status subresource)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry

from kubedra.api import codec
from kubedra.api.batch import Job
from kubedra.api.core import Pod
from kubedra.api.features import FeatureGates
from kubedra.apiserver.app import Options
from kubedra.client.rest import Client
from kubedra.controllers.job.controller import JobController, JobControllerConfig
from kubedra.controllers.job.pods import format_time
from kubedra.controllers.job.ttl import TTLAfterFinishedController
from kubedra.controllers.metrics import controller_metrics
from tests.conformance.scheduler_support import api_client

MANAGED_BY_ON = FeatureGates(job_managed_by=True)
FAST = JobControllerConfig(gates=MANAGED_BY_ON, sync_batch_period=0.05, pod_backoff_base=0.2,
                           pod_backoff_max=1.0, api_backoff_base=0.05, api_backoff_max=1.0)


def api(tmp_path: Path, gates: FeatureGates = MANAGED_BY_ON) -> AbstractAsyncContextManager[Client]:
    """An in-process API server (with garbage collection) and a client of it."""
    return api_client(tmp_path, Options(gates=gates))


@dataclass
class Running:
    controller: JobController
    registry: CollectorRegistry
    task: asyncio.Task[None]

    def metric(self, sample: str, /, **labels: str) -> float:
        return self.registry.get_sample_value(sample, labels) or 0.0


@contextlib.asynccontextmanager
async def job_controller(client: Client, config: JobControllerConfig = FAST, *,
                         ttl: bool = False) -> AsyncIterator[Running]:
    registry = CollectorRegistry()
    metrics = controller_metrics(registry)
    controller = JobController(client, config, metrics=metrics)
    work = [controller.run()]
    if ttl:
        work.append(TTLAfterFinishedController(client, controller.jobs, metrics=metrics).run())
    task = asyncio.ensure_future(asyncio.gather(*work))
    try:
        await controller.jobs.wait_synced(10)
        await controller.pods.wait_synced(10)
        yield Running(controller, registry, task)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
        await controller.stop()


async def wait_for(what: str, check: Callable[[], Any], timeout: float = 15.0) -> Any:
    """Poll ``check`` (sync or async) until it returns something truthy."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if asyncio.iscoroutine(result):
            result = await result
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        await asyncio.sleep(0.05)


def job_manifest(name: str, namespace: str = "default", **spec: Any) -> Job:
    body: dict[str, Any] = {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"template": {"spec": {"restartPolicy": "Never",
                                       "containers": [{"name": "main", "image": "busybox"}]}},
                 **spec},
    }
    return codec.decode(body, Job)


async def job_pods(client: Client, job: Job) -> list[Pod]:
    page = await client.list(Pod, job.metadata.namespace,
                             label_selector=f"batch.kubernetes.io/controller-uid={job.metadata.uid}")
    return page.items


async def finish_pod(client: Client, pod: Pod, exit_code: int = 0) -> Pod:
    """Play the kubelet: the pod ran and exited with ``exit_code`` just now."""
    when = format_time(datetime.now(UTC))
    phase = "Succeeded" if exit_code == 0 else "Failed"
    status = {"status": {
        "phase": phase,
        "conditions": [{"type": "Ready", "status": "False"}],
        "containerStatuses": [{
            "name": c.name, "ready": False, "restartCount": 0, "image": c.image or "",
            "imageID": "", "lastState": {},
            "state": {"terminated": {"exitCode": exit_code, "reason": "Completed"
                                     if exit_code == 0 else "Error",
                                     "startedAt": when, "finishedAt": when}},
        } for c in pod.spec.containers],
    }}
    return await client.patch(Pod, pod.metadata.name or "", status,
                              namespace=pod.metadata.namespace, subresource="status")


async def run_pod(client: Client, pod: Pod, ready: bool = True) -> Pod:
    """Play the kubelet: the pod is running (and ready)."""
    status = {"status": {"phase": "Running", "conditions": [
        {"type": "Ready", "status": "True" if ready else "False"}]}}
    return await client.patch(Pod, pod.metadata.name or "", status,
                              namespace=pod.metadata.namespace, subresource="status")

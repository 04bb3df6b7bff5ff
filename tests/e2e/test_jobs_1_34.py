"""A Job whose pods each take a GPU through a ``resource.k8s.io/v1`` claim template, on
``kubedra up --emulated-version 1.34 --nodes 2`` (all real processes: the Job and
ResourceClaim controllers in the controller manager, the 1.34 scheduler, node agents with their
example drivers): every pod gets a claim of its own, allocated a device of the node it runs on
(never one another claim holds at the time) and prepared by that node's driver; the Job
completes; each finished pod's claim is unprepared (CDI spec gone) and, generated for a pod that
is done, deleted by the claim controller; deleting the Job removes its pods."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kubedra.api.batch import Job
from kubedra.api.core import Event, Pod
from kubedra.api.resource import v1
from kubedra.client.informer import Informer
from kubedra.client.rest import Client
from kubedra.kubelet.runtime import RUN_SECONDS
from tests.e2e.node_support import eventually, socket_root
from tests.e2e.test_up import up_client
from tests.e2e.test_up_nodes_1_34 import DRIVER, kind

NS = "default"
NODES = ("node-0", "node-1")


@pytest.mark.timeout(300)
async def test_a_job_with_a_gpu_claim_template_completes_on_1_34() -> None:
    with socket_root() as data:
        async with up_client(data, "--nodes", "2", "--instances", "2",
                             "--emulated-version", "1.34") as client:
            await _scenario(client, data)


async def _scenario(client: Client, data: Path) -> None:
    async def published() -> bool:
        return {s.spec.pool.name for s in (await client.list(v1.ResourceSlice)).items} == set(
            NODES)

    await eventually("each node's slice", published, 90)
    await client.create_raw(kind("deviceclasses"), {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": DRIVER},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}})
    await client.create_raw(kind("resourceclaimtemplates"), {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
        "metadata": {"name": "gpu", "namespace": NS},
        "spec": {"spec": {"devices": {"requests": [
            {"name": "gpu", "exactly": {"deviceClassName": DRIVER}}]}}}}, NS)
    # every claim's allocation as a watch shows it, and the devices held at each moment
    seen: dict[str, tuple[str, list[tuple[str, str]]]] = {}
    clashes: list[str] = []
    claims: Informer[v1.ResourceClaim] = Informer(client, v1.ResourceClaim, namespace=NS)

    def record(*_: Any) -> None:
        held: set[tuple[str, str]] = set()
        for c in claims.list():
            if c.status.allocation is None:
                continue
            devices = [(r.pool, r.device) for r in c.status.allocation.devices.results or ()]
            owner = (c.metadata.owner_references or [])[0]
            seen[c.metadata.name or ""] = (f"{owner.kind}/{owner.name}", devices)
            clashes.extend(f"{c.metadata.name}: {d}" for d in devices if d in held)
            held.update(devices)
    claims.add_handler(on_add=record, on_update=record, on_delete=record)
    claims.start()
    await claims.wait_synced()
    try:
        await client.create_raw(kind("jobs"), {
            "apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "train", "namespace": NS},
            "spec": {"completions": 6, "parallelism": 3, "template": {
                "metadata": {"annotations": {RUN_SECONDS: "0.5"}},
                "spec": {"restartPolicy": "Never",
                         "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu"}],
                         "containers": [{"name": "main", "image": "busybox",
                                         "resources": {"claims": [{"name": "gpu"}]}}]}}}}, NS)

        async def finished() -> Job | None:
            job = await client.get(Job, "train", NS)
            done = any(c.type in ("Complete", "Failed") and c.status == "True"
                       for c in job.status.conditions or ())
            return job if done else None

        job = await eventually("the Job finished", finished, 180)
        assert (job.status.succeeded, job.status.failed) == (6, 0)
        assert [c.type for c in job.status.conditions or ()] == [
            "SuccessCriteriaMet", "Complete"]
        pods = (await client.list(Pod, NS, label_selector="job-name=train")).items
        assert len(pods) == 6 and {p.status.phase for p in pods} == {"Succeeded"}

        # a finished pod's generated claim is deleted (upstream's claim controller), after the
        # node agent unprepared it
        async def deleted() -> bool:
            return not (await client.list(v1.ResourceClaim, NS)).items

        await eventually("the finished pods' claims deleted", deleted, 60)
    finally:
        await claims.stop()
    # each pod had a claim of its own, allocated a device of the node it ran on, never one
    # another claim held at the same time
    assert clashes == []
    by_pod = {owner: devices for owner, devices in seen.values()}
    assert len(seen) == 6 and set(by_pod) == {f"Pod/{p.metadata.name}" for p in pods}
    for pod in pods:
        (device,) = by_pod[f"Pod/{pod.metadata.name}"]
        assert device[0] == pod.spec.node_name

    async def unprepared() -> bool:
        return not [s for n in NODES for s in (data / "nodes" / n / "cdi").glob(f"{DRIVER}-*")]

    await eventually("every claim unprepared", unprepared, 60)
    prepared = {e.involved_object.name for e in (await client.list(Event, NS)).items
                if e.reason == "PreparedDynamicResources"}
    assert prepared == {p.metadata.name for p in pods}

    await client.delete(Job, "train", NS, propagation_policy="Background")

    async def cleared() -> bool:
        return not (await client.list(Pod, NS)).items

    await eventually("the Job's pods deleted", cleared, 90)

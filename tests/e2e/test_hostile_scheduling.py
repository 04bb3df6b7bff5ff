"""Hostile selectors against a real scheduler (LocalCluster): claims whose selectors would
walk a 1 MB string attribute thousands of times are stopped by the CEL cost limit with
upstream's text, and a normal pod created meanwhile is scheduled within 2 s."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from kubedra.api.core import Pod
from kubedra.cli.localcluster import LocalCluster
from kubedra.client import kubeconfig
from kubedra.client.rest import Client
from kubedra.testing import WITHOUT_NODE_LIFECYCLE
from tests.e2e.dra_workload import (
    DRIVER,
    GOOD,
    create_claim_template,
    create_class_and_template,
    create_nodes,
    create_pods,
    kind,
)
from tests.timing import bound, within

BLOB = 'attributes.string["blob"]'
LOOP = "[" + ",".join(str(i) for i in range(1000)) + "]"
SHORT = "[" + ",".join(str(i) for i in range(100)) + "]"
HAS_BLOB = '"blob" in attributes.string && '
HOSTILE = [HAS_BLOB + s for s in (
    f"{LOOP}.all(i, ({BLOB} + {BLOB} + {BLOB}).size() > 0)",
    f'{LOOP}.all(i, {BLOB}.matches("^a+b?$") && size({BLOB}) > 0)',
    f'{SHORT}.all(i, {SHORT}.all(j, {BLOB}.contains("aaaaaaaaaab") == false))',
)]


async def _huge_instance_slice(client: Client) -> None:
    attrs = [{"name": "model", "string": GOOD["model"]},
             {"name": "memory", "quantity": GOOD["memory"]},
             {"name": "driver", "version": GOOD["driver"]},
             {"name": "blob", "string": "a" * 1_000_000}]
    await client.create_raw(kind("resourceslices"), {
        "apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceSlice",
        "metadata": {"name": "huge"}, "nodeName": "e2e-node-000", "driverName": DRIVER,
        "namedResources": {"instances": [{"name": "huge", "attributes": attrs}]}})


async def _hostile_pods(client: Client, ns: str) -> None:
    await create_claim_template(client, ns, "hostile", HOSTILE)
    await create_pods(client, ns, [f"hostile-{i}" for i in range(3)])


async def _wait(client: Client, ns: str, name: str, timeout: float) -> Pod:
    deadline = time.monotonic() + timeout
    while True:
        pod = await client.get(Pod, name, ns)
        if pod.spec.node_name or time.monotonic() > deadline:
            return pod
        await asyncio.sleep(0.05)


def _condition_message(pod: Pod) -> str:
    for c in pod.status.conditions or ():
        if c.type == "PodScheduled" and c.status == "False":
            return c.message or ""
    return ""


@pytest.mark.timing
@pytest.mark.timeout(180)
async def test_hostile_selectors_do_not_hold_the_scheduler(tmp_path: Path) -> None:
    async with LocalCluster(tmp_path, emulated_version="1.30",
                            controller_manager_args=WITHOUT_NODE_LIFECYCLE) as cluster, \
            Client(kubeconfig.load(cluster.kubeconfig_path)) as client:
        for ns in ("hostile", "normal"):
            await client.create_raw(kind("namespaces"), {
                "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        await create_nodes(client, 3, 2)
        await _huge_instance_slice(client)
        await create_class_and_template(client, "normal")
        await create_pods(client, "normal", ["warm-up"])
        assert (await _wait(client, "normal", "warm-up", 60)).spec.node_name

        await _hostile_pods(client, "hostile")
        deadline = time.monotonic() + 60
        while not _condition_message(await client.get(Pod, "hostile-0", "hostile")):
            assert time.monotonic() < deadline, "the hostile pod was never tried"
            await asyncio.sleep(0.1)

        with within(2.0, "the normal pod"):
            await create_pods(client, "normal", ["normal"])
            pod = await _wait(client, "normal", "normal", bound(10))
        assert pod.spec.node_name, "the normal pod was not scheduled"
        hostile = await client.get(Pod, "hostile-0", "hostile")
        assert not hostile.spec.node_name
        assert "actual cost limit exceeded" in _condition_message(hostile)

"""``kubedra scheduler`` on a 1.34 cluster (real processes: LocalCluster with
``--emulated-version 1.34``; ResourceSlices written through the API as a driver publishes
them; no node agents, so pods stay unstarted): the scheduler learns the release from
discovery and allocates ``resource.k8s.io/v1`` claims as kube-scheduler 1.34 does (its
configuration file sets 1.34's ``DynamicResourcesArgs.filterTimeout``).

* a pod naming a v1 ResourceClaimTemplate is bound, its generated claim carries the
  ``resource.kubernetes.io/delete-protection`` finalizer and
  ``status.allocation.devices.results`` (request, driver, pool, device) and is reserved
  for the pod;
* a two-request claim with ``matchAttribute`` gets devices with equal values where the
  first fit would not;
* ``firstAvailable`` falls back to its second subrequest when the first cannot be met;
* a pod that cannot fit stays Pending with a FailedScheduling event naming the reason
  and each node's first failing check;
* deleting a pod deallocates its claim and drops the finalizer (the claim controller).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from kubedra.api import codec, kinds
from kubedra.api.core import Event, Pod
from kubedra.api.release import R1_34
from kubedra.api.resource import v1
from kubedra.cli.localcluster import LocalCluster
from kubedra.client import kubeconfig
from kubedra.client.rest import Client
from kubedra.testing import WITHOUT_NODE_LIFECYCLE, fake_node

NS = "sched134"
DRIVER = "gpu.example.com"


def kind(name: str) -> kinds.Kind:
    found = kinds.lookup(name, R1_34)
    assert found is not None, name
    return found


async def eventually(what: str, check: Callable[[], Awaitable[Any]],
                     timeout: float = 90) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        got = await check()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        await asyncio.sleep(0.2)


def exactly(name: str, count: int = 1, **more: Any) -> dict[str, Any]:
    return {"name": name, "exactly": {"deviceClassName": DRIVER, "count": count, **more}}


async def publish(client: Client, node: str, models: list[str]) -> None:
    """The node's pool as a driver publishes it: one slice, a ``model`` per device."""
    await client.create_raw(kind("resourceslices"), {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-{DRIVER}"},
        "spec": {"driver": DRIVER, "nodeName": node,
                 "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                 "devices": [{"name": f"gpu-{i}", "attributes": {"model": {"string": m}}}
                             for i, m in enumerate(models)]}})


async def create_pod(client: Client, name: str, entry: dict[str, str]) -> None:
    await client.create_raw(kind("pods"), {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS},
        "spec": {"containers": [{"name": "c", "image": "busybox",
                                 "resources": {"claims": [{"name": "gpus"}]}}],
                 "resourceClaims": [{"name": "gpus", **entry}]}}, NS)


async def create_claim(client: Client, name: str, requests: list[dict[str, Any]],
                       constraints: list[dict[str, Any]] | None = None) -> None:
    devices: dict[str, Any] = {"requests": requests}
    if constraints:
        devices["constraints"] = constraints
    await client.create_raw(kind("resourceclaims"), {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": NS}, "spec": {"devices": devices}}, NS)


def picked(claim: v1.ResourceClaim) -> list[tuple[str, str, str, str]]:
    allocation = claim.status.allocation
    assert allocation is not None, claim.metadata.name
    return [(r.request, r.driver, r.pool, r.device) for r in allocation.devices.results or ()]


@pytest.mark.timeout(300)
async def test_a_1_34_scheduler_allocates_v1_claims(tmp_path: Path) -> None:
    config = tmp_path / "scheduler.yaml"
    config.write_text("apiVersion: kubescheduler.config.k8s.io/v1\n"
                      "kind: KubeSchedulerConfiguration\n"
                      "profiles:\n- pluginConfig:\n  - name: DynamicResources\n"
                      "    args:\n      filterTimeout: 30s\n")
    cluster = LocalCluster(tmp_path, emulated_version="1.34",
                           scheduler_args=("--config", str(config)),
                           controller_manager_args=WITHOUT_NODE_LIFECYCLE)
    async with cluster, Client(kubeconfig.load(cluster.kubeconfig_path)) as client:
        await client.create_raw(kind("namespaces"), {
            "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
        for node in ("node-1", "node-2"):
            await client.create(fake_node(node))
        await client.create_raw(kind("deviceclasses"), {
            "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
            "metadata": {"name": DRIVER},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}})
        # node-1 only: the pods' placement is known; devices in first-fit order a, b, a, b
        await publish(client, "node-1", ["a", "b", "a", "b"])

        async def bound(name: str) -> str | None:
            return (await client.get(Pod, name, NS)).spec.node_name

        async def claim_of(pod_name: str) -> v1.ResourceClaim | None:
            pod = await client.get(Pod, pod_name, NS)
            for status in pod.status.resource_claim_statuses or ():
                if status.resource_claim_name:
                    return await client.get(v1.ResourceClaim, status.resource_claim_name, NS)
            return None

        # 1. a claim from a template
        await client.create_raw(kind("resourceclaimtemplates"), {
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "one-gpu", "namespace": NS},
            "spec": {"spec": {"devices": {"requests": [exactly("gpu")]}}}}, NS)
        await create_pod(client, "from-template", {"resourceClaimTemplateName": "one-gpu"})
        assert await eventually("from-template bound", lambda: bound("from-template")) \
            == "node-1"
        generated = await eventually("the generated claim", lambda: claim_of("from-template"))
        pod = await client.get(Pod, "from-template", NS)
        assert generated.metadata.finalizers == [v1.FINALIZER]
        assert picked(generated) == [("gpu", DRIVER, "node-1", "gpu-0")]
        assert [(r.name, r.uid) for r in generated.status.reserved_for or ()] == [
            ("from-template", pod.metadata.uid)]
        selector = codec.to_builtins(generated.status.allocation)["nodeSelector"]
        assert selector == {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]}

        # 2. two requests with matchAttribute (gpu-0 is taken): first fit alone would take
        # gpu-1 (b) and gpu-2 (a); equal models are gpu-1 and gpu-3
        await create_claim(client, "pair", [exactly("x"), exactly("y")],
                           [{"matchAttribute": f"{DRIVER}/model"}])
        await create_pod(client, "pair-pod", {"resourceClaimName": "pair"})
        assert await eventually("pair-pod bound", lambda: bound("pair-pod")) == "node-1"
        pair = await client.get(v1.ResourceClaim, "pair", NS)
        assert picked(pair) == [("x", DRIVER, "node-1", "gpu-1"),
                                ("y", DRIVER, "node-1", "gpu-3")]

        # 3. firstAvailable: two devices are not left, one is
        await create_claim(client, "fallback", [{"name": "req", "firstAvailable": [
            {"name": "two", "deviceClassName": DRIVER, "count": 2},
            {"name": "one", "deviceClassName": DRIVER, "count": 1}]}])
        await create_pod(client, "fallback-pod", {"resourceClaimName": "fallback"})
        assert await eventually("fallback-pod bound", lambda: bound("fallback-pod")) \
            == "node-1"
        fallback = await client.get(v1.ResourceClaim, "fallback", NS)
        assert picked(fallback) == [("req/one", DRIVER, "node-1", "gpu-2")]

        # 4. nothing is left: the next pod stays Pending, and says why
        await create_claim(client, "none-left", [exactly("gpu")])
        await create_pod(client, "waiting", {"resourceClaimName": "none-left"})

        async def failed() -> list[str]:
            events = await client.list(Event, NS)
            return [e.message or "" for e in events.items if e.reason == "FailedScheduling"
                    and e.involved_object.name == "waiting"]
        (message, *_) = await eventually("FailedScheduling of waiting", failed)
        # upstream's counts, then explain's first failing check per node (as on 1.30)
        assert message == (
            "0/2 nodes are available: 2 cannot allocate all claims. still not schedulable. "
            f"On 1 node(s): {NS}/none-left#gpu: needs 1 device (ExactCount), 0 of the node's 0 "
            f"usable; on 1 node(s): {NS}/none-left#gpu: needs 1 device (ExactCount), 0 of the "
            "node's 4 usable."), message
        assert await bound("waiting") is None

        # 5. the pair's pod goes: the claim is deallocated, its finalizer dropped, and the
        # waiting pod gets the devices
        await client.delete(Pod, "pair-pod", NS, grace_period_seconds=0)

        async def released() -> bool:
            claim = await client.get(v1.ResourceClaim, "pair", NS)
            return (claim.status.allocation is None and not claim.status.reserved_for
                    and not claim.metadata.finalizers)
        await eventually("pair deallocated", released)
        assert await eventually("waiting bound", lambda: bound("waiting")) == "node-1"
        logs = (tmp_path / "logs" / "scheduler-0.log").read_text(errors="replace")
        assert "Traceback" not in logs and "does not serve" not in logs, logs[-3000:]

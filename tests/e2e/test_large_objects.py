"""Objects up to the API server's request size limit reach every informer of every component.

Regression: the watch reader stopped at aiohttp's 512 KiB line limit, the error killed the
informer task silently and the component stayed up with a frozen cache (so no further pod was
scheduled and template pods got no claim).

The first test runs the scheduler's and the controller manager's own informers against an
in-process server, creating objects of 0.6, 1.5 and 2.9 MiB of every kind they watch after
they synced (so the objects arrive as watch events), then a small one that must arrive too.
The second is the scenario end to end with real processes: a 2.9 MiB pod and a 2.9 MiB
ResourceClaimParameters in the cluster, 200 pods with claims scheduled, and scheduling still
working after the scheduler is SIGKILLed and restarted.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kubedra.api.core import Pod
from kubedra.cli.localcluster import LocalCluster
from kubedra.client import kubeconfig
from kubedra.client.informer import Informer
from kubedra.client.rest import Client, kind_of
from kubedra.controllers.resourceclaim import ResourceClaimController
from kubedra.scheduler.setup import build_scheduler
from kubedra.testing import WITHOUT_NODE_LIFECYCLE
from tests.conformance.scheduler_support import api_client
from tests.e2e.dra_workload import create_class_and_template, create_nodes, create_pods, kind
from tests.e2e.test_control_loop import wait_for

MIB = 1024 * 1024
SIZES = {"s06": int(0.6 * MIB), "s15": int(1.5 * MIB), "s29": int(2.9 * MIB)}
NS = "big"
RV1 = "resource.k8s.io/v1alpha2"


def _ref(kind_name: str, name: str) -> dict[str, str]:
    return {"apiGroup": "resource.k8s.io", "kind": kind_name, "name": name}


# kind -> body with a free-form field of ``n`` bytes (each kind's largest unvalidated string)
BODIES: dict[str, Callable[[str, int], dict[str, Any]]] = {
    "Pod": lambda name, n: {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS},
        "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9",
                                 "env": [{"name": "BIG", "value": "x" * n}]}]}},
    # a Namespace has no free-form field; labels are unbounded in number (about n bytes)
    "Namespace": lambda name, n: {
        "apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": name, "labels": {f"l{i}": "x" * 63 for i in range(n // 76)}}},
    "Node": lambda name, n: {
        "apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
        "spec": {"providerID": "x" * n}},
    "ResourceClaim": lambda name, n: {
        "apiVersion": RV1, "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"resourceClassName": "c", "parametersRef": _ref("X", "x" * n)}},
    "ResourceClaimTemplate": lambda name, n: {
        "apiVersion": RV1, "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"spec": {"resourceClassName": "c", "parametersRef": _ref("X", "x" * n)}}},
    "ResourceClass": lambda name, n: {
        "apiVersion": RV1, "kind": "ResourceClass", "metadata": {"name": name},
        "driverName": "big.example.com", "parametersRef": _ref("X", "x" * n)},
    "ResourceSlice": lambda name, n: {
        "apiVersion": RV1, "kind": "ResourceSlice", "metadata": {"name": name},
        "driverName": "big.example.com", "nodeName": "node-a",
        "namedResources": {"instances": [
            {"name": "i", "attributes": [{"name": "blob", "string": "x" * n}]}]}},
    "ResourceClaimParameters": lambda name, n: {
        "apiVersion": RV1, "kind": "ResourceClaimParameters",
        "metadata": {"name": name, "namespace": NS}, "generatedFrom": _ref("X", "x" * n)},
    "ResourceClassParameters": lambda name, n: {
        "apiVersion": RV1, "kind": "ResourceClassParameters",
        "metadata": {"name": name, "namespace": NS}, "generatedFrom": _ref("X", "x" * n)},
}


@pytest.mark.timeout(240)
async def test_objects_up_to_the_size_limit_reach_every_informer(tmp_path: Path) -> None:
    async with api_client(tmp_path) as client:
        await client.create_raw(kind("namespaces"), {
            "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
        scheduler = build_scheduler(client, record_events=False)
        controller = ResourceClaimController(client)
        informers: list[Informer[Any]] = [*scheduler.informers.all(), *controller.informers]
        watched = {kind_of(i.model).kind: kind_of(i.model) for i in informers}
        assert set(watched) <= set(BODIES), f"no large body for {set(watched) - set(BODIES)}"
        for informer in informers:
            informer.start()
        try:
            await asyncio.gather(*(i.wait_synced(30) for i in informers))
            for kind_name, k in sorted(watched.items()):
                for name, size in [*SIZES.items(), ("small", 10)]:
                    await client.create_raw(k, BODIES[kind_name](name, size),
                                            NS if k.namespaced else None)

            def missing() -> list[str]:
                return [f"{kind_of(i.model).kind}/{name}" for i in informers
                        for name in [*SIZES, "small"] if i.get(name, _ns(i)) is None]

            await wait_for("every object in every informer", lambda: not missing(), 120)
        finally:
            for informer in informers:
                await informer.stop()


@pytest.mark.timeout(120)
async def test_watch_reads_an_event_of_2_9_mib(tmp_path: Path) -> None:
    async with api_client(tmp_path) as client:
        await client.create_raw(kind("namespaces"), {
            "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
        start = (await client.list(Pod, NS)).resource_version
        await client.create_raw(kind("pods"), BODIES["Pod"]("huge", SIZES["s29"]), NS)
        await client.create_raw(kind("pods"), BODIES["Pod"]("small", 10), NS)
        seen: list[tuple[str, int]] = []
        async for event in client.watch(Pod, NS, resource_version=start, timeout_seconds=5):
            env = event.object.spec.containers[0].env or []
            seen.append((event.object.metadata.name or "", len(env[0].value or "")))
            if len(seen) == 2:
                break
        assert seen == [("huge", SIZES["s29"]), ("small", 10)]


def _ns(informer: Informer[Any]) -> str | None:
    return NS if kind_of(informer.model).namespaced else None


@pytest.mark.timeout(420)
async def test_large_objects_do_not_stop_scheduling(tmp_path: Path) -> None:
    cluster = LocalCluster(tmp_path, emulated_version="1.30",
                           controller_manager_args=WITHOUT_NODE_LIFECYCLE)
    async with cluster, Client(kubeconfig.load(cluster.kubeconfig_path)) as client:
        await client.create_raw(kind("namespaces"), {
            "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
        await create_nodes(client, 10, 22)
        await create_class_and_template(client, NS)
        await client.create_raw(kind("pods"), BODIES["Pod"]("huge", SIZES["s29"]), NS)
        await client.create_raw(kind("resourceclaimparameters"),
                                BODIES["ResourceClaimParameters"]("huge", SIZES["s29"]), NS)
        pods: Informer[Pod] = Informer(client, Pod, namespace=NS)
        pods.start()
        await pods.wait_synced()

        def bound(prefix: str) -> int:
            return sum(1 for p in pods.list()
                       if p.spec.node_name and (p.metadata.name or "").startswith(prefix))

        try:
            await create_pods(client, NS, [f"pod-{i:03d}" for i in range(200)])
            await wait_for("200 pods bound", lambda: bound("pod-") == 200, 240)
            scheduler = cluster.schedulers[0]
            await scheduler.kill()
            await scheduler.start()
            await create_pods(client, NS, [f"after-{i:02d}" for i in range(20)])
            await wait_for("20 more pods bound after a restart",
                           lambda: bound("after-") == 20, 120)
            assert all(c.running for c in cluster.components)
        finally:
            await pods.stop()

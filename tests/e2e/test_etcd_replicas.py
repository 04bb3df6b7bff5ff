"""Two API server replicas on a three-member etcd, as real processes (LocalCluster).

The components reach both replicas through the cluster's front; the test watches pods
through the second replica while creating them through the first. Midway one etcd
member (the first endpoint every client uses) is SIGKILLed: no pod, claim or allocation may
be lost and no instance allocated twice. Then the API server that holds the garbage
collector's Lease is SIGKILLed while writes go through it: every write it acknowledged must
be readable through the other, which takes the Lease over and collects garbage.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import aiohttp
import msgspec
import pytest

from kubedra.api.coordination import Lease
from kubedra.api.core import Namespace, Node, Pod
from kubedra.api.meta import ObjectMeta
from kubedra.api.resource.v1alpha2 import ResourceSlice
from kubedra.cli.localcluster import Component, LocalCluster
from kubedra.cli.singletons import GC_LEASE
from kubedra.client import kubeconfig
from kubedra.client.errors import ApiError
from kubedra.client.informer import Informer
from kubedra.client.rest import Client
from kubedra.testing import WITHOUT_NODE_LIFECYCLE, fake_node
from tests.e2e.dra_workload import (
    allocations,
    bound_count,
    check_all_bound,
    create_pods,
    create_workload,
    kind,
)
from tests.e2e.test_control_loop import wait_for
from tests.etcd_processes import require_etcd

NODES, PER_NODE, PODS = 20, 10, 150
NS = "e2e-etcd"


async def test_replicas_on_three_member_etcd(tmp_path: Path) -> None:
    require_etcd()
    cluster = LocalCluster(tmp_path, emulated_version="1.30",
                           etcd_members=3, apiservers=2, verbose=1,
                           controller_manager_args=WITHOUT_NODE_LIFECYCLE)
    async with cluster, \
            Client(kubeconfig.load(cluster.kubeconfigs[0])) as first, \
            Client(kubeconfig.load(cluster.kubeconfigs[1])) as second:
        await create_workload(first, NS, NODES, PER_NODE)
        pods = Informer(second, Pod, namespace=NS)  # sees writes made through the other one
        pods.start()
        await pods.wait_synced()

        def bound() -> int:
            return bound_count(pods)

        try:
            names = [f"pod-{i:03d}" for i in range(PODS)]
            creating = asyncio.create_task(create_pods(first, NS, names))
            await wait_for("a third of the pods bound", lambda: bound() >= PODS // 3, 240)
            await cluster.etcd[0].kill()
            await creating
            await wait_for("every pod bound", lambda: bound() == PODS, 240)

            state = await allocations(second, NS)
            assert len(state.claims) == PODS
            check_all_bound(pods, names, NS, state)
        finally:
            await pods.stop()

        # Garbage collection runs on exactly one replica: the Lease names one of them.
        holder = await _gc_holder(second, cluster)
        clients = [first, second]

        # Optimistic concurrency holds across replicas.
        a = await first.get(Namespace, NS)
        b = await second.get(Namespace, NS)
        await first.update(msgspec.structs.replace(
            a, metadata=msgspec.structs.replace(a.metadata, labels={"by": "first"})))
        with pytest.raises(ApiError) as conflict:
            await second.update(b)
        assert conflict.value.code == 409

        # SIGKILL the collecting replica while writes go through it.
        survivor = clients[1 - holder]
        acknowledged = await _write_while_killed(cluster.apiservers[holder], clients[holder])
        assert acknowledged, "no write was acknowledged before the kill"
        for name in acknowledged:
            await survivor.get(Namespace, name)  # raises (404) if the write was lost

        # The survivor takes the Lease over and collects: a Node's slice goes with the Node.
        deadline = time.monotonic() + 60
        while await _gc_holder(survivor, cluster) == holder:
            assert time.monotonic() < deadline, "the GC Lease was not taken over"
            await asyncio.sleep(0.5)
        node = await survivor.create(fake_node("gc-node"))
        await survivor.create_raw(kind("resourceslices"), {
            "apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceSlice",
            "metadata": {"name": "gc-slice", "ownerReferences": [
                {"apiVersion": "v1", "kind": "Node", "name": "gc-node",
                 "uid": node.metadata.uid}]},
            "nodeName": "gc-node", "driverName": "gc.example.com",
            "namedResources": {"instances": []}})
        await survivor.delete(Node, "gc-node")
        deadline = time.monotonic() + 30
        while any(s.metadata.name == "gc-slice"
                  for s in (await survivor.list_all(ResourceSlice)).items):
            assert time.monotonic() < deadline, "the orphaned slice was not collected"
            await asyncio.sleep(0.2)


async def _gc_holder(client: Client, cluster: LocalCluster) -> int:
    """Which replica holds the garbage collector's Lease (identities end in the port)."""
    lease = await client.get(Lease, GC_LEASE, "kube-system")
    identity = lease.spec.holder_identity or ""
    ports = [s.rsplit(":", 1)[1] for s in cluster.servers]
    assert identity.rsplit("_", 1)[-1] in ports, identity
    return ports.index(identity.rsplit("_", 1)[-1])


async def _write_while_killed(replica: Component, through: Client) -> list[str]:
    """Create namespaces through ``replica`` until it is SIGKILLed mid-stream."""
    acknowledged: list[str] = []
    stop = asyncio.Event()

    async def writer(w: int) -> None:
        i = 0
        while not stop.is_set():
            name = f"ack-{w}-{i}"
            i += 1
            try:
                await through.create(Namespace(api_version="v1", kind="Namespace",
                                               metadata=ObjectMeta(name=name)))
            except (ApiError, aiohttp.ClientError, OSError):
                return  # the server went away mid-request: not acknowledged
            acknowledged.append(name)

    writers = [asyncio.create_task(writer(w)) for w in range(8)]
    await wait_for("some acknowledged writes", lambda: len(acknowledged) >= 40, 60)
    await replica.kill()
    stop.set()
    await asyncio.gather(*writers)
    return acknowledged

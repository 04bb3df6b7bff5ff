"""The whole control loop over HTTP with real processes (LocalCluster: API server, two
scheduler replicas with leader election, controller manager): 2,000 pods with claims from a
template on 100 nodes x 20 matching instances (+2 decoys each).

Checks: every pod bound; every claim allocated on its pod's node to a distinct instance that
passes the class filter and the claim selector, reserved for the pod, with the finalizer; the
leader is SIGKILLed halfway and the other replica takes over without double allocation; one
more pod stays Pending with the upstream reason; deleting pods deallocates their claims and the
pending pod is then scheduled.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from kubedra.api.coordination import Lease
from kubedra.api.core import Pod
from kubedra.cli.localcluster import LocalCluster
from kubedra.client import kubeconfig
from kubedra.client.informer import Informer
from kubedra.client.rest import Client
from kubedra.testing import WITHOUT_NODE_LIFECYCLE
from tests.e2e.dra_workload import (
    allocations,
    bound_count,
    check_all_bound,
    check_bound_pod,
    create_pods,
    create_workload,
)

NODES, PER_NODE, PODS = 100, 20, 2000
NS = "e2e"
LEADER_FLAGS = ["--leader-elect-lease-duration", "4", "--leader-elect-renew-deadline", "3",
                "--leader-elect-retry-period", "0.5"]
PENDING_REASON = ("0/100 nodes are available: 100 resourceclaim cannot be allocated for the "
                  "node (unsuitable). still not schedulable.")


async def wait_for(what: str, ok: Callable[[], bool], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not ok():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        await asyncio.sleep(0.1)


async def kill_leader(client: Client, cluster: LocalCluster) -> str:
    """SIGKILL the leading scheduler. A replica that lost the lease before (a renewal late on
    a loaded host) has exited, as upstream's does, and is started again first, as the
    supervisor of ``kubedra up`` would: the other replica must be there to take over."""
    lease = await client.get(Lease, "kube-scheduler", "kube-system")
    holder = lease.spec.holder_identity
    for replica in cluster.schedulers:
        if replica.name != holder and not replica.running:
            await replica.start()
    leader = next(c for c in cluster.schedulers if c.name == holder)
    await leader.kill()  # SIGKILL: no release, no cleanup
    return leader.name


@pytest.mark.timeout(420)
async def test_control_loop(tmp_path: Path) -> None:
    cluster = LocalCluster(tmp_path, emulated_version="1.30",
                           schedulers=2, scheduler_args=LEADER_FLAGS,
                           controller_manager_args=WITHOUT_NODE_LIFECYCLE)
    async with cluster, Client(kubeconfig.load(cluster.kubeconfig_path)) as client:
        await create_workload(client, NS, NODES, PER_NODE)
        pods = Informer(client, Pod, namespace=NS)
        pods.start()
        await pods.wait_synced()

        def bound() -> int:
            return bound_count(pods)

        try:
            names = [f"pod-{i:04d}" for i in range(PODS)]
            creating = asyncio.create_task(create_pods(client, NS, names))
            await wait_for("half of the pods bound", lambda: bound() >= PODS // 2, 200)
            killed = await kill_leader(client, cluster)
            assert bound() < PODS  # midway: the other replica has work left
            await creating
            await wait_for("every pod bound", lambda: bound() == PODS, 200)
            lease = await client.get(Lease, "kube-scheduler", "kube-system")
            assert lease.spec.holder_identity not in (None, killed)

            check_all_bound(pods, names, NS, await allocations(client, NS))

            await create_pods(client, NS, ["pending"])

            def pending_reason() -> str | None:
                pod = pods.get("pending", NS)
                for c in (pod.status.conditions or ()) if pod else ():
                    if c.type == "PodScheduled" and c.status == "False":
                        return c.message
                return None

            await wait_for("the Unschedulable condition", lambda: pending_reason() is not None,
                           30)
            assert pending_reason() == PENDING_REASON
            pending = pods.get("pending", NS)
            assert pending is not None and not pending.spec.node_name

            victims = names[:5]
            freed = [(pods.get(n, NS) or Pod()).status.resource_claim_statuses or []
                     for n in victims]
            for name in victims:
                await client.delete(Pod, name, NS, grace_period_seconds=0)
            await wait_for("the pending pod bound",
                           lambda: bool((pods.get("pending", NS) or Pod()).spec.node_name), 60)
            state = await allocations(client, NS)
            assert not state.doubles()
            for statuses in freed:
                claim = state.claims.get(statuses[0].resource_claim_name or "")
                assert claim is None or claim.status.allocation is None
            pending = pods.get("pending", NS)
            assert pending is not None
            check_bound_pod(pending, state)
        finally:
            await pods.stop()

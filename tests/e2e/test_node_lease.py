"""The node agent's heartbeat against a real API server: the Lease is renewed from the one
last written, without a GET (as upstream's lease controller), and read again only when
someone else changed it; a Lease another holder still renews is refused, an expired one
taken over."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import msgspec
import pytest

from kubedra.api.coordination import Lease
from kubedra.api.core import Node
from kubedra.client import kubeconfig
from kubedra.client.rest import Client
from kubedra.kubelet import node as node_module
from kubedra.kubelet.node import LEASE_NAMESPACE, NodeAgentNode, NodeClaimed, NodeConfig
from kubedra.tasks import cancel_and_wait
from tests.e2e.conftest import Server
from tests.e2e.node_support import apiserver_requests


async def test_lease_renewed_without_a_get(apiserver: Server, api_client: Any) -> None:
    name = f"lease-{uuid.uuid4().hex[:8]}"
    async with Client(kubeconfig.load(apiserver.kubeconfig)) as client:
        node = NodeAgentNode(client, NodeConfig(name=name))
        await node.register()
        await node.renew_lease()  # created
        gets = apiserver_requests(api_client, "get", "leases")
        for _ in range(3):
            await node.renew_lease()
        assert apiserver_requests(api_client, "get", "leases") == gets

        stored = await client.get(Lease, name, LEASE_NAMESPACE)
        assert stored == node.lease
        # another agent renewing the Lease: refused, and the Lease left to it
        other = await client.update(msgspec.structs.replace(stored, spec=msgspec.structs.replace(
            stored.spec, holder_identity="someone-else")))
        with pytest.raises(NodeClaimed, match=f"node {name} is already run by another node "
                                              f"agent: its Lease kube-node-lease/{name} is "
                                              "held by 'someone-else' and renewed until "):
            await node.renew_lease()
        assert await client.get(Lease, name, LEASE_NAMESPACE) == other
        # its Lease expired (renewTime + leaseDuration in the past): taken over
        await client.update(msgspec.structs.replace(other, spec=msgspec.structs.replace(
            other.spec, renew_time="2020-01-01T00:00:00.000000Z")))
        gets = apiserver_requests(api_client, "get", "leases")
        await node.renew_lease()  # a conflict: read again, then renewed
        assert apiserver_requests(api_client, "get", "leases") == gets + 1
        renewed = await client.get(Lease, name, LEASE_NAMESPACE)
        assert renewed.spec.holder_identity == name
        assert renewed == node.lease


async def test_ready_posted_again_after_a_stalled_heartbeat(
        apiserver: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    """An agent whose beats stalled (stopped, or the API server away) may have had its Node
    marked Unknown meanwhile: it posts its status with the next renewal, not a minute later."""
    monkeypatch.setattr(node_module, "RENEW_INTERVAL", 0.2)
    name = f"stall-{uuid.uuid4().hex[:8]}"
    async with Client(kubeconfig.load(apiserver.kubeconfig)) as client:
        node = NodeAgentNode(client, NodeConfig(name=name))
        await node.register()
        beating = asyncio.create_task(node.run())
        try:
            await asyncio.sleep(0.5)
            stored = await client.get(Node, name)
            unknown = [msgspec.structs.replace(c, status="Unknown", reason="NodeStatusUnknown")
                       for c in stored.status.conditions or ()]
            await client.update_status(msgspec.structs.replace(
                stored, status=msgspec.structs.replace(stored.status, conditions=unknown)))
            time.sleep(1.0)  # the agent's loop stalls (blocked, as a stopped process)
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                ready = {c.type: c.status
                         for c in (await client.get(Node, name)).status.conditions or ()}
                if ready["Ready"] == "True":
                    break
                await asyncio.sleep(0.1)
            assert ready["Ready"] == "True"
        finally:
            await cancel_and_wait(beating)

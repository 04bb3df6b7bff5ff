"""The node agent's heartbeat against a real API server: the Lease is renewed from the one
last written, without a GET (as upstream's lease controller), and read again only when
someone else changed it; a Lease another holder still renews is refused, an expired one
taken over."""

from __future__ import annotations

import uuid
from typing import Any

import msgspec
import pytest

from kubedra.api.coordination import Lease
from kubedra.client import kubeconfig
from kubedra.client.rest import Client
from kubedra.kubelet.node import LEASE_NAMESPACE, NodeAgentNode, NodeClaimed, NodeConfig
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

"""Creating fake Nodes with ResourceSlices on a server (``kubedra up --fake-nodes``, the
scheduler benchmark), from the builders of :mod:`kubedra.testing`, and standing in for their
kubelets' heartbeat (``up``)."""

from __future__ import annotations

import asyncio
import logging

from kubedra.api.core import Node
from kubedra.client.errors import ApiError, is_already_exists
from kubedra.client.rest import Client
from kubedra.kubelet.node import NodeAgentNode, NodeClaimed, NodeConfig
from kubedra.testing import fake_node, fake_slice

log = logging.getLogger(__name__)


async def create_fake_nodes(client: Client, count: int, instances: int, driver: str,
                            prefix: str = "node-", concurrency: int = 16,
                            attributes: bool = False, slices: bool = True) -> None:
    """Create ``count`` Nodes, each with one ResourceSlice of ``instances`` instances
    (without, when not ``slices``). Existing ones are kept, so the command can be
    repeated."""
    gate = asyncio.Semaphore(concurrency)

    async def one(i: int) -> None:
        async with gate:
            node = fake_node(f"{prefix}{i}")
            try:
                node = await client.create(node)
            except ApiError as e:
                if not is_already_exists(e):
                    raise
                node = await client.get(Node, node.metadata.name or "")
            if not slices:
                return
            try:
                await client.create(fake_slice(node, instances, driver, attributes))
            except ApiError as e:
                if not is_already_exists(e):
                    raise

    await asyncio.gather(*(one(i) for i in range(count)))


async def keep_alive(client: Client, names: list[str]) -> None:
    """Post the fake Nodes' Ready status and renew their Leases until cancelled, as kwok does
    for the Nodes it fakes, so the node lifecycle controller sees them alive. A Node a real
    agent holds is left to it."""
    async def one(node: NodeAgentNode) -> None:
        while True:
            try:
                await node.register()
                break
            except NodeClaimed as e:
                log.warning("not keeping fake node %s alive: %s", node.config.name, e)
                return
            except Exception as e:
                log.warning("fake node %s: %s (retrying)", node.config.name, e)
            await asyncio.sleep(1.0)
        await node.run()

    await asyncio.gather(*(one(NodeAgentNode(client, NodeConfig(name=name)))
                           for name in names))
    await asyncio.Event().wait()  # every Node left to its agent: nothing more to do

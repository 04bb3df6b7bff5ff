"""Creating fake Nodes with ResourceSlices on a server (``kubedra up --fake-nodes``, the
scheduler benchmark), from the builders of :mod:`kubedra.testing`."""

from __future__ import annotations

import asyncio

from kubedra.api.core import Node
from kubedra.client.errors import ApiError, is_already_exists
from kubedra.client.rest import Client
from kubedra.testing import fake_node, fake_slice


async def create_fake_nodes(client: Client, count: int, instances: int, driver: str,
                            prefix: str = "node-", concurrency: int = 16,
                            attributes: bool = False) -> None:
    """Create ``count`` Nodes, each with one ResourceSlice of ``instances`` instances.
    Existing ones are kept, so the command can be repeated."""
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
            try:
                await client.create(fake_slice(node, instances, driver, attributes))
            except ApiError as e:
                if not is_already_exists(e):
                    raise

    await asyncio.gather(*(one(i) for i in range(count)))

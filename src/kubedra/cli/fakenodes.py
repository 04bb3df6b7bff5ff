"""Creating fake Nodes with ResourceSlices on a server (``kubedra up --fake-nodes``, the
scheduler benchmark), from the builders of :mod:`kubedra.testing`, in the DRA version the
server serves, and standing in for their kubelets' heartbeat (``up``)."""

from __future__ import annotations

import asyncio
import logging

from kubedra.api.core import Node
from kubedra.api.meta import TypedObject
from kubedra.api.resource import v1
from kubedra.client.discovery import RESOURCE, V1, V1ALPHA2, served_versions
from kubedra.client.errors import ApiError, is_already_exists
from kubedra.client.rest import Client
from kubedra.driver.example import device_names, generated_devices
from kubedra.kubelet.node import KUBELET_VERSION, NodeAgentNode, NodeClaimed, NodeConfig
from kubedra.testing import fake_device_slices, fake_node, fake_slice

log = logging.getLogger(__name__)


async def create_fake_nodes(client: Client, count: int, instances: int, driver: str,
                            prefix: str = "node-", concurrency: int = 16,
                            attributes: bool = False, slices: str | None = V1ALPHA2) -> None:
    """Create ``count`` Nodes, each with ``instances`` GPU-like instances in ResourceSlices of
    DRA version ``slices``: v1alpha2's named resources (one slice), v1's devices (the example
    driver's, as the node's pool: as that driver would publish them), or none. Existing ones
    are kept, so the command can be repeated."""
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
            objs: list[TypedObject] = []
            if slices == V1ALPHA2:
                objs = [fake_slice(node, instances, driver, attributes)]
            elif slices == V1:  # the example driver's devices: examples/v1.34 fit them
                devices = generated_devices(instances) if attributes else [
                    v1.Device(name=name) for name in device_names(instances)]
                objs = list(fake_device_slices(node, devices, driver))
            for obj in objs:
                try:
                    await client.create(obj)
                except ApiError as e:
                    if not is_already_exists(e):
                        raise

    await asyncio.gather(*(one(i) for i in range(count)))


async def slices_served(client: Client) -> str | None:
    """The DRA version the fake nodes' slices are written in: the server's (v1alpha2 on
    1.30, v1 on 1.34); None, said in one line, when it serves neither."""
    found = await served_versions(client, RESOURCE, (V1ALPHA2, V1))
    if not found:
        log.warning("up: the API server serves neither %s/%s nor %s/%s: the fake nodes get "
                    "no ResourceSlices", RESOURCE, V1ALPHA2, RESOURCE, V1)
        return None
    return found[0]


async def keep_alive(client: Client, names: list[str],
                     kubelet_version: str = KUBELET_VERSION) -> None:
    """Post the fake Nodes' Ready status (naming ``kubelet_version``) and renew their Leases
    until cancelled, as kwok does for the Nodes it fakes, so the node lifecycle controller
    sees them alive. A Node a real agent holds is left to it."""
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

    await asyncio.gather(*(one(NodeAgentNode(client, NodeConfig(
        name=name, kubelet_version=kubelet_version))) for name in names))
    await asyncio.Event().wait()  # every Node left to its agent: nothing more to do

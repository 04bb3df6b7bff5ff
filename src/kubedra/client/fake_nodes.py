"""Fake Nodes with ResourceSlices, for trying the control plane without a node agent
(``kubedra up --fake-nodes``, benchmarks and end-to-end tests)."""

from __future__ import annotations

import asyncio

from kubedra.api.core import Node, NodeSpec, NodeStatus
from kubedra.api.meta import ObjectMeta, OwnerReference
from kubedra.api.quantity import Quantity
from kubedra.api.resource import (
    API_VERSION,
    NamedResourcesAttribute,
    NamedResourcesInstance,
    NamedResourcesIntSlice,
    NamedResourcesResources,
    NamedResourcesStringSlice,
    ResourceSlice,
)
from kubedra.client.errors import ApiError, is_already_exists
from kubedra.client.rest import Client


def fake_node(name: str) -> Node:
    capacity = {"cpu": Quantity.parse("4"), "memory": Quantity.parse("32Gi"),
                "pods": Quantity.parse("110")}
    return Node(api_version="v1", kind="Node",
                metadata=ObjectMeta(name=name, labels={"kubernetes.io/hostname": name}),
                spec=NodeSpec(),
                status=NodeStatus(capacity=capacity, allocatable=dict(capacity)))


def gpu_attributes(i: int) -> list[NamedResourcesAttribute]:
    """Attributes of every kind, like the cards of ``examples/gpu-resourceslice.yaml``:
    even instances have 80Gi of memory, odd ones 40Gi."""
    return [
        NamedResourcesAttribute(name="model", string="a100"),
        NamedResourcesAttribute(name="memory", quantity=Quantity.parse("80Gi" if i % 2 == 0
                                                                       else "40Gi")),
        NamedResourcesAttribute(name="driver-version", version="535.104.5"),
        NamedResourcesAttribute(name="mig-capable", bool_=i % 2 == 0),
        NamedResourcesAttribute(name="index", int_=i),
        NamedResourcesAttribute(name="numa-nodes", int_slice=NamedResourcesIntSlice(ints=[i % 2])),
        NamedResourcesAttribute(name="features",
                                string_slice=NamedResourcesStringSlice(strings=["fp64"])),
    ]


def fake_slice(node: Node, instances: int, driver: str,
               attributes: bool = False) -> ResourceSlice:
    name = node.metadata.name or ""
    owner = OwnerReference(api_version="v1", kind="Node", name=name,
                           uid=node.metadata.uid or "", controller=True)
    return ResourceSlice(
        api_version=API_VERSION, kind="ResourceSlice",
        metadata=ObjectMeta(name=f"{name}-{driver}", owner_references=[owner]),
        node_name=name, driver_name=driver,
        named_resources=NamedResourcesResources(
            instances=[NamedResourcesInstance(name=f"instance-{i}",
                                              attributes=gpu_attributes(i) if attributes else None)
                       for i in range(instances)]))


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

"""A public test kit: object builders for Nodes with GPU-like ResourceSlices (v1.30's named
resources, or the v1 devices a 1.34 driver publishes), standing in for the node side in tests,
benchmarks and ``kubedra up --fake-nodes`` (as kopf's ``kopf.testing``).

Pure builders, no I/O; :mod:`kubedra.cli.fakenodes` creates them on a server.
"""

from __future__ import annotations

from collections.abc import Sequence

from kubedra.api.core import LABEL_HOSTNAME, Node, NodeSpec, NodeStatus
from kubedra.api.meta import ObjectMeta, OwnerReference
from kubedra.api.quantity import Quantity
from kubedra.api.resource import v1
from kubedra.api.resource.v1alpha2 import (
    NamedResourcesAttribute,
    NamedResourcesInstance,
    NamedResourcesIntSlice,
    NamedResourcesResources,
    NamedResourcesStringSlice,
    ResourceSlice,
    node_slice,
)

WITHOUT_NODE_LIFECYCLE = ("--controllers=*,-node-lifecycle-controller",)
"""Controller-manager flags for a cluster of fake Nodes: no kubelet renews their Leases, so
the node lifecycle controller would mark them Unknown and taint them a minute after their
creation (upstream's scheduler_perf runs without that controller too)."""


def fake_node(name: str) -> Node:
    capacity = {"cpu": Quantity.parse("4"), "memory": Quantity.parse("32Gi"),
                "pods": Quantity.parse("110")}
    return Node(api_version="v1", kind="Node",
                metadata=ObjectMeta(name=name, labels={LABEL_HOSTNAME: name}),
                spec=NodeSpec(),
                status=NodeStatus(capacity=capacity, allocatable=dict(capacity)))


def gpu_attributes(i: int) -> list[NamedResourcesAttribute]:
    """Attributes of every kind, like the cards of ``examples/reference/gpu-resourceslice.yaml``:
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
    return node_slice(node, driver, NamedResourcesResources(
        instances=[NamedResourcesInstance(name=f"instance-{i}",
                                          attributes=gpu_attributes(i) if attributes else None)
                   for i in range(instances)]), name=f"{node.metadata.name}-{driver}")


def fake_device_slices(node: Node, devices: Sequence[v1.Device],
                       driver: str) -> list[v1.ResourceSlice]:
    """1.34: ``devices`` as the node's own pool (named after the node, generation 1), as its
    driver publishes them: slices of at most 128 devices named ``<node>-<driver>-<k>``,
    controlled by the Node (the collector removes them with it)."""
    node_name = node.metadata.name or ""
    owner = OwnerReference(api_version="v1", kind="Node", name=node_name,
                           uid=node.metadata.uid or "", controller=True)
    chunks = v1.slice_chunks(devices)
    return [v1.ResourceSlice(
        api_version=v1.API_VERSION, kind="ResourceSlice",
        metadata=ObjectMeta(name=f"{node_name}-{driver}-{k}", owner_references=[owner]),
        spec=v1.ResourceSliceSpec(
            driver=driver, node_name=node_name,
            pool=v1.ResourcePool(name=node_name, generation=1,
                                 resource_slice_count=len(chunks)),
            devices=chunk))
        for k, chunk in enumerate(chunks)]

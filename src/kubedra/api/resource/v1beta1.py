"""resource.k8s.io/v1beta1 (served by 1.34 when ``--runtime-config`` enables it): only the
classes whose shape differs from v1; every other type of the version is the v1 class
(k8s.io/api ``resource/v1beta1/types.go`` at v0.34 against ``resource/v1``).

The differences: a device nests its fields under ``basic``; a request is flat (the fields
of v1's ``exactly`` sit on the request beside ``firstAvailable``); a slice's ``nodeName`` and
``allNodes`` are plain values (``""``/``false`` mean unset) instead of pointers. Objects reach
the store through :mod:`kubedra.api.resource.convert`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from kubedra.api.base import Int64, Model, always, null_to_empty, required_list
from kubedra.api.core import NodeSelector
from kubedra.api.meta import ObjectList, ObjectMeta, TypedObject
from kubedra.api.resource.v1 import (
    GROUP,
    CapacityRequirements,
    CounterSet,
    DeviceAttribute,
    DeviceCapacity,
    DeviceClaimConfiguration,
    DeviceConstraint,
    DeviceCounterConsumption,
    DeviceSelector,
    DeviceSubRequest,
    DeviceTaint,
    DeviceToleration,
    ResourceClaimStatus,
    ResourcePool,
)

VERSION = "v1beta1"
API_VERSION = f"{GROUP}/{VERSION}"


# --- ResourceSlice ----------------------------------------------------------------------------


class BasicDevice(Model):
    """What v1 has on the device itself, apart from its name."""

    attributes: dict[str, DeviceAttribute] | None = None
    capacity: dict[str, DeviceCapacity] | None = None
    consumes_counters: list[DeviceCounterConsumption] | None = None
    node_name: str | None = None
    node_selector: NodeSelector | None = None
    all_nodes: bool | None = None
    taints: list[DeviceTaint] | None = None
    binds_to_node: bool | None = None
    binding_conditions: list[str] | None = None
    binding_failure_conditions: list[str] | None = None
    allow_multiple_allocations: bool | None = None


class Device(Model):
    name: str = ""
    basic: BasicDevice | None = None


class ResourceSliceSpec(Model):
    driver: str = ""
    pool: ResourcePool = msgspec.field(default_factory=ResourcePool)
    node_name: str = ""
    node_selector: NodeSelector | None = None
    all_nodes: bool = False
    if TYPE_CHECKING:
        devices: list[Device] = required_list()
    else:
        devices: list[Device] | None = required_list()
    per_device_node_selection: bool | None = None
    shared_counters: list[CounterSet] | None = None

    def __post_init__(self) -> None:
        null_to_empty(self, "devices")


class ResourceSlice(TypedObject):
    spec: ResourceSliceSpec = msgspec.field(default_factory=ResourceSliceSpec)


class ResourceSliceList(ObjectList):
    items: list[ResourceSlice] = required_list()


# --- ResourceClaim ----------------------------------------------------------------------------


class DeviceRequest(Model):
    """v1's ``exactly`` flattened into the request; ``firstAvailable`` beside it."""

    name: str = ""
    device_class_name: str = always("")
    selectors: list[DeviceSelector] | None = None
    allocation_mode: str = ""
    count: Int64 = 0
    admin_access: bool | None = None
    first_available: list[DeviceSubRequest] | None = None
    tolerations: list[DeviceToleration] | None = None
    capacity: CapacityRequirements | None = None


class DeviceClaim(Model):
    if TYPE_CHECKING:
        requests: list[DeviceRequest] = required_list()
    else:
        requests: list[DeviceRequest] | None = required_list()
    constraints: list[DeviceConstraint] | None = None
    config: list[DeviceClaimConfiguration] | None = None

    def __post_init__(self) -> None:
        null_to_empty(self, "requests")


class ResourceClaimSpec(Model):
    devices: DeviceClaim = msgspec.field(default_factory=DeviceClaim)


class ResourceClaim(TypedObject):
    spec: ResourceClaimSpec = msgspec.field(default_factory=ResourceClaimSpec)
    status: ResourceClaimStatus = msgspec.field(default_factory=ResourceClaimStatus)


class ResourceClaimList(ObjectList):
    items: list[ResourceClaim] = required_list()


class ResourceClaimTemplateSpec(Model):
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: ResourceClaimSpec = msgspec.field(default_factory=ResourceClaimSpec)


class ResourceClaimTemplate(TypedObject):
    spec: ResourceClaimTemplateSpec = msgspec.field(default_factory=ResourceClaimTemplateSpec)


class ResourceClaimTemplateList(ObjectList):
    items: list[ResourceClaimTemplate] = required_list()

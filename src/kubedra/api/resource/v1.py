"""resource.k8s.io/v1 (Kubernetes v1.34): the devices model of DRA.

These classes are both the v1 (and v1beta2, whose types are identical) wire models and the
hub form the v1 generation is stored in: strategies, validation and the engine read them,
and other served versions convert to and from them (:mod:`kubedra.api.resource.convert`).

JSON names are upstream's (k8s.io/api ``resource/v1/types.go`` at v0.34). As in
:mod:`~kubedra.api.resource.v1alpha2`: Go ``omitempty`` scalars default to their zero value and
are left out when empty; pointers default to ``None``; a key Go always writes uses
:func:`~kubedra.api.base.always`; ``runtime.RawExtension`` values hold any JSON value. The
lists Go writes without ``omitempty`` (a slice's ``devices``, a claim's ``requests``, a list's
``items``) are always encoded, and a ``null`` from a Go client reads back as empty. Fields of
alpha feature gates are modelled like any other: the strategy drops them when the gate is off.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from kubedra.api.base import Int64, Model, always, null_to_empty, raw_extension, required_list
from kubedra.api.core import NodeSelector
from kubedra.api.meta import Condition, ObjectList, ObjectMeta, TypedObject
from kubedra.api.quantity import Quantity

GROUP = "resource.k8s.io"
VERSION = "v1"
API_VERSION = f"{GROUP}/{VERSION}"

# --- constants (types.go) ---------------------------------------------------------------------

FINALIZER = "resource.kubernetes.io/delete-protection"
DRA_ADMIN_NAMESPACE_LABEL_KEY = "resource.kubernetes.io/admin-access"
EXTENDED_RESOURCE_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
RESOURCE_DEVICE_CLASS_PREFIX = "deviceclass.resource.kubernetes.io/"

RESOURCE_SLICE_SELECTOR_NODE_NAME = "spec.nodeName"
RESOURCE_SLICE_SELECTOR_DRIVER = "spec.driver"

DRIVER_NAME_MAX_LENGTH = 63
POOL_NAME_MAX_LENGTH = 253
DEVICE_MAX_DOMAIN_LENGTH = 63
DEVICE_MAX_ID_LENGTH = 32
DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH = 64
RESOURCE_SLICE_MAX_SHARED_CAPACITY = 128
RESOURCE_SLICE_MAX_DEVICES = 128
RESOURCE_SLICE_MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE = 32
RESOURCE_SLICE_MAX_SHARED_COUNTERS = 32
RESOURCE_SLICE_MAX_COUNTERS_PER_DEVICE = 32
RESOURCE_SLICE_MAX_DEVICE_COUNTERS_PER_SLICE = 1024
DEVICE_TAINTS_MAX_LENGTH = 4
DEVICE_TOLERATIONS_MAX_LENGTH = 16
BINDING_CONDITIONS_MAX_SIZE = 4
BINDING_FAILURE_CONDITIONS_MAX_SIZE = 4
CAPACITY_REQUEST_POLICY_DISCRETE_MAX_OPTIONS = 10
DEVICE_SELECTORS_MAX_SIZE = 32
FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE = 8
ALLOCATION_RESULTS_MAX_SIZE = 32
DEVICE_REQUESTS_MAX_SIZE = ALLOCATION_RESULTS_MAX_SIZE
DEVICE_CONSTRAINTS_MAX_SIZE = 32
DEVICE_CONFIG_MAX_SIZE = 32
CEL_SELECTOR_EXPRESSION_MAX_COST = 1_000_000
CEL_SELECTOR_EXPRESSION_MAX_LENGTH = 10 * 1024
OPAQUE_PARAMETERS_MAX_LENGTH = 10 * 1024
RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE = 256
ALLOCATED_DEVICE_STATUS_MAX_CONDITIONS = 8
ALLOCATED_DEVICE_STATUS_DATA_MAX_LENGTH = 10 * 1024
NETWORK_DEVICE_DATA_MAX_IPS = 16
NETWORK_DEVICE_DATA_INTERFACE_NAME_MAX_LENGTH = 256
NETWORK_DEVICE_DATA_HARDWARE_ADDRESS_MAX_LENGTH = 128

ALLOCATION_MODE_EXACT_COUNT = "ExactCount"
ALLOCATION_MODE_ALL = "All"
TOLERATION_OP_EXISTS = "Exists"
TOLERATION_OP_EQUAL = "Equal"
TAINT_EFFECT_NO_SCHEDULE = "NoSchedule"
TAINT_EFFECT_NO_EXECUTE = "NoExecute"
ALLOCATION_CONFIG_SOURCE_CLASS = "FromClass"
ALLOCATION_CONFIG_SOURCE_CLAIM = "FromClaim"


# --- ResourceSlice ----------------------------------------------------------------------------


class ResourcePool(Model):
    name: str = ""
    generation: Int64 = always(0)
    resource_slice_count: Int64 = always(0)


class Counter(Model):
    value: Quantity = msgspec.field(default_factory=Quantity)


class CounterSet(Model):
    name: str = ""
    counters: dict[str, Counter] | None = None


class DeviceCounterConsumption(Model):
    counter_set: str = ""
    counters: dict[str, Counter] | None = None


class DeviceAttribute(Model):
    """A typed attribute value; exactly one member must be set."""

    int_: Int64 | None = msgspec.field(default=None, name="int")
    bool_: bool | None = msgspec.field(default=None, name="bool")
    string: str | None = None
    version: str | None = None


class CapacityRequestPolicyRange(Model):
    min: Quantity | None = None
    max: Quantity | None = None
    step: Quantity | None = None


class CapacityRequestPolicy(Model):
    # ``default`` has no omitempty upstream: a nil pointer is written as null.
    default: Quantity | None = always(None)
    valid_values: list[Quantity] | None = None
    valid_range: CapacityRequestPolicyRange | None = None


class DeviceCapacity(Model):
    value: Quantity = msgspec.field(default_factory=Quantity)
    request_policy: CapacityRequestPolicy | None = None


class DeviceTaint(Model):
    key: str = ""
    value: str = ""
    effect: str = ""
    time_added: str | None = None


class Device(Model):
    """One device of a pool: the fields v1beta1 nests under ``basic`` sit on the device."""

    name: str = ""
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


def slice_chunks(devices: Sequence[Device]) -> list[list[Device]]:
    """``devices`` split into slices' worth (at most :data:`RESOURCE_SLICE_MAX_DEVICES`
    each, in order); one empty list when there are none (a pool still has a slice)."""
    size = RESOURCE_SLICE_MAX_DEVICES
    return [list(devices[i:i + size]) for i in range(0, len(devices), size)] or [[]]


class ResourceSliceSpec(Model):
    driver: str = ""
    pool: ResourcePool = msgspec.field(default_factory=ResourcePool)
    node_name: str | None = None
    node_selector: NodeSelector | None = None
    all_nodes: bool | None = None
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


# --- selectors, configuration, tolerations ------------------------------------------------------


class CELDeviceSelector(Model):
    expression: str = ""


class DeviceSelector(Model):
    cel: CELDeviceSelector | None = None


class OpaqueDeviceConfiguration(Model):
    driver: str = ""
    parameters: Any = raw_extension()


class DeviceClassConfiguration(Model):
    opaque: OpaqueDeviceConfiguration | None = None


class DeviceToleration(Model):
    key: str = ""
    operator: str = ""
    value: str = ""
    effect: str = ""
    toleration_seconds: Int64 | None = None


# --- DeviceClass ------------------------------------------------------------------------------


class DeviceClassSpec(Model):
    selectors: list[DeviceSelector] | None = None
    config: list[DeviceClassConfiguration] | None = None
    extended_resource_name: str | None = None


class DeviceClass(TypedObject):
    spec: DeviceClassSpec = msgspec.field(default_factory=DeviceClassSpec)


class DeviceClassList(ObjectList):
    items: list[DeviceClass] = required_list()


# --- ResourceClaim spec -----------------------------------------------------------------------


class CapacityRequirements(Model):
    requests: dict[str, Quantity] | None = None


class ExactDeviceRequest(Model):
    device_class_name: str = always("")
    selectors: list[DeviceSelector] | None = None
    allocation_mode: str = ""
    count: Int64 = 0
    admin_access: bool | None = None
    tolerations: list[DeviceToleration] | None = None
    capacity: CapacityRequirements | None = None


class DeviceSubRequest(Model):
    """One alternative of ``firstAvailable``: an exact request without ``adminAccess``."""

    name: str = ""
    device_class_name: str = always("")
    selectors: list[DeviceSelector] | None = None
    allocation_mode: str = ""
    count: Int64 = 0
    tolerations: list[DeviceToleration] | None = None
    capacity: CapacityRequirements | None = None


class DeviceRequest(Model):
    """A named request: exactly one of ``exactly`` and ``firstAvailable`` is set."""

    name: str = ""
    exactly: ExactDeviceRequest | None = None
    first_available: list[DeviceSubRequest] | None = None


class DeviceConstraint(Model):
    requests: list[str] | None = None
    match_attribute: str | None = None
    distinct_attribute: str | None = None


class DeviceClaimConfiguration(Model):
    requests: list[str] | None = None
    opaque: OpaqueDeviceConfiguration | None = None


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


# --- ResourceClaim status ---------------------------------------------------------------------


class ResourceClaimConsumerReference(Model):
    api_group: str = ""
    resource: str = ""
    name: str = ""
    uid: str = ""


class DeviceRequestAllocationResult(Model):
    request: str = ""
    driver: str = ""
    pool: str = ""
    device: str = ""
    admin_access: bool | None = None
    tolerations: list[DeviceToleration] | None = None
    binding_conditions: list[str] | None = None
    binding_failure_conditions: list[str] | None = None
    share_id: str | None = msgspec.field(default=None, name="shareID")
    consumed_capacity: dict[str, Quantity] | None = None


class DeviceAllocationConfiguration(Model):
    source: str = ""
    requests: list[str] | None = None
    opaque: OpaqueDeviceConfiguration | None = None


class DeviceAllocationResult(Model):
    results: list[DeviceRequestAllocationResult] | None = None
    config: list[DeviceAllocationConfiguration] | None = None


class AllocationResult(Model):
    devices: DeviceAllocationResult = msgspec.field(default_factory=DeviceAllocationResult)
    node_selector: NodeSelector | None = None
    allocation_timestamp: str | None = None


class NetworkDeviceData(Model):
    interface_name: str = ""
    ips: list[str] | None = None
    hardware_address: str = ""


class AllocatedDeviceStatus(Model):
    driver: str = ""
    pool: str = ""
    device: str = ""
    share_id: str | None = msgspec.field(default=None, name="shareID")
    # ``conditions`` has no omitempty upstream: a nil list is written as null.
    conditions: list[Condition] | None = always(None)
    data: Any = None
    network_data: NetworkDeviceData | None = None


class ResourceClaimStatus(Model):
    allocation: AllocationResult | None = None
    reserved_for: list[ResourceClaimConsumerReference] | None = None
    devices: list[AllocatedDeviceStatus] | None = None


class ResourceClaim(TypedObject):
    spec: ResourceClaimSpec = msgspec.field(default_factory=ResourceClaimSpec)
    status: ResourceClaimStatus = msgspec.field(default_factory=ResourceClaimStatus)


class ResourceClaimList(ObjectList):
    items: list[ResourceClaim] = required_list()


# --- ResourceClaimTemplate --------------------------------------------------------------------


class ResourceClaimTemplateSpec(Model):
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: ResourceClaimSpec = msgspec.field(default_factory=ResourceClaimSpec)


class ResourceClaimTemplate(TypedObject):
    spec: ResourceClaimTemplateSpec = msgspec.field(default_factory=ResourceClaimTemplateSpec)


class ResourceClaimTemplateList(ObjectList):
    items: list[ResourceClaimTemplate] = required_list()


"""resource.k8s.io/v1alpha2 (Kubernetes v1.30): the DRA kinds and the named-resources model.

JSON names are upstream's. Go ``omitempty`` strings and bools default to ``""``/``False`` (left
out when empty, as Go does); optional pointers default to ``None``. Inline "model" structs
(ResourceModel, ResourceRequestModel, ...) are flattened: ``namedResources`` sits beside its
siblings. ``runtime.RawExtension`` fields hold any JSON value (``None`` when unset) and are
always written, as Go writes ``null`` for an empty RawExtension.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from kubedra.api.base import Int64, Model, null_to_empty, raw_extension, required_list
from kubedra.api.core import Node, NodeSelector
from kubedra.api.meta import ListMeta, ObjectMeta, OwnerReference, TypedObject
from kubedra.api.quantity import Quantity

GROUP = "resource.k8s.io"
VERSION = "v1alpha2"
API_VERSION = f"{GROUP}/{VERSION}"

FINALIZER = "dra.k8s.io/delete-protection"
ALLOCATION_MODE_WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"
ALLOCATION_MODE_IMMEDIATE = "Immediate"
RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE = 32
ALLOCATION_RESULT_RESOURCE_HANDLES_MAX_SIZE = 32
RESOURCE_HANDLE_DATA_MAX_SIZE = 16 * 1024
POD_SCHEDULING_NODE_LIST_MAX_SIZE = 128


# --- named resources model (api:namedresources.go) -------------------------------------------


class NamedResourcesIntSlice(Model):
    if TYPE_CHECKING:
        ints: list[Int64] = required_list()
    else:
        ints: list[Int64] | None = required_list()

    def __post_init__(self) -> None:
        null_to_empty(self, "ints")


class NamedResourcesStringSlice(Model):
    if TYPE_CHECKING:
        strings: list[str] = required_list()
    else:
        strings: list[str] | None = required_list()

    def __post_init__(self) -> None:
        null_to_empty(self, "strings")


class NamedResourcesAttribute(Model):
    """One typed attribute of an instance; exactly one value member must be set."""

    name: str = ""
    quantity: Quantity | None = None
    bool_: bool | None = msgspec.field(default=None, name="bool")
    int_: Int64 | None = msgspec.field(default=None, name="int")
    int_slice: NamedResourcesIntSlice | None = None
    string: str | None = None
    string_slice: NamedResourcesStringSlice | None = None
    version: str | None = None


class NamedResourcesInstance(Model):
    name: str = ""
    attributes: list[NamedResourcesAttribute] | None = None


class NamedResourcesResources(Model):
    if TYPE_CHECKING:
        instances: list[NamedResourcesInstance] = required_list()
    else:
        instances: list[NamedResourcesInstance] | None = required_list()

    def __post_init__(self) -> None:
        null_to_empty(self, "instances")


class NamedResourcesRequest(Model):
    selector: str = ""


class NamedResourcesFilter(Model):
    selector: str = ""


class NamedResourcesAllocationResult(Model):
    name: str = ""


# --- references ------------------------------------------------------------------------------


class ResourceClassParametersReference(Model):
    api_group: str = ""
    kind: str = ""
    name: str = ""
    namespace: str = ""


class ResourceClaimParametersReference(Model):
    api_group: str = ""
    kind: str = ""
    name: str = ""


class ResourceClaimConsumerReference(Model):
    api_group: str = ""
    resource: str = ""
    name: str = ""
    uid: str = ""


# --- ResourceClass ---------------------------------------------------------------------------


class ResourceClass(TypedObject):
    driver_name: str = ""
    parameters_ref: ResourceClassParametersReference | None = None
    suitable_nodes: NodeSelector | None = None
    structured_parameters: bool | None = None


class ResourceClassList(Model):
    api_version: str = ""
    kind: str = ""
    metadata: ListMeta = msgspec.field(default_factory=ListMeta)
    items: list[ResourceClass] = required_list()


# --- ResourceClassParameters -----------------------------------------------------------------


class VendorParameters(Model):
    driver_name: str = ""
    parameters: Any = raw_extension()


class ResourceFilter(Model):
    driver_name: str = ""
    named_resources: NamedResourcesFilter | None = None


class ResourceClassParameters(TypedObject):
    generated_from: ResourceClassParametersReference | None = None
    vendor_parameters: list[VendorParameters] | None = None
    filters: list[ResourceFilter] | None = None


class ResourceClassParametersList(Model):
    api_version: str = ""
    kind: str = ""
    metadata: ListMeta = msgspec.field(default_factory=ListMeta)
    items: list[ResourceClassParameters] = required_list()


# --- ResourceClaimParameters -----------------------------------------------------------------


class ResourceRequest(Model):
    vendor_parameters: Any = raw_extension()
    named_resources: NamedResourcesRequest | None = None


class DriverRequests(Model):
    driver_name: str = ""
    vendor_parameters: Any = raw_extension()
    requests: list[ResourceRequest] | None = None


class ResourceClaimParameters(TypedObject):
    generated_from: ResourceClaimParametersReference | None = None
    shareable: bool = False
    driver_requests: list[DriverRequests] | None = None


class ResourceClaimParametersList(Model):
    api_version: str = ""
    kind: str = ""
    metadata: ListMeta = msgspec.field(default_factory=ListMeta)
    items: list[ResourceClaimParameters] = required_list()


# --- ResourceSlice ---------------------------------------------------------------------------


class ResourceSlice(TypedObject):
    node_name: str = ""
    driver_name: str = ""
    named_resources: NamedResourcesResources | None = None


def node_slice(node: Node, driver: str, model: NamedResourcesResources | None, *,
               name: str | None = None, generate_name: str | None = None) -> ResourceSlice:
    """A slice of ``node``'s resources, controlled by the Node as the kubelet writes it (so
    the garbage collector removes it with the Node)."""
    node_name = node.metadata.name or ""
    owner = OwnerReference(api_version="v1", kind="Node", name=node_name,
                           uid=node.metadata.uid or "", controller=True)
    return ResourceSlice(
        api_version=API_VERSION, kind="ResourceSlice",
        metadata=ObjectMeta(name=name, generate_name=generate_name, owner_references=[owner]),
        node_name=node_name, driver_name=driver, named_resources=model)


class ResourceSliceList(Model):
    api_version: str = ""
    kind: str = ""
    metadata: ListMeta = msgspec.field(default_factory=ListMeta)
    items: list[ResourceSlice] = required_list()


# --- ResourceClaim ---------------------------------------------------------------------------


class ResourceClaimSpec(Model):
    resource_class_name: str = ""
    parameters_ref: ResourceClaimParametersReference | None = None
    allocation_mode: str = ""


class DriverAllocationResult(Model):
    vendor_request_parameters: Any = raw_extension()
    named_resources: NamedResourcesAllocationResult | None = None


class StructuredResourceHandle(Model):
    vendor_class_parameters: Any = raw_extension()
    vendor_claim_parameters: Any = raw_extension()
    node_name: str = ""
    if TYPE_CHECKING:
        results: list[DriverAllocationResult] = required_list()
    else:
        results: list[DriverAllocationResult] | None = required_list()

    def __post_init__(self) -> None:
        null_to_empty(self, "results")


class ResourceHandle(Model):
    driver_name: str = ""
    data: str = ""
    structured_data: StructuredResourceHandle | None = None


class AllocationResult(Model):
    resource_handles: list[ResourceHandle] | None = None
    available_on_nodes: NodeSelector | None = None
    shareable: bool = False


class ResourceClaimStatus(Model):
    driver_name: str = ""
    allocation: AllocationResult | None = None
    reserved_for: list[ResourceClaimConsumerReference] | None = None
    deallocation_requested: bool = False


class ResourceClaim(TypedObject):
    spec: ResourceClaimSpec = msgspec.field(default_factory=ResourceClaimSpec)
    status: ResourceClaimStatus = msgspec.field(default_factory=ResourceClaimStatus)


class ResourceClaimList(Model):
    api_version: str = ""
    kind: str = ""
    metadata: ListMeta = msgspec.field(default_factory=ListMeta)
    items: list[ResourceClaim] = required_list()


# --- ResourceClaimTemplate -------------------------------------------------------------------


class ResourceClaimTemplateSpec(Model):
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: ResourceClaimSpec = msgspec.field(default_factory=ResourceClaimSpec)


class ResourceClaimTemplate(TypedObject):
    spec: ResourceClaimTemplateSpec = msgspec.field(default_factory=ResourceClaimTemplateSpec)


class ResourceClaimTemplateList(Model):
    api_version: str = ""
    kind: str = ""
    metadata: ListMeta = msgspec.field(default_factory=ListMeta)
    items: list[ResourceClaimTemplate] = required_list()


# --- PodSchedulingContext --------------------------------------------------------------------


class PodSchedulingContextSpec(Model):
    selected_node: str = ""
    potential_nodes: list[str] | None = None


class ResourceClaimSchedulingStatus(Model):
    name: str = ""
    unsuitable_nodes: list[str] | None = None


class PodSchedulingContextStatus(Model):
    resource_claims: list[ResourceClaimSchedulingStatus] | None = None


class PodSchedulingContext(TypedObject):
    spec: PodSchedulingContextSpec = msgspec.field(default_factory=PodSchedulingContextSpec)
    status: PodSchedulingContextStatus = msgspec.field(default_factory=PodSchedulingContextStatus)


class PodSchedulingContextList(Model):
    api_version: str = ""
    kind: str = ""
    metadata: ListMeta = msgspec.field(default_factory=ListMeta)
    items: list[PodSchedulingContext] = required_list()

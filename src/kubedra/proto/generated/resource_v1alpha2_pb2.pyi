from kubedra.proto.generated import apimachinery_meta_v1_pb2 as _apimachinery_meta_v1_pb2
from kubedra.proto.generated import apimachinery_resource_pb2 as _apimachinery_resource_pb2
from kubedra.proto.generated import apimachinery_runtime_pb2 as _apimachinery_runtime_pb2
from kubedra.proto.generated import core_v1_pb2 as _core_v1_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ResourceModel(_message.Message):
    __slots__ = ("namedResources",)
    NAMEDRESOURCES_FIELD_NUMBER: _ClassVar[int]
    namedResources: NamedResourcesResources
    def __init__(self, namedResources: _Optional[_Union[NamedResourcesResources, _Mapping]] = ...) -> None: ...

class NamedResourcesResources(_message.Message):
    __slots__ = ("instances",)
    INSTANCES_FIELD_NUMBER: _ClassVar[int]
    instances: _containers.RepeatedCompositeFieldContainer[NamedResourcesInstance]
    def __init__(self, instances: _Optional[_Iterable[_Union[NamedResourcesInstance, _Mapping]]] = ...) -> None: ...

class NamedResourcesInstance(_message.Message):
    __slots__ = ("name", "attributes")
    NAME_FIELD_NUMBER: _ClassVar[int]
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    name: str
    attributes: _containers.RepeatedCompositeFieldContainer[NamedResourcesAttribute]
    def __init__(self, name: _Optional[str] = ..., attributes: _Optional[_Iterable[_Union[NamedResourcesAttribute, _Mapping]]] = ...) -> None: ...

class NamedResourcesAttribute(_message.Message):
    __slots__ = ("name", "attributeValue")
    NAME_FIELD_NUMBER: _ClassVar[int]
    ATTRIBUTEVALUE_FIELD_NUMBER: _ClassVar[int]
    name: str
    attributeValue: NamedResourcesAttributeValue
    def __init__(self, name: _Optional[str] = ..., attributeValue: _Optional[_Union[NamedResourcesAttributeValue, _Mapping]] = ...) -> None: ...

class NamedResourcesAttributeValue(_message.Message):
    __slots__ = ("quantity", "bool", "int", "intSlice", "string", "stringSlice", "version")
    QUANTITY_FIELD_NUMBER: _ClassVar[int]
    BOOL_FIELD_NUMBER: _ClassVar[int]
    INT_FIELD_NUMBER: _ClassVar[int]
    INTSLICE_FIELD_NUMBER: _ClassVar[int]
    STRING_FIELD_NUMBER: _ClassVar[int]
    STRINGSLICE_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    quantity: _apimachinery_resource_pb2.Quantity
    bool: bool
    int: int
    intSlice: NamedResourcesIntSlice
    string: str
    stringSlice: NamedResourcesStringSlice
    version: str
    def __init__(self, quantity: _Optional[_Union[_apimachinery_resource_pb2.Quantity, _Mapping]] = ..., bool: _Optional[bool] = ..., int: _Optional[int] = ..., intSlice: _Optional[_Union[NamedResourcesIntSlice, _Mapping]] = ..., string: _Optional[str] = ..., stringSlice: _Optional[_Union[NamedResourcesStringSlice, _Mapping]] = ..., version: _Optional[str] = ...) -> None: ...

class NamedResourcesIntSlice(_message.Message):
    __slots__ = ("ints",)
    INTS_FIELD_NUMBER: _ClassVar[int]
    ints: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, ints: _Optional[_Iterable[int]] = ...) -> None: ...

class NamedResourcesStringSlice(_message.Message):
    __slots__ = ("strings",)
    STRINGS_FIELD_NUMBER: _ClassVar[int]
    strings: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, strings: _Optional[_Iterable[str]] = ...) -> None: ...

class NamedResourcesRequest(_message.Message):
    __slots__ = ("selector",)
    SELECTOR_FIELD_NUMBER: _ClassVar[int]
    selector: str
    def __init__(self, selector: _Optional[str] = ...) -> None: ...

class NamedResourcesFilter(_message.Message):
    __slots__ = ("selector",)
    SELECTOR_FIELD_NUMBER: _ClassVar[int]
    selector: str
    def __init__(self, selector: _Optional[str] = ...) -> None: ...

class NamedResourcesAllocationResult(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class ResourceClassParametersReference(_message.Message):
    __slots__ = ("apiGroup", "kind", "name", "namespace")
    APIGROUP_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    apiGroup: str
    kind: str
    name: str
    namespace: str
    def __init__(self, apiGroup: _Optional[str] = ..., kind: _Optional[str] = ..., name: _Optional[str] = ..., namespace: _Optional[str] = ...) -> None: ...

class ResourceClaimParametersReference(_message.Message):
    __slots__ = ("apiGroup", "kind", "name")
    APIGROUP_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    apiGroup: str
    kind: str
    name: str
    def __init__(self, apiGroup: _Optional[str] = ..., kind: _Optional[str] = ..., name: _Optional[str] = ...) -> None: ...

class ResourceClaimConsumerReference(_message.Message):
    __slots__ = ("apiGroup", "resource", "name", "uid")
    APIGROUP_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    UID_FIELD_NUMBER: _ClassVar[int]
    apiGroup: str
    resource: str
    name: str
    uid: str
    def __init__(self, apiGroup: _Optional[str] = ..., resource: _Optional[str] = ..., name: _Optional[str] = ..., uid: _Optional[str] = ...) -> None: ...

class ResourceClass(_message.Message):
    __slots__ = ("metadata", "driverName", "parametersRef", "suitableNodes", "structuredParameters")
    METADATA_FIELD_NUMBER: _ClassVar[int]
    DRIVERNAME_FIELD_NUMBER: _ClassVar[int]
    PARAMETERSREF_FIELD_NUMBER: _ClassVar[int]
    SUITABLENODES_FIELD_NUMBER: _ClassVar[int]
    STRUCTUREDPARAMETERS_FIELD_NUMBER: _ClassVar[int]
    metadata: _apimachinery_meta_v1_pb2.ObjectMeta
    driverName: str
    parametersRef: ResourceClassParametersReference
    suitableNodes: _core_v1_pb2.NodeSelector
    structuredParameters: bool
    def __init__(self, metadata: _Optional[_Union[_apimachinery_meta_v1_pb2.ObjectMeta, _Mapping]] = ..., driverName: _Optional[str] = ..., parametersRef: _Optional[_Union[ResourceClassParametersReference, _Mapping]] = ..., suitableNodes: _Optional[_Union[_core_v1_pb2.NodeSelector, _Mapping]] = ..., structuredParameters: _Optional[bool] = ...) -> None: ...

class ResourceClassList(_message.Message):
    __slots__ = ("metadata", "items")
    METADATA_FIELD_NUMBER: _ClassVar[int]
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    metadata: _apimachinery_meta_v1_pb2.ListMeta
    items: _containers.RepeatedCompositeFieldContainer[ResourceClass]
    def __init__(self, metadata: _Optional[_Union[_apimachinery_meta_v1_pb2.ListMeta, _Mapping]] = ..., items: _Optional[_Iterable[_Union[ResourceClass, _Mapping]]] = ...) -> None: ...

class VendorParameters(_message.Message):
    __slots__ = ("driverName", "parameters")
    DRIVERNAME_FIELD_NUMBER: _ClassVar[int]
    PARAMETERS_FIELD_NUMBER: _ClassVar[int]
    driverName: str
    parameters: _apimachinery_runtime_pb2.RawExtension
    def __init__(self, driverName: _Optional[str] = ..., parameters: _Optional[_Union[_apimachinery_runtime_pb2.RawExtension, _Mapping]] = ...) -> None: ...

class ResourceFilter(_message.Message):
    __slots__ = ("driverName", "resourceFilterModel")
    DRIVERNAME_FIELD_NUMBER: _ClassVar[int]
    RESOURCEFILTERMODEL_FIELD_NUMBER: _ClassVar[int]
    driverName: str
    resourceFilterModel: ResourceFilterModel
    def __init__(self, driverName: _Optional[str] = ..., resourceFilterModel: _Optional[_Union[ResourceFilterModel, _Mapping]] = ...) -> None: ...

class ResourceFilterModel(_message.Message):
    __slots__ = ("namedResources",)
    NAMEDRESOURCES_FIELD_NUMBER: _ClassVar[int]
    namedResources: NamedResourcesFilter
    def __init__(self, namedResources: _Optional[_Union[NamedResourcesFilter, _Mapping]] = ...) -> None: ...

class ResourceClassParameters(_message.Message):
    __slots__ = ("metadata", "generatedFrom", "vendorParameters", "filters")
    METADATA_FIELD_NUMBER: _ClassVar[int]
    GENERATEDFROM_FIELD_NUMBER: _ClassVar[int]
    VENDORPARAMETERS_FIELD_NUMBER: _ClassVar[int]
    FILTERS_FIELD_NUMBER: _ClassVar[int]
    metadata: _apimachinery_meta_v1_pb2.ObjectMeta
    generatedFrom: ResourceClassParametersReference
    vendorParameters: _containers.RepeatedCompositeFieldContainer[VendorParameters]
    filters: _containers.RepeatedCompositeFieldContainer[ResourceFilter]
    def __init__(self, metadata: _Optional[_Union[_apimachinery_meta_v1_pb2.ObjectMeta, _Mapping]] = ..., generatedFrom: _Optional[_Union[ResourceClassParametersReference, _Mapping]] = ..., vendorParameters: _Optional[_Iterable[_Union[VendorParameters, _Mapping]]] = ..., filters: _Optional[_Iterable[_Union[ResourceFilter, _Mapping]]] = ...) -> None: ...

class ResourceClassParametersList(_message.Message):
    __slots__ = ("metadata", "items")
    METADATA_FIELD_NUMBER: _ClassVar[int]
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    metadata: _apimachinery_meta_v1_pb2.ListMeta
    items: _containers.RepeatedCompositeFieldContainer[ResourceClassParameters]
    def __init__(self, metadata: _Optional[_Union[_apimachinery_meta_v1_pb2.ListMeta, _Mapping]] = ..., items: _Optional[_Iterable[_Union[ResourceClassParameters, _Mapping]]] = ...) -> None: ...

class ResourceRequest(_message.Message):
    __slots__ = ("vendorParameters", "resourceRequestModel")
    VENDORPARAMETERS_FIELD_NUMBER: _ClassVar[int]
    RESOURCEREQUESTMODEL_FIELD_NUMBER: _ClassVar[int]
    vendorParameters: _apimachinery_runtime_pb2.RawExtension
    resourceRequestModel: ResourceRequestModel
    def __init__(self, vendorParameters: _Optional[_Union[_apimachinery_runtime_pb2.RawExtension, _Mapping]] = ..., resourceRequestModel: _Optional[_Union[ResourceRequestModel, _Mapping]] = ...) -> None: ...

class ResourceRequestModel(_message.Message):
    __slots__ = ("namedResources",)
    NAMEDRESOURCES_FIELD_NUMBER: _ClassVar[int]
    namedResources: NamedResourcesRequest
    def __init__(self, namedResources: _Optional[_Union[NamedResourcesRequest, _Mapping]] = ...) -> None: ...

class DriverRequests(_message.Message):
    __slots__ = ("driverName", "vendorParameters", "requests")
    DRIVERNAME_FIELD_NUMBER: _ClassVar[int]
    VENDORPARAMETERS_FIELD_NUMBER: _ClassVar[int]
    REQUESTS_FIELD_NUMBER: _ClassVar[int]
    driverName: str
    vendorParameters: _apimachinery_runtime_pb2.RawExtension
    requests: _containers.RepeatedCompositeFieldContainer[ResourceRequest]
    def __init__(self, driverName: _Optional[str] = ..., vendorParameters: _Optional[_Union[_apimachinery_runtime_pb2.RawExtension, _Mapping]] = ..., requests: _Optional[_Iterable[_Union[ResourceRequest, _Mapping]]] = ...) -> None: ...

class ResourceClaimParameters(_message.Message):
    __slots__ = ("metadata", "generatedFrom", "shareable", "driverRequests")
    METADATA_FIELD_NUMBER: _ClassVar[int]
    GENERATEDFROM_FIELD_NUMBER: _ClassVar[int]
    SHAREABLE_FIELD_NUMBER: _ClassVar[int]
    DRIVERREQUESTS_FIELD_NUMBER: _ClassVar[int]
    metadata: _apimachinery_meta_v1_pb2.ObjectMeta
    generatedFrom: ResourceClaimParametersReference
    shareable: bool
    driverRequests: _containers.RepeatedCompositeFieldContainer[DriverRequests]
    def __init__(self, metadata: _Optional[_Union[_apimachinery_meta_v1_pb2.ObjectMeta, _Mapping]] = ..., generatedFrom: _Optional[_Union[ResourceClaimParametersReference, _Mapping]] = ..., shareable: _Optional[bool] = ..., driverRequests: _Optional[_Iterable[_Union[DriverRequests, _Mapping]]] = ...) -> None: ...

class ResourceClaimParametersList(_message.Message):
    __slots__ = ("metadata", "items")
    METADATA_FIELD_NUMBER: _ClassVar[int]
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    metadata: _apimachinery_meta_v1_pb2.ListMeta
    items: _containers.RepeatedCompositeFieldContainer[ResourceClaimParameters]
    def __init__(self, metadata: _Optional[_Union[_apimachinery_meta_v1_pb2.ListMeta, _Mapping]] = ..., items: _Optional[_Iterable[_Union[ResourceClaimParameters, _Mapping]]] = ...) -> None: ...

class ResourceSlice(_message.Message):
    __slots__ = ("metadata", "nodeName", "driverName", "resourceModel")
    METADATA_FIELD_NUMBER: _ClassVar[int]
    NODENAME_FIELD_NUMBER: _ClassVar[int]
    DRIVERNAME_FIELD_NUMBER: _ClassVar[int]
    RESOURCEMODEL_FIELD_NUMBER: _ClassVar[int]
    metadata: _apimachinery_meta_v1_pb2.ObjectMeta
    nodeName: str
    driverName: str
    resourceModel: ResourceModel
    def __init__(self, metadata: _Optional[_Union[_apimachinery_meta_v1_pb2.ObjectMeta, _Mapping]] = ..., nodeName: _Optional[str] = ..., driverName: _Optional[str] = ..., resourceModel: _Optional[_Union[ResourceModel, _Mapping]] = ...) -> None: ...

class ResourceSliceList(_message.Message):
    __slots__ = ("metadata", "items")
    METADATA_FIELD_NUMBER: _ClassVar[int]
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    metadata: _apimachinery_meta_v1_pb2.ListMeta
    items: _containers.RepeatedCompositeFieldContainer[ResourceSlice]
    def __init__(self, metadata: _Optional[_Union[_apimachinery_meta_v1_pb2.ListMeta, _Mapping]] = ..., items: _Optional[_Iterable[_Union[ResourceSlice, _Mapping]]] = ...) -> None: ...

class ResourceClaimSpec(_message.Message):
    __slots__ = ("resourceClassName", "parametersRef", "allocationMode")
    RESOURCECLASSNAME_FIELD_NUMBER: _ClassVar[int]
    PARAMETERSREF_FIELD_NUMBER: _ClassVar[int]
    ALLOCATIONMODE_FIELD_NUMBER: _ClassVar[int]
    resourceClassName: str
    parametersRef: ResourceClaimParametersReference
    allocationMode: str
    def __init__(self, resourceClassName: _Optional[str] = ..., parametersRef: _Optional[_Union[ResourceClaimParametersReference, _Mapping]] = ..., allocationMode: _Optional[str] = ...) -> None: ...

class DriverAllocationResult(_message.Message):
    __slots__ = ("vendorRequestParameters", "allocationResultModel")
    VENDORREQUESTPARAMETERS_FIELD_NUMBER: _ClassVar[int]
    ALLOCATIONRESULTMODEL_FIELD_NUMBER: _ClassVar[int]
    vendorRequestParameters: _apimachinery_runtime_pb2.RawExtension
    allocationResultModel: AllocationResultModel
    def __init__(self, vendorRequestParameters: _Optional[_Union[_apimachinery_runtime_pb2.RawExtension, _Mapping]] = ..., allocationResultModel: _Optional[_Union[AllocationResultModel, _Mapping]] = ...) -> None: ...

class AllocationResultModel(_message.Message):
    __slots__ = ("namedResources",)
    NAMEDRESOURCES_FIELD_NUMBER: _ClassVar[int]
    namedResources: NamedResourcesAllocationResult
    def __init__(self, namedResources: _Optional[_Union[NamedResourcesAllocationResult, _Mapping]] = ...) -> None: ...

class StructuredResourceHandle(_message.Message):
    __slots__ = ("vendorClassParameters", "vendorClaimParameters", "nodeName", "results")
    VENDORCLASSPARAMETERS_FIELD_NUMBER: _ClassVar[int]
    VENDORCLAIMPARAMETERS_FIELD_NUMBER: _ClassVar[int]
    NODENAME_FIELD_NUMBER: _ClassVar[int]
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    vendorClassParameters: _apimachinery_runtime_pb2.RawExtension
    vendorClaimParameters: _apimachinery_runtime_pb2.RawExtension
    nodeName: str
    results: _containers.RepeatedCompositeFieldContainer[DriverAllocationResult]
    def __init__(self, vendorClassParameters: _Optional[_Union[_apimachinery_runtime_pb2.RawExtension, _Mapping]] = ..., vendorClaimParameters: _Optional[_Union[_apimachinery_runtime_pb2.RawExtension, _Mapping]] = ..., nodeName: _Optional[str] = ..., results: _Optional[_Iterable[_Union[DriverAllocationResult, _Mapping]]] = ...) -> None: ...

class ResourceHandle(_message.Message):
    __slots__ = ("driverName", "data", "structuredData")
    DRIVERNAME_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    STRUCTUREDDATA_FIELD_NUMBER: _ClassVar[int]
    driverName: str
    data: str
    structuredData: StructuredResourceHandle
    def __init__(self, driverName: _Optional[str] = ..., data: _Optional[str] = ..., structuredData: _Optional[_Union[StructuredResourceHandle, _Mapping]] = ...) -> None: ...

class AllocationResult(_message.Message):
    __slots__ = ("resourceHandles", "availableOnNodes", "shareable")
    RESOURCEHANDLES_FIELD_NUMBER: _ClassVar[int]
    AVAILABLEONNODES_FIELD_NUMBER: _ClassVar[int]
    SHAREABLE_FIELD_NUMBER: _ClassVar[int]
    resourceHandles: _containers.RepeatedCompositeFieldContainer[ResourceHandle]
    availableOnNodes: _core_v1_pb2.NodeSelector
    shareable: bool
    def __init__(self, resourceHandles: _Optional[_Iterable[_Union[ResourceHandle, _Mapping]]] = ..., availableOnNodes: _Optional[_Union[_core_v1_pb2.NodeSelector, _Mapping]] = ..., shareable: _Optional[bool] = ...) -> None: ...

class ResourceClaimStatus(_message.Message):
    __slots__ = ("driverName", "allocation", "reservedFor", "deallocationRequested")
    DRIVERNAME_FIELD_NUMBER: _ClassVar[int]
    ALLOCATION_FIELD_NUMBER: _ClassVar[int]
    RESERVEDFOR_FIELD_NUMBER: _ClassVar[int]
    DEALLOCATIONREQUESTED_FIELD_NUMBER: _ClassVar[int]
    driverName: str
    allocation: AllocationResult
    reservedFor: _containers.RepeatedCompositeFieldContainer[ResourceClaimConsumerReference]
    deallocationRequested: bool
    def __init__(self, driverName: _Optional[str] = ..., allocation: _Optional[_Union[AllocationResult, _Mapping]] = ..., reservedFor: _Optional[_Iterable[_Union[ResourceClaimConsumerReference, _Mapping]]] = ..., deallocationRequested: _Optional[bool] = ...) -> None: ...

class ResourceClaim(_message.Message):
    __slots__ = ("metadata", "spec", "status")
    METADATA_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    metadata: _apimachinery_meta_v1_pb2.ObjectMeta
    spec: ResourceClaimSpec
    status: ResourceClaimStatus
    def __init__(self, metadata: _Optional[_Union[_apimachinery_meta_v1_pb2.ObjectMeta, _Mapping]] = ..., spec: _Optional[_Union[ResourceClaimSpec, _Mapping]] = ..., status: _Optional[_Union[ResourceClaimStatus, _Mapping]] = ...) -> None: ...

class ResourceClaimList(_message.Message):
    __slots__ = ("metadata", "items")
    METADATA_FIELD_NUMBER: _ClassVar[int]
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    metadata: _apimachinery_meta_v1_pb2.ListMeta
    items: _containers.RepeatedCompositeFieldContainer[ResourceClaim]
    def __init__(self, metadata: _Optional[_Union[_apimachinery_meta_v1_pb2.ListMeta, _Mapping]] = ..., items: _Optional[_Iterable[_Union[ResourceClaim, _Mapping]]] = ...) -> None: ...

class ResourceClaimTemplateSpec(_message.Message):
    __slots__ = ("metadata", "spec")
    METADATA_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    metadata: _apimachinery_meta_v1_pb2.ObjectMeta
    spec: ResourceClaimSpec
    def __init__(self, metadata: _Optional[_Union[_apimachinery_meta_v1_pb2.ObjectMeta, _Mapping]] = ..., spec: _Optional[_Union[ResourceClaimSpec, _Mapping]] = ...) -> None: ...

class ResourceClaimTemplate(_message.Message):
    __slots__ = ("metadata", "spec")
    METADATA_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    metadata: _apimachinery_meta_v1_pb2.ObjectMeta
    spec: ResourceClaimTemplateSpec
    def __init__(self, metadata: _Optional[_Union[_apimachinery_meta_v1_pb2.ObjectMeta, _Mapping]] = ..., spec: _Optional[_Union[ResourceClaimTemplateSpec, _Mapping]] = ...) -> None: ...

class ResourceClaimTemplateList(_message.Message):
    __slots__ = ("metadata", "items")
    METADATA_FIELD_NUMBER: _ClassVar[int]
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    metadata: _apimachinery_meta_v1_pb2.ListMeta
    items: _containers.RepeatedCompositeFieldContainer[ResourceClaimTemplate]
    def __init__(self, metadata: _Optional[_Union[_apimachinery_meta_v1_pb2.ListMeta, _Mapping]] = ..., items: _Optional[_Iterable[_Union[ResourceClaimTemplate, _Mapping]]] = ...) -> None: ...

class PodSchedulingContextSpec(_message.Message):
    __slots__ = ("selectedNode", "potentialNodes")
    SELECTEDNODE_FIELD_NUMBER: _ClassVar[int]
    POTENTIALNODES_FIELD_NUMBER: _ClassVar[int]
    selectedNode: str
    potentialNodes: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, selectedNode: _Optional[str] = ..., potentialNodes: _Optional[_Iterable[str]] = ...) -> None: ...

class ResourceClaimSchedulingStatus(_message.Message):
    __slots__ = ("name", "unsuitableNodes")
    NAME_FIELD_NUMBER: _ClassVar[int]
    UNSUITABLENODES_FIELD_NUMBER: _ClassVar[int]
    name: str
    unsuitableNodes: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, name: _Optional[str] = ..., unsuitableNodes: _Optional[_Iterable[str]] = ...) -> None: ...

class PodSchedulingContextStatus(_message.Message):
    __slots__ = ("resourceClaims",)
    RESOURCECLAIMS_FIELD_NUMBER: _ClassVar[int]
    resourceClaims: _containers.RepeatedCompositeFieldContainer[ResourceClaimSchedulingStatus]
    def __init__(self, resourceClaims: _Optional[_Iterable[_Union[ResourceClaimSchedulingStatus, _Mapping]]] = ...) -> None: ...

class PodSchedulingContext(_message.Message):
    __slots__ = ("metadata", "spec", "status")
    METADATA_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    metadata: _apimachinery_meta_v1_pb2.ObjectMeta
    spec: PodSchedulingContextSpec
    status: PodSchedulingContextStatus
    def __init__(self, metadata: _Optional[_Union[_apimachinery_meta_v1_pb2.ObjectMeta, _Mapping]] = ..., spec: _Optional[_Union[PodSchedulingContextSpec, _Mapping]] = ..., status: _Optional[_Union[PodSchedulingContextStatus, _Mapping]] = ...) -> None: ...

class PodSchedulingContextList(_message.Message):
    __slots__ = ("metadata", "items")
    METADATA_FIELD_NUMBER: _ClassVar[int]
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    metadata: _apimachinery_meta_v1_pb2.ListMeta
    items: _containers.RepeatedCompositeFieldContainer[PodSchedulingContext]
    def __init__(self, metadata: _Optional[_Union[_apimachinery_meta_v1_pb2.ListMeta, _Mapping]] = ..., items: _Optional[_Iterable[_Union[PodSchedulingContext, _Mapping]]] = ...) -> None: ...

from kubedra.proto.generated import apimachinery_resource_pb2 as _apimachinery_resource_pb2
from kubedra.proto.generated import apimachinery_runtime_pb2 as _apimachinery_runtime_pb2
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

class NamedResourcesAllocationResult(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

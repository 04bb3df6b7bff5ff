from kubedra.proto.generated import resource_v1alpha2_pb2 as _resource_v1alpha2_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class NodePrepareResourceRequest(_message.Message):
    __slots__ = ("namespace", "claim_uid", "claim_name", "resource_handle", "structured_resource_handle")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    CLAIM_UID_FIELD_NUMBER: _ClassVar[int]
    CLAIM_NAME_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_HANDLE_FIELD_NUMBER: _ClassVar[int]
    STRUCTURED_RESOURCE_HANDLE_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    claim_uid: str
    claim_name: str
    resource_handle: str
    structured_resource_handle: _containers.RepeatedCompositeFieldContainer[_resource_v1alpha2_pb2.StructuredResourceHandle]
    def __init__(self, namespace: _Optional[str] = ..., claim_uid: _Optional[str] = ..., claim_name: _Optional[str] = ..., resource_handle: _Optional[str] = ..., structured_resource_handle: _Optional[_Iterable[_Union[_resource_v1alpha2_pb2.StructuredResourceHandle, _Mapping]]] = ...) -> None: ...

class NodePrepareResourceResponse(_message.Message):
    __slots__ = ("cdi_devices",)
    CDI_DEVICES_FIELD_NUMBER: _ClassVar[int]
    cdi_devices: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, cdi_devices: _Optional[_Iterable[str]] = ...) -> None: ...

class NodeUnprepareResourceRequest(_message.Message):
    __slots__ = ("namespace", "claim_uid", "claim_name", "resource_handle", "structured_resource_handle")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    CLAIM_UID_FIELD_NUMBER: _ClassVar[int]
    CLAIM_NAME_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_HANDLE_FIELD_NUMBER: _ClassVar[int]
    STRUCTURED_RESOURCE_HANDLE_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    claim_uid: str
    claim_name: str
    resource_handle: str
    structured_resource_handle: _containers.RepeatedCompositeFieldContainer[_resource_v1alpha2_pb2.StructuredResourceHandle]
    def __init__(self, namespace: _Optional[str] = ..., claim_uid: _Optional[str] = ..., claim_name: _Optional[str] = ..., resource_handle: _Optional[str] = ..., structured_resource_handle: _Optional[_Iterable[_Union[_resource_v1alpha2_pb2.StructuredResourceHandle, _Mapping]]] = ...) -> None: ...

class NodeUnprepareResourceResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

"""Conversions between the kubelet's objects and the DRA gRPC messages it exchanges: reported
``ResourceModel``s become ResourceSlice models, checkpointed claim handles become ``Claim``s
with the structured handle in its single-entry repeated field (spec kubelet.md §1.2-1.4)."""

from __future__ import annotations

from typing import Any

from kubedra.api.quantity import Quantity
from kubedra.api.resource import (
    NamedResourcesAttribute,
    NamedResourcesInstance,
    NamedResourcesIntSlice,
    NamedResourcesResources,
    NamedResourcesStringSlice,
)
from kubedra.kubelet.checkpoint import NULL, ClaimInfoState, ResourceHandleState
from kubedra.proto.generated import dra_v1alpha3_pb2 as v1alpha3
from kubedra.proto.generated import resource_v1alpha2_pb2 as resource_pb


def _attribute(pb: Any) -> NamedResourcesAttribute:
    v = pb.attributeValue
    attr = NamedResourcesAttribute(name=pb.name)
    if v.HasField("quantity"):
        attr.quantity = Quantity.parse(v.quantity.string)
    elif v.HasField("bool"):
        attr.bool_ = v.bool
    elif v.HasField("int"):
        attr.int_ = v.int
    elif v.HasField("intSlice"):
        attr.int_slice = NamedResourcesIntSlice(ints=list(v.intSlice.ints))
    elif v.HasField("string"):
        attr.string = v.string
    elif v.HasField("stringSlice"):
        attr.string_slice = NamedResourcesStringSlice(strings=list(v.stringSlice.strings))
    elif v.HasField("version"):
        attr.version = v.version
    return attr


def model_from_proto(pb: Any) -> NamedResourcesResources | None:
    """A wire ``ResourceModel``; ``None`` when no model is set (the API rejects such a slice,
    which is reported as a sync error, as upstream)."""
    if not pb.HasField("namedResources"):
        return None
    return NamedResourcesResources(instances=[
        NamedResourcesInstance(name=i.name,
                               attributes=[_attribute(a) for a in i.attributes] or None)
        for i in pb.namedResources.instances])


def _raw(pb: Any, raw: bytes) -> None:
    if raw not in (NULL, b""):
        pb.raw = raw


def structured_to_proto(h: ResourceHandleState) -> Any:
    s = h.structuredData
    assert s is not None
    pb = resource_pb.StructuredResourceHandle(nodeName=s.nodeName)
    _raw(pb.vendorClassParameters, bytes(s.vendorClassParameters))
    _raw(pb.vendorClaimParameters, bytes(s.vendorClaimParameters))
    for r in s.results or ():
        result = pb.results.add()
        _raw(result.vendorRequestParameters, bytes(r.vendorRequestParameters))
        if r.namedResources is not None:
            result.allocationResultModel.namedResources.name = r.namedResources.name
    return pb


def claim_to_proto(info: ClaimInfoState, handle: ResourceHandleState) -> Any:
    """``Claim{namespace, uid, name, resource_handle}`` plus exactly one structured handle
    when the allocation has structured data."""
    claim = v1alpha3.Claim(namespace=info.Namespace, uid=info.ClaimUID, name=info.ClaimName,
                           resource_handle=handle.data)
    if handle.structuredData is not None:
        claim.structured_resource_handle.append(structured_to_proto(handle))
    return claim

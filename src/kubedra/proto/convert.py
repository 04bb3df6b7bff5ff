"""Conversions between the gRPC messages and our ``api`` models, shared by kubelet and driver.

The kubelet side sends claims (``claim_to_proto``) and reads published resources
(``instances_from_model``); the driver side reads claims (``handle_from_proto``) and publishes
(``instances_to_model``). Messages are built the way gogo-generated Go code writes them
(k8s.io/api@v0.30.0 resource/v1alpha2/generated.pb.go): the non-pointer fields of a
StructuredResourceHandle and a DriverAllocationResult are always present, and a ResourceModel
with zero instances still carries its empty ``namedResources``. RawExtensions carry compact
JSON text; an empty one decodes to ``None``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kubedra.api import codec
from kubedra.api.quantity import Quantity, QuantityError
from kubedra.api.resource import v1alpha2 as api
from kubedra.proto.generated import dra_v1alpha3_pb2 as dra_pb2
from kubedra.proto.generated import resource_v1alpha2_pb2 as resource_pb2


class ConversionError(ValueError):
    """A message that has no meaning as our model (the text says which field and why)."""


# --- named resources instances ---------------------------------------------------------------


def _value_to_proto(attr: api.NamedResourcesAttribute, out: Any) -> None:
    """Fill ``NamedResourcesAttributeValue`` ``out``; exactly one member must be set."""
    count = (
        (attr.quantity is not None)
        + (attr.bool_ is not None)
        + (attr.int_ is not None)
        + (attr.int_slice is not None)
        + (attr.string is not None)
        + (attr.string_slice is not None)
        + (attr.version is not None)
    )
    if count != 1:
        raise ConversionError(f"attribute {attr.name!r}: exactly one value must be set")
    if attr.string is not None:
        out.string = attr.string
    elif attr.int_ is not None:
        out.int = attr.int_
    elif attr.bool_ is not None:
        out.bool = attr.bool_
    elif attr.quantity is not None:
        out.quantity.string = attr.quantity.canonical()
    elif attr.version is not None:
        out.version = attr.version
    elif attr.int_slice is not None:
        out.intSlice.SetInParent()
        out.intSlice.ints.extend(attr.int_slice.ints)
    elif attr.string_slice is not None:
        out.stringSlice.SetInParent()
        out.stringSlice.strings.extend(attr.string_slice.strings)


def instances_to_model(instances: Sequence[api.NamedResourcesInstance], out: Any = None) -> Any:
    """Our instances -> a ``ResourceModel`` (``namedResources`` present even when empty),
    filled into ``out`` when given (saves a copy of a large message)."""
    model = resource_pb2.ResourceModel() if out is None else out
    model.namedResources.SetInParent()
    add_instance = model.namedResources.instances.add
    for inst in instances:
        add_attribute = add_instance(name=inst.name).attributes.add
        for attr in inst.attributes or ():
            _value_to_proto(attr, add_attribute(name=attr.name).attributeValue)
    return model


def _attribute_from_proto(pb: Any) -> api.NamedResourcesAttribute:
    value = pb.attributeValue
    which = [f.name for f, _ in value.ListFields()]
    if len(which) != 1:
        raise ConversionError(f"attribute {pb.name!r}: exactly one value must be set, got {which}")
    attr = api.NamedResourcesAttribute(name=pb.name)
    kind = which[0]
    if kind == "quantity":
        try:
            attr.quantity = Quantity.parse(value.quantity.string)
        except QuantityError as err:
            raise ConversionError(f"attribute {pb.name!r}: quantity: {err}") from None
    elif kind == "bool":
        attr.bool_ = value.bool
    elif kind == "int":
        attr.int_ = value.int
    elif kind == "intSlice":
        attr.int_slice = api.NamedResourcesIntSlice(ints=list(value.intSlice.ints))
    elif kind == "string":
        attr.string = value.string
    elif kind == "stringSlice":
        attr.string_slice = api.NamedResourcesStringSlice(strings=list(value.stringSlice.strings))
    else:
        attr.version = value.version
    return attr


def instances_from_model(model: Any) -> api.NamedResourcesResources | None:
    """A ``ResourceModel`` -> our named resources, ``None`` when no model is set."""
    if not model.HasField("namedResources"):
        return None
    return api.NamedResourcesResources(
        instances=[
            api.NamedResourcesInstance(
                name=inst.name,
                attributes=[_attribute_from_proto(a) for a in inst.attributes] or None,
            )
            for inst in model.namedResources.instances
        ]
    )


# --- structured resource handles -------------------------------------------------------------


def _raw_to_proto(value: Any, out: Any) -> None:
    out.SetInParent()
    if value is not None:
        out.raw = codec.encode(value)


def _raw_from_proto(pb: Any, what: str) -> Any:
    if not pb.raw:
        return None
    try:
        return codec.parse_json(pb.raw)
    except codec.DecodeError as err:
        raise ConversionError(f"{what}: {err}") from None


def handle_to_proto(handle: api.StructuredResourceHandle) -> Any:
    """Our handle -> ``StructuredResourceHandle`` with every field Go always writes."""
    out = resource_pb2.StructuredResourceHandle()
    _raw_to_proto(handle.vendor_class_parameters, out.vendorClassParameters)
    _raw_to_proto(handle.vendor_claim_parameters, out.vendorClaimParameters)
    out.nodeName = handle.node_name
    for result in handle.results:
        pb = out.results.add()
        _raw_to_proto(result.vendor_request_parameters, pb.vendorRequestParameters)
        pb.allocationResultModel.SetInParent()
        if result.named_resources is not None:
            pb.allocationResultModel.namedResources.name = result.named_resources.name
    return out


def handle_from_proto(pb: Any) -> api.StructuredResourceHandle:
    """A ``StructuredResourceHandle`` -> our model (vendor parameters decoded from JSON)."""
    results = []
    for i, r in enumerate(pb.results):
        model = r.allocationResultModel
        named = (
            api.NamedResourcesAllocationResult(name=model.namedResources.name)
            if model.HasField("namedResources")
            else None
        )
        results.append(
            api.DriverAllocationResult(
                vendor_request_parameters=_raw_from_proto(
                    r.vendorRequestParameters, f"results[{i}].vendorRequestParameters"
                ),
                named_resources=named,
            )
        )
    return api.StructuredResourceHandle(
        vendor_class_parameters=_raw_from_proto(pb.vendorClassParameters, "vendorClassParameters"),
        vendor_claim_parameters=_raw_from_proto(pb.vendorClaimParameters, "vendorClaimParameters"),
        node_name=pb.nodeName,
        results=results,
    )


def claim_to_proto(claim: api.ResourceClaim, handle: api.ResourceHandle) -> Any:
    """The ``v1alpha3.Claim`` the kubelet sends for one resource handle of an allocated claim:
    the opaque data, plus the structured handle as the single entry of its repeated field."""
    meta = claim.metadata
    out = dra_pb2.Claim(
        namespace=meta.namespace or "",
        uid=meta.uid or "",
        name=meta.name or "",
        resource_handle=handle.data,
    )
    if handle.structured_data is not None:
        out.structured_resource_handle.append(handle_to_proto(handle.structured_data))
    return out


def claim_batches(claim: api.ResourceClaim) -> dict[str, list[Any]]:
    """Driver name -> the ``v1alpha3.Claim`` messages the kubelet sends it for ``claim``, as
    the v1.30 DRA manager builds them (pkg/kubelet/cm/dra/manager.go): one per resource handle,
    to the handle's driver or else the claim's ``status.driverName``; an allocation without
    handles still sends one empty handle to ``status.driverName``."""
    status = claim.status
    handles = (status.allocation.resource_handles if status.allocation else None) or [
        api.ResourceHandle()
    ]
    batches: dict[str, list[Any]] = {}
    for handle in handles:
        driver = handle.driver_name or status.driver_name
        batches.setdefault(driver, []).append(claim_to_proto(claim, handle))
    return batches

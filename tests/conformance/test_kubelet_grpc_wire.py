"""kubelet-grpc-wire.json: our .proto files encode and decode exactly as upstream's.

Each ``hex`` must decode with our messages and re-encode to the same bytes (protobuf's
deterministic serialization); each ``goHex`` (what gogo-generated Go writes, with its always
emitted empty sub-messages) must decode to the same logical value as the ``hex`` form. The
methods listed in ``grpcMethods`` must exist under the same full names.
"""

from __future__ import annotations

from typing import Any

import pytest
from google.protobuf import message as pb_message
from google.protobuf import symbol_database

from kubedra.api.meta import ObjectMeta
from kubedra.api.resource import v1alpha2 as api
from kubedra.proto import convert
from kubedra.proto.generated import (
    dra_v1alpha2_pb2,
    dra_v1alpha3_pb2,
    pluginregistration_v1_pb2,
)
from tests.vectors import load, vector_cases

VECTORS = load("kubelet-grpc-wire.json")
_FILES = (dra_v1alpha3_pb2, dra_v1alpha2_pb2, pluginregistration_v1_pb2)


def _message_class(full_name: str) -> type[pb_message.Message]:
    cls: type[pb_message.Message] = symbol_database.Default().GetSymbol(full_name)
    return cls


def _decode(full_name: str, hex_bytes: str) -> Any:
    msg = _message_class(full_name)()
    msg.ParseFromString(bytes.fromhex(hex_bytes))
    return msg


def _by_name() -> dict[str, dict[str, Any]]:
    return {m["name"]: m for m in VECTORS["messages"]}


@vector_cases("kubelet-grpc-wire.json", VECTORS["messages"])
def test_message_roundtrips_byte_for_byte(case: dict[str, Any]) -> None:
    msg = _decode(case["message"], case["hex"])
    assert msg.SerializeToString(deterministic=True).hex() == case["hex"]


@vector_cases("kubelet-grpc-wire.json", VECTORS["goEquivalent"])
def test_go_encoding_decodes_to_the_same_value(case: dict[str, Any]) -> None:
    python_form = _by_name()[case["name"]]
    go_value = _decode(python_form["message"], case["goHex"])
    py_value = _decode(python_form["message"], python_form["hex"])
    # Go always writes empty RawExtensions; with proto2 presence they decode as present-but-empty,
    # which carries the same information as absent (no raw bytes).
    go_handle = go_value.claims[0].structured_resource_handle[0]
    py_handle = py_value.claims[0].structured_resource_handle[0]
    assert go_handle.vendorClaimParameters.raw == py_handle.vendorClaimParameters.raw == b""
    assert go_handle.results[0].vendorRequestParameters.raw == b""
    go_handle.ClearField("vendorClaimParameters")
    go_handle.results[0].ClearField("vendorRequestParameters")
    assert go_value == py_value
    assert go_value.SerializeToString(deterministic=True).hex() == python_form["hex"]


def _method_cases() -> list[dict[str, Any]]:
    return [
        {"name": m.split(" ")[0], "streaming": m.endswith("(server-streaming)")}
        for group in VECTORS["grpcMethods"].values()
        for m in group
    ]


@vector_cases("kubelet-grpc-wire.json", _method_cases())
def test_grpc_method_exists_with_upstream_full_name(case: dict[str, Any]) -> None:
    service_name, method_name = case["name"].lstrip("/").split("/")
    services = [
        f.DESCRIPTOR.services_by_name[s]
        for f in _FILES
        for s in f.DESCRIPTOR.services_by_name
        if f.DESCRIPTOR.services_by_name[s].full_name == service_name
    ]
    assert len(services) == 1, service_name
    method = services[0].methods_by_name[method_name]
    assert method.server_streaming is case["streaming"]
    assert not method.client_streaming


def test_go_fields_decode_when_written_explicitly() -> None:
    """The Go-style always-written fields build with SetInParent and give the goHex bytes."""
    py_hex = _by_name()["prepare-request-structured"]["hex"]
    py = _decode("v1alpha3.NodePrepareResourcesRequest", py_hex)
    handle = py.claims[0].structured_resource_handle[0]
    handle.vendorClaimParameters.SetInParent()
    handle.results[0].vendorRequestParameters.SetInParent()
    go_hex = VECTORS["goEquivalent"][0]["goHex"]
    assert py.SerializeToString(deterministic=True).hex() == go_hex


@pytest.mark.parametrize("name", ["listwatch-zero-instances"])
def test_presence_of_an_empty_named_resources_model(name: str) -> None:
    msg = dra_v1alpha3_pb2.NodeListAndWatchResourcesResponse()
    msg.resources.add().namedResources.SetInParent()
    assert msg.SerializeToString().hex() == _by_name()[name]["hex"]


_LISTWATCH = [
    m
    for m in VECTORS["messages"]
    if m["message"].endswith("ListAndWatchResourcesResponse") and m["hex"]
]


@vector_cases("kubelet-grpc-wire.json", _LISTWATCH)
def test_published_instances_convert_to_the_same_bytes(case: dict[str, Any]) -> None:
    """proto -> our models -> proto (what a driver publishes) reproduces the bytes."""
    message = _decode(case["message"], case["hex"])
    rebuilt = dra_v1alpha3_pb2.NodeListAndWatchResourcesResponse()
    for model in message.resources:
        named = convert.instances_from_model(model)
        assert named is not None
        rebuilt.resources.append(convert.instances_to_model(named.instances))
    assert rebuilt.SerializeToString(deterministic=True).hex() == case["hex"]


@vector_cases("kubelet-grpc-wire.json", VECTORS["goEquivalent"])
def test_kubelet_claims_are_written_as_go_writes_them(case: dict[str, Any]) -> None:
    """A claim decoded into our models and sent as the kubelet sends it gives the Go bytes."""
    request = _decode("v1alpha3.NodePrepareResourcesRequest", case["goHex"])
    [pb] = request.claims
    handle = convert.handle_from_proto(pb.structured_resource_handle[0])
    claim = api.ResourceClaim(
        metadata=ObjectMeta(namespace=pb.namespace, uid=pb.uid, name=pb.name),
        status=api.ResourceClaimStatus(
            allocation=api.AllocationResult(
                resource_handles=[api.ResourceHandle(driver_name="d", structured_data=handle)]
            )
        ),
    )
    out = dra_v1alpha3_pb2.NodePrepareResourcesRequest(claims=convert.claim_batches(claim)["d"])
    assert out.SerializeToString(deterministic=True).hex() == case["goHex"]

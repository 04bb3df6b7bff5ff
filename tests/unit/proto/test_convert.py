"""Proto <-> model conversions: the kubelet's claim batches, attribute kinds, bad messages."""

from __future__ import annotations

from typing import Any

import pytest

from kubedra.api import codec
from kubedra.api.quantity import Quantity
from kubedra.api.resource import v1alpha2 as api
from kubedra.proto import convert
from kubedra.proto.generated import dra_v1alpha3_pb2 as dra_pb2
from kubedra.proto.generated import resource_v1alpha2_pb2 as resource_pb2
from tests.vectors import load

EXAMPLES = load("kubelet-manager-prepare.json")["examples"]


def _expected_claim(c: dict[str, Any]) -> Any:
    out = dra_pb2.Claim(
        namespace=c["namespace"], uid=c["uid"], name=c["name"], resource_handle=c["resource_handle"]
    )
    for h in c["structured_resource_handle"]:
        handle = codec.decode(h, api.StructuredResourceHandle)
        out.structured_resource_handle.append(convert.handle_to_proto(handle))
    return out


@pytest.mark.parametrize("example", EXAMPLES, ids=[e["name"] for e in EXAMPLES])
def test_claim_batches_as_the_kubelet_builds_them(example: dict[str, Any]) -> None:
    claim = codec.decode(example["claim"], api.ResourceClaim)
    want = {d: [_expected_claim(c) for c in cs] for d, cs in example["expectBatches"].items()}
    assert convert.claim_batches(claim) == want


def test_every_attribute_kind_round_trips() -> None:
    attrs = [
        api.NamedResourcesAttribute(name="q", quantity=Quantity.parse("1500m")),
        api.NamedResourcesAttribute(name="b", bool_=False),
        api.NamedResourcesAttribute(name="i", int_=-(2**63)),
        api.NamedResourcesAttribute(name="is", int_slice=api.NamedResourcesIntSlice(ints=[])),
        api.NamedResourcesAttribute(name="s", string=""),
        api.NamedResourcesAttribute(
            name="ss", string_slice=api.NamedResourcesStringSlice(strings=["a"])
        ),
        api.NamedResourcesAttribute(name="v", version="1.0.0-rc.1"),
    ]
    inst = [api.NamedResourcesInstance(name="x", attributes=attrs)]
    back = convert.instances_from_model(convert.instances_to_model(inst))
    assert back is not None and back.instances == inst


def test_bad_messages_raise_conversion_errors() -> None:
    model = resource_pb2.ResourceModel()
    model.namedResources.instances.add(name="x").attributes.add(name="none")
    with pytest.raises(convert.ConversionError, match="exactly one value"):
        convert.instances_from_model(model)
    model.namedResources.instances[0].attributes[0].attributeValue.quantity.string = "1.5.5"
    with pytest.raises(convert.ConversionError, match="quantity"):
        convert.instances_from_model(model)
    assert convert.instances_from_model(resource_pb2.ResourceModel()) is None
    handle = resource_pb2.StructuredResourceHandle()
    handle.results.add().vendorRequestParameters.raw = b"{"
    with pytest.raises(convert.ConversionError, match=r"results\[0\].vendorRequestParameters"):
        convert.handle_from_proto(handle)

"""The wire side of kubedra.proto.kube's direct conversion: what the protobuf runtime would
accept or write and the plans must too (negative numbers, packed and unpacked repeated
scalars, Go's IntOrString, field order), and what they must refuse."""

from __future__ import annotations

from typing import Any

import pytest

from kubedra.proto import kube
from kubedra.proto.generated import apimachinery_intstr_pb2 as intstr_pb2
from kubedra.proto.generated import apimachinery_runtime_pb2 as runtime_pb2
from kubedra.proto.generated import batch_v1_pb2, core_v1_pb2
from tests.unit.proto.test_kube import EVENT, JOB


def _raw(obj: dict[str, Any]) -> bytes:
    raw: bytes = runtime_pb2.Unknown.FromString(kube.encode(obj)[4:]).raw
    return raw


def _envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    unknown = runtime_pb2.Unknown(raw=raw)
    unknown.typeMeta.apiVersion, unknown.typeMeta.kind = api_version, kind
    return b"k8s\x00" + unknown.SerializeToString()


def test_fields_are_written_in_number_order_as_the_runtime_writes_them() -> None:
    assert _raw(JOB) == batch_v1_pb2.Job.FromString(_raw(JOB)).SerializeToString()
    assert _raw(EVENT) == core_v1_pb2.Event.FromString(_raw(EVENT)).SerializeToString()


def test_negative_numbers_both_ways() -> None:
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "n", "generation": -(1 << 63)},
           "spec": {"priority": -(1 << 31), "containers": [
               {"name": "c", "ports": [{"containerPort": -1}]}]}}
    assert kube.decode(kube.encode(pod)) == pod
    msg = core_v1_pb2.Pod.FromString(_raw(pod))
    assert (msg.metadata.generation, msg.spec.priority) == (-(1 << 63), -(1 << 31))


def test_out_of_range_and_mistyped_values_are_refused() -> None:
    for spec, where in (({"priority": 1 << 31}, r"Pod\.spec\.priority"),
                        ({"hostNetwork": 1}, r"spec\.hostNetwork"),
                        ({"containers": [{"name": 5}]}, r"spec\.containers\[0\]\.name")):
        with pytest.raises(kube.ConversionError, match=where):
            kube.encode({"apiVersion": "v1", "kind": "Pod", "spec": spec})


def test_repeated_scalars_packed_or_not() -> None:
    """Go writes proto2 repeated scalars unpacked; a packed list is read too."""
    groups = core_v1_pb2.PodSecurityContext(supplementalGroups=[5, -6])
    unpacked = core_v1_pb2.Pod(spec=core_v1_pb2.PodSpec(securityContext=groups))
    packed = b"\x12\x06\x72\x04\x22\x02\x05\x06"  # spec(2){securityContext(14){4: [5, 6]}}
    assert kube.decode(_envelope("v1", "Pod", unpacked.SerializeToString()))["spec"] == {
        "securityContext": {"supplementalGroups": [5, -6]}}
    assert kube.decode(_envelope("v1", "Pod", packed))["spec"] == {
        "securityContext": {"supplementalGroups": [5, 6]}}


def test_int_or_string_as_go_writes_it() -> None:
    probe = {"apiVersion": "v1", "kind": "Pod", "spec": {"containers": [
        {"name": "c", "livenessProbe": {"tcpSocket": {"port": 0}},
         "readinessProbe": {"tcpSocket": {"port": "http"}}}]}}
    container = core_v1_pb2.Pod.FromString(_raw(probe)).spec.containers[0]
    as_int = container.livenessProbe.handler.tcpSocket.port
    as_str = container.readinessProbe.handler.tcpSocket.port
    assert as_int == intstr_pb2.IntOrString(type=0, intVal=0, strVal="")
    assert as_str == intstr_pb2.IntOrString(type=1, intVal=0, strVal="http")
    assert as_int.HasField("type") and as_int.HasField("strVal")  # every field, as Go
    assert kube.decode(kube.encode(probe)) == probe


def test_bad_wire_types_and_lengths_are_refused() -> None:
    for raw, match in ((b"\x0a\x05ab", "unexpected EOF"),  # metadata longer than the bytes
                       (b"\x0d\x00\x00\x00\x00", "wire type 5"),  # a fixed32 field 1
                       (b"\x10\x01", "varint where"),  # spec (a message) as a varint
                       (b"\x12\x02\x10\x80", "unexpected EOF")):  # a varint cut short
        with pytest.raises(kube.ConversionError, match=match):
            kube.decode(_envelope("v1", "Pod", raw))

"""Our API .proto files against upstream's generated.proto, field by field.

``tests/data/upstream_proto/<file>.txt`` hold upstream's messages as facts read from k8s.io/api
(message, field, number, label, type), written apart from our .proto files. Ours are proto3 (so
the descriptors say Go's pointer or value), upstream's proto2: the bytes are the same when names,
numbers, labels and types agree and repeated numbers are unpacked, as Go's proto2 code writes
them. A table holds the messages of our file (all of upstream's, but for the apimachinery,
batch, core and policy files, where upstream has some we never send), each with all of
upstream's fields: no message or field more, none less.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest
from google.protobuf.descriptor import Descriptor, FieldDescriptor

from kubedra.proto.generated import (
    apimachinery_intstr_pb2,
    apimachinery_meta_v1_pb2,
    apimachinery_resource_pb2,
    apimachinery_runtime_pb2,
    authentication_v1_pb2,
    authorization_v1_pb2,
    batch_v1_pb2,
    coordination_v1_pb2,
    core_v1_pb2,
    policy_v1_pb2,
    rbac_v1_pb2,
    resource_v1_pb2,
    resource_v1alpha2_pb2,
    resource_v1beta1_pb2,
    resource_v1beta2_pb2,
)

DATA = Path(__file__).resolve().parents[2] / "data" / "upstream_proto"
FILES: dict[str, ModuleType] = {
    "apimachinery_meta_v1": apimachinery_meta_v1_pb2,
    "apimachinery_runtime": apimachinery_runtime_pb2,
    "apimachinery_resource": apimachinery_resource_pb2,
    "apimachinery_intstr": apimachinery_intstr_pb2,
    "authentication_v1": authentication_v1_pb2,
    "authorization_v1": authorization_v1_pb2,
    "batch_v1": batch_v1_pb2,
    "coordination_v1": coordination_v1_pb2,
    "core_v1": core_v1_pb2,
    "policy_v1": policy_v1_pb2,
    "rbac_v1": rbac_v1_pb2,
    "resource_v1alpha2": resource_v1alpha2_pb2,
    "resource_v1beta1": resource_v1beta1_pb2,
    "resource_v1beta2": resource_v1beta2_pb2,
    "resource_v1": resource_v1_pb2,
}
_SCALARS = {FieldDescriptor.TYPE_STRING: "string", FieldDescriptor.TYPE_BOOL: "bool",
            FieldDescriptor.TYPE_INT32: "int32", FieldDescriptor.TYPE_INT64: "int64",
            FieldDescriptor.TYPE_BYTES: "bytes", FieldDescriptor.TYPE_DOUBLE: "double"}

Fields = dict[str, tuple[int, str, str]]


def upstream(name: str) -> tuple[str, dict[str, Fields]]:
    """A table's package and its messages: field name -> (number, label, type)."""
    package, messages = "", {}
    for line in (DATA / f"{name}.txt").read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        if line.startswith("package "):
            package = line.split()[1]
            continue
        message, field, number, label, type_ = line.split()
        fields = messages.setdefault(message, {})
        assert field not in fields, f"{name}: {message}.{field} twice"
        fields[field] = (int(number), label, type_)
    return package, messages


def _type(field: FieldDescriptor, package: str) -> str:
    if field.type != FieldDescriptor.TYPE_MESSAGE:
        return _SCALARS[field.type]
    full: str = field.message_type.full_name
    local = full.removeprefix(package + ".")
    return local if "." not in local else full


def ours(desc: Descriptor, package: str) -> Fields:
    out: Fields = {}
    for f in desc.fields:
        if f.message_type is not None and f.message_type.GetOptions().map_entry:
            key, value = (f.message_type.fields_by_name[n] for n in ("key", "value"))
            out[f.name] = (f.number, "map",
                           f"map<{_type(key, package)},{_type(value, package)}>")
        else:
            out[f.name] = (f.number, "repeated" if f.is_repeated else "optional",
                           _type(f, package))
    return out


@pytest.mark.parametrize("name", FILES)
def test_every_field_as_upstream_numbers_it(name: str) -> None:
    package, expected = upstream(name)
    file = FILES[name].DESCRIPTOR
    assert file.package == package
    messages = file.message_types_by_name
    assert sorted(messages) == sorted(expected)
    for message, fields in expected.items():
        assert ours(messages[message], package) == fields, message


@pytest.mark.parametrize("name", FILES)
def test_repeated_numbers_are_unpacked(name: str) -> None:
    for desc in FILES[name].DESCRIPTOR.message_types_by_name.values():
        for f in desc.fields:
            if f.is_repeated and f.type in _SCALARS and _SCALARS[f.type] not in (
                    "string", "bytes"):
                assert not f.is_packed, f"{desc.name}.{f.name}"


def test_the_tables_read_as_facts() -> None:
    """A typo in a table (an unknown label, a number twice in a message) fails here, not as a
    confusing mismatch."""
    for name in FILES:
        _, messages = upstream(name)
        for message, fields in messages.items():
            numbers = [n for n, _, _ in fields.values()]
            assert len(numbers) == len(set(numbers)), f"{name}: {message}"
            assert {label for _, label, _ in fields.values()} <= {"optional", "repeated", "map"}

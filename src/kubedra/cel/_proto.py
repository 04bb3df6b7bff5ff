"""Protobuf message types that carry Kubernetes CEL object types through cel-cpp.

cel-expr-python cannot pass opaque Python objects into CEL, but it can pass protobuf messages.
Each object type (``kubernetes.Quantity``, ``kubernetes.Semver``, ``kubernetes.URL``,
``net.IP``, ``net.CIDR``) is a message with one string field holding a *value key*: two values
are equal in CEL (proto equality) exactly when upstream's ``Equal`` says so. The field name is
deliberately odd; selecting it from an expression is rejected at compile time (see _ast.py).
``kubedra.Shadow`` is never constructed: it only gives generic library functions an overload
the type checker never picks, to carry their runtime implementation (see _lists.py).

``kubernetes.DRADevice`` is the type of resource.k8s.io/v1's ``device`` variable: ``driver``
(string), ``attributes`` and ``capacity`` (domain -> id -> value; a ``google.protobuf.Struct``
per domain, which CEL types as ``map(string, dyn)``) and ``allowMultipleAllocations`` (bool,
DRAConsumableCapacity). ``kubedra.DRADeviceBase`` is the same without that gated field. They
are for type checking: an evaluation binds ``device`` as a plain map (see _env.py).
"""

from __future__ import annotations

from typing import Any, Final

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, struct_pb2

KEY_FIELD: Final = "kubedra_value_key"

QUANTITY: Final = "kubernetes.Quantity"
SEMVER: Final = "kubernetes.Semver"
URL: Final = "kubernetes.URL"
IP: Final = "net.IP"
CIDR: Final = "net.CIDR"
SHADOW: Final = "kubedra.Shadow"
DRA_DEVICE: Final = "kubernetes.DRADevice"
DRA_DEVICE_BASE: Final = "kubedra.DRADeviceBase"

_F = descriptor_pb2.FieldDescriptorProto


def _add_device(fdp: descriptor_pb2.FileDescriptorProto, name: str, gated: bool) -> None:
    msg = fdp.message_type.add(name=name)
    msg.field.add(name="driver", number=1, type=_F.TYPE_STRING, label=_F.LABEL_OPTIONAL)
    for number, field in ((2, "attributes"), (3, "capacity")):
        entry = msg.nested_type.add(name=field.capitalize() + "Entry")
        entry.options.map_entry = True
        entry.field.add(name="key", number=1, type=_F.TYPE_STRING, label=_F.LABEL_OPTIONAL)
        entry.field.add(name="value", number=2, type=_F.TYPE_MESSAGE, label=_F.LABEL_OPTIONAL,
                        type_name=".google.protobuf.Struct")
        msg.field.add(name=field, number=number, type=_F.TYPE_MESSAGE, label=_F.LABEL_REPEATED,
                      type_name=f".{fdp.package}.{name}.{entry.name}")
    if gated:
        msg.field.add(name="allowMultipleAllocations", number=4, type=_F.TYPE_BOOL,
                      label=_F.LABEL_OPTIONAL, json_name="allowMultipleAllocations")


def _build_pool() -> descriptor_pool.DescriptorPool:
    pool = descriptor_pool.DescriptorPool()
    files: dict[str, list[str]] = {
        "kubernetes": ["Quantity", "Semver", "URL"],
        "net": ["IP", "CIDR"],
        "kubedra": ["Shadow"],
    }
    for package, names in files.items():
        fdp = descriptor_pb2.FileDescriptorProto(
            name=f"kubedra_cel_{package}.proto", package=package, syntax="proto3"
        )
        for name in names:
            msg = fdp.message_type.add(name=name)
            msg.field.add(
                name=KEY_FIELD,
                number=1,
                type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
                label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL,
            )
        pool.Add(fdp)
    pool.AddSerializedFile(struct_pb2.DESCRIPTOR.serialized_pb)
    for package, name, gated in (("kubernetes", "DRADevice", True),
                                 ("kubedra", "DRADeviceBase", False)):
        fdp = descriptor_pb2.FileDescriptorProto(
            name=f"kubedra_cel_{name}.proto", package=package, syntax="proto3",
            dependency=["google/protobuf/struct.proto"],
        )
        _add_device(fdp, name, gated)
        pool.Add(fdp)
    return pool


POOL: Final = _build_pool()


def _cls(full_name: str) -> Any:
    return message_factory.GetMessageClass(POOL.FindMessageTypeByName(full_name))


QuantityMsg: Final[Any] = _cls(QUANTITY)
SemverMsg: Final[Any] = _cls(SEMVER)
URLMsg: Final[Any] = _cls(URL)
IPMsg: Final[Any] = _cls(IP)
CIDRMsg: Final[Any] = _cls(CIDR)

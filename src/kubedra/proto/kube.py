"""Kubernetes' protobuf wire format for API objects, beside the JSON codec (``api/codec``).

An object on the wire is the magic ``k8s\\x00`` and a ``runtime.Unknown`` whose ``typeMeta``
names the kind and whose ``raw`` is the kind's message (``k8s.io/api`` numbering, our .proto
files here). The conversion works on the JSON form (plain dicts, as ``codec.to_builtins``
writes them and ``codec.decode`` reads them), walking the message descriptors: a JSON key is
the field's ``json_name``; upstream's special types are converted as upstream encodes them:
Quantity (``string``), IntOrString (``type``/``intVal``/``strVal``), Time and MicroTime
(seconds and nanos, empty when zero: JSON null), RawExtension and FieldsV1 (the JSON text as
bytes) and the ``ExtraValue`` list wrappers (a JSON array); Go's embedded structs, a
sub-message on the wire, are inline in JSON (``_INLINE``). Presence follows the proto3
descriptors: an ``optional`` (Go pointer) field keeps a zero value, a plain one omits it.
A field number our files lack is refused (never dropped unseen); a JSON key they lack makes
:func:`encode` fail, so the caller can answer in JSON instead.

A kind has a protobuf form when a message ``k8s.io.api.<group>.<version>.<Kind>`` exists
(:func:`message_for`); the others are served in JSON only.
"""

from __future__ import annotations

import base64
import datetime
import functools
import json
import struct
from collections.abc import Iterator
from typing import Any

from google.protobuf import descriptor_pool, message_factory, unknown_fields
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import DecodeError as _ProtoDecodeError
from google.protobuf.message import Message

from kubedra.api.meta import format_time
from kubedra.proto.generated import (  # noqa: F401 - importing registers the messages
    apimachinery_intstr_pb2,
    apimachinery_meta_v1_pb2,
    apimachinery_runtime_pb2,
    authentication_v1_pb2,
    authorization_v1_pb2,
    batch_v1_pb2,
    coordination_v1_pb2,
    core_v1_pb2,
    rbac_v1_pb2,
    resource_v1_pb2,
    resource_v1alpha2_pb2,
    resource_v1beta1_pb2,
    resource_v1beta2_pb2,
)

MEDIA_TYPE = "application/vnd.kubernetes.protobuf"
WATCH_MEDIA_TYPE = "application/vnd.kubernetes.protobuf;stream=watch"
MAGIC = b"k8s\x00"
_META = "k8s.io.apimachinery.pkg.apis.meta.v1"
_QUANTITY = "k8s.io.apimachinery.pkg.api.resource.Quantity"
_INT_OR_STRING = "k8s.io.apimachinery.pkg.util.intstr.IntOrString"
_RAW_EXTENSION = "k8s.io.apimachinery.pkg.runtime.RawExtension"
_TIMES = (f"{_META}.Time", f"{_META}.MicroTime")
_FIELDS_V1 = f"{_META}.FieldsV1"
_CORE = "k8s.io.api.core.v1"
_RESOURCE = "k8s.io.api.resource"
_TYPE_META = ("apiVersion", "kind")
# Go's embedded structs: (message, field) whose fields JSON writes into the parent
_INLINE = frozenset({
    (f"{_CORE}.Volume", "volumeSource"), (f"{_CORE}.Probe", "handler"),
    *((f"{_CORE}.{m}", "localObjectReference") for m in (
        "ConfigMapKeySelector", "SecretKeySelector", "ConfigMapEnvSource", "SecretEnvSource",
        "ConfigMapVolumeSource")),
    *((f"{_RESOURCE}.v1alpha2.{m}", f) for m, f in (
        ("ResourceSlice", "resourceModel"), ("NamedResourcesAttribute", "attributeValue"),
        ("ResourceFilter", "resourceFilterModel"), ("ResourceRequest", "resourceRequestModel"),
        ("DriverAllocationResult", "allocationResultModel"))),
    *((f"{_RESOURCE}.{v}.{m}", "deviceConfiguration") for v in ("v1", "v1beta2", "v1beta1")
      for m in ("DeviceClassConfiguration", "DeviceClaimConfiguration",
                "DeviceAllocationConfiguration")),
})


class ConversionError(ValueError):
    """Bytes that are no object of ours, or an object that has no protobuf form."""


# --- kinds -----------------------------------------------------------------------------------


def _package(api_version: str) -> str:
    group, _, version = api_version.rpartition("/")
    return f"k8s.io.api.{group.split('.')[0] if group else 'core'}.{version}"


_META_KINDS = frozenset({"Status", "WatchEvent", "DeleteOptions"})


@functools.cache
def message_for(api_version: str, kind: str) -> Any:
    """The message class of a kind (``_META_KINDS`` are meta/v1's in every group), or None
    (asked per request: negotiation needs it before anything is encoded)."""
    pool = descriptor_pool.Default()
    name = f"{_META}.{kind}" if kind in _META_KINDS else \
        f"{_package(api_version)}.{kind}"
    try:
        desc = pool.FindMessageTypeByName(name)
    except KeyError:
        return None
    return message_factory.GetMessageClass(desc)


# --- envelope --------------------------------------------------------------------------------


def encode(obj: dict[str, Any]) -> bytes:
    """A JSON-form object (``apiVersion`` and ``kind`` set) -> its protobuf bytes."""
    api_version, kind = obj.get("apiVersion") or "", obj.get("kind") or ""
    cls = message_for(api_version, kind)
    if cls is None:
        raise ConversionError(f"{api_version}, Kind={kind} has no protobuf form")
    msg = cls()
    _fill(msg, {k: v for k, v in obj.items() if k not in _TYPE_META}, kind)
    unknown = apimachinery_runtime_pb2.Unknown(raw=msg.SerializeToString())
    unknown.typeMeta.apiVersion = api_version
    unknown.typeMeta.kind = kind
    raw: bytes = unknown.SerializeToString()
    return MAGIC + raw


def envelope(data: bytes) -> tuple[str, str, bytes]:
    """The ``apiVersion``, ``kind`` and raw message of protobuf bytes."""
    if not data.startswith(MAGIC):
        raise ConversionError("provided data does not appear to be a protobuf message, "
                              f"expected prefix [{' '.join(str(b) for b in MAGIC)}]")
    unknown = apimachinery_runtime_pb2.Unknown()
    try:
        unknown.ParseFromString(data[len(MAGIC):])
    except _ProtoDecodeError as err:
        raise ConversionError(str(err) or "unexpected EOF") from None
    return _text(unknown.typeMeta.apiVersion), _text(unknown.typeMeta.kind), unknown.raw


def _text(value: Any) -> str:
    """A string field of a proto2 message (the runtime gives invalid UTF-8 as bytes)."""
    if not isinstance(value, str):
        raise ConversionError("string field contains invalid UTF-8")
    return value


def decode_message(api_version: str, kind: str, raw: bytes) -> dict[str, Any]:
    """A kind's raw message -> its JSON form with ``apiVersion`` and ``kind``."""
    cls = message_for(api_version, kind)
    if cls is None:
        raise ConversionError(f'no kind "{kind}" is registered for version "{api_version}"')
    msg = cls()
    try:
        msg.ParseFromString(raw)
        out = {"apiVersion": api_version, "kind": kind, **to_json(msg)}
    except _ProtoDecodeError as err:
        raise ConversionError(str(err) or "unexpected EOF") from None
    return out


def decode(data: bytes) -> dict[str, Any]:
    """Protobuf bytes -> the JSON form of the object they carry."""
    return decode_message(*envelope(data))


def watch_frame(event_type: str, obj: dict[str, Any]) -> bytes:
    """One event of a protobuf watch: its length (4 bytes, big-endian), then a WatchEvent
    whose object is the enveloped object."""
    event = apimachinery_meta_v1_pb2.WatchEvent(type=event_type)
    event.object.raw = encode(obj)
    body: bytes = event.SerializeToString()
    return struct.pack(">I", len(body)) + body


def watch_events(data: bytes) -> Iterator[tuple[str, dict[str, Any]]]:
    """The events of a protobuf watch stream's bytes (clients and tests read them so)."""
    at = 0
    while at + 4 <= len(data):
        (size,) = struct.unpack_from(">I", data, at)
        event = apimachinery_meta_v1_pb2.WatchEvent()
        event.ParseFromString(data[at + 4:at + 4 + size])
        yield event.type, decode(event.object.raw)
        at += 4 + size


# --- message -> JSON -------------------------------------------------------------------------


def to_json(msg: Message) -> dict[str, Any]:
    """A message -> its JSON form (the fields it has, as the descriptors say)."""
    out: dict[str, Any] = {}
    desc = msg.DESCRIPTOR
    unknown = unknown_fields.UnknownFieldSet(msg)
    if len(unknown):
        numbers = sorted({f.field_number for f in unknown})
        raise ConversionError(f"{desc.full_name}: field {numbers[0]} is not known to kubedra")
    for field, value in msg.ListFields():
        if (desc.full_name, field.name) in _INLINE:
            out.update(to_json(value))
        elif _is_map(field):
            vfield = field.message_type.fields_by_name["value"]
            out[field.json_name] = {k: _value_json(vfield, v) for k, v in value.items()}
        elif field.is_repeated:
            out[field.json_name] = [_value_json(field, v) for v in value]
        else:
            converted = _value_json(field, value)
            if converted is not None:
                out[field.json_name] = converted
    return out


def _value_json(field: FieldDescriptor, value: Any) -> Any:
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        return _message_json(field.message_type, value)
    if field.type == FieldDescriptor.TYPE_BYTES:
        return base64.b64encode(value).decode()
    if field.type == FieldDescriptor.TYPE_STRING:
        return _text(value)
    return value


def _message_json(desc: Descriptor, value: Any) -> Any:
    name = desc.full_name
    if name == _QUANTITY:
        return _text(value.string)
    if name == _INT_OR_STRING:
        return _text(value.strVal) if value.type == 1 else value.intVal
    if name in _TIMES:
        if not value.seconds and not value.nanos:
            return None
        return _format_time(value.seconds, value.nanos, micro=name == _TIMES[1])
    if name in (_RAW_EXTENSION, _FIELDS_V1):
        raw = value.raw if name == _RAW_EXTENSION else value.Raw
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError as err:
            raise ConversionError(f"{desc.name}: {err}") from None
    if _is_list_wrapper(desc):
        return list(value.items)
    return to_json(value)


def _format_time(seconds: int, nanos: int, micro: bool) -> str:
    if not micro:
        return format_time(seconds)
    at = datetime.datetime.fromtimestamp(seconds, datetime.UTC)
    return at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{nanos // 1000:06d}Z"


# --- JSON -> message -------------------------------------------------------------------------


def from_json(cls: Any, obj: dict[str, Any]) -> Message:
    """The JSON form of a message -> the message (``cls`` a generated class)."""
    msg = cls()
    _fill(msg, obj, cls.DESCRIPTOR.name)
    return msg


def _fill(msg: Any, obj: Any, path: str) -> None:
    if not isinstance(obj, dict):
        raise ConversionError(f"{path}: expected an object")
    fields = _json_fields(msg.DESCRIPTOR)
    for key, value in obj.items():
        if value is None:
            continue
        chain = fields.get(key)
        where = f"{path}.{key}"
        if chain is None and key in _TYPE_META and "metadata" in fields:
            continue  # an object's (or list item's) TypeMeta: the envelope's, or none
        if chain is None:
            raise ConversionError(f"{where}: no such field in {msg.DESCRIPTOR.full_name}")
        holder = msg
        for outer in chain[:-1]:  # an inline (embedded) message
            holder = getattr(holder, outer.name)
            holder.SetInParent()
        field = chain[-1]
        target = getattr(holder, field.name)
        try:
            if _is_map(field):
                _fill_map(target, field, value, where)
            elif field.is_repeated:
                if not isinstance(value, list):
                    raise ConversionError(f"{where}: expected a list")
                for i, item in enumerate(value):
                    if field.type == FieldDescriptor.TYPE_MESSAGE:
                        _put_message(target.add(), item, f"{where}[{i}]")
                    else:
                        target.append(_scalar(field, item, where))
            elif field.type == FieldDescriptor.TYPE_MESSAGE:
                target.SetInParent()
                _put_message(target, value, where)
            else:
                setattr(holder, field.name, _scalar(field, value, where))
        except (TypeError, ValueError) as err:
            if isinstance(err, ConversionError):
                raise
            raise ConversionError(f"{where}: {err}") from None


def _fill_map(target: Any, field: FieldDescriptor, value: Any, where: str) -> None:
    if not isinstance(value, dict):
        raise ConversionError(f"{where}: expected an object")
    vfield = field.message_type.fields_by_name["value"]
    for k, v in value.items():
        if vfield.type == FieldDescriptor.TYPE_MESSAGE:
            _put_message(target[k], v, f"{where}.{k}")
        elif v is not None:
            target[k] = _scalar(vfield, v, where)


def _put_message(msg: Any, value: Any, where: str) -> None:
    name = msg.DESCRIPTOR.full_name
    if name == _QUANTITY:
        msg.string = str(value)
    elif name == _INT_OR_STRING:
        if isinstance(value, str):
            msg.type, msg.strVal = 1, value
        elif isinstance(value, int) and not isinstance(value, bool):
            msg.type, msg.intVal = 0, value
        else:
            raise ConversionError(f"{where}: expected an int or a string")
    elif name in _TIMES:
        if value is not None:
            msg.seconds, msg.nanos = _parse_time(value, where)
    elif name == _RAW_EXTENSION:
        msg.raw = json.dumps(value, separators=(",", ":")).encode()
    elif name == _FIELDS_V1:
        msg.Raw = json.dumps(value, separators=(",", ":")).encode()
    elif _is_list_wrapper(msg.DESCRIPTOR):
        if not isinstance(value, list):
            raise ConversionError(f"{where}: expected a list")
        msg.SetInParent()
        msg.items.extend(value)
    else:
        _fill(msg, value, where)


def _parse_time(value: Any, where: str) -> tuple[int, int]:
    if not isinstance(value, str):
        raise ConversionError(f"{where}: expected a time")
    try:
        at = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ConversionError(f"{where}: {value!r} is no RFC 3339 time") from None
    if at.tzinfo is None:
        at = at.replace(tzinfo=datetime.UTC)
    seconds = int((at - _EPOCH).total_seconds() // 1)
    return seconds, at.microsecond * 1000


_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_INTS = frozenset({FieldDescriptor.TYPE_INT32, FieldDescriptor.TYPE_INT64,
                   FieldDescriptor.TYPE_UINT32, FieldDescriptor.TYPE_UINT64,
                   FieldDescriptor.TYPE_SINT32, FieldDescriptor.TYPE_SINT64})


def _scalar(field: FieldDescriptor, value: Any, where: str) -> Any:
    """A JSON value checked against a scalar field (protobuf would coerce some, e.g. bools
    into ints)."""
    kind = field.type
    ok = (
        (kind == FieldDescriptor.TYPE_STRING and isinstance(value, str))
        or (kind == FieldDescriptor.TYPE_BOOL and isinstance(value, bool))
        or (kind in _INTS and isinstance(value, int) and not isinstance(value, bool))
        or (kind in (FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT)
            and isinstance(value, int | float) and not isinstance(value, bool))
    )
    if kind == FieldDescriptor.TYPE_BYTES and isinstance(value, str):
        return base64.b64decode(value)
    if not ok:
        raise ConversionError(f"{where}: {value!r} does not fit a {field.type} field")
    return value


# --- descriptors -----------------------------------------------------------------------------

_FIELDS: dict[str, dict[str, tuple[FieldDescriptor, ...]]] = {}


def _json_fields(desc: Descriptor) -> dict[str, tuple[FieldDescriptor, ...]]:
    """JSON key -> the fields that lead to it (two for a field of an inline message)."""
    found = _FIELDS.get(desc.full_name)
    if found is None:
        found = {}
        for f in desc.fields:
            if (desc.full_name, f.name) in _INLINE:
                for key, chain in _json_fields(f.message_type).items():
                    found[key] = (f, *chain)
            else:
                found[f.json_name] = (f,)
        _FIELDS[desc.full_name] = found
    return found


def _is_map(field: FieldDescriptor) -> bool:
    return bool(field.type == FieldDescriptor.TYPE_MESSAGE
                and field.message_type.GetOptions().map_entry)


def _is_list_wrapper(desc: Descriptor) -> bool:
    """Go's named slice types (``ExtraValue``): a message of one repeated ``items``."""
    return bool(desc.name == "ExtraValue")

"""Kubernetes' protobuf wire format for API objects, beside the JSON codec (``api/codec``).

An object on the wire is the magic ``k8s\\x00`` and a ``runtime.Unknown`` whose ``typeMeta``
names the kind and whose ``raw`` is the kind's message (``k8s.io/api`` numbering, our .proto
files here). The conversion works on the JSON form (plain dicts, as ``codec.to_builtins``
writes them and ``codec.decode`` reads them) straight to and from the wire bytes, following a
plan compiled once per message from its descriptor (field numbers, types, presence; the
protobuf runtime's message objects cost several times more per field): a JSON key is the
field's ``json_name``; upstream's special types are converted as upstream encodes them:
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
import binascii
import datetime
import functools
import importlib
import struct
from collections.abc import Iterator
from typing import Any, Final

from google.protobuf import descriptor_pool, message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message
from librt.strings import BytesWriter, write_i32_be

from kubedra.api import codec
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
    policy_v1_pb2,
    rbac_v1_pb2,
    resource_v1_pb2,
    resource_v1alpha2_pb2,
    resource_v1beta1_pb2,
    resource_v1beta2_pb2,
)

# Module constants are Final: compiled, a Final is a C constant or static, where any other
# module name is looked up in the module's dict at every use.
MEDIA_TYPE: Final = "application/vnd.kubernetes.protobuf"
WATCH_MEDIA_TYPE: Final = "application/vnd.kubernetes.protobuf;stream=watch"
MAGIC: Final = b"k8s\x00"
_META: Final = "k8s.io.apimachinery.pkg.apis.meta.v1"
_QUANTITY: Final = "k8s.io.apimachinery.pkg.api.resource.Quantity"
_INT_OR_STRING: Final = "k8s.io.apimachinery.pkg.util.intstr.IntOrString"
_RAW_EXTENSION: Final = "k8s.io.apimachinery.pkg.runtime.RawExtension"
_TIMES: Final = (f"{_META}.Time", f"{_META}.MicroTime")
_FIELDS_V1: Final = f"{_META}.FieldsV1"
_CORE: Final = "k8s.io.api.core.v1"
_RESOURCE: Final = "k8s.io.api.resource"
_TYPE_META: Final = ("apiVersion", "kind")
# Go's embedded structs: (message, field) whose fields JSON writes into the parent
_INLINE: Final = frozenset({
    (f"{_CORE}.Volume", "volumeSource"), (f"{_CORE}.Probe", "handler"),
    (f"{_CORE}.EphemeralContainer", "ephemeralContainerCommon"),
    *((f"{_CORE}.{m}", "localObjectReference") for m in (
        "ConfigMapKeySelector", "SecretKeySelector", "ConfigMapEnvSource", "SecretEnvSource",
        "ConfigMapVolumeSource", "ConfigMapProjection", "SecretProjection")),
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


_META_KINDS: Final = frozenset({"Status", "WatchEvent", "DeleteOptions"})


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
    plan = _kind_plan(api_version, kind)
    if plan is None:
        raise ConversionError(f"{api_version}, Kind={kind} has no protobuf form")
    if plan.native is not None:
        encoded: bytes | None = _NATIVE.encode(plan.native, obj, api_version, kind)
        if encoded is not None:  # else a case it declines: encoded here
            return encoded
    out = BytesWriter()
    out.write(MAGIC)
    _put_enveloped(out, plan, obj, api_version, kind)
    return out.getvalue()


def _put_enveloped(out: BytesWriter, plan: _Plan, obj: Any, api_version: str,
                   kind: str) -> None:
    """The ``runtime.Unknown`` of ``obj``: its TypeMeta, then its message as ``raw``."""
    type_meta = BytesWriter()
    _put_string(type_meta, b"\x0a", api_version)
    _put_string(type_meta, b"\x12", kind)
    _put_bytes(out, b"\x0a", type_meta.getvalue())
    _encode_message(plan, obj, kind, out)


def envelope(data: bytes) -> tuple[str, str, bytes]:
    """The ``apiVersion``, ``kind`` and raw message of protobuf bytes."""
    if not data.startswith(MAGIC):
        raise ConversionError("provided data does not appear to be a protobuf message, "
                              f"expected prefix [{' '.join(str(b) for b in MAGIC)}]")
    api_version = kind = ""
    raw = b""
    at, end = len(MAGIC), len(data)
    while at < end:
        number, start, at = _next_field(data, at, end)
        if number == 1:
            inner = start
            while inner < at:
                inner_number, text, inner = _next_field(data, inner, at)
                if inner_number == 1:
                    api_version = _utf8(data[text:inner])
                elif inner_number == 2:
                    kind = _utf8(data[text:inner])
        elif number == 2:
            raw = data[start:at]
    return api_version, kind, raw


def _next_field(data: bytes, at: int, end: int) -> tuple[int, int, int]:
    """The field at ``at`` of a message of length-delimited fields (an envelope's): its
    number, where its bytes start and where they end; a varint field is skipped (number 0)."""
    tag, at = _read_varint(data, at, end)
    number, wire_type = tag >> 3, tag & 7
    if wire_type == 0:
        _, at = _read_varint(data, at, end)
        return 0, at, at
    if wire_type != 2:
        raise ConversionError(f"field {number}: wire type {wire_type} is not used here")
    size, at = _read_varint(data, at, end)
    if at + size > end:
        raise ConversionError("unexpected EOF")
    return number, at, at + size


def decode_message(api_version: str, kind: str, raw: bytes) -> dict[str, Any]:
    """A kind's raw message -> its JSON form with ``apiVersion`` and ``kind``."""
    plan = _kind_plan(api_version, kind)
    if plan is None:
        raise ConversionError(f'no kind "{kind}" is registered for version "{api_version}"')
    out: dict[str, Any] = {"apiVersion": api_version, "kind": kind}
    try:
        _fields_json(plan, raw, 0, len(raw), out)
    except RecursionError:
        raise ConversionError(f"{plan.name}: nested too deeply") from None
    return out


def decode(data: bytes) -> dict[str, Any]:
    """Protobuf bytes -> the JSON form of the object they carry."""
    return decode_message(*envelope(data))


def watch_frame(event_type: str, encoded: bytes) -> bytes:
    """One event of a protobuf watch: its length (4 bytes, big-endian), then a WatchEvent
    whose object (a RawExtension) is the enveloped object, ``encoded`` as :func:`encode`
    gives it (a caller may have it at hand); written at once, its lengths counted first."""
    name = event_type.encode()
    raw_size = 1 + _varint_size(len(encoded)) + len(encoded)
    out = BytesWriter()
    write_i32_be(out, 2 + _varint_size(len(name)) + len(name) + _varint_size(raw_size)
                 + raw_size)
    _put_bytes(out, b"\x0a", name)
    out.write(b"\x12")
    _varint(out, raw_size)
    _put_bytes(out, b"\x0a", encoded)
    return out.getvalue()


def watch_events(data: bytearray) -> Iterator[tuple[str, dict[str, Any]]]:
    """The complete events at the front of a protobuf watch stream's bytes, each removed
    from ``data`` as it is read; a partial one stays for more bytes (clients read so)."""
    while len(data) >= 4:
        (size,) = struct.unpack_from(">I", data)
        if len(data) < 4 + size:
            return
        frame = bytes(data[4:4 + size])
        del data[:4 + size]
        event_type, obj = "", b""
        for number, value in _scan(frame, 0, len(frame)):
            if number == 1 and isinstance(value, bytes):
                event_type = _utf8(value)
            elif number == 2 and isinstance(value, bytes):
                for inner, raw in _scan(value, 0, len(value)):
                    if inner == 1 and isinstance(raw, bytes):
                        obj = bytes(raw)
        yield event_type, decode(obj)


def to_json(msg: Message) -> dict[str, Any]:
    """A message of the runtime's generated classes -> its JSON form."""
    data = msg.SerializeToString()
    out: dict[str, Any] = _decode_message(_plan(msg.DESCRIPTOR), data, 0, len(data))
    return out


def from_json(cls: Any, obj: dict[str, Any]) -> Message:
    """The JSON form of a message -> the message (``cls`` a generated class)."""
    desc = cls.DESCRIPTOR
    data = BytesWriter()
    _encode_message(_plan(desc), obj, desc.name, data, b"")
    message: Message = cls.FromString(data.getvalue())
    return message


class Wire:
    """This format as a client's object wire (``client/wire.py`` ``ObjectWire``), which
    ``cli/`` hands to the clients of ``--kube-api-content-type`` protobuf."""

    media_type = MEDIA_TYPE
    magic = MAGIC

    def encode(self, obj: dict[str, Any]) -> bytes:
        return encode(obj)

    def decode(self, data: bytes) -> dict[str, Any]:
        return decode(data)

    def watch_events(self, data: bytearray) -> Iterator[tuple[str, dict[str, Any]]]:
        return watch_events(data)


# --- plans: what the descriptors say, compiled once per message ------------------------------

_STRING: Final = 0
_BYTES: Final = 1
_BOOL: Final = 2
_INT32: Final = 3
_INT64: Final = 4
_MESSAGE: Final = 5
_MAP: Final = 6
# messages converted as a whole (their JSON form is no object)
_PLAIN: Final = 0
_QUANTITY_K: Final = 1
_INT_OR_STRING_K: Final = 2
_TIME_K: Final = 3
_MICRO_TIME_K: Final = 4
_RAW_K: Final = 5
_LIST_K: Final = 6
_SPECIAL: Final = {_QUANTITY: _QUANTITY_K, _INT_OR_STRING: _INT_OR_STRING_K, _TIMES[0]: _TIME_K,
            _TIMES[1]: _MICRO_TIME_K, _RAW_EXTENSION: _RAW_K, _FIELDS_V1: _RAW_K}
_SCALARS: Final = {FieldDescriptor.TYPE_STRING: _STRING, FieldDescriptor.TYPE_BYTES: _BYTES,
            FieldDescriptor.TYPE_BOOL: _BOOL, FieldDescriptor.TYPE_INT32: _INT32,
            FieldDescriptor.TYPE_INT64: _INT64}
_INT_RANGE: Final = {_INT32: (-(1 << 31), (1 << 31) - 1), _INT64: (-(1 << 63), (1 << 63) - 1)}


class _Field:
    """One field of a message: its JSON key, wire tag, kind, and for a message (or a map's
    message values) the plan of that message."""

    __slots__ = ("index", "inline", "key", "kind", "number", "presence", "repeated",
                 "single_string", "sub", "tag", "value_kind")

    def __init__(self, fd: FieldDescriptor, owner: str, index: int) -> None:
        self.index = index  # in its message's fields
        self.number: int = fd.number
        self.key: str = fd.json_name
        self.repeated: bool = bool(fd.is_repeated)
        self.presence: bool = bool(fd.has_presence)
        self.inline = (owner, fd.name) in _INLINE
        self.sub: _Plan | None = None
        self.value_kind = _STRING
        if fd.type == FieldDescriptor.TYPE_MESSAGE:
            entry = fd.message_type
            if entry.GetOptions().map_entry:
                self.kind, self.repeated = _MAP, False
                value = entry.fields_by_name["value"]
                if value.type == FieldDescriptor.TYPE_MESSAGE:
                    self.value_kind, self.sub = _MESSAGE, _plan(value.message_type)
                else:
                    self.value_kind = _scalar_kind(value)
            else:
                self.kind, self.sub = _MESSAGE, _plan(entry)
        else:
            self.kind = _scalar_kind(fd)
        self.single_string = self.kind == _STRING and not self.repeated  # most fields
        wire_type = 0 if self.kind in (_BOOL, _INT32, _INT64) else 2
        tag = BytesWriter()
        _varint(tag, self.number << 3 | wire_type)
        self.tag = tag.getvalue()


def _scalar_kind(fd: FieldDescriptor) -> int:
    kind = _SCALARS.get(fd.type)
    if kind is None:
        raise TypeError(f"{fd.full_name}: no conversion for protobuf type {fd.type}")
    return kind


class _Plan:
    """A message: its fields in number order (as Go and the runtime write them)."""

    __slots__ = ("by_key", "by_number", "fields", "keys", "metadata", "name", "native",
                 "special")

    def __init__(self, desc: Descriptor) -> None:
        self.name: str = desc.full_name
        self.special = _LIST_K if _is_list_wrapper(desc) else _SPECIAL.get(self.name, _PLAIN)
        self.fields: tuple[_Field, ...] = ()
        # indexed by field number (None: no such field); a list, not a dict: decoding looks
        # up every field read
        self.by_number: list[_Field | None] = []
        # JSON key -> field, when no field is inline (else None: see _fields_in_order)
        self.by_key: dict[str, _Field] | None = None
        self.keys: frozenset[str] = frozenset()
        self.metadata = False
        # the C encoder's copy of this plan (a kind's, see _kind_plan), or None
        self.native: Any = None

    def fill(self, desc: Descriptor) -> None:
        self.fields = tuple(_Field(fd, self.name, i) for i, fd in
                            enumerate(sorted(desc.fields, key=lambda f: f.number)))
        self.by_number = [None] * (max((f.number for f in self.fields), default=0) + 1)
        for f in self.fields:
            self.by_number[f.number] = f
        if not any(f.inline for f in self.fields):
            self.by_key = {f.key: f for f in self.fields}
        self.keys = frozenset(json_fields(desc))
        self.metadata = "metadata" in self.keys


_PLANS: Final[dict[str, _Plan]] = {}
_KIND_PLANS: Final[dict[tuple[str, str], _Plan | None]] = {}


def _plan(desc: Descriptor) -> _Plan:
    plan = _PLANS.get(desc.full_name)
    if plan is None:
        plan = _PLANS[desc.full_name] = _Plan(desc)  # registered first: messages may nest
        plan.fill(desc)
    return plan


def _kind_plan(api_version: str, kind: str) -> _Plan | None:
    key = (api_version, kind)
    try:
        return _KIND_PLANS[key]
    except KeyError:
        cls = message_for(api_version, kind)
        plan = _KIND_PLANS[key] = None if cls is None else _plan(cls.DESCRIPTOR)
        if plan is not None and _NATIVE is not None and plan.native is None:
            plan.native = _NATIVE.compile(plan)
        return plan


def _native_encoder() -> Any:
    """The C encoder of the common case (``_encode.c``), when setup.py built it, set up
    with this module's conversions of times and raw JSON; else None."""
    try:
        native = importlib.import_module("kubedra.proto._encode")
    except ImportError:
        return None
    native.configure(_TIMES_ENCODED, functools.partial(_special_bytes, _TIME_K), _encode_json)
    return native


# --- JSON -> wire ------------------------------------------------------------------------------


class _Bad(ValueError):
    """A value that does not fit its field; the path is prefixed on the way out."""

    def __init__(self, where: str, why: str) -> None:
        super().__init__(why)
        self.where = where
        self.why = why


def _encode_message(plan: _Plan, obj: Any, path: str, out: BytesWriter,
                    tag: bytes = b"\x12") -> None:
    """``obj`` as the field ``tag`` of ``out`` (an envelope's ``raw`` by default), or bare
    (no tag)."""
    try:
        if tag:
            _put_message(out, tag, plan, obj, True)
        else:
            _message_into(plan, obj, out, True)
    except _Bad as bad:
        raise ConversionError(f"{path}{bad.where}: {bad.why}") from None
    except RecursionError:
        raise ConversionError(f"{path}: nested too deeply") from None


def _put_message(out: BytesWriter, tag: bytes, plan: _Plan, obj: Any,
                 top: bool = False) -> None:
    """``obj`` as a length-delimited field of ``out``: written apart first, since its length
    comes before it (a copy per level of nesting costs less than moving what follows a
    length that outgrows its byte)."""
    if plan.special != _PLAIN:
        _put_bytes(out, tag, _special_bytes(plan.special, obj))
        return
    body = BytesWriter()
    _message_into(plan, obj, body, top)
    _put_bytes(out, tag, body.getvalue())


def _message_into(plan: _Plan, obj: Any, out: BytesWriter, top: bool) -> None:
    """``obj``'s message; an object's (or a list item's) TypeMeta is the envelope's, or
    none."""
    special = plan.special
    if special != _PLAIN:
        out.write(_special_bytes(special, obj))
        return
    if not isinstance(obj, dict):
        raise _Bad("", "expected an object")
    used = _fields_into(plan, obj, out)
    if used != len(obj):
        for key, value in obj.items():
            if key not in plan.keys and value is not None and not (
                    key in _TYPE_META and (plan.metadata or top)):
                raise _Bad(f".{key}", f"no such field in {plan.name}")


def _fields_into(plan: _Plan, obj: dict[str, Any], out: BytesWriter) -> int:
    """Write the fields of ``obj`` the plan has, in field order; the number of its keys they
    took. An object has far fewer keys than most messages have fields, and not always in
    field order: each key is looked up once and its value put in its field's slot, instead of
    each field being looked up in the object."""
    by_key = plan.by_key
    if by_key is None:
        return _fields_in_order(plan, obj, out)
    fields = plan.fields
    slots: list[Any] = [_ABSENT] * len(fields)
    used = 0
    for key, value in obj.items():
        f = by_key.get(key)
        if f is not None:
            slots[f.index] = value
            used += 1
    for i, value in enumerate(slots):
        if value is not _ABSENT and value is not None:
            _put_field(fields[i], value, out)
    return used


def _fields_in_order(plan: _Plan, obj: dict[str, Any], out: BytesWriter) -> int:
    """:func:`_fields_into` of a message with inline fields (whose keys are the object's
    own), going through its fields."""
    used = 0
    for f in plan.fields:
        if f.inline:  # an embedded struct: its fields are the object's own
            sub = f.sub
            assert sub is not None
            body = BytesWriter()
            used += _fields_in_order(sub, obj, body)
            if len(body):  # else nothing of it is set: no field
                _put_bytes(out, f.tag, body.getvalue())
            continue
        value = obj.get(f.key, _ABSENT)
        if value is _ABSENT:
            continue
        used += 1
        if value is not None:
            _put_field(f, value, out)
    return used


def _put_field(f: _Field, value: Any, out: BytesWriter) -> None:
    if f.single_string and isinstance(value, str):  # most fields
        if value or f.presence:
            _put_string(out, f.tag, value)
        return
    try:
        _field_into(f, value, out)
    except _Bad as bad:
        bad.where = f".{f.key}{bad.where}"
        raise


_ABSENT: Final = object()


def _field_into(f: _Field, value: Any, out: BytesWriter) -> None:
    kind, tag = f.kind, f.tag
    if kind == _MESSAGE:
        sub = f.sub
        assert sub is not None
        if f.repeated:
            if not isinstance(value, list):
                raise _Bad("", "expected a list")
            for i, item in enumerate(value):
                try:
                    _put_message(out, tag, sub, item)
                except _Bad as bad:
                    bad.where = f"[{i}]{bad.where}"
                    raise
        else:
            _put_message(out, tag, sub, value)
    elif kind == _MAP:
        if not isinstance(value, dict):
            raise _Bad("", "expected an object")
        for k, v in value.items():
            if v is None:
                continue
            entry = BytesWriter()
            _put_string(entry, b"\x0a", k)
            try:
                if f.value_kind == _MESSAGE:
                    assert f.sub is not None
                    _put_message(entry, b"\x12", f.sub, v)
                else:
                    _scalar_bytes(f.value_kind, b"\x12" if f.value_kind in (_STRING, _BYTES)
                                  else b"\x10", v, True, entry)
            except _Bad as bad:
                bad.where = f"[{k}]{bad.where}"
                raise
            _put_bytes(out, tag, entry.getvalue())
    elif f.repeated:
        if not isinstance(value, list):
            raise _Bad("", "expected a list")
        for item in value:
            _scalar_bytes(kind, tag, item, True, out)
    else:
        _scalar_bytes(kind, tag, value, f.presence, out)


def _scalar_bytes(kind: int, tag: bytes, value: Any, keep_zero: bool, out: BytesWriter) -> None:
    """A JSON scalar checked against its field (protobuf would coerce some, e.g. bools into
    ints); a zero without presence is not written."""
    if kind == _STRING:
        if not isinstance(value, str):
            raise _Bad("", f"{value!r} does not fit a string field")
        if value or keep_zero:
            _put_string(out, tag, value)
    elif kind == _BOOL:
        if not isinstance(value, bool):
            raise _Bad("", f"{value!r} does not fit a bool field")
        if value or keep_zero:
            out.write(tag)
            out.append(1 if value else 0)
    elif kind == _BYTES:
        if not isinstance(value, str):
            raise _Bad("", f"{value!r} does not fit a bytes field")
        try:
            raw = base64.b64decode(value, validate=True)
        except binascii.Error as err:
            raise _Bad("", str(err)) from None
        if raw or keep_zero:
            _put_bytes(out, tag, raw)
    else:
        if not isinstance(value, int) or isinstance(value, bool):
            raise _Bad("", f"{value!r} does not fit an integer field")
        low, high = _INT_RANGE[kind]
        if not low <= value <= high:
            raise _Bad("", f"{value} is out of range")
        if value or keep_zero:
            out.write(tag)
            _varint(out, value)


def _special_bytes(special: int, value: Any) -> bytes:
    """The message of a JSON scalar, as upstream's Go types marshal them (a time's from the
    last few thousand, since an object's times repeat, in its managedFields and from object
    to object)."""
    if special not in (_TIME_K, _MICRO_TIME_K):
        out = BytesWriter()
        _special_into(special, value, out)
        return out.getvalue()
    if not isinstance(value, str):
        raise _Bad("", "expected a time")
    hit = _TIMES_ENCODED.get(value)
    if hit is None:
        if len(_TIMES_ENCODED) >= _TIME_CACHE:
            _TIMES_ENCODED.clear()
        seconds, nanos = _rfc3339(value)
        time = BytesWriter()
        if seconds:
            time.append(0x08)
            _varint(time, seconds)
        if nanos:
            time.append(0x10)
            _varint(time, nanos)
        hit = _TIMES_ENCODED[value] = time.getvalue()
    return hit


def _special_into(special: int, value: Any, out: BytesWriter) -> None:
    """:func:`_special_bytes` of the other scalars, written to ``out``."""
    if special == _QUANTITY_K:
        _put_string(out, b"\x0a", str(value))
    elif special == _INT_OR_STRING_K:
        if isinstance(value, str):
            out.write(b"\x08\x01\x10\x00")
            _put_string(out, b"\x1a", value)
        elif isinstance(value, int) and not isinstance(value, bool):
            if not -(1 << 31) <= value < 1 << 31:
                raise _Bad("", f"{value} is out of range")
            out.write(b"\x08\x00\x10")
            _varint(out, value)
            out.write(b"\x1a\x00")
        else:
            raise _Bad("", "expected an int or a string")
    elif special == _RAW_K:
        _put_bytes(out, b"\x0a", _encode_json(value))
    else:  # _LIST_K
        if not isinstance(value, list):
            raise _Bad("", "expected a list")
        for item in value:
            _scalar_bytes(_STRING, b"\x0a", item, True, out)


_encode_json: Final = codec.encode  # bound once: no module lookup per raw field
_TIME_CACHE: Final = 4096
_TIMES_ENCODED: Final[dict[str, bytes]] = {}
_TIMES_FORMATTED: Final[dict[tuple[int, int, bool], str]] = {}
_NATIVE: Final[Any] = _native_encoder()


def _rfc3339(value: str) -> tuple[int, int]:
    try:
        at = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise _Bad("", f"{value!r} is no RFC 3339 time") from None
    if at.tzinfo is None:
        at = at.replace(tzinfo=datetime.UTC)
    seconds = int((at - _EPOCH).total_seconds() // 1)
    return seconds, at.microsecond * 1000


_EPOCH: Final = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def _varint(out: BytesWriter, n: int) -> None:
    """``n`` as a varint; a negative number as its 64-bit two's complement, as Go writes an
    int32 or int64 (masked only then: compiled, the mask is a slow big-integer operation)."""
    if n < 0:
        n &= 0xFFFFFFFFFFFFFFFF
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)


def _varint_size(n: int) -> int:
    """The bytes of a non-negative ``n`` as a varint."""
    size = 1
    while n > 0x7F:
        n >>= 7
        size += 1
    return size


def _put_bytes(out: BytesWriter, tag: bytes, data: bytes) -> None:
    out.write(tag)
    size = len(data)
    if size < 0x80:
        out.append(size)
    else:
        _varint(out, size)
    out.write(data)


def _put_string(out: BytesWriter, tag: bytes, text: str) -> None:
    try:
        data = text.encode()
    except UnicodeEncodeError:  # a lone surrogate, which UTF-8 cannot carry
        raise _Bad("", f"{text!r} is not valid UTF-8") from None
    _put_bytes(out, tag, data)


# --- wire -> JSON ------------------------------------------------------------------------------


def _read_varint(data: bytes, at: int, end: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if at >= end:
            raise ConversionError("unexpected EOF")
        b = data[at]
        at += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, at
        shift += 7
        if shift >= 70:
            raise ConversionError("varint overflows 64 bits")


def _scan(data: bytes, at: int, end: int) -> list[tuple[int, int | bytes]]:
    """A message's fields as (number, varint or length-delimited bytes)."""
    out: list[tuple[int, int | bytes]] = []
    while at < end:
        tag = data[at]
        if tag < 0x80:
            at += 1
        else:
            tag, at = _read_varint(data, at, end)
        number, wire_type = tag >> 3, tag & 7
        if wire_type == 0:
            value, at = _read_varint(data, at, end)
            out.append((number, value))
        elif wire_type == 2:
            if at < end and data[at] < 0x80:
                size = data[at]
                at += 1
            else:
                size, at = _read_varint(data, at, end)
            if at + size > end:
                raise ConversionError("unexpected EOF")
            out.append((number, data[at:at + size]))
            at += size
        else:
            raise ConversionError(f"field {number}: wire type {wire_type} is not used here")
    return out


def _utf8(raw: bytes) -> str:
    try:
        return raw.decode()
    except UnicodeDecodeError:
        raise ConversionError("string field contains invalid UTF-8") from None


def _decode_message(plan: _Plan, data: bytes, at: int, end: int) -> Any:
    try:
        return _message_json(plan, data, at, end)
    except RecursionError:
        raise ConversionError(f"{plan.name}: nested too deeply") from None


def _message_json(plan: _Plan, data: bytes, at: int, end: int) -> Any:
    special = plan.special
    if special != _PLAIN:
        return _special_json(special, plan, data, at, end)
    out: dict[str, Any] = {}
    _fields_json(plan, data, at, end, out)
    return out


def _fields_json(plan: _Plan, data: bytes, at: int, end: int, out: dict[str, Any]) -> None:
    """The fields of a (plain) message, read into ``out``."""
    by_number = plan.by_number
    while at < end:
        tag = data[at]
        if tag < 0x80:
            at += 1
        else:
            tag, at = _read_varint(data, at, end)
        number = tag >> 3
        f = by_number[number] if number < len(by_number) else None
        if f is None:
            raise ConversionError(f"{plan.name}: field {tag >> 3} is not known to kubedra")
        wire_type = tag & 7
        if wire_type == 0:
            raw, at = _read_varint(data, at, end)
            value: Any = _int_json(f.kind, raw, f.key)
            if f.repeated:
                out.setdefault(f.key, []).append(value)
            elif value or f.presence:
                out[f.key] = value
            else:
                out.pop(f.key, None)
            continue
        if wire_type != 2:
            raise ConversionError(f"{plan.name}.{f.key}: wire type {wire_type} is not used here")
        if at < end and data[at] < 0x80:
            stop = at + 1 + data[at]
            at += 1
        else:
            size, at = _read_varint(data, at, end)
            stop = at + size
        if stop > end:
            raise ConversionError("unexpected EOF")
        kind = f.kind
        if kind == _MESSAGE:
            sub = f.sub
            assert sub is not None
            value = _message_json(sub, data, at, stop)
            if f.inline:
                out.update(value)
            elif f.repeated:
                out.setdefault(f.key, []).append(value)
            elif value is not None:
                out[f.key] = value
        elif kind == _MAP:
            k, v = _entry_json(f, data, at, stop)
            out.setdefault(f.key, {})[k] = v
        elif kind in (_INT32, _INT64, _BOOL):  # a packed repeated field
            if not f.repeated:
                raise ConversionError(f"{plan.name}.{f.key}: bytes where a varint belongs")
            values = out.setdefault(f.key, [])
            while at < stop:
                raw, at = _read_varint(data, at, stop)
                values.append(_int_json(kind, raw, f.key))
        else:
            try:
                value = data[at:stop].decode() if kind == _STRING else \
                    base64.b64encode(data[at:stop]).decode()
            except UnicodeDecodeError:
                raise ConversionError("string field contains invalid UTF-8") from None
            if f.repeated:
                out.setdefault(f.key, []).append(value)
            elif value or f.presence:
                out[f.key] = value
            else:
                out.pop(f.key, None)
        at = stop


def _int_json(kind: int, raw: int, key: str) -> Any:
    """A varint as its JSON value (typed Any: compiled, ``int | bool`` would be ``int``, and a
    bool would come back as 0 or 1)."""
    if kind == _BOOL:
        return raw != 0
    if kind == _INT32:
        raw &= 0xFFFFFFFF
        return raw - (1 << 32) if raw >= 1 << 31 else raw
    if kind == _INT64:
        return raw - (1 << 64) if raw >= 1 << 63 else raw
    raise ConversionError(f"{key}: a varint where a length-delimited value belongs")


def _entry_json(f: _Field, data: bytes, at: int, end: int) -> tuple[str, Any]:
    """A map entry: key (field 1), value (field 2; missing: the value type's zero)."""
    key = ""
    value: Any = None
    for number, raw in _scan(data, at, end):
        if number == 1 and isinstance(raw, bytes):
            key = _utf8(raw)
        elif number == 2:
            if f.value_kind == _MESSAGE and isinstance(raw, bytes):
                assert f.sub is not None
                value = _message_json(f.sub, raw, 0, len(raw))
            elif f.value_kind == _STRING and isinstance(raw, bytes):
                value = _utf8(raw)
            elif f.value_kind == _BYTES and isinstance(raw, bytes):
                value = base64.b64encode(raw).decode()
            elif isinstance(raw, int):
                value = _int_json(f.value_kind, raw, f.key)
            else:
                raise ConversionError(f"{f.key}: a map value of the wrong wire type")
    if value is None:
        if f.value_kind == _MESSAGE:
            assert f.sub is not None
            value = _message_json(f.sub, b"", 0, 0)
        else:
            value = {_STRING: "", _BYTES: "", _BOOL: False}.get(f.value_kind, 0)
    return key, value


def _special_json(special: int, plan: _Plan, data: bytes, at: int, end: int) -> Any:
    fields = dict(_scan(data, at, end)) if special != _LIST_K else None
    if special == _QUANTITY_K:
        return _utf8(_view(fields, 1))
    if special == _INT_OR_STRING_K:
        assert fields is not None
        if fields.get(1) == 1:
            return _utf8(_view(fields, 3))
        return _int_json(_INT32, _number(fields, 2), plan.name)
    if special in (_TIME_K, _MICRO_TIME_K):
        assert fields is not None
        seconds = _int_json(_INT64, _number(fields, 1), plan.name)
        nanos = _int_json(_INT32, _number(fields, 2), plan.name)
        if not seconds and not nanos:
            return None
        return _format_time(int(seconds), int(nanos), micro=special == _MICRO_TIME_K)
    if special == _RAW_K:
        raw = bytes(_view(fields, 1))
        if not raw:
            return None
        try:
            return codec.parse_json(raw)
        except codec.DecodeError as err:
            raise ConversionError(f"{plan.name}: {err}") from None
    return [_utf8(v) for n, v in _scan(data, at, end) if n == 1 and isinstance(v, bytes)]


def _view(fields: dict[int, int | bytes] | None, number: int) -> Any:
    value = (fields or {}).get(number, b"")
    if isinstance(value, int):
        raise ConversionError(f"field {number}: a varint where bytes belong")
    return value


def _number(fields: dict[int, int | bytes], number: int) -> int:
    value = fields.get(number, 0)
    if not isinstance(value, int):
        raise ConversionError(f"field {number}: bytes where a varint belongs")
    return value


def _format_time(seconds: int, nanos: int, micro: bool) -> str:
    key = (seconds, nanos, micro)
    hit = _TIMES_FORMATTED.get(key)
    if hit is None:
        if len(_TIMES_FORMATTED) >= _TIME_CACHE:
            _TIMES_FORMATTED.clear()
        hit = _TIMES_FORMATTED[key] = _time_text(seconds, nanos, micro)
    return hit


def _time_text(seconds: int, nanos: int, micro: bool) -> str:
    try:
        if not micro:
            return format_time(seconds)
        at = datetime.datetime.fromtimestamp(seconds, datetime.UTC)
    except (OverflowError, OSError, ValueError):
        raise ConversionError(f"{seconds} seconds is no time") from None
    return at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{nanos // 1000:06d}Z"


# --- descriptors -----------------------------------------------------------------------------

_FIELDS: Final[dict[str, dict[str, tuple[FieldDescriptor, ...]]]] = {}


def json_fields(desc: Descriptor) -> dict[str, tuple[FieldDescriptor, ...]]:
    """JSON key -> the fields that lead to it (two for a field of an inline message)."""
    found = _FIELDS.get(desc.full_name)
    if found is None:
        found = {}
        for f in desc.fields:
            if (desc.full_name, f.name) in _INLINE:
                for key, chain in json_fields(f.message_type).items():
                    found[key] = (f, *chain)
            else:
                found[f.json_name] = (f,)
        _FIELDS[desc.full_name] = found
    return found


def _is_list_wrapper(desc: Descriptor) -> bool:
    """Go's named slice types (``ExtraValue``): a message of one repeated ``items``."""
    return bool(desc.name == "ExtraValue")

"""``/openapi/v2`` as protobuf: the Swagger 2.0 document encoded as gnostic's
``openapi.v2.Document`` (google/gnostic openapiv2/OpenAPIv2.proto; field numbers below).

kubectl 1.30 asks for the v2 document only in this form
(``Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf``), e.g. when its
field-validation check falls back from OpenAPI v3 for a kind the server does not list, and
reports ``error validating data`` when it cannot get it. kube-apiserver serves the same
bytes (kube-openapi's handler marshals the gnostic document); vendor extensions, defaults and
enum values are ``Any`` messages holding YAML text, which JSON is.

Only what :func:`kubedra.apiserver.openapi.v2_document` produces is encoded; any other key
raises, so a new construct in the generator cannot be dropped silently.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable
from typing import Any, Final

from kubedra.api.base import Obj

# what clients ask for (kubectl still sends the old ``@`` form); the answer always names the
# new form, as kube-openapi's handler does: Go's mime parser rejects the ``@``
MEDIA_TYPES: Final = (
    "application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
    "application/com.github.proto-openapi.spec.v2.v1.0+protobuf",
)
CONTENT_TYPE: Final = MEDIA_TYPES[1]



class _Message:
    """Builds one protobuf message (proto3: default values are left out)."""

    __slots__ = ("buf",)

    def __init__(self) -> None:
        self.buf = bytearray()

    def _varint(self, n: int) -> None:
        n &= (1 << 64) - 1
        while n >= 0x80:
            self.buf.append((n & 0x7F) | 0x80)
            n >>= 7
        self.buf.append(n)

    def _key(self, num: int, wire_type: int) -> None:
        self._varint(num << 3 | wire_type)

    def bytes(self, num: int, data: bytes) -> None:
        self._key(num, 2)
        self._varint(len(data))
        self.buf += data

    def string(self, num: int, text: str) -> None:
        if text:
            self.bytes(num, text.encode())

    def boolean(self, num: int, flag: bool, *, always: bool = False) -> None:
        """``always`` writes false too (a oneof member is present even when false)."""
        if flag or always:
            self._key(num, 0)
            self._varint(int(flag))

    def integer(self, num: int, n: int) -> None:
        if n:
            self._key(num, 0)
            self._varint(n)

    def double(self, num: int, x: float) -> None:
        if x:
            self._key(num, 1)
            self.buf += struct.pack("<d", x)


def _any(value: Any) -> bytes:
    """``openapi.v2.Any``: the value as YAML text (field 2)."""
    m = _Message()
    m.string(2, json.dumps(value, separators=(",", ":")))
    return bytes(m.buf)


def _named(name: str, value: bytes) -> bytes:
    """Any ``Named*`` pair message: name = 1, value = 2."""
    m = _Message()
    m.string(1, name)
    m.bytes(2, value)
    return bytes(m.buf)


def _extensions(m: _Message, num: int, node: Obj) -> None:
    for key, value in node.items():
        if key.startswith("x-"):
            m.bytes(num, _named(key, _any(value)))


def _fields(m: _Message, node: Obj, table: dict[str, tuple[int, str]], ext: int, what: str,
            nested: dict[str, Callable[[_Message, int, Any], None]] | None = None) -> None:
    """Encode ``node``'s scalar keys by ``table`` (number, kind) and the rest by ``nested``."""
    for key, value in node.items():
        if key.startswith("x-"):
            continue
        if nested and key in nested:
            nested[key](m, table[key][0], value)
            continue
        spec = table.get(key)
        if spec is None:
            raise ValueError(f"openapi v2 {what}: no protobuf field for {key!r}")
        num, kind = spec
        if kind == "string":
            m.string(num, value)
        elif kind == "strings":
            for v in value:
                m.string(num, v)
        elif kind == "bool":
            m.boolean(num, value)
        elif kind == "int":
            m.integer(num, value)
        elif kind == "double":
            m.double(num, float(value))
        elif kind == "any":
            m.bytes(num, _any(value))
        elif kind == "anys":
            for v in value:
                m.bytes(num, _any(v))
    _extensions(m, ext, node)


_SCHEMA: Final = {
    "$ref": (1, "string"), "format": (2, "string"), "title": (3, "string"),
    "description": (4, "string"), "default": (5, "any"), "multipleOf": (6, "double"),
    "maximum": (7, "double"), "exclusiveMaximum": (8, "bool"), "minimum": (9, "double"),
    "exclusiveMinimum": (10, "bool"), "maxLength": (11, "int"), "minLength": (12, "int"),
    "pattern": (13, "string"), "maxItems": (14, "int"), "minItems": (15, "int"),
    "uniqueItems": (16, "bool"), "maxProperties": (17, "int"), "minProperties": (18, "int"),
    "required": (19, "strings"), "enum": (20, "anys"), "additionalProperties": (21, ""),
    "type": (22, ""), "items": (23, ""), "allOf": (24, ""), "properties": (25, ""),
    "readOnly": (27, "bool"), "example": (30, "any"),
}


def _schema(node: Obj) -> bytes:
    m = _Message()
    _fields(m, node, _SCHEMA, 31, "schema", {
        "type": _type_item, "items": _items, "allOf": _all_of,
        "properties": _properties, "additionalProperties": _additional,
    })
    return bytes(m.buf)


def _type_item(m: _Message, num: int, value: Any) -> None:
    inner = _Message()
    for t in [value] if isinstance(value, str) else value:
        inner.string(1, t)
    m.bytes(num, bytes(inner.buf))


def _items(m: _Message, num: int, value: Any) -> None:
    inner = _Message()
    for s in value if isinstance(value, list) else [value]:
        inner.bytes(1, _schema(s))
    m.bytes(num, bytes(inner.buf))


def _all_of(m: _Message, num: int, value: Any) -> None:
    for s in value:
        m.bytes(num, _schema(s))


def _properties(m: _Message, num: int, value: Any) -> None:
    inner = _Message()
    for name, s in value.items():
        inner.bytes(1, _named(name, _schema(s)))
    m.bytes(num, bytes(inner.buf))


def _additional(m: _Message, num: int, value: Any) -> None:
    inner = _Message()
    if isinstance(value, bool):  # AdditionalPropertiesItem { schema = 1 | boolean = 2 }
        inner.boolean(2, value, always=True)
    else:
        inner.bytes(1, _schema(value))
    m.bytes(num, bytes(inner.buf))


# QueryParameterSubSchema / PathParameterSubSchema share names but not numbers
_QUERY: Final = {"required": (1, "bool"), "in": (2, "string"), "description": (3, "string"),
                 "name": (4, "string"), "type": (6, "string"), "format": (7, "string"),
                 "uniqueItems": (20, "bool")}
_PATH: Final = {"required": (1, "bool"), "in": (2, "string"), "description": (3, "string"),
                "name": (4, "string"), "type": (5, "string"), "format": (6, "string"),
                "uniqueItems": (19, "bool")}
_BODY: Final = {"description": (1, "string"), "name": (2, "string"), "in": (3, "string"),
                "required": (4, "bool"), "schema": (5, "")}
# NonBodyParameter's oneof member and the sub-schema's extension field, by location
_NON_BODY: Final = {"query": (3, _QUERY, 23), "path": (4, _PATH, 22)}


def _parameter(node: Obj) -> bytes:
    """``ParametersItem`` { parameter = 1: ``Parameter`` { body = 1 | non-body = 2 } }."""
    m = _Message()
    where = node.get("in")
    if where == "body":
        _fields(m, node, _BODY, 6, "body parameter",
                {"schema": lambda mm, n, v: mm.bytes(n, _schema(v))})
        parameter = _embed(1, bytes(m.buf))
    elif where in _NON_BODY:
        member, table, ext = _NON_BODY[where]
        _fields(m, node, table, ext, f"{where} parameter")
        parameter = _embed(2, _embed(member, bytes(m.buf)))
    else:
        raise ValueError(f"openapi v2: parameters in {where!r} are not encoded")
    return _embed(1, parameter)


def _embed(num: int, data: bytes) -> bytes:
    """A message whose only field ``num`` holds ``data`` (a oneof member or a wrapper)."""
    m = _Message()
    m.bytes(num, data)
    return bytes(m.buf)


def _responses(m: _Message, num: int, value: Obj) -> None:
    """``Responses`` { response_code = 1: (code, ``ResponseValue`` { response = 1 }) }."""
    inner = _Message()
    for code, resp in value.items():
        r = _Message()
        _fields(r, resp, {"description": (1, "string"), "schema": (2, "")}, 5, "response", {
            # SchemaItem { schema = 1 }
            "schema": lambda mm, n, v: mm.bytes(n, _embed(1, _schema(v))),
        })
        inner.bytes(1, _named(code, _embed(1, bytes(r.buf))))
    m.bytes(num, bytes(inner.buf))


_OPERATION: Final = {
    "tags": (1, "strings"), "summary": (2, "string"), "description": (3, "string"),
    "operationId": (5, "string"), "produces": (6, "strings"), "consumes": (7, "strings"),
    "parameters": (8, ""), "responses": (9, ""), "schemes": (10, "strings"),
    "deprecated": (11, "bool"),
}


def _parameters(m: _Message, num: int, value: list[Obj]) -> None:
    for p in value:
        m.bytes(num, _parameter(p))


def _operation(node: Obj) -> bytes:
    m = _Message()
    _fields(m, node, _OPERATION, 13, "operation",
            {"parameters": _parameters, "responses": _responses})
    return bytes(m.buf)


_PATH_ITEM: Final = {"$ref": (1, "string"), "get": (2, ""), "put": (3, ""), "post": (4, ""),
                     "delete": (5, ""), "options": (6, ""), "head": (7, ""), "patch": (8, ""),
                     "parameters": (9, "")}


def _path_item(node: Obj) -> bytes:
    m = _Message()

    def op(mm: _Message, n: int, v: Obj) -> None:
        mm.bytes(n, _operation(v))

    nested = {k: op for k in ("get", "put", "post", "delete", "options", "head", "patch")}
    _fields(m, node, _PATH_ITEM, 10, "path item", {**nested, "parameters": _parameters})
    return bytes(m.buf)


def encode(doc: Obj) -> bytes:
    """The Swagger 2.0 ``doc`` as an ``openapi.v2.Document`` message."""
    m = _Message()

    def info(mm: _Message, n: int, v: Obj) -> None:
        i = _Message()
        _fields(i, v, {"title": (1, "string"), "version": (2, "string"),
                       "description": (3, "string")}, 7, "info")
        mm.bytes(n, bytes(i.buf))

    def paths(mm: _Message, n: int, v: Obj) -> None:
        p = _Message()  # Paths { vendor_extension = 1, path = 2 }
        for name, item in v.items():
            p.bytes(2, _named(name, _path_item(item)))
        mm.bytes(n, bytes(p.buf))

    def definitions(mm: _Message, n: int, v: Obj) -> None:
        d = _Message()  # Definitions { additional_properties = 1 }
        for name, schema in v.items():
            d.bytes(1, _named(name, _schema(schema)))
        mm.bytes(n, bytes(d.buf))

    _fields(m, doc, {"swagger": (1, "string"), "info": (2, ""), "host": (3, "string"),
                     "basePath": (4, "string"), "schemes": (5, "strings"),
                     "consumes": (6, "strings"), "produces": (7, "strings"),
                     "paths": (8, ""), "definitions": (9, "")}, 16, "document",
            {"info": info, "paths": paths, "definitions": definitions})
    return bytes(m.buf)

"""The one place JSON and YAML enter and leave the typed models.

Everything that turns outside bytes into objects raises :class:`DecodeError` (a message plus
the JSON path of the offending value) and nothing else, whatever the input. Quantities are
decoded from JSON strings or numbers (YAML users write ``cpu: 1``) and encoded canonically.

YAML is read with libyaml's safe loader minus the timestamp resolver (``2024-01-01`` stays a
string, as with kubectl) and is normalized to plain JSON values the way sigs.k8s.io/yaml does.
``unknown_fields`` and ``duplicate_fields`` serve ``fieldValidation=Strict``.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Iterator
from typing import Any, Final, Generic, TypeVar

import msgspec
import yaml

from kubedra.api import core, kinds
from kubedra.api.meta import TypedObject
from kubedra.api.quantity import Quantity

T = TypeVar("T")


class DecodeError(ValueError):
    """Input that cannot be decoded: ``reason`` says why, ``path`` where (``spec.x[0]``)."""

    def __init__(self, reason: str, path: str = "") -> None:
        super().__init__(f"{path}: {reason}" if path else reason)
        self.reason = reason
        self.path = path


# --- hooks ------------------------------------------------------------------------------------


def _dec_hook(tp: type, obj: Any) -> Any:
    if tp is Quantity:
        # Quantity.UnmarshalJSON: null is zero, strings are trimmed, numbers parse as text.
        if obj is None:
            return Quantity()
        if isinstance(obj, str):
            return _quantity(obj)
        if isinstance(obj, int) and not isinstance(obj, bool):
            return Quantity.parse(str(obj))
        if isinstance(obj, float) and math.isfinite(obj):
            return Quantity.parse(repr(obj))
        raise TypeError(f"Expected `quantity`, got `{_json_type(obj)}`")
    raise NotImplementedError(f"no decoder for {tp!r}")


@functools.lru_cache(maxsize=4096)
def _quantity(text: str) -> Quantity:
    """Parsing dominates decoding and the same few strings recur (``80Gi`` on every GPU);
    Quantity is immutable, so one instance per string is shared."""
    return Quantity.unmarshal(text)


def _enc_hook(obj: Any) -> Any:
    if isinstance(obj, Quantity):
        return str(obj)
    raise NotImplementedError(f"cannot encode {type(obj).__name__}")


def _json_type(obj: Any) -> str:
    if isinstance(obj, bool):
        return "bool"
    if isinstance(obj, int | float):
        return "number"
    if isinstance(obj, list):
        return "array"
    if isinstance(obj, dict):
        return "object"
    return type(obj).__name__


_DECODERS: dict[Any, msgspec.json.Decoder[Any]] = {}


def _decoder(model: Any) -> msgspec.json.Decoder[Any]:
    decoder = _DECODERS.get(model)
    if decoder is None:
        decoder = _DECODERS[model] = msgspec.json.Decoder(model, dec_hook=_dec_hook)
    return decoder


_ENCODER = msgspec.json.Encoder(enc_hook=_enc_hook)
_RAW_DECODER: msgspec.json.Decoder[Any] = msgspec.json.Decoder()


class _WatchFrame(msgspec.Struct, Generic[T]):
    type: str
    object: T


_FRAME_DECODERS: dict[Any, msgspec.json.Decoder[Any]] = {}
_OBJECT_EVENTS: Final = frozenset({"ADDED", "MODIFIED", "DELETED"})


def decode_watch_event(line: bytes, model: type[T]) -> tuple[str, T] | None:
    """A JSON watch event's type and object, the object decoded as ``model`` in the same
    pass over the line (apart, the frame is read once and the object's bytes again). None
    for any event but ADDED, MODIFIED and DELETED, and for one that does not decode so
    (Go's nulls, say): :func:`decode` of the object is the way for those."""
    decoder = _FRAME_DECODERS.get(model)
    if decoder is None:
        frame_type = _WatchFrame[model]  # type: ignore[valid-type]
        decoder = _FRAME_DECODERS[model] = msgspec.json.Decoder(frame_type, dec_hook=_dec_hook)
    try:
        frame = decoder.decode(line)
    except (msgspec.MsgspecError, RecursionError, UnicodeError):
        return None
    return (frame.type, frame.object) if frame.type in _OBJECT_EVENTS else None


def _from_msgspec(err: Exception) -> DecodeError:
    """``Expected `int`, got `str` - at `$.spec.priority``` -> path ``spec.priority``."""
    text = str(err)
    reason, sep, where = text.rpartition(" - at `")
    if not sep:
        return DecodeError(text)
    where = where.rstrip("`")
    key_prefix = "key` in `"
    if where.startswith(key_prefix):  # a bad map key: ``at `key` in `$.metadata.labels```
        where = where[len(key_prefix):]
        reason = f"map key: {reason}"
    if where.startswith("$"):
        where = where[1:].lstrip(".")
    return DecodeError(reason, where)


# --- decoding and encoding --------------------------------------------------------------------


def decode(data: bytes | str | dict[str, Any], model: type[T]) -> T:
    """JSON bytes/text or an already parsed JSON object -> ``model``.

    As Go's decoder, ``null`` where the model has a plain value or object leaves the zero
    value (``"spec": null``, ``"ready": null``); msgspec rejects those, so a failure that
    names a null is retried once with such nulls removed. An error inside a map names the
    key (``limits[cpu]``) where msgspec says ``[...]``."""
    try:
        return _decode(data, model)
    except DecodeError as err:
        error = err
    null = "got `null`" in error.reason
    if not (null or "[...]" in error.path) or not isinstance(data, dict | str | bytes):
        raise error
    raw = data if isinstance(data, dict) else parse_json(data)
    hashable: Any = model
    info = _type_info(hashable)
    if null:
        try:
            raw = _zero_nulls(raw, info)
        except RecursionError:
            raise error from None
        try:
            return _decode(raw, model)
        except DecodeError as err:  # the real problem, hidden behind the null
            error = err
    raise _name_map_key(error, raw, info)


_PATH_SEGMENT = re.compile(r"\.?([^.\[]+)|\[(\d+|\.\.\.)\]")


def _name_map_key(error: DecodeError, raw: Any, info: msgspec.inspect.Type) -> DecodeError:
    """``error`` with each ``[...]`` of its path replaced by the map key whose value does not
    decode, found by walking ``raw`` along the model (unchanged when that cannot be told)."""
    if "[...]" not in error.path:
        return error
    node: Any = raw
    parts: list[str] = []
    for match in _PATH_SEGMENT.finditer(error.path):
        name, index = match.groups()
        if isinstance(info, msgspec.inspect.UnionType):
            info = next((m for m in info.types if _matches(node, m)), info)
        if name is not None and isinstance(info, msgspec.inspect.StructType):
            fields = {f.encode_name: f.type for f in info.fields}
            if not isinstance(node, dict) or name not in fields or name not in node:
                return error
            node, info = node[name], fields[name]
            parts.append(f".{name}" if parts else name)
        elif index == "..." and isinstance(info, msgspec.inspect.DictType):
            bad = [k for k, v in node.items() if not _decodes_as(v, info.value_type)]
            if len(bad) != 1:
                return error
            node, info = node[bad[0]], info.value_type
            parts.append(f"[{bad[0]}]")
        elif index is not None and index != "..." and isinstance(info, msgspec.inspect.ListType):
            if not isinstance(node, list) or int(index) >= len(node):
                return error
            node, info = node[int(index)], info.item_type
            parts.append(f"[{index}]")
        else:
            return error
    return DecodeError(error.reason, "".join(parts))


def _decodes_as(value: Any, info: msgspec.inspect.Type) -> bool:
    """Whether a map value decodes (told for custom types such as Quantity and strings)."""
    if isinstance(info, msgspec.inspect.CustomType):
        try:
            _dec_hook(info.cls, value)
        except (ValueError, TypeError):
            return False
        return True
    if isinstance(info, msgspec.inspect.StrType):
        return isinstance(value, str)
    return True


def _decode(data: Any, model: type[T]) -> T:
    try:
        if isinstance(data, dict):
            return msgspec.convert(data, model, dec_hook=_dec_hook)
        if isinstance(data, str | bytes | bytearray | memoryview):
            result: T = _decoder(model).decode(data)
            return result
    except msgspec.MsgspecError as err:
        raise _from_msgspec(err) from None
    except RecursionError:
        raise DecodeError("object is nested too deeply") from None
    except UnicodeError as err:
        raise DecodeError(f"invalid text: {err}") from None
    raise DecodeError(f"cannot decode a {type(data).__name__}")


_ZERO: dict[type, Any] = {
    msgspec.inspect.StrType: "",
    msgspec.inspect.IntType: 0,
    msgspec.inspect.FloatType: 0.0,
    msgspec.inspect.BoolType: False,
}


def _zero_nulls(raw: Any, info: msgspec.inspect.Type) -> Any:
    """``raw`` with the nulls Go would decode as zero values made explicit: object keys are
    dropped (the model's default applies) and list or map items become the item's zero."""
    if isinstance(info, msgspec.inspect.UnionType):
        member = next((m for m in info.types if _matches(raw, m)), None)
        return raw if member is None else _zero_nulls(raw, member)
    if isinstance(info, msgspec.inspect.StructType) and isinstance(raw, dict):
        fields = {f.encode_name: f.type for f in info.fields}
        return {k: _zero_nulls(v, fields[k]) if k in fields else v
                for k, v in raw.items() if v is not None}
    if isinstance(info, msgspec.inspect.ListType) and isinstance(raw, list):
        return [_item(v, info.item_type) for v in raw]
    if isinstance(info, msgspec.inspect.DictType) and isinstance(raw, dict):
        return {k: _item(v, info.value_type) for k, v in raw.items()}
    return raw


def _item(value: Any, info: msgspec.inspect.Type) -> Any:
    if value is None:
        if isinstance(info, msgspec.inspect.StructType | msgspec.inspect.DictType):
            return {}
        return _ZERO.get(type(info))
    return _zero_nulls(value, info)


def parse_json(data: bytes | str) -> Any:
    """JSON bytes/text -> plain Python values (dicts, lists, ...)."""
    try:
        return _RAW_DECODER.decode(data)
    except msgspec.MsgspecError as err:
        raise _from_msgspec(err) from None
    except RecursionError:
        raise DecodeError("object is nested too deeply") from None


encode: Final = _ENCODER.encode
"""A model (or plain values containing models) -> compact JSON bytes (the encoder's own
method: a compiled caller, the protobuf codec among them, calls it without a Python frame)."""


def deep_copy(obj: T, model: type[T]) -> T:
    """A deep copy of ``obj`` (a ``model``) through its JSON form: what a round trip through
    the API keeps, encoded and decoded in C, where ``copy.deepcopy`` walks every object in
    Python (a tenth to a twentieth of its time for a thousand devices)."""
    return _decode(encode(obj), model)


def to_builtins(obj: Any) -> Any:
    """A model -> dicts, lists and scalars, as they would be written in JSON."""
    return msgspec.to_builtins(obj, enc_hook=_enc_hook)


def _type_meta_table() -> dict[type, tuple[str, str]]:
    table: dict[type, tuple[str, str]] = {core.Binding: ("v1", "Binding")}
    for model in {k.model for k in kinds.KINDS}:
        k = kinds.by_model(model)  # a model several versions share: the preferred version
        assert k is not None
        table[k.model] = (k.api_version, k.kind)
        table[k.list_model] = (k.api_version, k.list_kind)
    return table


_TYPE_META = _type_meta_table()


def set_type_meta(obj: T) -> T:
    """Fill an object's empty ``apiVersion`` and ``kind`` from its model (objects built in
    Python before they are sent or stored); returns ``obj``."""
    found = _TYPE_META.get(type(obj))
    if found is None:
        raise TypeError(f"{type(obj).__name__} is not a served kind")
    obj_any: Any = obj
    obj_any.api_version = obj_any.api_version or found[0]
    obj_any.kind = obj_any.kind or found[1]
    return obj


def kind_of(raw: dict[str, Any]) -> kinds.Kind:
    """The served kind a raw object names through ``apiVersion`` and ``kind``."""
    api_version, kind = raw.get("apiVersion"), raw.get("kind")
    if not isinstance(kind, str) or not kind:
        raise DecodeError("Object 'Kind' is missing")
    if not isinstance(api_version, str) or not api_version:
        raise DecodeError(f"Object 'apiVersion' is missing in object of kind {kind!r}")
    found = kinds.by_api_version(api_version, kind)
    if found is None:
        raise DecodeError(f'no matches for kind "{kind}" in version "{api_version}"')
    return found


def decode_object(raw: dict[str, Any]) -> TypedObject:
    """A raw object -> the model of the kind its ``apiVersion``/``kind`` name."""
    if not isinstance(raw, dict):
        raise DecodeError(f"expected a JSON object, got {_json_type(raw)}")
    return decode(raw, kind_of(raw).model)


# --- strict field validation ------------------------------------------------------------------


#: Fields of a model that one release's type lacks, as (struct class, JSON name): a model
#: carries every release's fields, as a GA type carries gated ones.
Absent = frozenset[tuple[type, str]]
NONE_ABSENT: Absent = frozenset()


def unknown_fields(raw: Any, model: Any, absent: Absent = NONE_ABSENT) -> list[str]:
    """Paths of the fields in ``raw`` that ``model`` (without the ``absent`` ones) does not
    know (``spec.foo``, ``spec.containers[0].bar``), in document order. Raw JSON parts
    (``Any``) know every field.

    Nearly every body has none (``fieldValidation`` defaults to Warn, so every write asks):
    msgspec tells that in C through the model's strict twin, about a tenth of the walk's
    cost; only a body the twin refuses is walked for the paths."""
    twin = _strict_twin(model, absent)
    if twin is not None:
        try:
            msgspec.convert(raw, twin)
            return []
        except (msgspec.ValidationError, RecursionError):
            pass
    out: list[str] = []
    _walk_unknown(raw, _type_info(model), "", out, absent)
    return out


class _NoTwin(Exception):
    """The model has a shape the twin cannot mirror (recursion, a union of two containers)."""


@functools.cache
def _strict_twin(model: Any, absent: Absent) -> Any:
    """A type that accepts exactly the JSON whose objects name only known fields, at every
    place :func:`_walk_unknown` looks, and anything at all elsewhere (scalars, ``Any``): the
    model's structs copied with ``forbid_unknown_fields``, every field optional. None when
    the model cannot be mirrored (then every body is walked). A struct model's twin is the
    bare struct: msgspec converts to a union (``X | None``) only after building the union's
    type node again on every call."""
    twins: dict[type, Any] = {}
    building: set[type] = set()

    def struct(info: msgspec.inspect.StructType) -> Any:
        cls = twins.get(info.cls)
        if cls is None:
            if info.cls in building:
                raise _NoTwin
            building.add(info.cls)
            cls = twins[info.cls] = msgspec.defstruct(
                f"{info.cls.__name__}Strict",
                [(f.name, twin(f.type), None) for f in info.fields
                 if (info.cls, f.encode_name) not in absent],
                rename={f.name: f.encode_name for f in info.fields},
                forbid_unknown_fields=True, kw_only=True, gc=False)
        return cls

    def twin(info: msgspec.inspect.Type) -> Any:
        if isinstance(info, msgspec.inspect.StructType):
            return struct(info) | None
        if isinstance(info, msgspec.inspect.ListType):
            return list[twin(info.item_type)] | None  # type: ignore[misc]
        if isinstance(info, msgspec.inspect.DictType):
            return dict[str, twin(info.value_type)] | None  # type: ignore[misc]
        if isinstance(info, msgspec.inspect.UnionType):
            containers = [m for m in info.types if isinstance(m, _NESTED)]
            if len(containers) > 1:
                raise _NoTwin
            return twin(containers[0]) if containers else Any
        return Any

    try:
        info = _type_info(model)
        return struct(info) if isinstance(info, msgspec.inspect.StructType) else twin(info)
    except _NoTwin:
        return None


@functools.cache
def _type_info(model: Any) -> msgspec.inspect.Type:
    return msgspec.inspect.type_info(model)


def _walk_unknown(raw: Any, info: msgspec.inspect.Type, path: str, out: list[str],
                  absent: Absent) -> None:
    if isinstance(info, msgspec.inspect.UnionType):
        for member in info.types:
            if _matches(raw, member):
                _walk_unknown(raw, member, path, out, absent)
                return
        return
    if isinstance(info, msgspec.inspect.StructType) and isinstance(raw, dict):
        fields = _struct_fields(info)
        for key, value in raw.items():
            if key not in fields or (info.cls, key) in absent:
                out.append(f"{path}.{key}" if path else str(key))
                continue
            sub = fields[key]
            if sub is not None and isinstance(value, dict | list):  # scalars have no fields
                _walk_unknown(value, sub, f"{path}.{key}" if path else str(key), out, absent)
    elif isinstance(info, msgspec.inspect.ListType) and isinstance(raw, list):
        item = info.item_type
        if isinstance(item, _NESTED):
            for i, value in enumerate(raw):
                if isinstance(value, dict | list):
                    _walk_unknown(value, item, f"{path}[{i}]", out, absent)
    elif isinstance(info, msgspec.inspect.DictType) and isinstance(raw, dict):
        item = info.value_type
        if isinstance(item, _NESTED):
            for key, value in raw.items():
                if isinstance(value, dict | list):
                    _walk_unknown(value, item, f"{path}[{key}]", out, absent)


_FieldTypes = dict[str, msgspec.inspect.Type | None]
_STRUCT_FIELDS: dict[int, tuple[msgspec.inspect.StructType, _FieldTypes]] = {}
_NESTED = (msgspec.inspect.StructType, msgspec.inspect.ListType, msgspec.inspect.DictType,
           msgspec.inspect.UnionType)


def _struct_fields(info: msgspec.inspect.StructType) -> _FieldTypes:
    """JSON name -> type of a struct's fields (None where nothing below can be unknown:
    scalars and ``Any``), built once per struct type info (the entry keeps ``info`` alive,
    so its id is not reused)."""
    hit = _STRUCT_FIELDS.get(id(info))
    if hit is not None:
        return hit[1]
    types: _FieldTypes = {f.encode_name: f.type if isinstance(f.type, _NESTED) else None
                          for f in info.fields}
    _STRUCT_FIELDS[id(info)] = (info, types)
    return types


def _matches(raw: Any, info: msgspec.inspect.Type) -> bool:
    if isinstance(info, msgspec.inspect.StructType | msgspec.inspect.DictType):
        return isinstance(raw, dict)
    if isinstance(info, msgspec.inspect.ListType):
        return isinstance(raw, list)
    return False


class _Object(dict[str, Any]):
    """A JSON object that remembers where each key last appeared and where keys repeated."""

    last: dict[str, int]
    repeats: list[tuple[int, str]]


def _pairs(pairs: list[tuple[str, Any]]) -> _Object:
    obj = _Object()
    obj.last, obj.repeats = {}, []
    for i, (key, value) in enumerate(pairs):
        if key in obj and all(k != key for _, k in obj.repeats):
            obj.repeats.append((i, key))
        obj[key] = value
        obj.last[key] = i
    return obj


def duplicate_fields(data: bytes | str) -> list[str]:
    """Paths of keys repeated within one JSON object (``metadata.name``), each once, in the
    order the repeats appear in the text. Malformed JSON yields no paths (decode reports it)."""
    try:
        tree = json.loads(data, object_pairs_hook=_pairs)
    except (ValueError, RecursionError):
        return []
    out: list[str] = []
    # A stack of ("visit", node, path) and ("report", None, path) steps.
    stack: list[tuple[bool, Any, str]] = [(False, tree, "")]
    while stack:
        report, node, path = stack.pop()
        if report:
            out.append(path)
        elif isinstance(node, _Object):
            steps = [(i, 1, False, node[k], _join(path, k)) for k, i in node.last.items()]
            steps += [(i, 0, True, None, _join(path, k)) for i, k in node.repeats]
            steps.sort(key=lambda step: (step[0], step[1]), reverse=True)
            stack += [(rep, value, p) for _, _, rep, value, p in steps]
        elif isinstance(node, list):
            stack += [(False, v, f"{path}[{i}]") for i, v in reversed(list(enumerate(node)))]
    return out


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


# --- YAML -------------------------------------------------------------------------------------


class _Loader(yaml.CSafeLoader):
    """libyaml safe loading without YAML 1.1 timestamps (and the ``=`` value tag, which
    the safe constructor cannot build)."""


_Loader.yaml_implicit_resolvers = {
    first: [
        (tag, regexp)
        for tag, regexp in resolvers
        if tag not in ("tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:value")
    ]
    for first, resolvers in yaml.CSafeLoader.yaml_implicit_resolvers.items()
}


# libyaml composes nodes recursively in C and overflows the stack (a segfault) somewhere
# past 20,000 levels, so deeper input is refused before it reaches the parser.
MAX_YAML_DEPTH = 1000
_FLOW_BRACKET = re.compile(r"[\[\]{}]")
_BLOCK_PREFIX = re.compile(r"^[ \t?:-]*", re.MULTILINE)


def _nesting_bound(text: str) -> int:
    """An upper bound on a YAML text's nesting: every block level takes at least one
    indentation or indicator character at the start of some line, and every flow level a
    bracket (brackets in quoted strings only make the bound looser)."""
    block = max((m.end() - m.start() for m in _BLOCK_PREFIX.finditer(text)), default=0)
    flow = deepest = 0
    for m in _FLOW_BRACKET.finditer(text):
        flow = flow + 1 if m.group() in "[{" else max(flow - 1, 0)
        deepest = max(deepest, flow)
    return block + deepest


def load_documents(data: bytes | str) -> list[Any]:
    """Every non-empty document of a multi-document YAML stream (JSON is YAML), as plain
    JSON values. ``kind: List`` documents are not expanded (see :func:`expand_lists`)."""
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as err:
            raise DecodeError(f"invalid UTF-8: {err}") from None
    if _nesting_bound(data) > MAX_YAML_DEPTH:
        raise DecodeError("YAML document is nested too deeply")
    docs: list[Any] = []
    try:
        for doc in yaml.load_all(data, Loader=_Loader):
            if doc is not None:
                docs.append(_to_json(doc, _Budget(len(data))))
    except yaml.YAMLError as err:
        raise DecodeError(f"error parsing YAML: {err}") from None
    except RecursionError:
        raise DecodeError("YAML document is nested too deeply") from None
    return docs


def yaml_duplicate_fields(data: bytes | str) -> list[list[str]]:
    """For each document :func:`load_documents` returns, the paths of keys repeated within one
    mapping (loading keeps the last value silently). Unparsable input yields ``[]``."""
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
        if _nesting_bound(text) > MAX_YAML_DEPTH:
            return []
        roots = list(yaml.compose_all(text, Loader=_Loader))
    except (UnicodeDecodeError, yaml.YAMLError, RecursionError):
        return []
    return [
        _node_duplicates(root) for root in roots
        if not (isinstance(root, yaml.ScalarNode) and root.tag == "tag:yaml.org,2002:null")
    ]


def _node_duplicates(root: yaml.Node) -> list[str]:
    """Repeated keys under ``root``, each path once, in the order the repeats appear."""
    found: dict[str, int] = {}  # path -> position of its first repeat
    seen_nodes: set[int] = set()  # aliases share nodes: visit each once
    stack: list[tuple[yaml.Node, str]] = [(root, "")]
    while stack:
        node, path = stack.pop()
        if id(node) in seen_nodes:
            continue
        seen_nodes.add(id(node))
        children: list[tuple[yaml.Node, str]] = []
        if isinstance(node, yaml.MappingNode):
            keys: set[str] = set()
            for key_node, value_node in node.value:
                if not isinstance(key_node, yaml.ScalarNode) or key_node.value == "<<":
                    continue
                child = _join(path, key_node.value)
                if key_node.value in keys:
                    found.setdefault(child, key_node.start_mark.index)
                keys.add(key_node.value)
                children.append((value_node, child))
        elif isinstance(node, yaml.SequenceNode):
            children = [(item, f"{path}[{i}]") for i, item in enumerate(node.value)]
        stack += reversed(children)  # visit in document order
    return sorted(found, key=found.__getitem__)


def dump_yaml(*docs: Any) -> str:
    """Models or plain values as a YAML stream, keys sorted as ``kubectl -o yaml`` writes them.
    Strings that YAML 1.1 would read as something else (``"on"``, ``"1.0"``) are quoted."""
    return yaml.dump_all(
        [to_builtins(d) for d in docs], Dumper=yaml.CSafeDumper, sort_keys=True,
        default_flow_style=False, allow_unicode=True, explicit_start=len(docs) > 1,
    )


def expand_lists(docs: list[Any]) -> Iterator[Any]:
    """Documents with their ``kind: List`` (or ``<Kind>List``) wrappers replaced by their items,
    as ``kubectl -f`` does."""
    for _, _, item in list_items(docs):
        yield item


def list_items(docs: list[Any]) -> Iterator[tuple[int, str, Any]]:
    """:func:`expand_lists` with where each object sits: the document's index and the path of
    the object within it (``""``, or ``items[2]`` in a List)."""
    for index, doc in enumerate(docs):
        for path, item in _unwrap(doc, ""):
            yield index, path, item


def _unwrap(doc: Any, path: str) -> Iterator[tuple[str, Any]]:
    items = doc.get("items") if isinstance(doc, dict) else None
    kind = doc.get("kind") if isinstance(doc, dict) else None
    if isinstance(kind, str) and kind.endswith("List") and isinstance(items, list):
        for i, item in enumerate(items):
            yield from _unwrap(item, f"{_join(path, 'items')}[{i}]")
    else:
        yield path, doc


class _Budget:
    """Bounds alias expansion ("billion laughs"), as go-yaml's excessive-aliasing check."""

    def __init__(self, text_length: int) -> None:
        self.left = 10_000 + 100 * text_length

    def spend(self) -> None:
        self.left -= 1
        if self.left < 0:
            raise DecodeError("error parsing YAML: document contains excessive aliasing")


def _to_json(node: Any, budget: _Budget, path: str = "") -> Any:
    budget.spend()
    if isinstance(node, dict):
        out: dict[str, Any] = {}
        for k, v in node.items():
            key = _key_text(k, path)
            out[key] = _to_json(v, budget, f"{path}.{key}" if path else key)
        return out
    if isinstance(node, list):
        return [_to_json(v, budget, f"{path}[{i}]") for i, v in enumerate(node)]
    if isinstance(node, float):
        if not math.isfinite(node):
            raise DecodeError(f"unsupported value {node!r}: not representable in JSON", path)
        # Go writes an integral float64 as an integer (1.0 -> 1).
        return int(node) if node.is_integer() and abs(node) < 2**63 else node
    if node is None or isinstance(node, bool | int | str):
        return node
    raise DecodeError(f"unsupported YAML value of type {type(node).__name__}", path)


def _key_text(key: Any, path: str) -> str:
    """Map keys become strings as sigs.k8s.io/yaml writes them (``true``, ``1``)."""
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, int):
        return str(key)
    if isinstance(key, float) and math.isfinite(key):
        return str(int(key)) if key.is_integer() else repr(key)
    if key is None:
        return "null"
    raise DecodeError(f"unsupported YAML map key of type {type(key).__name__}", path)

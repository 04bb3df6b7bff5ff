"""Field sets as server-side apply records them (structured-merge-diff, ``FieldsV1``).

A path is a tuple of elements written as upstream writes FieldsV1 keys: ``f:<field>``,
``k:<json of the list-map keys>``, ``v:<json of a set value>``, ``i:<index>``. A set is a
plain Python set of such tuples.
"""

from __future__ import annotations

import copy
import json
from collections import OrderedDict
from typing import Any, TypeVar

import msgspec

from kubedra.apiserver.patch.schema import UNTYPED, Meta
from kubedra.apiserver.patch.values import go_json, json_equal, same_json

_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder().decode

Path = tuple[str, ...]
FieldSet = set[Path]
MISSING: Any = object()
K = TypeVar("K")
V = TypeVar("V")

# Fields never tracked (apimachinery fieldmanager ``stripmeta``).
_STRIPPED_META = frozenset(("name", "namespace", "creationTimestamp", "selfLink", "uid",
                            "generation", "managedFields", "resourceVersion"))
_TYPE_META = frozenset(("apiVersion", "kind"))


def strip(obj: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``obj`` without the fields field managers never own."""
    out = {k: v for k, v in obj.items() if k not in _TYPE_META}
    meta = out.get("metadata")
    if isinstance(meta, dict):
        kept = {k: v for k, v in meta.items() if k not in _STRIPPED_META}
        if kept:
            out["metadata"] = kept
        else:
            del out["metadata"]
    return out


def _granular(meta: Meta) -> bool:
    return bool(meta.list_keys) or meta.is_set


def item_element(item: Any, index: int, meta: Meta) -> str:
    """The path element naming one item of a granular list."""
    if meta.is_set:
        return "v:" + go_json(item)
    if isinstance(item, dict):
        keys = {k: item[k] for k in meta.list_keys if k in item}
        if keys:
            return _key_element(keys)
    return f"i:{index}"


def remember(memo: OrderedDict[K, V], capacity: int, key: K, value: V) -> V:
    """Put ``key`` in a bounded memo, its oldest entry going first when full: what is asked
    again is mostly what was seen recently."""
    if len(memo) >= capacity:
        memo.popitem(last=False)
    memo[key] = value
    return value


_KEY_ELEMENTS: OrderedDict[tuple[tuple[str, str], ...], str] = OrderedDict()
_KEY_ELEMENTS_LIMIT = 4096


def _key_element(keys: dict[str, Any]) -> str:
    """``k:`` + the keys' JSON, remembered for string-valued keys (condition types,
    container names: the same few recur in every object of a kind)."""
    if not all(type(v) is str for v in keys.values()):
        return "k:" + go_json(keys)
    memo = tuple(keys.items())
    element = _KEY_ELEMENTS.get(memo)
    if element is None:
        element = remember(_KEY_ELEMENTS, _KEY_ELEMENTS_LIMIT, memo, "k:" + go_json(keys))
    return element


def collect(value: Any, meta: Meta, path: Path, out: FieldSet, *, maps: bool = False) -> None:
    """Add the paths ``value`` (at ``path``) sets, as ``TypedValue.ToFieldSet``; with
    ``maps`` also the map-typed fields themselves, as a comparison lists added maps."""
    if isinstance(value, dict):
        if not value or (maps and meta.is_map):
            if path:
                out.add(path)
            if not value:
                return
        _collect_members(value, meta, path, out, maps)
    elif isinstance(value, list) and _granular(meta):
        for i, item in enumerate(value):
            child = (*path, item_element(item, i, meta))
            out.add(child)
            if isinstance(item, dict) and meta.list_keys:
                collect(item, meta, child, out, maps=maps)
    elif path:
        out.add(path)


def _collect_members(value: dict[str, Any], meta: Meta, path: Path, out: FieldSet,
                     maps: bool) -> None:
    """:func:`collect` for the members of a non-empty object: scalars and atomic lists,
    the most common members, are added here without a call of their own."""
    is_map = meta.is_map
    fields = meta.fields
    for key, sub in value.items():
        child = (*path, "f:" + key)
        if not isinstance(sub, (dict, list)):  # a scalar (or null) is its own path
            out.add(child)
            continue
        if is_map:
            out.add(child)
            sub_meta = UNTYPED
        else:
            sub_meta = fields.get(key, UNTYPED)
        if isinstance(sub, list) and not _granular(sub_meta):
            out.add(child)  # an atomic list
        else:
            collect(sub, sub_meta, child, out, maps=maps)


def field_set(obj: dict[str, Any], meta: Meta) -> FieldSet:
    out: FieldSet = set()
    collect(strip(obj), meta, (), out)
    return out


def created(obj: dict[str, Any], meta: Meta, reset: FieldSet) -> FieldSet:
    """What a create sets outside ``reset``: the ``added`` of a :func:`diff` from nothing,
    without the comparison (there is nothing to compare with) and with a reset top-level
    field skipped rather than collected and then filtered out."""
    out: FieldSet = set()
    for key, value in strip(obj).items():
        path = ("f:" + key,)
        if path in reset:
            continue
        sub = meta.child(key)
        collect(value, sub, path, out, maps=True)
        if meta.is_map:
            out.add(path)
    return outside(out, reset) if any(len(r) != 1 for r in reset) else out


def _match(items: list[Any], element: str, meta: Meta) -> int:
    for i, item in enumerate(items):
        if item_element(item, i, meta) == element:
            return i
    return -1


def diff(old: Any, new: Any, meta: Meta) -> tuple[FieldSet, FieldSet, FieldSet]:
    """(added, modified, removed) from ``old`` to ``new`` (``TypedValue.Compare``)."""
    added: FieldSet = set()
    modified: FieldSet = set()
    removed: FieldSet = set()
    _compare(old, new, meta, (), False, (added, modified, removed))
    return added, modified, removed


def _compare(old: Any, new: Any, meta: Meta, path: Path, own: bool,
             out: tuple[FieldSet, FieldSet, FieldSet]) -> None:
    """Add the changes below ``path`` to ``out`` (added, modified, removed). ``own`` tells
    whether the node at ``path`` is itself a member (a list item or a map entry) rather
    than a struct field, which upstream only lists through its children. Equal members
    are skipped before any recursion: they have no changes below them."""
    if old is MISSING:
        if new is not MISSING:
            collect(new, meta, path, out[0], maps=True)
            if own and path:
                out[0].add(path)
        return
    if new is MISSING:
        out[2].add(path)
        return
    if isinstance(old, dict) and isinstance(new, dict) and (old or new):
        is_map = meta.is_map
        for key, before in old.items():
            after = new.get(key, MISSING)
            if not same_json(before, after):
                _compare(before, after, meta.child(key), (*path, "f:" + key), is_map, out)
        for key, after in new.items():
            if key not in old:  # added: nothing to compare first
                _compare(MISSING, after, meta.child(key), (*path, "f:" + key), is_map, out)
    elif isinstance(old, list) and isinstance(new, list) and _granular(meta):
        old_items = {item_element(x, i, meta): x for i, x in enumerate(old)}
        new_items = {item_element(x, i, meta): x for i, x in enumerate(new)}
        item_meta = meta if meta.list_keys else UNTYPED
        for element, before in old_items.items():
            after = new_items.get(element, MISSING)
            if not same_json(before, after):
                _compare(before, after, item_meta, (*path, element), True, out)
        for element, after in new_items.items():
            if element not in old_items:
                _compare(MISSING, after, item_meta, (*path, element), True, out)
    elif not json_equal(old, new) and path:
        out[1].add(path)


def outside(paths: FieldSet | frozenset[Path], roots: FieldSet | frozenset[Path]) -> FieldSet:
    """The paths that are not one of ``roots`` and lie below none of them: one pass per
    distinct root length, each a set lookup per path."""
    kept = set(paths)
    for n in {len(r) for r in roots}:
        if n == 1:  # the usual roots (``f:status``, ``f:spec``): no slice per path
            firsts = {r[0] for r in roots if len(r) == 1}
            kept = {p for p in kept if not p or p[0] not in firsts}
        else:
            kept = {p for p in kept if p[:n] not in roots}
    return kept


def to_fields_v1(paths: FieldSet | frozenset[Path]) -> dict[str, Any]:
    """Encode a set as the nested FieldsV1 object (``.`` marks a member with children),
    keys sorted as upstream writes them. Built in one pass over the sorted paths: tuple order
    visits a tree depth first with sorted children, so every node is created in its place
    and a member comes before anything below it."""
    tree: dict[str, Any] = {}
    members: set[int] = set()  # ids of the nodes that are members of the set
    for path in sorted(paths):
        if not path:
            continue  # the root is never a member
        node = tree
        for element in path[:-1]:
            child = node.get(element)
            if child is None:
                child = node[element] = {}
            elif not child and id(child) in members:
                child["."] = {}  # a member about to get its first child
            node = child
        members.add(id(node.setdefault(path[-1], {})))
    return tree


def from_fields_v1(tree: Any) -> FieldSet:
    """The set a FieldsV1 tree encodes: a node is a member when it is a leaf or has ``.``;
    one set filled by a walk that carries each node's path."""
    out: FieldSet = set()
    if isinstance(tree, dict):
        _members(tree, (), out)
    return out


def _members(tree: dict[str, Any], prefix: Path, out: FieldSet) -> None:
    for element, sub in tree.items():
        if element == "." or not isinstance(sub, dict):
            continue
        path = (*prefix, element)
        if not sub or "." in sub:
            out.add(path)
            if not sub:
                continue
        _members(sub, path, out)


class FieldsV1Codec:
    """:func:`from_fields_v1` and :func:`to_fields_v1` with memory: objects written the same
    way own the same field sets, so most trees and sets repeat. Bounded (:func:`remember`:
    the next write of an object decodes what a recent write encoded).

    The trees :meth:`encode` gives are shared, as the stored trees a write keeps are: no one
    changes a tree in place. So decoding one of them again is an identity lookup, without
    encoding the tree to find it."""

    def __init__(self, capacity: int = 4096) -> None:
        self.capacity = capacity
        self._sets: OrderedDict[bytes, frozenset[Path]] = OrderedDict()
        self._trees: OrderedDict[frozenset[Path], dict[str, Any]] = OrderedDict()
        # id of a tree encode gave → (that tree, its set); the tree is held, so its id
        # cannot be reused while it is here
        self._given: OrderedDict[int, tuple[dict[str, Any], frozenset[Path]]] = OrderedDict()

    def decode(self, tree: Any) -> frozenset[Path]:
        given = self._given.get(id(tree))
        if given is not None and given[0] is tree:
            return given[1]
        try:
            key = _encode(tree)
        except (TypeError, ValueError, msgspec.MsgspecError):
            return frozenset(from_fields_v1(tree))
        hit = self._sets.get(key)
        if hit is None:
            hit = remember(self._sets, self.capacity, key, frozenset(from_fields_v1(tree)))
        return hit

    def encode(self, paths: FieldSet | frozenset[Path]) -> dict[str, Any]:
        """The tree of ``paths`` (shared: never to be changed); remembered as decoding to
        them too, since the next write of the object decodes what this one stores."""
        key = frozenset(paths)
        tree = self._trees.get(key)
        if tree is None:
            tree = remember(self._trees, self.capacity, key, to_fields_v1(key))
            remember(self._sets, self.capacity, _encode(tree), key)
            remember(self._given, self.capacity, id(tree), (tree, key))
        return tree


def path_string(path: Path) -> str:
    """``fieldpath.Path.String()``: ``.spec.containers[name="c"].image``."""
    text = ""
    for element in path:
        kind, rest = element[:2], element[2:]
        if kind == "f:":
            text += "." + rest
        elif kind == "k:":
            keys = json.loads(rest)
            text += "[" + ",".join(f"{k}={go_json(v)}" for k, v in keys.items()) + "]"
        elif kind == "v:":
            text += "[=" + rest + "]"
        else:
            text += "[" + rest + "]"
    return text


def remove_path(obj: Any, path: Path, meta: Meta) -> None:
    """Delete the value at ``path`` from ``obj`` in place (missing paths are ignored)."""
    node, node_meta = obj, meta
    for depth, element in enumerate(path):
        last = depth == len(path) - 1
        if element.startswith("f:") and isinstance(node, dict):
            key = element[2:]
            if key not in node:
                return
            if last:
                del node[key]
                return
            node, node_meta = node[key], node_meta.child(key)
        elif isinstance(node, list):
            at = _match(node, element, node_meta)
            if at < 0:
                return
            if last:
                del node[at]
                return
            node = node[at]
        else:
            return


def merge_applied(live: Any, config: Any, meta: Meta) -> Any:
    """Merge an apply configuration into the live value (``TypedValue.Merge``): maps merge
    key by key, granular lists merge by item, everything else takes the configured value."""
    if isinstance(config, dict) and isinstance(live, dict):
        out = dict(live)
        for key, value in config.items():
            if value is None:
                out.pop(key, None)
            else:
                out[key] = merge_applied(live.get(key, MISSING), value, meta.child(key))
        return out
    if isinstance(config, list) and isinstance(live, list) and _granular(meta):
        out_list = list(live)
        item_meta = meta if meta.list_keys else UNTYPED
        for i, item in enumerate(config):
            at = _match(out_list, item_element(item, i, meta), meta)
            if at >= 0:
                out_list[at] = merge_applied(out_list[at], item, item_meta)
            else:
                out_list.append(copy.deepcopy(item))
        return out_list
    return copy.deepcopy(config)

"""Strategic merge patch (``application/strategic-merge-patch+json``), as apimachinery's
``strategicpatch.StrategicMergeMapPatch`` applies it to a live object.

Lists merge by the field's merge key (schema.py), other lists are replaced; ``null`` deletes a
key. Directives: ``$patch: replace|delete`` on maps and list elements, ``$retainKeys``,
``$setElementOrder/<list>`` and ``$deleteFromPrimitiveList/<list>``.
Differences from upstream, all on malformed input: a list element without its merge key is
a 422 (upstream: 500); directives inside a value that is new to the object are resolved
(upstream copies them into the object verbatim).
"""

from __future__ import annotations

from typing import Any

from kubedra.apiserver.patch.errors import bad_request, unprocessable
from kubedra.apiserver.patch.schema import Meta
from kubedra.apiserver.patch.values import copy_json, go_json, json_equal, same_kind

DIRECTIVE = "$patch"
RETAIN_KEYS = "$retainKeys"
SET_ORDER = "$setElementOrder/"
DELETE_FROM = "$deleteFromPrimitiveList/"

JsonMap = dict[str, Any]


def apply_strategic_merge_patch(doc: JsonMap, patch: Any, schema: Meta) -> JsonMap:
    """Apply a strategic merge patch to ``doc`` using the kind's ``schema``. ``doc`` is the
    caller's to give away (it is changed in place, the result may be it); ``patch`` is
    copied first (a retried update applies it again)."""
    if not isinstance(patch, dict):
        raise bad_request("strategic merge patch must be a JSON object")
    original = doc if isinstance(doc, dict) else {}
    return _merge_map(original, copy_json(patch), schema)


def _no_merge_key(item: Any, key: str) -> Exception:
    return unprocessable(f"map: {go_json(item)} does not contain declared merge key: {key}")


def _fresh(value: Any, meta: Meta) -> Any:
    """A patch value with no live counterpart: resolve its directives against nothing."""
    if isinstance(value, dict):
        return _merge_map({}, value, meta)
    if isinstance(value, list) and meta.strategy == "merge":
        return _merge_list([], value, meta)
    return value


def _merge_map(original: JsonMap, patch: JsonMap, meta: Meta) -> JsonMap:
    if DIRECTIVE in patch:
        directive = patch.pop(DIRECTIVE)
        if directive == "replace":
            return _merge_map({}, patch, meta)
        if directive == "delete":
            return {}
        raise bad_request(f"Unknown patch type: {directive} in map: {go_json(patch)}")
    _retain_keys(original, patch)
    _merge_ordered_lists(original, patch, meta)
    deletions = {k: v for k, v in patch.items() if k.startswith(DELETE_FROM)}
    for key, value in patch.items():
        if key in deletions:
            continue
        if value is None:
            original.pop(key, None)
            continue
        child = meta.child(key)
        if key not in original or not same_kind(original[key], value):
            original[key] = _fresh(value, child)
        elif isinstance(value, dict):
            if child.strategy == "replace":
                original[key] = _fresh(value, child)
            else:
                original[key] = _merge_map(original[key], value, child)
        elif isinstance(value, list):
            if child.strategy == "merge":
                original[key] = _merge_list(original[key], value, child)
            else:
                original[key] = _fresh(value, child)
        else:
            original[key] = value
    for key, value in deletions.items():
        if not isinstance(value, list):
            raise bad_request("invalid patch format of primitive list")
        name = key[len(DELETE_FROM):]
        current = original.get(name)
        if isinstance(current, list):
            original[name] = [x for x in current if not any(json_equal(x, d) for d in value)]
    return original


def _retain_keys(original: JsonMap, patch: JsonMap) -> None:
    if RETAIN_KEYS not in patch:
        return
    keep = patch.pop(RETAIN_KEYS)
    if not isinstance(keep, list):
        raise bad_request("invalid patch format of retainKeys")
    for key, value in patch.items():
        if value is None or key.startswith((DELETE_FROM, SET_ORDER)):
            continue
        if key not in keep:
            raise bad_request("invalid patch format of retainKeys")
    for key in [k for k in original if k not in keep]:
        del original[key]


def _merge_ordered_lists(original: JsonMap, patch: JsonMap, meta: Meta) -> None:
    """Handle ``$setElementOrder/<list>``: merge the list, then order it as the directive says
    (directive order first, then live order for items only the server has)."""
    for key in [k for k in patch if k.startswith(SET_ORDER)]:
        order = patch.pop(key)
        if not isinstance(order, list):
            raise bad_request("invalid patch format of setElementOrder list")
        name = key[len(SET_ORDER):]
        child = meta.child(name)
        live, wanted = original.get(name), patch.pop(name, None)
        if live is not None and not isinstance(live, list):
            raise unprocessable(f"expected a list at {name}, but the object has {go_json(live)}")
        if wanted is not None and not isinstance(wanted, list):
            raise bad_request(f"expected a list at {name} in the patch")
        _check_order(wanted or [], order, child.merge_key)
        if live is not None and wanted is not None:
            merged = (_merge_list(live, wanted, child) if child.strategy == "merge"
                      else _fresh(wanted, child))
        elif wanted is not None:
            merged = _fresh(wanted, child)
        elif live is not None:
            merged = live
        else:
            continue
        in_order, server_only = _partition(merged, order, child.merge_key)
        original[name] = _normalize(in_order, server_only, order, live or [], child.merge_key)


def _check_order(patch_list: list[Any], order: list[Any], key: str) -> None:
    """Every non-directive patch item must appear in the order list, in the same order."""
    items = [x for x in patch_list if not (isinstance(x, dict) and DIRECTIVE in x)]
    pos = 0
    for item in items:
        while pos < len(order) and not _same_item(item, order[pos], key):
            pos += 1
        if pos == len(order):
            raise bad_request(
                f"The order in patch list:\n{go_json(patch_list)}\n doesn't match "
                f"{SET_ORDER} list:\n{go_json(order)}\n"
            )
        pos += 1


def _same_item(a: Any, b: Any, key: str) -> bool:
    if key and isinstance(a, dict) and isinstance(b, dict):
        return key in a and key in b and same_kind(a[key], b[key]) and a[key] == b[key]
    return same_kind(a, b) and json_equal(a, b)


def _index(items: list[Any], item: Any, key: str) -> int:
    for i, candidate in enumerate(items):
        if _same_item(candidate, item, key):
            return i
    return -1


def _element_kind(items: list[Any]) -> type | None:
    first: type | None = None
    for item in items:
        if isinstance(item, list):
            raise unprocessable("lists of lists are not supported")
        kind = dict if isinstance(item, dict) else object
        if first is None:
            first = kind
        elif first is not kind:
            raise unprocessable(f"list element types are not identical: {go_json(items)}")
    return first


def _merge_list(original: list[Any], patch: list[Any], meta: Meta) -> list[Any]:
    if not original and not patch:
        return original
    kind = _element_kind(original + patch)
    key = meta.merge_key
    if kind is not dict:
        merged: list[Any] = []
        for item in original + patch:
            if _index(merged, item, "") < 0:
                merged.append(item)
        plain = patch
    else:
        if not key:
            raise unprocessable("cannot merge lists without merge key")
        original, plain = _special_elements(original, patch, key)
        merged = list(original)
        for item in plain:
            if key not in item:
                raise _no_merge_key(item, key)
            at = _index(merged, item, key)
            if at >= 0:
                merged[at] = _merge_map(merged[at], item, meta)
            else:
                merged.append(_merge_map({}, item, meta))
    in_patch, server_only = _partition(merged, plain, key)
    return _normalize(in_patch, server_only, plain, original, key)


def _special_elements(
    original: list[Any], patch: list[Any], key: str
) -> tuple[list[Any], list[Any]]:
    """Apply ``$patch`` list elements; returns (live list, remaining patch items)."""
    plain: list[Any] = []
    replace = False
    for item in patch:
        if DIRECTIVE not in item:
            plain.append(item)
            continue
        directive = item[DIRECTIVE]
        if directive == "delete":
            if key not in item:
                raise _no_merge_key(item, key)
            original = [x for x in original if not _same_item(x, item, key)]
        elif directive == "replace":
            replace = True
        elif directive == "merge":
            raise bad_request("merging lists cannot yet be specified in the patch")
        else:
            raise bad_request(f"Unknown patch type: {directive} in map: {go_json(item)}")
    if replace:
        return [], plain
    return original, plain


def _partition(items: list[Any], by: list[Any], key: str) -> tuple[list[Any], list[Any]]:
    present: list[Any] = []
    server_only: list[Any] = []
    for item in items:
        if key and isinstance(item, dict) and key not in item:
            raise _no_merge_key(item, key)
        (present if _index(by, item, key) >= 0 else server_only).append(item)
    return present, server_only


def _normalize(
    in_patch: list[Any], server_only: list[Any], patch_order: list[Any],
    server_order: list[Any], key: str,
) -> list[Any]:
    """Order patch items by the patch (or ``$setElementOrder``), server-only items by the live
    list, then interleave them keeping live relative order where both are known."""

    def by(order: list[Any]) -> Any:
        def rank(item: Any) -> int:
            at = _index(order, item, key)
            return at if at >= 0 else len(order)
        return rank

    right = sorted(in_patch, key=by(patch_order))
    left = sorted(server_only, key=by(server_order))
    out: list[Any] = []
    i = j = 0
    while i < len(left) or j < len(right):
        if i >= len(left):
            out.append(right[j])
            j += 1
        elif j >= len(right):
            out.append(left[i])
            i += 1
        else:
            li, ri = _index(server_order, left[i], key), _index(server_order, right[j], key)
            if li >= 0 and ri >= 0 and li < ri:
                out.append(left[i])
                i += 1
            else:
                out.append(right[j])
                j += 1
    return out

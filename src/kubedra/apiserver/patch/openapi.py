"""Patch metadata as OpenAPI extensions.

kubectl computes client-side apply patches from the server's ``/openapi/v3`` schema when it
finds the kind there; the list strategies come from ``x-kubernetes-patch-strategy`` /
``x-kubernetes-patch-merge-key`` (and ``x-kubernetes-list-type`` / ``-list-map-keys``).
Without them it treats every list as atomic and re-sends whole container lists on each
apply. This writes the extensions of :mod:`.schema` into generated component schemas.
"""

from __future__ import annotations

from typing import Any

from kubedra.apiserver.patch.schema import Meta

Schema = dict[str, Any]


def _resolve(schema: Schema, components: dict[str, Schema]) -> tuple[str, Schema]:
    """Follow ``$ref`` (possibly wrapped in a one-element ``allOf``) to the component."""
    ref = schema.get("$ref")
    if ref is None and isinstance(schema.get("allOf"), list) and len(schema["allOf"]) == 1:
        ref = schema["allOf"][0].get("$ref")
    if isinstance(ref, str):
        name = ref.rsplit("/", 1)[-1]
        return name, components.get(name, {})
    return "", schema


def extensions(meta: Meta) -> Schema:
    out: Schema = {}
    if meta.strategy:
        out["x-kubernetes-patch-strategy"] = meta.strategy
    if meta.merge_key:
        out["x-kubernetes-patch-merge-key"] = meta.merge_key
    if meta.list_keys:
        out["x-kubernetes-list-type"] = "map"
        out["x-kubernetes-list-map-keys"] = list(meta.list_keys)
    elif meta.is_set:
        out["x-kubernetes-list-type"] = "set"
    return out


def annotate(components: dict[str, Schema], name: str, meta: Meta) -> None:
    """Add the patch extensions of ``meta`` to component ``name`` and the components it
    references (in place; idempotent)."""
    _visit({"$ref": f"#/components/schemas/{name}"}, meta, components, set())


def _visit(schema: Schema, meta: Meta, components: dict[str, Schema],
           seen: set[tuple[str, int]]) -> None:
    name, target = _resolve(schema, components)
    if name:
        if (name, id(meta)) in seen:
            return
        seen.add((name, id(meta)))
    properties = target.get("properties")
    if not isinstance(properties, dict):
        return
    for field, sub in meta.fields.items():
        prop = properties.get(field)
        if not isinstance(prop, dict):
            continue
        prop.update(extensions(sub))
        if sub.fields:
            inner = prop.get("items") if prop.get("type") == "array" else prop
            if isinstance(inner, dict):
                _visit(inner, sub, components, seen)

"""OpenAPI documents: ``/openapi/v3`` (index + one OpenAPI 3.0 document per group-version)
and ``/openapi/v2`` (one Swagger 2.0 document), both generated from the msgspec models.

Mirrors kube-openapi's builders (k8s.io/kube-openapi pkg/builder and pkg/builder3):
definitions carry upstream's names (``io.k8s.api.resource.v1alpha2.ResourceClaim``) and the
v1.30 field descriptions (:mod:`kubedra.api.descriptions`); ``runtime.RawExtension`` fields
are objects with ``x-kubernetes-preserve-unknown-fields`` (``kubectl explain`` needs a type
on every field); operations carry ``x-kubernetes-group-version-kind`` and
``x-kubernetes-action``, declare their path parameters and the status codes the server
answers; PATCH operations list ``fieldValidation``, which kubectl's query-parameter verifier
looks for before it leaves field validation to the server.
"""

from __future__ import annotations

import copy
import functools
import hashlib
from typing import Any

import msgspec

from kubedra.api.base import Obj
from kubedra.api.descriptions import DESCRIPTIONS, REQUIRED
from kubedra.api.quantity import Quantity
from kubedra.api.scheme import OPENAPI_PACKAGES
from kubedra.apiserver import patch
from kubedra.apiserver.registry import Registry, Resource

V3_REFS = "#/components/schemas/"
V2_REFS = "#/definitions/"
RAW_EXTENSION: Obj = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
PATCH_TYPES = ("application/json-patch+json", "application/merge-patch+json",
               "application/strategic-merge-patch+json", "application/apply-patch+yaml")
_UNAUTHORIZED: Obj = {"description": "Unauthorized"}
# the status codes each action answers (rest.py): create 201, server-side apply may create
_CODES = {"get": ("200",), "list": ("200",), "post": ("201",), "put": ("200",),
          "patch": ("200", "201"), "delete": ("200",), "deletecollection": ("200",)}
_VERBS = {"get": "read", "list": "list", "post": "create", "put": "replace", "patch": "patch",
          "delete": "delete", "deletecollection": "deleteCollection"}

_INT_OR_STRING: list[Obj] = [{"type": "integer"}, {"type": "string"}]


def _schema_hook(tp: Any) -> Obj:
    if tp is Quantity:
        return {"type": "string", "x-kubernetes-int-or-string": True}
    raise NotImplementedError(f"no schema for {tp!r}")


# --- schemas ----------------------------------------------------------------------------------


def _struct_classes(models: tuple[type, ...]) -> list[type]:
    """Every Struct class reachable from ``models``, in msgspec's order of discovery."""
    seen: dict[type, None] = {}

    def visit(t: msgspec.inspect.Type) -> None:
        if isinstance(t, msgspec.inspect.StructType):
            if t.cls in seen:
                return
            seen[t.cls] = None
            for f in t.fields:
                visit(f.type)
            return
        for attr in ("item_type", "key_type", "value_type"):
            sub = getattr(t, attr, None)
            if isinstance(sub, msgspec.inspect.Type):
                visit(sub)
        for sub in getattr(t, "types", ()):
            visit(sub)

    for info in msgspec.inspect.multi_type_info(models):
        visit(info)
    return list(seen)


def upstream_name(cls: type) -> str:
    """The definition name kube-openapi gives the Go type ``cls`` mirrors."""
    return f"{OPENAPI_PACKAGES[cls.__module__]}.{cls.__name__}"


def _msgspec_names(classes: list[type]) -> dict[str, str]:
    """msgspec's component name of each class (qualified only on a clash) -> upstream name."""
    counts: dict[str, int] = {}
    for cls in classes:
        counts[cls.__name__] = counts.get(cls.__name__, 0) + 1
    return {
        (cls.__name__ if counts[cls.__name__] == 1 else f"{cls.__module__}.{cls.__qualname__}"):
        upstream_name(cls) for cls in classes
    }


def _convert(node: Any, v3: bool, names: dict[str, str]) -> Any:
    """One msgspec (JSON Schema 2020-12) schema as OpenAPI 3.0 (``nullable``, ``$ref`` with
    siblings wrapped in ``allOf``) or as Swagger 2.0 (no null at all); ``{}`` (``Any``) is a
    RawExtension."""
    if not isinstance(node, dict):
        return node
    if not node:
        return dict(RAW_EXTENSION)
    any_of = node.get("anyOf")
    if isinstance(any_of, list):
        rest = [s for s in any_of if s != {"type": "null"}]
        if sorted(map(str, rest)) == sorted(map(str, _INT_OR_STRING)):  # IntOrString
            out = {k: v for k, v in node.items() if k in ("description", "default")
                   and v is not None}
            if v3:
                return out | {"anyOf": _INT_OR_STRING, "x-kubernetes-int-or-string": True}
            return out | {"type": "string", "format": "int-or-string"}
        if len(rest) == 1 and len(rest) != len(any_of):
            merged = {k: v for k, v in node.items() if k != "anyOf"} | rest[0]
            out = _convert(merged, v3, names)
            if v3:
                out = _wrap_ref(out | {"nullable": True})
            return out
    out = {}
    for key, value in node.items():
        if key == "title" or (key == "default" and value is None) or (
            key == "required" and not value
        ):
            continue
        if key == "properties":
            out[key] = {k: _convert(v, v3, names) for k, v in value.items()}
        elif key == "$ref":
            out[key] = (V3_REFS if v3 else V2_REFS) + names[value.rsplit("/", 1)[-1]]
        elif isinstance(value, dict):
            out[key] = _convert(value, v3, names)
        elif isinstance(value, list) and key in ("anyOf", "oneOf", "allOf"):
            out[key] = [_convert(v, v3, names) for v in value]
        else:
            out[key] = value
    return out


def _wrap_ref(schema: Obj) -> Obj:
    """OpenAPI 3.0 ignores siblings of ``$ref``: move the reference into ``allOf``."""
    if "$ref" in schema and len(schema) > 1:
        rest = {k: v for k, v in schema.items() if k != "$ref"}
        return {"allOf": [{"$ref": schema["$ref"]}], **rest}
    return schema


def _describe(name: str, schema: Obj, v3: bool) -> Obj:
    """The definition with its type and field descriptions and upstream's required fields."""
    texts = DESCRIPTIONS.get(name, {})
    out = {k: v for k, v in schema.items() if k != "description"}
    if "" in texts:
        out = {"description": texts[""], **out}
    if name in REQUIRED:
        out["required"] = list(REQUIRED[name])
    props = out.get("properties")
    if isinstance(props, dict):
        described = {}
        for field, prop in props.items():
            text = texts.get(field)
            if text is not None:
                prop = {"description": text, **prop}
                if v3:
                    prop = _wrap_ref(prop)
            described[field] = prop
        out["properties"] = described
    return out


@functools.cache
def _components(models: tuple[type, ...], v3: bool) -> dict[str, Obj]:
    """The definitions ``models`` need, by upstream name."""
    _refs, comps = msgspec.json.schema_components(models, schema_hook=_schema_hook)
    names = _msgspec_names(_struct_classes(models))
    return {names[k]: _describe(names[k], _convert(v, v3, names), v3) for k, v in comps.items()}


def _definitions(members: list[Resource], v3: bool) -> dict[str, Obj]:
    """Definitions of ``members``' kinds and lists, with their GVK and list patch
    strategies."""
    models = tuple(r.kind.model for r in members) + tuple(r.kind.list_model for r in members)
    defs = copy.deepcopy(_components(models, v3))
    for res in members:
        k = res.kind
        name = upstream_name(k.model)
        defs[name]["x-kubernetes-group-version-kind"] = [
            {"group": k.group, "version": k.version, "kind": k.kind}]
        # list merge strategies, so kubectl's client-side apply builds upstream's patches
        patch.annotate_openapi(defs, name, patch.schema_for(*k.gvr))
    return defs


# --- operations ---------------------------------------------------------------------------------


def _gv_path(group: str, version: str) -> str:
    return f"apis/{group}/{version}" if group else f"api/{version}"


def _operation_id(res: Resource, action: str, namespaced: bool, sub: str = "") -> str:
    """kube-openapi's operation id, e.g. ``readResourceV1alpha2NamespacedResourceClaimStatus``."""
    k = res.kind
    group = (k.group.split(".", 1)[0] or "core").capitalize()
    scope = "Namespaced" if namespaced else ""
    suffix = "ForAllNamespaces" if k.namespaced and not namespaced else ""
    return (f"{_VERBS[action]}{group}{k.version.capitalize()}{scope}{k.kind}"
            f"{sub.capitalize()}{suffix}")


class _Style:
    """How one operation is spelled in OpenAPI 3.0 or in Swagger 2.0."""

    def __init__(self, v3: bool) -> None:
        self.v3 = v3

    def param(self, name: str, where: str, description: str, required: bool = False) -> Obj:
        out: Obj = {"name": name, "in": where, "description": description}
        if required:
            out["required"] = True
        schema: Obj = {"type": "string", "uniqueItems": True}
        return out | ({"schema": schema} if self.v3 else schema)

    def responses(self, action: str, ref: str) -> Obj:
        out: Obj = {}
        for code in _CODES[action]:
            text = "Created" if code == "201" else "OK"
            out[code] = ({"description": text, "content": {"application/json": {
                "schema": {"$ref": ref}}}} if self.v3 else
                {"description": text, "schema": {"$ref": ref}})
        out["401"] = _UNAUTHORIZED
        return out

    def body(self, op: Obj, action: str, ref: str) -> None:
        schema = {"type": "object"} if action == "patch" else {"$ref": ref}
        types = PATCH_TYPES if action == "patch" else ("application/json",)
        if self.v3:
            op["requestBody"] = {"required": True, "content": {t: {"schema": schema}
                                                               for t in types}}
        else:
            op["consumes"] = list(types)
            op["parameters"] = [{"name": "body", "in": "body", "required": True,
                                 "schema": schema}, *op["parameters"]]


def _field_validation(style: _Style) -> Obj:
    return style.param(
        "fieldValidation", "query",
        "Ignore, Warn or Strict: how the server treats unknown or duplicate fields in the "
        "request body.")


def _operations(res: Resource, refs: str, base: str, style: _Style) -> dict[str, Obj]:
    """The paths of one kind; ``refs`` is where its definitions live."""
    k = res.kind
    ref = refs + upstream_name(k.model)
    list_ref = refs + upstream_name(k.list_model)
    gvk = {"group": k.group, "version": k.version, "kind": k.kind}
    ns = "namespaces/{namespace}/" if k.namespaced else ""
    collection = f"/{base}/{ns}{k.plural}"
    item = f"{collection}/{{name}}"
    name_param = style.param("name", "path", f"name of the {k.kind}", required=True)
    ns_params = [style.param("namespace", "path", "object name and auth scope, such as for "
                             "teams and projects", required=True)] if k.namespaced else []

    def op(action: str, sub: str = "", namespaced: bool = k.namespaced) -> Obj:
        out: Obj = {
            "description": f"{_VERBS[action]} the specified {k.kind}{' ' + sub if sub else ''}",
            "operationId": _operation_id(res, action, namespaced, sub),
            "parameters": [],
            "responses": style.responses(
                action, list_ref if action in ("list", "deletecollection") else ref),
            "x-kubernetes-action": action,
            "x-kubernetes-group-version-kind": gvk,
        }
        if not style.v3:
            out["produces"] = ["application/json"]
        if action in ("post", "put", "patch"):
            out["parameters"] = [_field_validation(style)]
            style.body(out, action, ref)
        return out

    paths: dict[str, Obj] = {
        collection: {"get": op("list"), "post": op("post"), "delete": op("deletecollection"),
                     "parameters": ns_params},
        item: {"get": op("get"), "put": op("put"), "patch": op("patch"),
               "delete": op("delete"), "parameters": [name_param, *ns_params]},
    }
    if "status" in k.subresources:
        paths[f"{item}/status"] = {
            "get": op("get", "status"), "put": op("put", "status"),
            "patch": op("patch", "status"), "parameters": [name_param, *ns_params]}
    if k.namespaced:
        paths[f"/{base}/{k.plural}"] = {"get": op("list", namespaced=False)}
    for entry in paths.values():
        if not entry.get("parameters"):
            entry.pop("parameters", None)
    return paths


# --- documents ----------------------------------------------------------------------------------

def _info(registry: Registry) -> Obj:
    return {"title": "Kubernetes", "version": registry.release.git_version}


def v3_index(registry: Registry) -> Obj:
    paths: Obj = {}
    for group, versions in registry.group_versions().items():
        for v in versions:
            path = _gv_path(group, v)
            digest = hashlib.sha512(path.encode()).hexdigest()[:32].upper()
            paths[path] = {"serverRelativeURL": f"/openapi/v3/{path}?hash={digest}"}
    return {"paths": paths}


def v3_document(registry: Registry, path: str) -> Obj | None:
    members = [r for r in registry if _gv_path(r.kind.group, r.kind.version) == path]
    if not members:
        return None
    style = _Style(v3=True)
    paths: Obj = {}
    for res in members:
        paths.update(_operations(res, V3_REFS, path, style))
    return {"openapi": "3.0.0", "info": _info(registry), "paths": paths,
            "components": {"schemas": _definitions(members, v3=True)}}


def v2_document(registry: Registry) -> Obj:
    """Swagger 2.0 with every group-version (kubectl asks for it as protobuf:
    :mod:`.openapi_proto`)."""
    members = list(registry)
    style = _Style(v3=False)
    paths: Obj = {}
    for res in members:
        base = _gv_path(res.kind.group, res.kind.version)
        paths.update(_operations(res, V2_REFS, base, style))
    return {"swagger": "2.0", "info": _info(registry), "paths": paths,
            "definitions": _definitions(members, v3=False)}

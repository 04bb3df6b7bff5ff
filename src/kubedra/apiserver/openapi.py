"""OpenAPI documents: ``/openapi/v3`` (index + one document per group-version) and a JSON
``/openapi/v2``.

kubectl's client-side check (query_param_verifier_v3) only needs PATCH operations carrying
``x-kubernetes-group-version-kind`` and a ``fieldValidation`` parameter; it then leaves field
validation to the server. Schemas are derived from the msgspec models (OpenAPI 3.0 style:
``nullable`` instead of ``anyOf`` with null).
"""

from __future__ import annotations

import functools
import hashlib
from typing import Any

import msgspec

from kubedra.api.base import Obj
from kubedra.api.quantity import Quantity
from kubedra.apiserver import patch
from kubedra.apiserver.registry import Registry, Resource


def _schema_hook(tp: Any) -> Obj:
    if tp is Quantity:
        return {"type": "string", "x-kubernetes-int-or-string": True}
    raise NotImplementedError(f"no schema for {tp!r}")


def _to_openapi3(node: Any) -> Any:
    """Rewrite JSON Schema 2020 bits OpenAPI 3.0 lacks (null unions, ``$defs``)."""
    if isinstance(node, list):
        return [_to_openapi3(n) for n in node]
    if not isinstance(node, dict):
        return node
    any_of = node.get("anyOf")
    if isinstance(any_of, list):
        rest = [s for s in any_of if s != {"type": "null"}]
        if len(rest) == 1 and len(rest) != len(any_of):
            out = dict(_to_openapi3(rest[0]))
            if "$ref" in out:
                out = {"allOf": [out]}
            out["nullable"] = True
            for k, v in node.items():
                if k not in ("anyOf", "default"):
                    out[k] = _to_openapi3(v)
            return out
    return {k: _to_openapi3(v) for k, v in node.items() if not (k == "default" and v is None)}


@functools.cache
def _components(models: tuple[type, ...], template: str) -> tuple[list[Obj], dict[str, Obj]]:
    refs, comps = msgspec.json.schema_components(
        models, schema_hook=_schema_hook, ref_template=template
    )
    return [_to_openapi3(r) for r in refs], {k: _to_openapi3(v) for k, v in comps.items()}


def _gv_path(group: str, version: str) -> str:
    return f"apis/{group}/{version}" if group else f"api/{version}"


def _field_validation_param() -> Obj:
    return {
        "name": "fieldValidation",
        "in": "query",
        "description": "Ignore, Warn or Strict: how the server treats unknown or duplicate "
        "fields in the request body.",
        "schema": {"type": "string", "uniqueItems": True},
    }


def _operations(res: Resource, ref: Obj, base: str) -> dict[str, Obj]:
    k = res.kind
    gvk = {"group": k.group, "version": k.version, "kind": k.kind}
    ns = "namespaces/{namespace}/" if k.namespaced else ""
    collection = f"/{base}/{ns}{k.plural}"
    item = f"{collection}/{{name}}"
    body = {"content": {"application/json": {"schema": ref}}}
    ok = {"200": {"description": "OK", "content": {"application/json": {"schema": ref}}}}

    def op(action: str, verb: str, extra: list[Obj] | None = None, **more: Any) -> Obj:
        return {
            "operationId": f"{verb}{k.kind}",
            "x-kubernetes-action": action,
            "x-kubernetes-group-version-kind": gvk,
            "parameters": extra or [],
            "responses": ok,
            **more,
        }

    patch_body = {"content": {t: {"schema": {"type": "object"}} for t in (
        "application/json-patch+json", "application/merge-patch+json",
        "application/strategic-merge-patch+json", "application/apply-patch+yaml")}}
    fv = [_field_validation_param()]
    paths: dict[str, Obj] = {
        collection: {
            "get": op("list", "list"),
            "post": op("post", "create", fv, requestBody=body),
        },
        item: {
            "get": op("get", "read"),
            "put": op("put", "replace", fv, requestBody=body),
            "patch": op("patch", "patch", fv, requestBody=patch_body),
            "delete": op("delete", "delete"),
        },
    }
    if "status" in k.subresources:
        paths[f"{item}/status"] = {
            "get": op("get", "read"),
            "put": op("put", "replace", fv, requestBody=body),
            "patch": op("patch", "patch", fv, requestBody=patch_body),
        }
    return paths


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
    refs, shared = _components(tuple(r.kind.model for r in members),
                               "#/components/schemas/{name}")
    comps = dict(shared)
    paths: Obj = {}
    for res, ref in zip(members, refs, strict=True):
        paths.update(_operations(res, ref, path))
        name = ref.get("$ref", "").rsplit("/", 1)[-1]
        if name in comps:
            k = res.kind
            comps[name] = dict(comps[name], **{"x-kubernetes-group-version-kind": [
                {"group": k.group, "version": k.version, "kind": k.kind}]})
            # list merge strategies, so kubectl's client-side apply builds upstream's patches
            patch.annotate_openapi(comps, name, patch.schema_for(k.group, k.kind))
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.30.0"},
        "paths": paths,
        "components": {"schemas": comps},
    }


def v2_document(registry: Registry) -> Obj:
    """Swagger 2.0 with the same operations (JSON only; kubectl itself asks for protobuf)."""
    paths: Obj = {}
    models = tuple(r.kind.model for r in registry)
    refs, comps = _components(models, "#/definitions/{name}")
    for res, ref in zip(list(registry), refs, strict=True):
        base = _gv_path(res.kind.group, res.kind.version)
        paths.update(_operations(res, ref, base))
    return {
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": "v1.30.0"},
        "paths": paths,
        "definitions": comps,
    }

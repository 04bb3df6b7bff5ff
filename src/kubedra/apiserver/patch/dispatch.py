"""PATCH requests: check the options, pick this package's engine by Content-Type and
apply it to a stored object."""

from __future__ import annotations

from typing import Any

import msgspec

from kubedra.api import codec
from kubedra.api.base import Obj
from kubedra.apiserver import errors, objects, patch
from kubedra.apiserver.registry import Resource
from kubedra.validation import field

JSON_PATCH = "application/json-patch+json"
MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
APPLY = "application/apply-patch+yaml"
PATCH_TYPES = (JSON_PATCH, MERGE, STRATEGIC, APPLY)


def validate_options(content_type: str, manager: str, force: bool) -> None:
    """``ValidatePatchOptions``: apply needs a field manager; only apply may force."""
    errs: list[field.FieldError] = []
    if content_type == APPLY:
        if not manager:
            errs.append(field.required(field.ROOT.child("fieldManager"),
                                       "is required for apply patch"))
    elif force:
        errs.append(field.forbidden(field.ROOT.child("force"),
                                    "may not be specified for non-apply patch"))
    if errs:
        raise errors.invalid("PatchOptions", "meta.k8s.io", "", errs)


def manager_of(query_manager: str, user_agent: str) -> str:
    """``managerOrUserAgent``: the fieldManager, else the User-Agent up to its first ``/``."""
    if query_manager:
        return query_manager
    agent = user_agent.split("/", 1)[0].strip()
    return agent[:128] or "unknown"


def parse(content_type: str, raw: bytes) -> Any:
    """The patch document (apply configurations are YAML; the rest are JSON)."""
    if content_type == APPLY:
        try:
            docs = codec.load_documents(raw)
        except codec.DecodeError as err:
            raise errors.bad_request(f"error decoding YAML: {err}") from None
        if len(docs) != 1 or not isinstance(docs[0], dict):
            raise errors.bad_request("error decoding YAML: the apply configuration must be "
                                     "a single object")
        return docs[0]
    try:
        doc = objects.decode(raw)
    except (msgspec.MsgspecError, RecursionError, UnicodeDecodeError) as bad:
        raise errors.bad_request(f"error decoding patch: {bad}") from None
    if content_type == JSON_PATCH:
        if not isinstance(doc, list):
            raise errors.bad_request(
                "json: cannot unmarshal object into Go value of type jsonpatch.Patch"
            )
    elif not isinstance(doc, dict):
        raise errors.bad_request("error decoding patch: the patch must be a JSON object")
    return doc


def changes_live(content_type: str) -> bool:
    """Whether :func:`apply` changes the live object it is given (a strategic merge patch
    works in place; the other types copy what they change)."""
    return content_type == STRATEGIC


def apply(
    content_type: str,
    res: Resource,
    live: Obj | None,
    doc: Any,
    manager: str,
    force: bool,
    subresource: str,
) -> Obj:
    """The patched object (``live`` None: an apply that creates); see :func:`changes_live`."""
    base: Obj = live if live is not None else {}
    if content_type == JSON_PATCH:
        out = patch.apply_json_patch(base, doc)
    elif content_type == MERGE:
        out = patch.apply_merge_patch(base, doc)
    elif content_type == STRATEGIC:
        out = patch.apply_strategic_merge_patch(
            base, doc, patch.schema_for(*res.kind.gvr)
        )
    else:
        out = patch.server_side_apply(
            live, doc, manager=manager, force=force, subresource=subresource,
            schema=patch.schema_for(*res.kind.gvr),
            reset_fields=res.strategy.reset_fields(subresource, live, doc),
        )
    if not isinstance(out, dict):
        raise errors.bad_request("the patched object must be a JSON object")
    return out

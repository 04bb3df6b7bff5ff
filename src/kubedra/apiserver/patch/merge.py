"""RFC 7386 JSON Merge Patch (``application/merge-patch+json``)."""

from __future__ import annotations

from typing import Any

from kubedra.apiserver.patch.errors import bad_request
from kubedra.apiserver.patch.values import copy_json


def _merge(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return copy_json(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = _merge(out.get(key), value)
    return out


def apply_merge_patch(doc: Any, patch: Any) -> Any:
    """Merge ``patch`` into ``doc``: objects merge key by key, ``null`` deletes, everything
    else (lists included) replaces. An API object patch must be a JSON object (upstream
    answers 400 "Invalid JSON Patch" otherwise). ``doc`` is never changed: the objects on
    the patch's paths are copied, the result shares the rest with ``doc``; ``patch`` is
    never shared (a retried update applies it again)."""
    if not isinstance(patch, dict):
        raise bad_request("Invalid JSON Patch")
    return _merge(doc, patch)

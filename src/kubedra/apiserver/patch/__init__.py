"""The patch engine: JSON patch, merge patch, strategic merge patch and server-side apply.

Pure functions over JSON-like dicts; errors are :class:`~kubedra.apiserver.errors.ApiError`
subclasses carrying the upstream status code.
"""

from kubedra.apiserver.patch.errors import PatchError
from kubedra.apiserver.patch.jsonpatch import apply_json_patch
from kubedra.apiserver.patch.merge import apply_merge_patch
from kubedra.apiserver.patch.openapi import annotate as annotate_openapi
from kubedra.apiserver.patch.schema import SCHEMAS, Meta, schema_for, schema_of
from kubedra.apiserver.patch.ssa import (
    LAST_APPLIED,
    Conflict,
    apply_server_side,
    conflict_error,
    conflict_message,
    server_side_apply,
    update_managed_fields,
)
from kubedra.apiserver.patch.strategic import apply_strategic_merge_patch

__all__ = [
    "LAST_APPLIED",
    "SCHEMAS",
    "Conflict",
    "Meta",
    "PatchError",
    "annotate_openapi",
    "apply_json_patch",
    "apply_merge_patch",
    "apply_server_side",
    "apply_strategic_merge_patch",
    "conflict_error",
    "conflict_message",
    "schema_for",
    "schema_of",
    "server_side_apply",
    "update_managed_fields",
]

"""Decode and admit request bodies: typed decoding, field validation, defaults, strategy,
validation. The one pipeline every write goes through before the store.

Bodies are decoded through the kind's msgspec model (so wrong types are a 400 and unknown
fields are dropped, as Go's decoder does) and continue as plain dicts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubedra.api import codec
from kubedra.api.meta import ObjectMeta
from kubedra.apiserver import errors
from kubedra.apiserver.objects import Obj
from kubedra.apiserver.registry import Resource
from kubedra.validation import corekinds
from kubedra.validation import meta as meta_validation
from kubedra.validation.field import FieldError

_FIELD_VALIDATION = ("Ignore", "Warn", "Strict", "")


@dataclass(slots=True)
class Decoded:
    obj: Obj
    warnings: list[str] = field(default_factory=list)


def field_validation_mode(value: str | None) -> str:
    mode = value or ""
    if mode not in _FIELD_VALIDATION:
        raise errors.bad_request(
            f'fieldValidation must be one of "Ignore", "Warn", or "Strict", got "{mode}"'
        )
    return mode or "Warn"


def check_type_meta(res: Resource, raw: Obj) -> None:
    """Fill apiVersion/kind from the URL when absent; refuse a body of another kind."""
    k = res.kind
    api_version = raw.get("apiVersion")
    kind = raw.get("kind")
    if api_version in (None, ""):
        raw["apiVersion"] = k.api_version
    if kind in (None, ""):
        raw["kind"] = k.kind
    if raw["apiVersion"] != k.api_version or raw["kind"] != k.kind:
        raise errors.bad_request(
            f"the API version in the data ({raw['apiVersion']}) does not match the expected "
            f"API version ({k.api_version})"
            if raw["apiVersion"] != k.api_version
            else f"{raw['kind']} in version \"{k.version}\" cannot be handled as a {k.kind}: "
            f"unexpected kind"
        )


def decode_body(res: Resource, raw: Any, mode: str, raw_bytes: bytes | None = None) -> Decoded:
    """A parsed JSON body → a normalized object dict (400 on type errors, strict fields)."""
    k = res.kind
    if not isinstance(raw, dict):
        raise errors.bad_request(
            f"{k.kind} in version \"{k.version}\" cannot be handled as a {k.kind}: "
            f"expected a JSON object"
        )
    check_type_meta(res, raw)
    warnings: list[str] = []
    if mode in ("Strict", "Warn"):
        problems = [f'unknown field "{p}"' for p in codec.unknown_fields(raw, k.model)]
        if raw_bytes is not None and mode == "Strict":  # a second parse; Strict only
            problems += [f'duplicate field "{p}"' for p in codec.duplicate_fields(raw_bytes)]
        if problems and mode == "Strict":
            raise errors.bad_request("strict decoding error: " + ", ".join(problems))
        warnings = problems
    try:
        typed = codec.decode(raw, k.model)
    except codec.DecodeError as err:
        where = f" at {err.path}" if err.path else ""
        raise errors.bad_request(
            f'{k.kind} in version "{k.version}" cannot be handled as a {k.kind}: '
            f"{err.reason}{where}"
        ) from None
    obj: Obj = codec.to_builtins(typed)
    return Decoded(obj, warnings)


def _typed_meta(obj: Obj) -> ObjectMeta:
    try:
        return codec.decode(obj.get("metadata") or {}, ObjectMeta)
    except codec.DecodeError as err:  # normalized bodies always decode; keep it a 400 anyway
        raise errors.bad_request(str(err)) from None


def _kind_name(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def _raise_invalid(res: Resource, obj: Obj, errs: list[FieldError]) -> None:
    if errs:
        raise errors.invalid(res.kind.kind, res.kind.group, _kind_name(obj), errs)


def admit_create(res: Resource, obj: Obj) -> None:
    """default → prepare_for_create → validate (+ ObjectMeta) or 422."""
    s = res.strategy
    s.default(obj)
    s.prepare_for_create(obj)
    errs = s.validate(obj)
    if not errs:  # rest.BeforeCreate: the generic ObjectMeta check, once the kind's passed
        errs = meta_validation.validate_object_meta(
            _typed_meta(obj), res.kind.namespaced, corekinds.validate_path_segment_name
        )
    _raise_invalid(res, obj, errs)


def admit_update(res: Resource, new: Obj, old: Obj) -> None:
    """default → prepare_for_update → validate_update (+ ObjectMeta update) or 422."""
    s = res.strategy
    s.default(new)
    s.prepare_for_update(new, old)
    errs = _common_update_errors(res, new, old) + s.validate_update(new, old)
    _raise_invalid(res, new, errs)


def admit_status_update(res: Resource, new: Obj, old: Obj) -> None:
    s = res.strategy
    s.prepare_for_status_update(new, old)
    errs = _common_update_errors(res, new, old) + s.validate_status_update(new, old)
    _raise_invalid(res, new, errs)


def _common_update_errors(res: Resource, new: Obj, old: Obj) -> list[FieldError]:
    """``rest.BeforeUpdate``'s validateCommonFields: generic ObjectMeta checks of the new
    object and of the change, before the kind's own (which repeat some, as upstream)."""
    new_meta = _typed_meta(new)
    errs = meta_validation.validate_object_meta(
        new_meta, res.kind.namespaced, corekinds.validate_path_segment_name
    )
    return errs + meta_validation.validate_object_meta_update(new_meta, _typed_meta(old))

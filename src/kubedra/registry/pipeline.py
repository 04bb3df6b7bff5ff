"""The write path every object takes before the store, for the API server and for
``kubedra validate`` alike (so the two cannot disagree).

It mirrors upstream's create handler and generic registry: the decoder (type meta, strict
fields, typed decode; apiserver ``transformDecodeError``), ``EnsureObjectNamespaceMatches
RequestNamespace``, ``FillObjectMetaSystemFields`` and name generation in ``Store.Create``,
then ``rest.BeforeCreate``/``BeforeUpdate`` (defaults, the kind's strategy, validation and the
generic ObjectMeta checks). The object is decoded once and stays typed through every hook.

Rejections are :class:`Rejected` subclasses carrying what the answer needs; the server turns
them into Status bodies, the CLI into kubectl's rendering of those.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

from kubedra import cel
from kubedra.api import codec
from kubedra.api.goformat import go_quote
from kubedra.api.kinds import Kind
from kubedra.api.meta import TypedObject
from kubedra.registry.identity import generate_name, new_uid, now
from kubedra.registry.strategies.base import AnyStrategy
from kubedra.validation import corekinds
from kubedra.validation import meta as meta_validation
from kubedra.validation.field import FieldError, Path

#: Largest request body (and so object) the server accepts (kube-apiserver's 3 MiB).
MAX_REQUEST_BYTES = 3 * 1024 * 1024
#: ``fieldValidation`` values; the empty value means Warn.
FIELD_VALIDATION = ("Ignore", "Warn", "Strict")


class Rejected(Exception):
    """A write the pipeline refuses."""


class BadRequest(Rejected):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class StrictDecodingError(BadRequest):
    """Unknown or duplicate fields under ``fieldValidation=Strict``."""

    def __init__(self, kind: Kind, detail: str) -> None:
        super().__init__(cannot_handle(kind, detail))
        self.detail = detail


class TooLarge(Rejected):
    def __init__(self, limit: int) -> None:
        super().__init__(f"Request entity too large: limit is {limit}")
        self.limit = limit


class Invalid(Rejected):
    """A 422: the kind's and ObjectMeta's field errors."""

    def __init__(self, kind: Kind, name: str, errors: list[FieldError]) -> None:
        super().__init__(f"{kind.kind} {name!r} is invalid")
        self.kind = kind
        self.name = name
        self.errors = errors


@dataclass(slots=True)
class Decoded:
    obj: Any  # the kind's TypedObject subclass
    warnings: list[str] = field(default_factory=list)


def check_size(size: int) -> None:
    if size > MAX_REQUEST_BYTES:
        raise TooLarge(MAX_REQUEST_BYTES)


def cannot_handle(kind: Kind, reason: str) -> str:
    """``transformDecodeError``: the prefix of every decode error of a body."""
    return f'{kind.kind} in version "{kind.version}" cannot be handled as a {kind.kind}: {reason}'


def _check_type_meta(kind: Kind, raw: dict[str, Any]) -> None:
    """Fill apiVersion/kind from the request when absent; refuse a body of another kind."""
    if raw.get("apiVersion") in (None, ""):
        raw["apiVersion"] = kind.api_version
    if raw.get("kind") in (None, ""):
        raw["kind"] = kind.kind
    if raw["apiVersion"] != kind.api_version:
        raise BadRequest(
            f"the API version in the data ({raw['apiVersion']}) does not match the expected "
            f"API version ({kind.api_version})"
        )
    if raw["kind"] != kind.kind:
        raise BadRequest(cannot_handle(kind, "unexpected kind"))


def decode(kind: Kind, raw: Any, mode: str, duplicates: list[str] | None = None, *,
           strategy: AnyStrategy | None = None) -> Decoded:
    """A parsed JSON body → the kind's typed object, in the resource's storage (hub) form:
    defaulted in the version it came in (``strategy.default_served``, as upstream defaults
    before it converts) and converted when ``kind`` is another version. ``mode`` is a
    ``fieldValidation`` value; ``duplicates`` the repeated keys of the body when the caller
    looked for them."""
    if not isinstance(raw, dict):
        raise BadRequest(cannot_handle(kind, "expected a JSON object"))
    _check_type_meta(kind, raw)
    warnings: list[str] = []
    if mode in ("Strict", "Warn"):
        # sigs.k8s.io/json names the field with %q: control characters come out escaped
        absent = strategy.absent_fields if strategy is not None else codec.NONE_ABSENT
        problems = [f"unknown field {go_quote(p)}"
                    for p in codec.unknown_fields(raw, kind.model, absent)]
        problems += [f"duplicate field {go_quote(p)}" for p in duplicates or ()]
        if problems and mode == "Strict":
            raise StrictDecodingError(kind, "strict decoding error: " + ", ".join(problems))
        warnings = problems
    try:
        typed = codec.decode(raw, kind.model)
    except codec.DecodeError as err:
        raise BadRequest(cannot_handle(kind, str(err))) from None
    if strategy is not None:
        strategy.default_served(typed, kind.version)
    if not kind.stored:
        typed = kind.row.conversion.to_hub(typed)
        typed.api_version = f"{kind.group}/{kind.resource.storage}"
    return Decoded(typed, warnings)


def ensure_namespace(kind: Kind, obj: TypedObject, namespace: str) -> None:
    """The request's namespace on a namespaced object (a different one is a 400); none on a
    cluster-scoped one."""
    meta = obj.metadata
    if not kind.namespaced:
        meta.namespace = None
        return
    if meta.namespace and meta.namespace != namespace:
        raise BadRequest(
            "the namespace of the provided object does not match the namespace sent on the "
            "request"
        )
    meta.namespace = namespace


def before_create(strategy: AnyStrategy, kind: Kind, obj: TypedObject,
                  namespace_labels: Mapping[str, str] | None = None) -> None:
    """System fields, generated name, defaults, ``prepare_for_create``, the kind's validation
    (``namespace_labels``: its namespace's, where known) and then the generic ObjectMeta
    checks; :class:`Invalid` on any field error."""
    meta = obj.metadata
    meta.deletion_timestamp = meta.deletion_grace_period_seconds = None
    meta.resource_version = meta.self_link = None
    meta.uid = new_uid()
    meta.creation_timestamp = now()
    if not meta.name and meta.generate_name:
        meta.name = generate_name(meta.generate_name)
    strategy.default(obj)
    strategy.prepare_for_create(obj)
    errs = strategy.validate_namespace(obj, namespace_labels) + strategy.validate(obj)
    if not errs:  # rest.BeforeCreate: the generic ObjectMeta check, once the kind's passed
        errs = meta_validation.validate_object_meta(
            obj.metadata, kind.namespaced, corekinds.validate_path_segment_name
        )
    _raise_invalid(kind, obj, errs)


def fresh_copy(obj: TypedObject) -> TypedObject:
    """An independent copy for a retried create (upstream ``DeepCopyObject`` per attempt)."""
    return copy.deepcopy(obj)


def before_update(strategy: AnyStrategy, kind: Kind, new: TypedObject, old: TypedObject) -> None:
    """default → prepare_for_update → generic ObjectMeta checks + validate_update."""
    strategy.default(new)
    strategy.prepare_for_update(new, old)
    _raise_invalid(kind, new, _common_update_errors(kind, new, old)
                   + strategy.validate_update(new, old))


def before_status_update(
    strategy: AnyStrategy, kind: Kind, new: TypedObject, old: TypedObject,
    namespace_labels: Mapping[str, str] | None = None,
) -> None:
    strategy.prepare_for_status_update(new, old)
    _raise_invalid(kind, new, _common_update_errors(kind, new, old)
                   + strategy.validate_status_namespace(new, old, namespace_labels)
                   + strategy.validate_status_update(new, old))


def admit_new(
    strategy: AnyStrategy, kind: Kind, raw: Any, *, namespace: str, mode: str,
    duplicates: list[str] | None = None, size: int = 0,
) -> Decoded:
    """The whole create path of one body, as the server runs it, without the store."""
    check_size(size)
    decoded = decode(kind, raw, mode, duplicates, strategy=strategy)
    ensure_namespace(kind, decoded.obj, namespace)
    before_create(strategy, kind, decoded.obj)
    return decoded


def _common_update_errors(kind: Kind, new: TypedObject, old: TypedObject) -> list[FieldError]:
    """``rest.BeforeUpdate``'s validateCommonFields: generic ObjectMeta checks of the new
    object and of the change, before the kind's own (which repeat some, as upstream)."""
    errs = meta_validation.validate_object_meta(
        new.metadata, kind.namespaced, corekinds.validate_path_segment_name
    )
    return errs + meta_validation.validate_object_meta_update(new.metadata, old.metadata)


def _raise_invalid(kind: Kind, obj: TypedObject, errs: list[FieldError]) -> None:
    """A 422 of the errors found on the hub form, their paths in the client's version."""
    if errs:
        if not kind.stored:
            path = kind.row.conversion.field_path
            errs = [dataclasses.replace(e, field=Path(path(e.field.text))) for e in errs]
        raise Invalid(kind, obj.metadata.name or "", errs)


def compile_budget(cpu_seconds: float) -> AbstractContextManager[None]:
    """The CPU seconds one request's validation may spend compiling CEL selectors."""
    return cel.compile_budget(cpu_seconds)


CompileDeferred = cel.CompileDeferred


def compiled_selectors_only() -> AbstractContextManager[None]:
    """Validation that raises :data:`CompileDeferred` where it would compile a selector."""
    return cel.cached_only()

"""ObjectMeta validation as apimachinery ``pkg/api/validation/objectmeta.go`` (v0.30).

Public API (used by every kind's validator)::

    validate_object_meta(meta, namespaced, name_fn, path=METADATA)      # create
    validate_object_meta_update(new, old, path=METADATA)                 # update
    validate_immutable_field(new, old, path)                             # "field is immutable"
    validate_labels / validate_annotations / validate_finalizers / ...   # building blocks

``name_fn`` is one of :mod:`kubedra.validation.names`' ``name_is_*`` functions. Map keys are
visited in sorted order (Go's order is random; sorting keeps our answers stable).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from kubedra.api.goformat import go_quote
from kubedra.api.meta import Condition, ManagedFieldsEntry, ObjectMeta, OwnerReference
from kubedra.validation.equality import semantic_equal
from kubedra.validation.field import (
    ErrorList,
    Path,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
    too_long,
)
from kubedra.validation.gorepr import GoRepr, go_time
from kubedra.validation.names import (
    NameFn,
    regex_error,
    is_qualified_name,
    is_valid_label_value,
    name_is_dns_label,
)

METADATA = Path("metadata")
FIELD_IMMUTABLE = "field is immutable"
TOTAL_ANNOTATION_SIZE_LIMIT = 256 * (1 << 10)
FIELD_MANAGER_MAX_LENGTH = 128
MAX_SUBRESOURCE_NAME_LENGTH = 256
FINALIZER_ORPHAN_DEPENDENTS = "orphan"
FINALIZER_DELETE_DEPENDENTS = "foregroundDeletion"
# schema.GroupVersionKind{Version: "v1", Kind: "Event"}: may never own anything.
_BANNED_OWNERS = {("", "v1", "Event")}
_GO_ZERO_TIME = "0001-01-01 00:00:00 +0000 UTC"


def validate_immutable_field(new: Any, old: Any, path: Path) -> ErrorList:
    """``ValidateImmutableField``: semantic equality, else ``Invalid(path, new, immutable)``."""
    if semantic_equal(new, old):
        return []
    return [invalid(path, new, FIELD_IMMUTABLE)]


def validate_nonnegative_field(value: int, path: Path) -> ErrorList:
    if value < 0:
        return [invalid(path, value, "must be greater than or equal to 0")]
    return []


def validate_label_name(name: str, path: Path) -> ErrorList:
    return [invalid(path, name, msg) for msg in is_qualified_name(name)]


def validate_labels(labels: Mapping[str, str] | None, path: Path) -> ErrorList:
    """Keys are qualified names, values label values; errors sit on the map's path itself."""
    errs: ErrorList = []
    for key in sorted(labels or {}):
        value = (labels or {})[key]
        errs += validate_label_name(key, path)
        errs += [invalid(path, value, msg) for msg in is_valid_label_value(value)]
    return errs


def validate_annotations(annotations: Mapping[str, str] | None, path: Path) -> ErrorList:
    """Keys are qualified names (case-insensitive); all keys and values at most 256 KiB."""
    errs: ErrorList = []
    total = 0
    for key in sorted(annotations or {}):
        errs += [invalid(path, key, msg) for msg in is_qualified_name(key.lower())]
        total += len(key.encode()) + len((annotations or {})[key].encode())
    if total > TOTAL_ANNOTATION_SIZE_LIMIT:
        errs.append(too_long(path, "", TOTAL_ANNOTATION_SIZE_LIMIT))
    return errs


def _split_api_version(api_version: str) -> tuple[str, str]:
    """``schema.ParseGroupVersion``; an unparsable value gives an empty group and version."""
    if not api_version:
        return "", ""
    parts = api_version.split("/")
    if len(parts) == 1:
        return "", api_version
    if len(parts) == 2:
        return parts[0], parts[1]
    return "", ""


def _validate_owner_reference(ref: OwnerReference, path: Path) -> ErrorList:
    errs: ErrorList = []
    group, version = _split_api_version(ref.api_version)
    if not version:
        errs.append(invalid(path.child("apiVersion"), ref.api_version, "version must not be empty"))
    if not ref.kind:
        errs.append(invalid(path.child("kind"), ref.kind, "kind must not be empty"))
    if not ref.name:
        errs.append(invalid(path.child("name"), ref.name, "name must not be empty"))
    if not ref.uid:
        errs.append(invalid(path.child("uid"), ref.uid, "uid must not be empty"))
    if (group, version, ref.kind) in _BANNED_OWNERS:
        gvk = f"{group}/{version}, Kind={ref.kind}"
        errs.append(invalid(path, ref, f"{gvk} is disallowed from being an owner"))
    return errs


def validate_owner_references(refs: Sequence[OwnerReference] | None, path: Path) -> ErrorList:
    errs: ErrorList = []
    first_controller = ""
    for ref in refs or ():
        errs += _validate_owner_reference(ref, path)
        if ref.controller:
            current = f"{ref.kind}/{ref.name}"
            if first_controller:
                errs.append(invalid(
                    path, list(refs or ()),
                    'Only one reference can have Controller set to true. Found "true" in '
                    f"references for {first_controller} and {current}",
                ))
            else:
                first_controller = current
    return errs


def validate_finalizers(finalizers: Sequence[str] | None, path: Path) -> ErrorList:
    errs: ErrorList = []
    for name in finalizers or ():
        errs += [invalid(path, name, msg) for msg in is_qualified_name(name)]
    present = set(finalizers or ())
    if FINALIZER_ORPHAN_DEPENDENTS in present and FINALIZER_DELETE_DEPENDENTS in present:
        errs.append(invalid(
            path, list(finalizers or ()),
            f"finalizer {FINALIZER_ORPHAN_DEPENDENTS} and {FINALIZER_DELETE_DEPENDENTS} "
            "cannot be both set",
        ))
    return errs


def validate_field_manager(manager: str, path: Path) -> ErrorList:
    if manager.isprintable() and len(manager.encode()) <= FIELD_MANAGER_MAX_LENGTH:
        return []  # the common case: no per-character walk
    errs: ErrorList = []
    if len(manager.encode()) > FIELD_MANAGER_MAX_LENGTH:
        errs.append(too_long(path, manager, FIELD_MANAGER_MAX_LENGTH))
    offset = 0
    for ch in manager:
        if not ch.isprintable():
            errs.append(invalid(
                path, manager, f"invalid character U+{ord(ch):04X} (at position {offset})"
            ))
        offset += len(ch.encode())
    return errs


def validate_managed_fields(entries: Sequence[ManagedFieldsEntry] | None, path: Path) -> ErrorList:
    errs: ErrorList = []
    for i, entry in enumerate(entries or ()):
        manager, sub = entry.manager or "", entry.subresource or ""
        if (entry.operation in ("Apply", "Update") and entry.fields_type in (None, "", "FieldsV1")
                and not validate_field_manager(manager, path) and len(sub) <= 64):
            continue  # a valid entry: no paths to build
        p = path.index(i)
        if entry.operation not in ("Apply", "Update"):
            errs.append(invalid(p.child("operation"), entry.operation or "",
                                "must be `Apply` or `Update`"))
        if entry.fields_type and entry.fields_type != "FieldsV1":
            errs.append(invalid(p.child("fieldsType"), entry.fields_type, "must be `FieldsV1`"))
        errs += validate_field_manager(entry.manager or "", p.child("manager"))
        sub = entry.subresource or ""
        if len(sub.encode()) > MAX_SUBRESOURCE_NAME_LENGTH:
            errs.append(too_long(p.child("subresource"), sub, MAX_SUBRESOURCE_NAME_LENGTH))
    return errs


def validate_object_meta(
    meta: ObjectMeta, namespaced: bool, name_fn: NameFn, path: Path = METADATA
) -> ErrorList:
    """``ValidateObjectMeta`` for a create. Expects generateName already turned into a name."""
    errs: ErrorList = []
    if meta.generate_name:
        errs += [invalid(path.child("generateName"), meta.generate_name, msg)
                 for msg in name_fn(meta.generate_name, True)]
    if not meta.name:
        errs.append(required(path.child("name"), "name or generateName is required"))
    else:
        errs += [invalid(path.child("name"), meta.name, msg) for msg in name_fn(meta.name, False)]
    if namespaced:
        if not meta.namespace:
            errs.append(required(path.child("namespace")))
        else:
            errs += [invalid(path.child("namespace"), meta.namespace, msg)
                     for msg in name_is_dns_label(meta.namespace, False)]
    elif meta.namespace:
        errs.append(forbidden(path.child("namespace"), "not allowed on this type"))
    if (meta.generation or 0) < 0:
        errs += validate_nonnegative_field(meta.generation or 0, path.child("generation"))
    return errs + _validate_meta_lists(meta, path)


def _validate_meta_lists(meta: ObjectMeta, path: Path, *, finalizers: bool = True) -> ErrorList:
    """Labels, annotations, owners, finalizers (unless the caller checks them itself) and
    managedFields, in that order (the child paths are only built for what is set)."""
    errs: ErrorList = []
    if meta.labels:
        errs += validate_labels(meta.labels, path.child("labels"))
    if meta.annotations:
        errs += validate_annotations(meta.annotations, path.child("annotations"))
    if meta.owner_references:
        errs += validate_owner_references(meta.owner_references, path.child("ownerReferences"))
    if finalizers and meta.finalizers:
        errs += validate_finalizers(meta.finalizers, path.child("finalizers"))
    if meta.managed_fields:
        errs += validate_managed_fields(meta.managed_fields, path.child("managedFields"))
    return errs


def _parse_time(value: str) -> datetime | None:
    try:
        return datetime.fromisoformat(value).astimezone(UTC)
    except ValueError:
        return None


def _same_time(a: str, b: str) -> bool:
    """metav1.Time equality: the same instant (the text may differ in zone notation)."""
    if a == b:
        return True
    ta, tb = _parse_time(a), _parse_time(b)
    return ta is not None and ta == tb


def _time_value(value: str) -> GoRepr:
    """A timestamp bad value as Go prints ``metav1.Time`` (``time.Time.String()``)."""
    return go_time(value) if value else GoRepr(_GO_ZERO_TIME)


def validate_no_new_finalizers(
    new: Sequence[str] | None, old: Sequence[str] | None, path: Path
) -> ErrorList:
    extra = sorted(set(new or ()) - set(old or ()))
    if not extra:
        return []
    listed = "[]string{" + ", ".join(go_quote(f) for f in extra) + "}"
    return [forbidden(
        path,
        "no new finalizers can be added if the object is being deleted, found new finalizers "
        + listed,
    )]


def validate_object_meta_update(
    new: ObjectMeta, old: ObjectMeta, path: Path = METADATA
) -> ErrorList:
    """``ValidateObjectMetaUpdate``: resourceVersion set, identity fields immutable, ..."""
    errs: ErrorList = []
    if old.deletion_timestamp is not None:
        errs += validate_no_new_finalizers(new.finalizers, old.finalizers, path.child("finalizers"))
    if not new.resource_version:
        errs.append(invalid(path.child("resourceVersion"), new.resource_version or "",
                            "must be specified for an update"))
    if (new.generation or 0) < (old.generation or 0):
        errs.append(invalid(path.child("generation"), new.generation or 0,
                            "must not be decremented"))
    for attr in ("name", "namespace", "uid"):
        new_value, old_value = getattr(new, attr) or "", getattr(old, attr) or ""
        if new_value != old_value:
            errs += validate_immutable_field(new_value, old_value, path.child(attr))
    if not _same_time(new.creation_timestamp or "", old.creation_timestamp or ""):
        errs.append(invalid(path.child("creationTimestamp"),
                            _time_value(new.creation_timestamp or ""), FIELD_IMMUTABLE))
    # Pointers in Go: nil differs from any set value.
    new_del, old_del = new.deletion_timestamp, old.deletion_timestamp
    if (new_del is None) != (old_del is None) or not _same_time(new_del or "", old_del or ""):
        errs.append(invalid(path.child("deletionTimestamp"),
                            None if new_del is None else _time_value(new_del), FIELD_IMMUTABLE))
    if new.deletion_grace_period_seconds != old.deletion_grace_period_seconds:
        errs.append(invalid(path.child("deletionGracePeriodSeconds"),
                            new.deletion_grace_period_seconds, FIELD_IMMUTABLE))
    errs += _validate_meta_lists(new, path, finalizers=False)
    return errs


# ObjectMeta fields in Go struct order, with the names ``validateFieldAllowList`` derives
# (first letter lower-cased, so ``UID`` becomes ``uID``). Only labels and annotations may be
# set in a template's metadata.
_TEMPLATE_META_FORBIDDEN = (
    ("name", "name"),
    ("generate_name", "generateName"),
    ("namespace", "namespace"),
    ("self_link", "selfLink"),
    ("uid", "uID"),
    ("resource_version", "resourceVersion"),
    ("generation", "generation"),
    ("creation_timestamp", "creationTimestamp"),
    ("deletion_timestamp", "deletionTimestamp"),
    ("deletion_grace_period_seconds", "deletionGracePeriodSeconds"),
    ("owner_references", "ownerReferences"),
    ("finalizers", "finalizers"),
    ("managed_fields", "managedFields"),
)


def _is_go_zero(value: Any) -> bool:
    """Zero value as ``reflect.DeepEqual(v, zero)`` sees it: an empty non-nil list is set."""
    return value is None or value == "" or (value == 0 and not isinstance(value, list))


def validate_template_object_meta(meta: ObjectMeta, path: Path) -> ErrorList:
    """``ValidateTemplateObjectMeta``: annotations and labels only; anything else is
    ``Forbidden(<field>, "cannot be set")``."""
    errs = validate_annotations(meta.annotations, path.child("annotations"))
    errs += validate_labels(meta.labels, path.child("labels"))
    for attr, name in _TEMPLATE_META_FORBIDDEN:
        if not _is_go_zero(getattr(meta, attr)):
            errs.append(forbidden(path.child(name), "cannot be set"))
    return errs


_CONDITION_STATUSES = ("False", "True", "Unknown")
_CONDITION_REASON_FMT = "[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?"
_CONDITION_REASON_RE = re.compile(_CONDITION_REASON_FMT)
_CONDITION_REASON_MSG = (
    "a condition reason must start with alphabetic character, optionally followed by a string "
    "of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_'"
)
CONDITION_REASON_MAX_LENGTH = 1024
CONDITION_MESSAGE_MAX_LENGTH = 32 * 1024


def validate_condition(condition: Condition, path: Path) -> ErrorList:
    """metav1 ``ValidateCondition``: type, status, observedGeneration, time, reason, message."""
    errs = validate_label_name(condition.type, path.child("type"))
    if condition.status not in _CONDITION_STATUSES:
        errs.append(not_supported(path.child("status"), condition.status, _CONDITION_STATUSES))
    if (condition.observed_generation or 0) < 0:
        errs.append(invalid(path.child("observedGeneration"), condition.observed_generation,
                            "must be greater than or equal to zero"))
    if not condition.last_transition_time:
        errs.append(required(path.child("lastTransitionTime"), "must be set"))
    reason = condition.reason
    if not reason:
        errs.append(required(path.child("reason"), "must be set"))
    else:
        if not _CONDITION_REASON_RE.fullmatch(reason):
            errs.append(invalid(path.child("reason"), reason, regex_error(
                _CONDITION_REASON_MSG, _CONDITION_REASON_FMT, "my_name", "MY_NAME", "MyName",
                "ReasonA,ReasonB", "ReasonA:ReasonB")))
        if len(reason.encode()) > CONDITION_REASON_MAX_LENGTH:
            errs.append(too_long(path.child("reason"), reason, CONDITION_REASON_MAX_LENGTH))
    if len(condition.message.encode()) > CONDITION_MESSAGE_MAX_LENGTH:
        errs.append(too_long(path.child("message"), condition.message,
                             CONDITION_MESSAGE_MAX_LENGTH))
    return errs


def validate_conditions(conditions: Sequence[Condition] | None, path: Path) -> ErrorList:
    """metav1 ``ValidateConditions``: each condition, and a repeated type is a Duplicate."""
    errs: ErrorList = []
    seen: set[str] = set()
    for i, condition in enumerate(conditions or ()):
        if condition.type in seen:
            errs.append(duplicate(path.index(i).child("type"), condition.type))
        else:
            seen.add(condition.type)
        errs += validate_condition(condition, path.index(i))
    return errs

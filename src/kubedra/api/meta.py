"""meta/v1: object and list metadata, Status, label selectors, conditions.

Timestamps are kept as the RFC 3339 strings the API writes (``2024-05-01T10:00:00Z``) so that
objects round-trip byte for byte.
"""

from __future__ import annotations

import math
import time
from typing import Any

import msgspec

from kubedra.api.base import Int32, Int64, Model, always

_last_time: tuple[int, str] = (0, "1970-01-01T00:00:00Z")


def format_time(seconds: float) -> str:
    """metav1.Time as it marshals: RFC 3339 in whole seconds, UTC. The last second's text is
    kept, since most callers ask about the present, many times a second."""
    global _last_time
    whole = math.floor(seconds)
    if _last_time[0] != whole:
        _last_time = (whole, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(whole)))
    return _last_time[1]


def kobj(namespace: str | None, name: str | None) -> str:
    """klog.KObj formatting: ``ns/name``, or just ``name`` without a namespace."""
    return f"{namespace}/{name or ''}" if namespace else name or ""


class OwnerReference(Model):
    api_version: str = ""
    kind: str = ""
    name: str = ""
    uid: str = ""
    controller: bool | None = None
    block_owner_deletion: bool | None = None


class ManagedFieldsEntry(Model):
    manager: str | None = None
    operation: str | None = None
    api_version: str | None = None
    time: str | None = None
    fields_type: str | None = None
    fields_v1: dict[str, Any] | None = msgspec.field(default=None, name="fieldsV1")
    subresource: str | None = None


class ObjectMeta(Model):
    name: str | None = None
    generate_name: str | None = None
    namespace: str | None = None
    self_link: str | None = None
    uid: str | None = None
    resource_version: str | None = None
    generation: Int64 | None = None
    creation_timestamp: str | None = None
    deletion_timestamp: str | None = None
    deletion_grace_period_seconds: Int64 | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    owner_references: list[OwnerReference] | None = None
    finalizers: list[str] | None = None
    # Last, as upstream's: the API server appends its JSON record of ownership to an encoded
    # object in this place (apiserver/objects.py put_managed_fields).
    managed_fields: list[ManagedFieldsEntry] | None = None


class ListMeta(Model):
    self_link: str | None = None
    resource_version: str | None = None
    continue_: str | None = msgspec.field(default=None, name="continue")
    remaining_item_count: Int64 | None = None


class TypedObject(Model):
    """TypeMeta plus ObjectMeta: the head of every top-level object."""

    api_version: str = ""
    kind: str = ""
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)


def revision(obj: TypedObject) -> int:
    """``metadata.resourceVersion`` as a number, to order versions of one object seen by one
    client (0 when unset or not a number)."""
    try:
        return int(obj.metadata.resource_version or 0)
    except ValueError:
        return 0


class ObjectList(Model):
    """The head of a ``<Kind>List``: subclasses add ``items``."""

    api_version: str = ""
    kind: str = ""
    metadata: ListMeta = msgspec.field(default_factory=ListMeta)


class StatusCause(Model):
    reason: str | None = None
    message: str | None = None
    field: str | None = None


class StatusDetails(Model):
    name: str | None = None
    group: str | None = None
    kind: str | None = None
    uid: str | None = None
    causes: list[StatusCause] | None = None
    retry_after_seconds: Int32 | None = None


class Status(Model):
    """The body of every error answer (and of some successful deletes)."""

    kind: str = always("Status")  # always written: clients recognise errors by it
    api_version: str = always("v1")
    metadata: ListMeta = msgspec.field(default_factory=ListMeta)
    status: str | None = None
    message: str | None = None
    reason: str | None = None
    details: StatusDetails | None = None
    code: Int32 | None = None


class LabelSelectorRequirement(Model):
    key: str = ""
    operator: str = ""
    values: list[str] | None = None


class LabelSelector(Model):
    match_labels: dict[str, str] | None = None
    match_expressions: list[LabelSelectorRequirement] | None = None


class Condition(Model):
    """meta/v1 Condition (used by PodSchedulingContext-free kinds such as Jobs' successors)."""

    type: str = ""
    status: str = ""
    observed_generation: Int64 | None = None
    last_transition_time: str | None = None
    reason: str = ""
    message: str = ""


class DeleteOptions(Model):
    api_version: str | None = None
    kind: str | None = None
    grace_period_seconds: Int64 | None = None
    propagation_policy: str | None = None
    dry_run: list[str] | None = None
    preconditions: Preconditions | None = None


class Preconditions(Model):
    uid: str | None = None
    resource_version: str | None = None

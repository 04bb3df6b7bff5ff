"""The per-kind hooks of the generic registry (upstream ``RESTCreateStrategy``/
``RESTUpdateStrategy``/``RESTDeleteStrategy``).

The write path calls the hooks in upstream's order on **typed** objects (decoded once from
the request, encoded once for the store), see :mod:`kubedra.registry.pipeline`::

    create: default → prepare_for_create → validate
    update: default → prepare_for_update(new, old) → validate_update(new, old)
    status: prepare_for_status_update(new, old) → validate_status_update(new, old)

Hooks mutate the object in place and return field errors that become one 422. The read and
delete hooks (field selectors, grace periods, finalization) and the fields a write may not own
(server-side apply) see objects as JSON dicts, the form the server reads them in. Subclass
and override what a kind needs; the defaults are upstream's generic behaviour.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Generic, TypeVar

from kubedra.api import codec
from kubedra.api.base import Obj
from kubedra.api.meta import TypedObject
from kubedra.validation.field import FieldError

T = TypeVar("T", bound=TypedObject)

# Metadata a status write may not change (upstream ResetObjectMetaForStatus).
_STATUS_RESET_META = (
    "deletion_timestamp",
    "generation",
    "labels",
    "annotations",
    "finalizers",
    "owner_references",
)
_HEAD = ("api_version", "kind", "metadata", "status")
# What a status write may own besides status, by JSON name.
_STATUS_OWNED = ("apiVersion", "kind", "metadata", "status")


def sub_dict(obj: Obj, key: str) -> Obj:
    """``obj[key]`` when it is a JSON object, else a new empty dict (not inserted)."""
    value = obj.get(key)
    return value if isinstance(value, dict) else {}


def body_fields(obj: TypedObject) -> tuple[str, ...]:
    """The top-level fields besides type, metadata and status (``spec`` and the like)."""
    return tuple(f for f in obj.__struct_fields__ if f not in _HEAD)


def spec_changed(new: TypedObject, old: TypedObject) -> bool:
    """True when anything but metadata and status differs (the generation-bump test)."""
    return any(getattr(new, f) != getattr(old, f) for f in body_fields(new))


def keep_all_but_status(new: TypedObject, old: TypedObject) -> None:
    """A status write changes only ``status`` (and some metadata): every other top-level
    field is the stored object's."""
    for f in body_fields(new):
        setattr(new, f, getattr(old, f))


def keep_meta(new: TypedObject, old: TypedObject, fields: tuple[str, ...]) -> None:
    """Reset the named ObjectMeta attributes of ``new`` to the stored object's."""
    for f in fields:
        setattr(new.metadata, f, getattr(old.metadata, f))


def reset_status(obj: TypedObject) -> None:
    """A create through the main resource starts from an empty status."""
    obj.status = type(obj)().status  # type: ignore[attr-defined]


class Strategy(Generic[T]):
    """Upstream's generic behaviour; kinds override the hooks they need."""

    #: Main-resource writes keep the stored ``status`` (kinds with a status subresource).
    has_status_subresource: bool = False
    #: Create sets generation 1 and spec changes bump it.
    tracks_generation: bool = False
    #: DELETE answers with the deleted object instead of a Success Status.
    return_deleted_object: bool = False
    #: propagationPolicy when the client gives none (batch/v1 Job: Orphan).
    default_propagation: str = "Background"
    #: The generic field-selector labels every kind's default conversion accepts.
    generic_field_labels: tuple[str, ...] = ("metadata.name", "metadata.namespace")
    #: Field-selector labels of the kind besides the generic ones.
    extra_field_labels: tuple[str, ...] = ()
    #: PUT to a missing name creates the object (events).
    allow_create_on_update: bool = False
    #: DELETE sets deletionTimestamp and waits a grace period (pods) instead of removing.
    graceful_delete: bool = False
    #: Validation compiles CEL selectors: CPU-heavy, so the server admits it off its loop.
    compiles_cel: bool = False
    #: Validation reads the labels of the object's namespace (DRA admin access).
    reads_namespace_labels: bool = False
    #: The field selector watchers are indexed by (upstream's cacher trigger: pods by
    #: ``spec.nodeName``, so a node's watch costs nothing for other nodes' pods).
    trigger_field: str | None = None
    #: Fields of the model the serving release's type lacks (another release's): a strict
    #: decode calls them unknown (Pods and Jobs: :data:`podfields.ABSENT`).
    absent_fields: codec.Absent = codec.NONE_ABSENT

    # --- writes (typed) ---------------------------------------------------------------------

    def default(self, obj: T) -> None:
        """Fill defaulted fields (SetDefaults_*); runs on every decoded body."""

    def default_served(self, obj: Any, version: str) -> None:
        """Fill the defaults of served ``version`` into a body decoded in it, before it
        converts to the stored form (upstream defaults in the version it decodes; kinds
        served in one version default in :meth:`default`)."""

    def prepare_for_create(self, obj: T) -> None:
        if self.has_status_subresource:
            reset_status(obj)
        if self.tracks_generation:
            obj.metadata.generation = 1

    def prepare_for_update(self, new: T, old: T) -> None:
        if self.has_status_subresource:
            new.status = old.status  # type: ignore[attr-defined]
        new.metadata.generation = old.metadata.generation
        if self.tracks_generation and spec_changed(new, old):
            new.metadata.generation = (old.metadata.generation or 0) + 1

    def validate(self, obj: T) -> list[FieldError]:
        return []

    def validate_update(self, new: T, old: T) -> list[FieldError]:
        return []

    def validate_namespace(self, obj: T, labels: Mapping[str, str] | None) -> list[FieldError]:
        """Create errors only the labels of the object's namespace tell, reported before
        :meth:`validate`'s (``reads_namespace_labels`` kinds; None: not known, as offline)."""
        return []

    def validate_status_namespace(self, new: T, old: T,
                                  labels: Mapping[str, str] | None) -> list[FieldError]:
        """The same for a status write."""
        return []

    def prepare_for_status_update(self, new: T, old: T) -> None:
        keep_all_but_status(new, old)
        keep_meta(new, old, _STATUS_RESET_META)

    def validate_status_update(self, new: T, old: T) -> list[FieldError]:
        return []

    # --- field ownership (JSON) -------------------------------------------------------------

    def reset_fields(self, subresource: str, *objs: Obj | None) -> set[tuple[str, ...]]:
        """Fields a write through this endpoint may not own, since its prepare hooks reset
        them (upstream ``GetResetFields``), as field-set paths (``("f:spec",)``) of the
        objects' top-level fields: ``status`` for the main resource of a kind with a status
        subresource, everything but metadata and status for the status subresource."""
        if subresource == "status":
            return {("f:" + k,) for o in objs if o for k in o if k not in _STATUS_OWNED}
        if self.has_status_subresource:
            return {("f:status",)}
        return set()

    # --- reads and deletes (stored JSON) ----------------------------------------------------

    def selectable_fields(self, obj: Obj) -> dict[str, str]:
        """Field-selector values of an object (name and namespace plus kind-specific ones)."""
        meta = obj.get("metadata") or {}
        return {
            "metadata.name": str(meta.get("name") or ""),
            "metadata.namespace": str(meta.get("namespace") or ""),
        }

    def field_label_error(self, label: str) -> str:
        """The 400 message for an unsupported field-selector label (default conversion)."""
        return (
            f'"{label}" is not a known field selector: only "metadata.name", '
            '"metadata.namespace"'
        )

    def write_warnings(self, obj: Obj) -> list[str]:
        """Warnings a create or main-resource update of ``obj`` (as stored) answers with
        (upstream ``WarningsOnCreate``/``WarningsOnUpdate``)."""
        return []

    def grace_period(self, obj: Obj, requested: int | None) -> int:
        """Seconds a graceful DELETE waits (only for ``graceful_delete`` kinds)."""
        return 0 if requested is None else max(requested, 0)

    def blocks_deletion(self, obj: Obj) -> bool:
        """True while kind-specific finalization (a namespace's spec.finalizers) is pending."""
        return False

    def prepare_for_delete(self, obj: Obj) -> None:
        """Adjust an object that becomes ``deleting`` (a namespace turns Terminating)."""


AnyStrategy = Strategy[Any]

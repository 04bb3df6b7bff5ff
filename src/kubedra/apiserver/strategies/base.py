"""The per-kind hooks of the generic registry, over raw JSON dicts.

A :class:`Strategy` is upstream's ``RESTCreateStrategy``/``RESTUpdateStrategy`` pair: the
generic store handles metadata (uid, timestamps, resourceVersion, generateName, finalizers)
and calls these hooks in upstream's order::

    create: default → prepare_for_create → validate → store
    update: default → prepare_for_update(new, old) → validate_update(new, old) → store
    status: prepare_for_status_update(new, old) → validate_status_update(new, old) → store

Objects are the decoded JSON dicts of the request; hooks mutate them in place and return
field errors (``kubedra.validation.field.FieldError``) that the server turns into one 422.
Subclass and override what a kind needs; the defaults are upstream's generic behaviour.
"""

from __future__ import annotations

import copy
from typing import Any

from kubedra.validation.field import FieldError

Obj = dict[str, Any]

# Metadata a status write may not change (upstream ResetObjectMetaForStatus).
_STATUS_RESET_META = (
    "deletionTimestamp",
    "generation",
    "labels",
    "annotations",
    "finalizers",
    "ownerReferences",
)


def sub_dict(obj: Obj, key: str) -> Obj:
    """``obj[key]`` when it is a JSON object, else a new empty dict (not inserted)."""
    value = obj.get(key)
    return value if isinstance(value, dict) else {}


def spec_changed(new: Obj, old: Obj) -> bool:
    """True when anything but metadata and status differs (the generation-bump test)."""
    keys = (set(new) | set(old)) - {"metadata", "status", "apiVersion", "kind"}
    return any(new.get(k) != old.get(k) for k in keys)


class Strategy:
    """Upstream's generic behaviour; kinds override the hooks they need."""

    #: Main-resource writes keep the stored ``status`` (kinds with a status subresource).
    has_status_subresource: bool = False
    #: Create sets generation 1 and spec changes bump it (Job, Namespace-less kinds do not).
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

    def default(self, obj: Obj) -> None:
        """Fill defaulted fields (SetDefaults_*); runs on every decoded body."""

    def prepare_for_create(self, obj: Obj) -> None:
        if self.has_status_subresource:
            obj.pop("status", None)
        if self.tracks_generation:
            obj.setdefault("metadata", {})["generation"] = 1

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        if self.has_status_subresource:
            if "status" in old:
                new["status"] = copy.deepcopy(old["status"])
            else:
                new.pop("status", None)
        self._carry_generation(new, old)

    def validate(self, obj: Obj) -> list[FieldError]:
        return []

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return []

    def prepare_for_status_update(self, new: Obj, old: Obj) -> None:
        keep_all_but_status(new, old)
        meta = new.setdefault("metadata", {})
        old_meta = old.get("metadata", {})
        for key in _STATUS_RESET_META:
            if key in old_meta:
                meta[key] = copy.deepcopy(old_meta[key])
            else:
                meta.pop(key, None)

    def validate_status_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return []

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

    def grace_period(self, obj: Obj, requested: int | None) -> int:
        """Seconds a graceful DELETE waits (only for ``graceful_delete`` kinds)."""
        return 0 if requested is None else max(requested, 0)

    def blocks_deletion(self, obj: Obj) -> bool:
        """True while kind-specific finalization (a namespace's spec.finalizers) is pending."""
        return False

    def prepare_for_delete(self, obj: Obj) -> None:
        """Adjust an object that becomes ``deleting`` (a namespace turns Terminating)."""

    def _carry_generation(self, new: Obj, old: Obj) -> None:
        """Keep the stored generation; bump it on spec changes for kinds that track it."""
        meta = new.setdefault("metadata", {})
        old_gen = (old.get("metadata") or {}).get("generation")
        if old_gen is None:
            meta.pop("generation", None)
        else:
            meta["generation"] = old_gen
        if self.tracks_generation and spec_changed(new, old):
            meta["generation"] = int(old_gen or 0) + 1


def keep_all_but_status(new: Obj, old: Obj) -> None:
    """A status write changes only ``status`` (and some metadata): every other top-level
    field is reset to the stored object's."""
    for key in set(new) | set(old):
        if key in ("metadata", "status", "apiVersion", "kind"):
            continue
        if key in old:
            new[key] = copy.deepcopy(old[key])
        else:
            new.pop(key, None)

"""Server-side apply and field ownership (``metadata.managedFields``).

``apply_server_side`` serves ``application/apply-patch+yaml``; ``update_managed_fields``
records ownership for every other write (create, update, patch) so that later applies see
who owns what. Semantics follow structured-merge-diff's ``Updater``: an applier owns exactly
the fields of its configuration; a change to a field another manager owns is a conflict
unless forced; fields the applier set before and no longer sets are removed unless someone
else owns them. kubectl's migration rules from client-side apply (manager ``kubectl``, the
``last-applied-configuration`` annotation) are included.
"""

from __future__ import annotations

import copy
import json
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

from kubedra.apiserver.errors import ApiError, status_body
from kubedra.apiserver.patch.errors import bad_request
from kubedra.apiserver.patch.fieldset import (
    FieldSet,
    FieldsV1Codec,
    Path,
    created,
    diff,
    field_set,
    merge_applied,
    outside,
    path_string,
    remember,
    remove_path,
    strip,
)
from kubedra.apiserver.patch.schema import Meta, schema_of
from kubedra.apiserver.patch.values import go_json
from kubedra.registry.identity import now as objects_now

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
BEFORE_FIRST_APPLY = "before-first-apply"

JsonMap = dict[str, Any]


class Manager(NamedTuple):
    """Identity of one managedFields entry (upstream ``BuildManagerIdentifier``): a tuple,
    since every write builds, hashes and compares several."""

    manager: str
    operation: str
    api_version: str
    subresource: str = ""

    def display(self) -> str:
        """As conflict messages print it (upstream ``printManager``, time omitted)."""
        text = json.dumps(self.manager)
        if self.subresource:
            text += f" with subresource {json.dumps(self.subresource)}"
        if self.operation == "Update":
            text += f" using {self.api_version}"
        return text


@dataclass(frozen=True, slots=True)
class Conflict:
    manager: Manager
    path: Path

    def cause(self) -> dict[str, str]:
        return {"reason": "FieldManagerConflict",
                "message": f"conflict with {self.manager.display()}",
                "field": path_string(self.path)}


def conflict_message(conflicts: list[Conflict]) -> str:
    """Upstream ``getConflictMessage``."""
    if len(conflicts) == 1:
        c = conflicts[0]
        return (f"Apply failed with 1 conflict: conflict with {c.manager.display()}: "
                f"{path_string(c.path)}")
    lines: list[str] = []
    for mgr in sorted({c.manager for c in conflicts}, key=lambda m: m.display()):
        lines.append(f"conflicts with {mgr.display()}:")
        lines.extend(f"- {path_string(c.path)}" for c in conflicts if c.manager == mgr)
    return f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)


def conflict_error(conflicts: list[Conflict]) -> ApiError:
    """409 Conflict with one FieldManagerConflict cause per path (``NewApplyConflict``)."""
    details = {"causes": [c.cause() for c in conflicts]}
    return ApiError(status_body(409, "Conflict", conflict_message(conflicts), details))


@dataclass(slots=True)
class _Owned:
    # Never changed in place, only replaced: a set decoded from a stored tree is the
    # codec's own (shared by every write that decodes that tree), and a write that leaves
    # it as it was keeps that very set, so telling it unchanged is an identity test.
    fields: frozenset[Path]
    time: str | None
    # The stored FieldsV1 tree and the set it encodes, while ``fields`` still equals it: the
    # tree is then written back as it was instead of being encoded again.
    stored: tuple[frozenset[Path], JsonMap] | None = None

    def fields_v1(self) -> JsonMap:
        if self.stored is not None and (self.stored[0] is self.fields
                                        or self.stored[0] == self.fields):
            return self.stored[1]
        return _CODEC.encode(self.fields)


_CODEC = FieldsV1Codec()


def _now(now: str | None) -> str:
    return now or objects_now()


def decode_managed(obj: JsonMap | None) -> dict[Manager, _Owned]:
    out: dict[Manager, _Owned] = {}
    entries = ((obj or {}).get("metadata") or {}).get("managedFields") or []
    for entry in entries:
        if not isinstance(entry, dict) or "manager" not in entry:
            continue
        op = entry.get("operation", "Update")
        key = Manager(entry["manager"], op, entry.get("apiVersion", "") if op == "Update" else "",
                      entry.get("subresource", ""))
        tree = entry.get("fieldsV1") or {}
        known = _CODEC.decode(tree)
        owned = out.get(key)
        if owned is None:
            stored = (known, tree) if isinstance(tree, dict) else None
            out[key] = _Owned(known, entry.get("time"), stored)
            continue
        owned.fields |= known  # a repeated identity: the entries merge
        owned.stored = None
        if op == "Apply":
            owned.time = entry.get("time")
    return out


def encode_managed(managers: dict[Manager, _Owned], api_version: str) -> list[JsonMap]:
    """managedFields entries, sorted as upstream (operation, time, manager, version)."""
    entries: list[JsonMap] = []
    for key, owned in managers.items():
        if not owned.fields:
            continue
        entry: JsonMap = {"manager": key.manager, "operation": key.operation,
                          "apiVersion": key.api_version or api_version}
        if owned.time:
            entry["time"] = owned.time
        entry["fieldsType"] = "FieldsV1"
        entry["fieldsV1"] = owned.fields_v1()
        if key.subresource:
            entry["subresource"] = key.subresource
        entries.append(entry)
    entries.sort(key=lambda e: (e["operation"], e.get("time") or "", e["manager"],
                                e["apiVersion"], e.get("subresource", "")))
    return entries


def _store(obj: JsonMap, managers: dict[Manager, _Owned], api_version: str) -> None:
    entries = encode_managed(managers, api_version)
    meta = obj.setdefault("metadata", {})
    if entries:
        meta["managedFields"] = entries
    else:
        meta.pop("managedFields", None)


def _schema_of(obj: JsonMap) -> Meta:
    return schema_of(str(obj.get("apiVersion", "")), str(obj.get("kind", "")))


def update_managed_fields(
    old: JsonMap | None, new: JsonMap, manager: str, *, subresource: str = "",
    now: str | None = None, reset_fields: Iterable[Path] = (),
) -> JsonMap:
    """Return ``new`` with managedFields updated for a non-apply write by ``manager``:
    the fields it added or changed become its own (operation Update) and leave other
    managers; removed fields leave everyone. The result is a new dict with a new metadata
    dict; everything else is shared with ``new``."""
    api_version = str(new.get("apiVersion", ""))
    schema = _schema_of(new)
    key = Manager(manager, "Update", api_version, subresource)
    if old is None:  # a create: no one owned anything, and nothing was removed
        managers = {key: _Owned(frozenset(created(new, schema, set(reset_fields))),
                                _now(now))}
    else:
        managers = decode_managed(old)
        added, modified, removed_paths = diff(strip(old), strip(new), schema)
        removed = frozenset(removed_paths)
        changed = outside(added | modified, set(reset_fields))
        for other, owned in managers.items():
            if other != key:
                owned.fields = _without(owned.fields, removed, changed)
        mine = managers.get(key)
        if mine is None:
            mine = managers[key] = _Owned(_NONE, None)
        before = mine.fields
        kept = _without(before, removed, _NONE)  # ``before`` itself when nothing was removed
        grows = not changed <= kept
        mine.fields = kept | changed if grows else kept
        if grows or kept is not before or mine.time is None:  # the set changed (or is new)
            mine.time = _now(now)
    # Only metadata.managedFields changes: copy the two levels on the way to it.
    out = dict(new)
    meta = out.get("metadata")
    if isinstance(meta, dict):
        out["metadata"] = dict(meta)
    _store(out, managers, api_version)
    return out


_NONE: frozenset[Path] = frozenset()


def _without(fields: frozenset[Path], removed: frozenset[Path],
             changed: FieldSet | frozenset[Path]) -> frozenset[Path]:
    """``fields`` less the ``removed`` paths (and what lies below them) and the ``changed``
    ones: ``fields`` itself when neither touches it, which is what most writes do to most
    managers."""
    if removed:
        fields = _outside(fields, removed)
    return fields - changed if changed and not changed.isdisjoint(fields) else fields


_OUTSIDE: OrderedDict[tuple[frozenset[Path], frozenset[Path]], frozenset[Path]] = OrderedDict()


def _outside(fields: frozenset[Path], removed: frozenset[Path]) -> frozenset[Path]:
    """:func:`outside`, remembered: the same owners lose the same removed paths write after
    write (a finalizer, an allocation), and the answer is ``fields`` itself when nothing of
    theirs was removed."""
    key = (fields, removed)
    hit = _OUTSIDE.get(key)
    if hit is None:
        kept = outside(fields, removed)
        hit = remember(_OUTSIDE, _CODEC.capacity, key,
                       fields if len(kept) == len(fields) else frozenset(kept))
    return hit


def _last_applied_set(live: JsonMap, schema: Meta) -> FieldSet:
    text = ((live.get("metadata") or {}).get("annotations") or {}).get(LAST_APPLIED)
    if not isinstance(text, str):
        return set()
    try:
        previous = json.loads(text)
    except ValueError:
        return set()
    return field_set(previous, schema) if isinstance(previous, dict) else set()


def build_last_applied(applied: JsonMap) -> str:
    """The annotation value kubectl's client-side apply would read (upstream
    ``buildLastApplied``): the configuration without the annotation itself."""
    config = copy.deepcopy(applied)
    annotations = (config.get("metadata") or {}).get("annotations")
    if isinstance(annotations, dict):
        annotations.pop(LAST_APPLIED, None)
    return go_json(config)


def apply_server_side(
    live: JsonMap | None, applied: JsonMap, manager: str, force: bool, *,
    api_version: str | None = None, subresource: str = "", now: str | None = None,
    reset_fields: Iterable[Path] = (), schema: Meta | None = None,
) -> tuple[JsonMap, list[Conflict]]:
    """Apply the configuration ``applied`` for ``manager``.

    Returns ``(new object, [])`` or, when fields owned by others would change and ``force``
    is false, ``(live object, conflicts)`` (answer with :func:`conflict_error`). The result
    still needs the server's defaulting, validation and strategy.
    """
    if not isinstance(applied, dict):
        raise bad_request("apply patch must be a YAML or JSON object")
    wanted = api_version or str((live or {}).get("apiVersion", ""))
    given = str(applied.get("apiVersion", ""))
    if wanted and given != wanted:
        raise bad_request("Incorrect version specified in apply patch. Specified patch "
                          f"version: {given}, expected: {wanted}")
    if not applied.get("kind"):
        raise bad_request("apply patch must set kind")
    api_version = given
    schema = schema or _schema_of(applied)
    reset = set(reset_fields)
    base = copy.deepcopy(live) if live is not None else {}
    managers = decode_managed(live)
    if live is not None and not managers:
        everything = outside(field_set(live, schema), reset)
        if everything:
            managers[Manager(BEFORE_FIRST_APPLY, "Update", api_version)] = _Owned(
                frozenset(everything), None)
    key = Manager(manager, "Apply", "", subresource)
    config = outside(field_set(applied, schema), reset)

    merged = merge_applied(base, applied, schema)
    added, modified, _ = diff(strip(base), strip(merged), schema)
    changed = outside(added | modified, reset)
    conflicts = [Conflict(other, path) for other, owned in sorted(managers.items())
                 if other != key for path in sorted(owned.fields & changed)]
    if conflicts and not force and manager == "kubectl" and live is not None:
        allowed = _last_applied_set(live, schema)
        force = all(c.path in allowed for c in conflicts)
    if conflicts and not force:
        return copy.deepcopy(live) if live is not None else {}, conflicts
    for conflict in conflicts:
        owner = managers[conflict.manager]
        owner.fields = owner.fields - {conflict.path}

    previous = managers.get(key)
    managers[key] = _Owned(frozenset(config), _now(now))
    if previous is not None:
        kept: FieldSet = set().union(*(o.fields for o in managers.values()))
        for path in sorted(previous.fields - kept, key=len, reverse=True):
            # keep it if someone owns something below it, or it is a surviving item's key
            if not any(k[: len(path)] == path for k in kept) and not _item_key(path):
                remove_path(merged, path, schema)
    removed = frozenset(diff(strip(base), strip(merged), schema)[2])
    for other, owned in managers.items():
        if other != key:
            owned.fields = _without(owned.fields, removed, _NONE)

    if manager == "kubectl" and live is not None and _has_last_applied(live):
        merged.setdefault("metadata", {}).setdefault("annotations", {})[LAST_APPLIED] = (
            build_last_applied(applied)
        )
    _store(merged, managers, api_version)
    return merged, []


def server_side_apply(
    live: JsonMap | None, applied: JsonMap, *, manager: str, force: bool,
    subresource: str = "", schema: Meta | None = None, reset_fields: Iterable[Path] = (),
) -> JsonMap:
    """:func:`apply_server_side` for handlers: raises the 409 on conflicts."""
    out, conflicts = apply_server_side(live, applied, manager, force, subresource=subresource,
                                       schema=schema, reset_fields=reset_fields)
    if conflicts:
        raise conflict_error(conflicts)
    return out


def _item_key(path: Path) -> bool:
    """Whether ``path`` is a key field of a list-map item (``...k:{"name":"c"}, f:name``)."""
    if len(path) < 2 or not path[-2].startswith("k:") or not path[-1].startswith("f:"):
        return False
    return path[-1][2:] in json.loads(path[-2][2:])


def _has_last_applied(obj: JsonMap) -> bool:
    return LAST_APPLIED in ((obj.get("metadata") or {}).get("annotations") or {})


__all__ = ["Conflict", "Manager", "apply_server_side", "build_last_applied",
           "conflict_error", "conflict_message", "server_side_apply", "update_managed_fields"]

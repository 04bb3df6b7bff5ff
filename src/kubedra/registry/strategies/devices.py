"""Registry strategies of the ``resource.k8s.io/v1`` generation (Kubernetes 1.34
``pkg/registry/resource/{deviceclass,resourceclaim,resourceclaimtemplate,resourceslice}``),
written once on the hub (v1) form whatever version a client sends.

What upstream does on top of the generic store (:class:`.base.Strategy`):

- every kind: DELETE returns the deleted object;
- DeviceClass and ResourceSlice: create sets ``metadata.generation`` 1, an update bumps it
  iff the spec changed;
- ResourceClaim: a ``status`` subresource (create resets the status, main writes keep it,
  status writes keep the spec and drop the ``status.devices`` of deallocated devices);
- fields of a disabled feature gate are dropped on create and update unless the stored
  object already uses that feature (:data:`GATED`);
- a claim or template asking for admin access needs the namespace label
  ``resource.kubernetes.io/admin-access: "true"`` (:meth:`ClaimStrategy.validate_namespace`);
- ResourceSlices are selectable by ``spec.nodeName`` and ``spec.driver``, and watchers are
  indexed by ``spec.nodeName``; a driver name with upper case (accepted) gets a warning.

Pure: no I/O; the namespace's labels come from the caller.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import msgspec

from kubedra.api.base import Obj
from kubedra.api.features import FeatureGates
from kubedra.api.goformat import go_quote
from kubedra.api.meta import TypedObject
from kubedra.api.resource import v1
from kubedra.api.scheme import GVR, RESOURCE
from kubedra.registry.strategies.base import AnyStrategy, Strategy, sub_dict
from kubedra.validation import devices as v
from kubedra.validation import field
from kubedra.validation.defaults_resource_v1 import DEFAULTERS
from kubedra.validation.field import FieldError

T = TypeVar("T", bound=TypedObject)
Errors = list[FieldError]

ADMIN_ACCESS_LABEL = v1.DRA_ADMIN_NAMESPACE_LABEL_KEY


# --- fields of disabled gates ---------------------------------------------------------------


Visit = Callable[[Any, str], bool]
"""Told each (struct, attribute) pair a path reaches; true ends the walk."""


Paths = tuple[tuple[str, ...], ...]


def _walk(obj: Any, paths: Paths, visit: Visit) -> bool:
    """Whether ``visit`` was true of a pair one of ``paths`` reaches (it sees them until
    then): ``name[]`` steps into each list element, ``name{}`` into each map value; missing
    (None) values end a path. Steps the paths share are taken once."""
    return obj is not None and _walker(paths)(obj, visit)


@functools.cache
def _walker(paths: Paths) -> Callable[[Any, Visit], bool]:
    """The walk of ``paths`` as nested functions, built once (every claim write walks the
    gated paths of its kind)."""
    rests: dict[str, list[tuple[str, ...]]] = {}
    for path in paths:
        rests.setdefault(path[0], []).append(path[1:])
    steps = [_step(head, tuple(rest)) for head, rest in rests.items()]
    if len(steps) == 1:
        return steps[0]
    return lambda obj, visit: any(step(obj, visit) for step in steps)


def _step(head: str, rests: Paths) -> Callable[[Any, Visit], bool]:
    """Into ``head`` of an object, then along each of ``rests`` (``()``: ``head`` itself
    is a field to visit)."""
    if () in rests:
        if len(rests) > 1:
            raise ValueError(f"{head!r} is both a gated field and a step to others")
        return lambda obj, visit: visit(obj, head)
    inner = _walker(rests)
    name = head[:-2]
    if head.endswith("[]"):
        def each(obj: Any, visit: Visit) -> bool:
            return any(item is not None and inner(item, visit)
                       for item in getattr(obj, name) or ())
        return each
    if head.endswith("{}"):
        def values(obj: Any, visit: Visit) -> bool:
            return any(item is not None and inner(item, visit)
                       for item in (getattr(obj, name) or {}).values())
        return values

    def step(obj: Any, visit: Visit) -> bool:
        value = getattr(obj, head)
        return value is not None and inner(value, visit)
    return step


@functools.cache
def _fields(cls: type) -> dict[str, msgspec.structs.FieldInfo]:
    """A struct type's fields by name (``msgspec.structs.fields`` resolves the annotations
    anew on every call: a third of the API server's CPU on a 1.34 claim write)."""
    return {info.name: info for info in msgspec.structs.fields(cls)}


def _default(struct: Any, name: str) -> Any:
    info = _fields(struct.__class__).get(name)
    if info is None:
        raise AttributeError(name)
    if info.default_factory is not msgspec.NODEFAULT:
        return info.default_factory()
    return None if info.default is msgspec.NODEFAULT else info.default


def _in_use(struct: Any, name: str) -> bool:
    return getattr(struct, name) not in (None, False, "", [], {})


def _present(struct: Any, name: str) -> bool:
    return getattr(struct, name) is not None


def _clear(struct: Any, name: str) -> bool:
    setattr(struct, name, _default(struct, name))
    return False


@dataclass(frozen=True, slots=True)
class Gated:
    """The fields of one feature: dropped while its gates are off, unless in use already."""

    gates: tuple[str, ...]  # FeatureGates attributes, all of which must be on
    paths: Paths

    def enabled(self, gates: FeatureGates) -> bool:
        return all(getattr(gates, g) for g in self.gates)

    def used(self, obj: Any) -> bool:
        return _walk(obj, self.paths, _in_use)

    def present(self, obj: Any) -> bool:
        """Any of its fields is set at all (None is unset; a disabled one is cleared)."""
        return _walk(obj, self.paths, _present)

    def clear(self, obj: Any) -> None:
        _walk(obj, self.paths, _clear)


def _paths(*dotted: str) -> Paths:
    return tuple(tuple(p.split(".")) for p in dotted)


_DEVICE = "spec.devices[]."


def _claim_features(spec: str, status: bool) -> tuple[Gated, ...]:
    """The gated fields of a claim spec at ``spec`` (``spec.`` in a claim, ``spec.spec.``
    in a template), and of a claim's status when ``status``."""
    req = spec + "devices.requests[]."

    def in_status(*dotted: str) -> tuple[str, ...]:
        return dotted if status else ()

    def results(*names: str) -> tuple[str, ...]:
        return in_status(*("status.allocation.devices.results[]." + n for n in names))

    return (
        Gated(("dra_prioritized_list",), _paths(req + "first_available")),
        Gated(("dra_admin_access",), _paths(req + "exactly.admin_access",
                                             *results("admin_access"))),
        Gated(("dra_resource_claim_device_status",), _paths(*in_status("status.devices"))),
        Gated(("dra_device_taints",), _paths(
            req + "exactly.tolerations", req + "first_available[].tolerations",
            *results("tolerations"))),
        Gated(("dra_consumable_capacity",), _paths(
            req + "exactly.capacity", req + "first_available[].capacity",
            spec + "devices.constraints[].distinct_attribute",
            *results("share_id", "consumed_capacity"), *in_status("status.devices[].share_id"))),
        Gated(("dra_device_binding_conditions", "dra_resource_claim_device_status"), _paths(
            *results("binding_conditions", "binding_failure_conditions"),
            *in_status("status.allocation.allocation_timestamp"))),
    )


#: Per kind, the gated fields (k8s 1.34 ``dropDisabled*Fields`` of each strategy).
GATED: Mapping[str, tuple[Gated, ...]] = {
    "DeviceClass": (
        Gated(("dra_extended_resource",), _paths("spec.extended_resource_name")),
    ),
    "ResourceSlice": (
        Gated(("dra_device_taints",), _paths(_DEVICE + "taints")),
        Gated(("dra_partitionable_devices",), _paths(
            "spec.shared_counters", "spec.per_device_node_selection",
            _DEVICE + "consumes_counters", _DEVICE + "node_name", _DEVICE + "node_selector",
            _DEVICE + "all_nodes")),
        Gated(("dra_device_binding_conditions", "dra_resource_claim_device_status"), _paths(
            _DEVICE + "binds_to_node", _DEVICE + "binding_conditions",
            _DEVICE + "binding_failure_conditions")),
        Gated(("dra_consumable_capacity",), _paths(
            _DEVICE + "allow_multiple_allocations", _DEVICE + "capacity{}.request_policy")),
    ),
    "ResourceClaim": _claim_features("spec.", status=True),
    "ResourceClaimTemplate": _claim_features("spec.spec.", status=False),
}


class DisabledFields:
    """The gated fields of one kind whose features are off under ``gates``."""

    def __init__(self, gates: FeatureGates, kind: str) -> None:
        self.features = tuple(f for f in GATED[kind] if not f.enabled(gates))
        self._paths: Paths = tuple(p for f in self.features for p in f.paths)
        for paths in (self._paths, *(f.paths for f in self.features)):
            if paths:
                _walker(paths)  # built now: a table the walks cannot follow fails at start

    def drop(self, new: Any, old: Any | None) -> None:
        """Clear in ``new`` the fields of each disabled feature the stored ``old`` (None on
        create) does not use (upstream keeps a field in use so an update cannot lose it).
        Most writes set none: one walk over all of them tells, and the stored object is
        not walked."""
        if not self._paths or not _walk(new, self._paths, _present):
            return
        for feature in self.features:
            if feature.present(new) and (old is None or not feature.used(old)):
                feature.clear(new)


# --- admin access ---------------------------------------------------------------------------

_ADMIN_DETAIL = ("admin access to devices requires the "
                 f"`{ADMIN_ACCESS_LABEL}: true` label on the containing namespace")


def admin_access_errors(requests: list[Any], labels: Mapping[str, str],
                        path: field.Path) -> Errors:
    """``AuthorizedForAdmin``: a request with ``exactly.adminAccess: true`` in a namespace
    without the admin label is Forbidden (the path names the request, not ``exactly``)."""
    if labels.get(ADMIN_ACCESS_LABEL) == "true":
        return []
    return [field.forbidden(path.index(i).child("adminAccess"), _ADMIN_DETAIL)
            for i, request in enumerate(requests)
            if request.exactly is not None and request.exactly.admin_access]


def _results_admin(claim: Any) -> bool:
    allocation = claim.status.allocation
    return allocation is not None and any(
        r.admin_access for r in allocation.devices.results or ())


# --- strategies -----------------------------------------------------------------------------

Validate = Callable[[T], Errors]
ValidateUpdate = Callable[[T, T], Errors]


class DevicesStrategy(Strategy[T], Generic[T]):
    """A kind of the v1 generation: its validators, the gated fields, the flags above."""

    return_deleted_object = True

    def __init__(self, gates: FeatureGates, kind: str, create: Validate[T],
                 update: ValidateUpdate[T], *, compiles_cel: bool = False) -> None:
        self.gates = gates
        self.kind = kind
        self.compiles_cel = compiles_cel
        self._disabled = DisabledFields(gates, kind)
        self._create = create
        self._update = update

    def default_served(self, obj: Any, version: str) -> None:
        DEFAULTERS[version](obj, None)

    def prepare_for_create(self, obj: T) -> None:
        super().prepare_for_create(obj)
        self._disabled.drop(obj, None)

    def prepare_for_update(self, new: T, old: T) -> None:
        self._disabled.drop(new, old)
        super().prepare_for_update(new, old)

    def validate(self, obj: T) -> Errors:
        return self._create(obj)

    def validate_update(self, new: T, old: T) -> Errors:
        return self._update(new, old)


class DeviceClassStrategy(DevicesStrategy[Any]):
    tracks_generation = True


class ResourceSliceStrategy(DevicesStrategy[Any]):
    tracks_generation = True
    # upstream's field-label conversion of ResourceSlice knows no metadata.namespace
    generic_field_labels: tuple[str, ...] = ("metadata.name",)
    extra_field_labels: tuple[str, ...] = ("spec.nodeName", "spec.driver")
    trigger_field: str | None = "spec.nodeName"

    def selectable_fields(self, obj: Obj) -> dict[str, str]:
        spec = sub_dict(obj, "spec")
        return {
            "metadata.name": str(sub_dict(obj, "metadata").get("name") or ""),
            "spec.nodeName": str(spec.get("nodeName") or ""),
            "spec.driver": str(spec.get("driver") or ""),
        }

    def write_warnings(self, obj: Obj) -> list[str]:
        """Driver names are validated lower-cased; upper case passes with a warning."""
        driver = str(sub_dict(obj, "spec").get("driver") or "")
        if driver == driver.lower():
            return []
        return [f"spec.driver: driver names should be lowercase; {go_quote(driver)} "
                "contains uppercase characters"]

    def field_label_error(self, label: str) -> str:
        return f"field label not supported for {v1.API_VERSION}, Kind=ResourceSlice: {label}"


class ClaimTemplateStrategy(DevicesStrategy[Any]):
    """ResourceClaimTemplate: admin access is checked on create, as for claims."""

    reads_namespace_labels = True
    #: Where the requests sit (``spec.spec.devices.requests`` in a template).
    requests_path: tuple[str, ...] = ("spec", "spec", "devices", "requests")

    def validate_namespace(self, obj: Any, labels: Mapping[str, str] | None) -> Errors:
        if labels is None:
            return []
        requests = obj
        for step in self.requests_path:
            requests = getattr(requests, step)
        return admin_access_errors(requests, labels, field.ROOT.child(*self.requests_path))


class ClaimStrategy(ClaimTemplateStrategy):
    has_status_subresource = True
    requests_path: tuple[str, ...] = ("spec", "devices", "requests")

    def __init__(self, gates: FeatureGates, create: Validate[Any], update: ValidateUpdate[Any],
                 status_update: ValidateUpdate[Any]) -> None:
        super().__init__(gates, "ResourceClaim", create, update, compiles_cel=True)
        self._status_update = status_update

    def prepare_for_status_update(self, new: Any, old: Any) -> None:
        super().prepare_for_status_update(new, old)
        self._disabled.drop(new, old)
        drop_deallocated_status_devices(new, old)

    def validate_status_update(self, new: Any, old: Any) -> Errors:
        return self._status_update(new, old)

    def validate_status_namespace(self, new: Any, old: Any,
                                  labels: Mapping[str, str] | None) -> Errors:
        """``AuthorizedForAdminStatus``: a new allocation with admin access needs the
        label too, unless the stored allocation already had it."""
        allocation = new.status.allocation
        if (labels is None or labels.get(ADMIN_ACCESS_LABEL) == "true" or allocation is None
                or _results_admin(old)):
            return []
        path = field.ROOT.child("status", "allocation", "devices", "results")
        return [field.forbidden(path.index(i).child("adminAccess"), _ADMIN_DETAIL)
                for i, r in enumerate(allocation.devices.results or ()) if r.admin_access]


def drop_deallocated_status_devices(new: Any, old: Any) -> None:
    """A status write keeps no ``status.devices`` entry of a device the write deallocated
    (in the stored allocation's results, not in the new one's)."""
    if old.status.allocation is None:
        return
    gone = {(r.driver, r.pool, r.device)
            for r in old.status.allocation.devices.results or ()}
    if new.status.allocation is not None:
        gone -= {(r.driver, r.pool, r.device)
                 for r in new.status.allocation.devices.results or ()}
    kept = [d for d in new.status.devices or () if (d.driver, d.pool, d.device) not in gone]
    new.status.devices = kept or _default(new.status, "devices")


def strategies(gates: FeatureGates) -> dict[GVR, AnyStrategy]:
    """The four kinds' strategies under ``gates``, by their storage GVR (v1). The
    validators read one gate themselves (DRAConsumableCapacity: the CEL ``device`` type)."""
    cap = {"consumable_capacity": gates.dra_consumable_capacity}

    def with_gate(validate: Callable[..., Errors]) -> Callable[..., Errors]:
        return lambda *objs: validate(*objs, **cap)

    return {
        (RESOURCE, "v1", "deviceclasses"): DeviceClassStrategy(
            gates, "DeviceClass", with_gate(v.validate_device_class),
            with_gate(v.validate_device_class_update), compiles_cel=True),
        (RESOURCE, "v1", "resourceclaims"): ClaimStrategy(
            gates, with_gate(v.validate_resource_claim),
            with_gate(v.validate_resource_claim_update),
            v.validate_resource_claim_status_update),
        (RESOURCE, "v1", "resourceclaimtemplates"): ClaimTemplateStrategy(
            gates, "ResourceClaimTemplate", with_gate(v.validate_resource_claim_template),
            with_gate(v.validate_resource_claim_template_update), compiles_cel=True),
        (RESOURCE, "v1", "resourceslices"): ResourceSliceStrategy(
            gates, "ResourceSlice", v.validate_resource_slice, v.validate_resource_slice_update),
    }

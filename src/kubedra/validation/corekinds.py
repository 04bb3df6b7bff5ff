"""Create/update validation and defaults of the core kinds kubedra serves besides Pods
(Namespace, Node, core/v1 Event, coordination/v1 Lease), after k8s v1.30
``pkg/apis/core/validation`` and ``pkg/apis/coordination/validation``.

Only what the metadata and the fields kubedra's components act on need is checked: object
metadata, namespace finalizers, node taints, the legacy core/v1 Event rules and lease counts.
Status updates check metadata only (upstream's status checks cover fields kubedra keeps raw).
"""

from __future__ import annotations

from kubedra.api.coordination import Lease
from kubedra.api.core import TAINT_EFFECTS, Event, Namespace, Node, Service, ServiceAccount, Taint
from kubedra.api.meta import ObjectMeta
from kubedra.validation.field import (
    ErrorList,
    ErrorType,
    FieldError,
    Path,
    invalid,
    not_supported,
    required,
)
from kubedra.validation.gorepr import GoRepr
from kubedra.validation.meta import (
    METADATA,
    validate_label_name,
    validate_object_meta,
    validate_object_meta_update,
)
from kubedra.validation.names import (
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_label_value,
    name_is_dns_label,
    name_is_dns_subdomain,
)

# Finalizer names that need no domain prefix (``helper.IsStandardFinalizerName``).
STANDARD_FINALIZERS = frozenset(("kubernetes", "orphan", "foregroundDeletion"))
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
EVENT_REPORTING_INSTANCE_LIMIT = 128
EVENT_ACTION_LIMIT = 128
EVENT_REASON_LIMIT = 128
EVENT_NOTE_LIMIT = 1024


# --- Namespace --------------------------------------------------------------------------------


def default_namespace(ns: Namespace) -> None:
    """``SetDefaults_Namespace``: the immutable name label; a new namespace is Active."""
    if ns.metadata.name:
        ns.metadata.labels = {**(ns.metadata.labels or {}), NAMESPACE_NAME_LABEL: ns.metadata.name}
    if not ns.status.phase:
        ns.status.phase = "Active"


def _validate_finalizer_name(name: str, path: Path) -> ErrorList:
    errs = [invalid(path, name, msg) for msg in is_qualified_name(name)]
    if "/" not in name and name not in STANDARD_FINALIZERS:
        errs.append(invalid(path, name,
                            "name is neither a standard finalizer name nor is it fully qualified"))
    return errs


def validate_namespace(ns: Namespace) -> ErrorList:
    errs = validate_object_meta(ns.metadata, False, name_is_dns_label, METADATA)
    for name in ns.spec.finalizers or ():
        errs += _validate_finalizer_name(name, Path("spec").child("finalizers"))
    return errs


def validate_namespace_update(new: Namespace, old: Namespace) -> ErrorList:
    return validate_object_meta_update(new.metadata, old.metadata, METADATA)


# --- Node -------------------------------------------------------------------------------------


def _taint_repr(taint: Taint) -> GoRepr:
    """``%#v`` of a core.Taint (a set timeAdded pointer prints as an address upstream)."""
    added = "(*v1.Time)(nil)" if taint.time_added is None else "(*v1.Time)(0xc000000000)"
    return GoRepr(
        f'core.Taint{{Key:"{taint.key}", Value:"{taint.value or ""}", '
        f'Effect:"{taint.effect}", TimeAdded:{added}}}'
    )


def validate_taints(taints: list[Taint] | None, path: Path) -> ErrorList:
    """``validateNodeTaints``: key, value, effect, and unique (key, effect) pairs."""
    errs: ErrorList = []
    seen: set[tuple[str, str]] = set()
    for i, taint in enumerate(taints or ()):
        p = path.index(i)
        errs += validate_label_name(taint.key, p.child("key"))
        value_errs = is_valid_label_value(taint.value or "")
        if value_errs:
            errs.append(invalid(p.child("value"), taint.value or "", ";".join(value_errs)))
        if not taint.effect:
            errs.append(required(p.child("effect")))
        elif taint.effect not in TAINT_EFFECTS:
            errs.append(not_supported(p.child("effect"), taint.effect, TAINT_EFFECTS))
        if (taint.key, taint.effect) in seen:
            errs.append(FieldError(ErrorType.DUPLICATE, p, _taint_repr(taint),
                                   "taints must be unique by key and effect pair"))
        seen.add((taint.key, taint.effect))
    return errs


def validate_node(node: Node) -> ErrorList:
    """``ValidateNode`` (metadata and taints; taint errors sit under ``metadata.taints``, as
    upstream reports them)."""
    errs = validate_object_meta(node.metadata, False, name_is_dns_subdomain, METADATA)
    return errs + validate_taints(node.spec.taints, METADATA.child("taints"))


def validate_node_update(new: Node, old: Node) -> ErrorList:
    errs = validate_object_meta_update(new.metadata, old.metadata, METADATA)
    return errs + validate_taints(new.spec.taints, METADATA.child("taints"))


def validate_meta_update(new: ObjectMeta, old: ObjectMeta) -> ErrorList:
    """Status updates of kinds whose status kubedra keeps raw: metadata rules only."""
    return validate_object_meta_update(new, old, METADATA)


# --- Event ------------------------------------------------------------------------------------


def validate_path_segment_name(name: str, prefix: bool) -> list[str]:
    """``path.ValidatePathSegmentName``: what any object name must satisfy."""
    if not prefix and name in (".", ".."):
        return [f"may not be '{name}'"]
    return [f"may not contain '{bad}'" for bad in ("/", "%") if bad in name]


def _too_long(path: Path, value: str, limit: int) -> ErrorList:
    if len(value.encode()) > limit:
        return [invalid(path, "", f"can have at most {limit} characters")]
    return []


def validate_event(event: Event) -> ErrorList:
    """``ValidateEventCreate`` for core/v1 (the legacy rules), then, if those pass, the
    generic ObjectMeta validation the REST create path runs."""
    errs: ErrorList = []
    namespace = event.metadata.namespace or ""
    involved_ns = event.involved_object.namespace or ""
    involved_path = Path("involvedObject").child("namespace")
    if not event.event_time:
        if (involved_ns and namespace != involved_ns) or (
            not involved_ns and namespace not in ("", "default")
        ):
            errs.append(invalid(involved_path, involved_ns, "does not match event.namespace"))
    else:
        if not involved_ns and namespace not in ("default", "kube-system"):
            errs.append(invalid(involved_path, involved_ns, "does not match event.namespace"))
        component = event.reporting_component
        if not component:
            errs.append(required(Path("reportingComponent")))
        errs += [invalid(Path("reportingComponent"), component, msg)
                 for msg in is_qualified_name(component)]
        if not event.reporting_instance:
            errs.append(required(Path("reportingInstance")))
        errs += _too_long(Path("reportingInstance"), event.reporting_instance,
                          EVENT_REPORTING_INSTANCE_LIMIT)
        if not event.action:
            errs.append(required(Path("action")))
        errs += _too_long(Path("action"), event.action or "", EVENT_ACTION_LIMIT)
        if not event.reason:
            errs.append(required(Path("reason")))
        errs += _too_long(Path("reason"), event.reason or "", EVENT_REASON_LIMIT)
        errs += _too_long(Path("message"), event.message or "", EVENT_NOTE_LIMIT)
    errs += [invalid(Path("namespace"), namespace, msg) for msg in is_dns1123_subdomain(namespace)]
    if errs:
        return errs
    return validate_object_meta(event.metadata, True, validate_path_segment_name, METADATA)


def validate_event_update(new: Event, old: Event) -> ErrorList:
    return validate_object_meta_update(new.metadata, old.metadata, METADATA) + validate_event(new)


# --- Service ----------------------------------------------------------------------------------

SERVICE_PROTOCOLS = ("SCTP", "TCP", "UDP")


def validate_service(svc: Service) -> ErrorList:
    """The metadata and port checks of ``ValidateService`` (Services are read-only through
    the API, so only the API server's own ``kubernetes`` Service gets here)."""
    errs = validate_object_meta(svc.metadata, True, name_is_dns_label, METADATA)
    for i, port in enumerate(svc.spec.ports or ()):
        path = Path("spec").child("ports").index(i)
        if not 1 <= port.port <= 65535:
            errs.append(invalid(path.child("port"), port.port,
                                "must be between 1 and 65535, inclusive"))
        if port.protocol not in SERVICE_PROTOCOLS:
            errs.append(not_supported(path.child("protocol"), port.protocol or "",
                                      SERVICE_PROTOCOLS))
    return errs


def validate_service_account(sa: ServiceAccount) -> ErrorList:
    """``ValidateServiceAccount``: the name is a DNS subdomain; the rest is free."""
    return validate_object_meta(sa.metadata, True, name_is_dns_subdomain, METADATA)


def validate_service_account_update(new: ServiceAccount, old: ServiceAccount) -> ErrorList:
    return (validate_object_meta_update(new.metadata, old.metadata, METADATA)
            + validate_service_account(new))


def validate_service_update(new: Service, old: Service) -> ErrorList:
    return validate_object_meta_update(new.metadata, old.metadata, METADATA) + validate_service(
        new)


# --- Lease ------------------------------------------------------------------------------------


def _validate_lease_spec(lease: Lease) -> ErrorList:
    errs: ErrorList = []
    spec, path = lease.spec, Path("spec")
    if spec.lease_duration_seconds is not None and spec.lease_duration_seconds <= 0:
        errs.append(invalid(path.child("leaseDurationSeconds"), spec.lease_duration_seconds,
                            "must be greater than 0"))
    if spec.lease_transitions is not None and spec.lease_transitions < 0:
        errs.append(invalid(path.child("leaseTransitions"), spec.lease_transitions,
                            "must be greater than or equal to 0"))
    return errs


def validate_lease(lease: Lease) -> ErrorList:
    errs = validate_object_meta(lease.metadata, True, name_is_dns_subdomain, METADATA)
    return errs + _validate_lease_spec(lease)


def validate_lease_update(new: Lease, old: Lease) -> ErrorList:
    errs = validate_object_meta_update(new.metadata, old.metadata, METADATA)
    return errs + _validate_lease_spec(new)

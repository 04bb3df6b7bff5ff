"""Strategies of the core/v1 and coordination kinds kubedra serves (upstream
``pkg/registry/core/{namespace,node,pod,event,serviceaccount}`` and ``coordination/lease``).

Each class binds its kind's typed defaulter and validators (``kubedra.validation``) and adds
the registry behaviour: status handling, field selectors, graceful deletion. Pod binding
(``pods/binding``) works on the stored JSON, as the server's own write.
"""

from __future__ import annotations

from typing import Any

from kubedra.api.base import Obj, dig
from kubedra.api.coordination import Lease
from kubedra.api.core import (
    Event,
    Namespace,
    NamespaceStatus,
    Node,
    Pod,
    PodCondition,
    PodStatus,
    Service,
    ServiceAccount,
)
from kubedra.api.release import Release
from kubedra.registry.strategies.base import (
    Strategy,
    keep_all_but_status,
    keep_meta,
    sub_dict,
)
from kubedra.registry.strategies.podfields import ABSENT, drop_other_release_claim_fields
from kubedra.validation import corekinds, field
from kubedra.validation import pod as pod_validation
from kubedra.validation.field import FieldError
from kubedra.validation.pod_template import default_pod_spec


def _field_label_not_supported(label: str) -> str:
    return f"field label not supported: {label}"


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class NamespaceStrategy(Strategy[Namespace]):
    """Namespaces start Active with the ``kubernetes`` finalizer (namespace strategy)."""

    has_status_subresource = True
    return_deleted_object = True
    extra_field_labels: tuple[str, ...] = ("status.phase",)

    def default(self, obj: Namespace) -> None:
        corekinds.default_namespace(obj)

    def prepare_for_create(self, obj: Namespace) -> None:
        super().prepare_for_create(obj)
        obj.status = NamespaceStatus(phase="Active")
        finalizers = list(obj.spec.finalizers or [])
        if "kubernetes" not in finalizers:
            finalizers.append("kubernetes")
        obj.spec.finalizers = finalizers

    def prepare_for_update(self, new: Namespace, old: Namespace) -> None:
        super().prepare_for_update(new, old)
        new.spec = old.spec  # spec.finalizers only change through the finalize subresource

    def validate(self, obj: Namespace) -> list[FieldError]:
        return corekinds.validate_namespace(obj)

    def validate_update(self, new: Namespace, old: Namespace) -> list[FieldError]:
        return corekinds.validate_namespace_update(new, old)

    def validate_status_update(self, new: Namespace, old: Namespace) -> list[FieldError]:
        return corekinds.validate_meta_update(new.metadata, old.metadata)

    def selectable_fields(self, obj: Obj) -> dict[str, str]:
        out = super().selectable_fields(obj)
        out["status.phase"] = _text(dig(obj, "status", "phase"))
        return out

    def field_label_error(self, label: str) -> str:
        return _field_label_not_supported(label)

    def blocks_deletion(self, obj: Obj) -> bool:
        return bool(dig(obj, "spec", "finalizers"))

    def prepare_for_delete(self, obj: Obj) -> None:
        status = sub_dict(obj, "status")
        status["phase"] = "Terminating"
        obj["status"] = status


class NodeStrategy(Strategy[Node]):
    """Nodes are created with their status (the kubelet registers so); updates keep it."""

    has_status_subresource = True
    extra_field_labels: tuple[str, ...] = ("spec.unschedulable",)

    def prepare_for_create(self, obj: Node) -> None:
        """``nodeStrategy.PrepareForCreate`` keeps the status the kubelet sends."""

    def validate(self, obj: Node) -> list[FieldError]:
        return corekinds.validate_node(obj)

    def validate_update(self, new: Node, old: Node) -> list[FieldError]:
        return corekinds.validate_node_update(new, old)

    def validate_status_update(self, new: Node, old: Node) -> list[FieldError]:
        return corekinds.validate_meta_update(new.metadata, old.metadata)

    def selectable_fields(self, obj: Obj) -> dict[str, str]:
        out = super().selectable_fields(obj)
        out["spec.unschedulable"] = _text(bool(dig(obj, "spec", "unschedulable")))
        return out

    def field_label_error(self, label: str) -> str:
        return _field_label_not_supported(label)


def _qos_class(obj: Pod) -> str:
    """``qos.GetPodQOS`` for cpu/memory requests and limits (simplified to whole containers)."""
    any_set = False
    guaranteed = True
    for c in (*obj.spec.containers, *(obj.spec.init_containers or ())):
        requests = c.resources.requests or {}
        limits = c.resources.limits or {}
        if requests or limits:
            any_set = True
        for name in ("cpu", "memory"):
            if name not in limits or requests.get(name, limits[name]) != limits[name]:
                guaranteed = False
    if not any_set:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


class PodStrategy(Strategy[Pod]):
    """Pods start Pending; DELETE answers with the pod (upstream ``ReturnDeletedObject``).
    The claim fields and their validation are the serving release's (``podfields``)."""

    has_status_subresource = True
    return_deleted_object = True
    graceful_delete = True
    trigger_field: str | None = "spec.nodeName"
    extra_field_labels: tuple[str, ...] = (
        "spec.nodeName",
        "spec.restartPolicy",
        "spec.schedulerName",
        "spec.serviceAccountName",
        "spec.hostNetwork",
        "status.phase",
        "status.podIP",
        "status.nominatedNodeName",
    )

    def __init__(self, release: Release) -> None:
        self.release = release
        self.absent_fields = ABSENT[release]

    def default(self, obj: Pod) -> None:
        default_pod_spec(obj.spec)

    def prepare_for_create(self, obj: Pod) -> None:
        super().prepare_for_create(obj)
        drop_other_release_claim_fields(obj.spec, self.release)
        obj.status = PodStatus(phase="Pending", qos_class=_qos_class(obj))
        if obj.spec.scheduling_gates:
            # applySchedulingGatedCondition
            obj.status.conditions = [PodCondition(
                type="PodScheduled", status="False", reason="SchedulingGated",
                message="Scheduling is blocked due to non-empty scheduling gates",
            )]

    def prepare_for_update(self, new: Pod, old: Pod) -> None:
        super().prepare_for_update(new, old)
        drop_other_release_claim_fields(new.spec, self.release)

    def validate(self, obj: Pod) -> list[FieldError]:
        return pod_validation.validate_pod(obj, self.release)

    def validate_update(self, new: Pod, old: Pod) -> list[FieldError]:
        return pod_validation.validate_pod_update(new, old, self.release)

    def prepare_for_status_update(self, new: Pod, old: Pod) -> None:
        # podStatusStrategy keeps spec and ownerReferences; labels/annotations may change.
        keep_all_but_status(new, old)
        keep_meta(new, old, ("owner_references", "deletion_timestamp",
                             "deletion_grace_period_seconds"))

    def validate_status_update(self, new: Pod, old: Pod) -> list[FieldError]:
        return pod_validation.validate_pod_status_update(new, old)

    def grace_period(self, obj: Obj, requested: int | None) -> int:
        """``podStrategy.CheckGracefulDelete``: unscheduled or finished pods go at once."""
        if not dig(obj, "spec", "nodeName"):
            return 0
        if dig(obj, "status", "phase") in ("Failed", "Succeeded"):
            return 0
        if requested is not None:
            return max(requested, 0)
        spec_grace = dig(obj, "spec", "terminationGracePeriodSeconds")
        return int(spec_grace) if isinstance(spec_grace, int) else 30

    def selectable_fields(self, obj: Obj) -> dict[str, str]:
        out = super().selectable_fields(obj)
        out["spec.nodeName"] = _text(dig(obj, "spec", "nodeName"))
        out["spec.restartPolicy"] = _text(dig(obj, "spec", "restartPolicy"))
        out["spec.schedulerName"] = _text(dig(obj, "spec", "schedulerName"))
        out["spec.serviceAccountName"] = _text(dig(obj, "spec", "serviceAccountName"))
        out["spec.hostNetwork"] = _text(bool(dig(obj, "spec", "hostNetwork")))
        out["status.phase"] = _text(dig(obj, "status", "phase"))
        out["status.podIP"] = _text(dig(obj, "status", "podIP"))
        out["status.nominatedNodeName"] = _text(dig(obj, "status", "nominatedNodeName"))
        return out

    def field_label_error(self, label: str) -> str:
        return _field_label_not_supported(label)


def bind(pod: Obj, binding: Obj) -> list[FieldError] | str | None:
    """Apply a Binding to a pod: set spec.nodeName. Returns a conflict message when the pod
    is already bound or deleting, field errors when the binding is invalid, else None."""
    target = binding.get("target") if isinstance(binding.get("target"), dict) else None
    node = (target or {}).get("name")
    if not node:
        return [field.required(field.ROOT.child("target", "name"), "")]
    kind = (target or {}).get("kind")
    if kind not in (None, "", "Node"):
        return [field.not_supported(field.ROOT.child("target", "kind"), kind, ["Node", "<empty>"])]
    meta = pod.get("metadata") or {}
    if meta.get("deletionTimestamp"):
        return "pod is being deleted, cannot be assigned to a host"
    if dig(pod, "spec", "nodeName"):
        return f"pod {meta.get('name')} is already assigned to node \"{pod['spec']['nodeName']}\""
    pod.setdefault("spec", {})["nodeName"] = node
    ann = (binding.get("metadata") or {}).get("annotations")
    if isinstance(ann, dict) and ann:
        merged = dict(meta.get("annotations") or {})
        merged.update(ann)
        pod.setdefault("metadata", {})["annotations"] = merged
    status = pod.setdefault("status", {})
    conds = [c for c in status.get("conditions") or [] if c.get("type") != "PodScheduled"]
    conds.append({"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                  "lastTransitionTime": None})
    status["conditions"] = conds
    return None


class EventStrategy(Strategy[Event]):
    allow_create_on_update = True
    extra_field_labels: tuple[str, ...] = (
        "involvedObject.kind",
        "involvedObject.namespace",
        "involvedObject.name",
        "involvedObject.uid",
        "involvedObject.apiVersion",
        "involvedObject.resourceVersion",
        "involvedObject.fieldPath",
        "reason",
        "reportingComponent",
        "source",
        "type",
    )

    def validate(self, obj: Event) -> list[FieldError]:
        return corekinds.validate_event(obj)

    def validate_update(self, new: Event, old: Event) -> list[FieldError]:
        return corekinds.validate_event_update(new, old)

    def selectable_fields(self, obj: Obj) -> dict[str, str]:
        out = super().selectable_fields(obj)
        inv = sub_dict(obj, "involvedObject")
        for k in ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion",
                  "fieldPath"):
            out[f"involvedObject.{k}"] = _text(inv.get(k))
        out["reason"] = _text(obj.get("reason"))
        out["reportingComponent"] = _text(obj.get("reportingComponent"))
        src = sub_dict(obj, "source")
        out["source"] = _text(src.get("component"))
        out["type"] = _text(obj.get("type"))
        return out

    def field_label_error(self, label: str) -> str:
        return _field_label_not_supported(label)


class ServiceStrategy(Strategy[Service]):
    """Services are served read-only (get, list, watch); the API server writes the
    ``kubernetes`` Service itself at start."""

    def validate(self, obj: Service) -> list[FieldError]:
        return corekinds.validate_service(obj)

    def validate_update(self, new: Service, old: Service) -> list[FieldError]:
        return corekinds.validate_service_update(new, old)


class ServiceAccountStrategy(Strategy[ServiceAccount]):
    """ServiceAccounts have no status; tokens for them come from ``serviceaccounts/token``."""

    def validate(self, obj: ServiceAccount) -> list[FieldError]:
        return corekinds.validate_service_account(obj)

    def validate_update(self, new: ServiceAccount, old: ServiceAccount) -> list[FieldError]:
        return corekinds.validate_service_account_update(new, old)


class LeaseStrategy(Strategy[Lease]):
    """Leases have no status and no registry rules beyond validation."""

    def validate(self, obj: Lease) -> list[FieldError]:
        return corekinds.validate_lease(obj)

    def validate_update(self, new: Lease, old: Lease) -> list[FieldError]:
        return corekinds.validate_lease_update(new, old)

"""Strategies of the core/v1 and coordination kinds kubedra serves (upstream registries).

Defaulting and validation come from ``kubedra.validation.registry`` (typed functions); these
classes add the registry behaviour: status handling, field selectors, graceful deletion.
"""

from __future__ import annotations

import copy
from typing import Any

from kubedra.api import codec
from kubedra.api.features import FeatureGates
from kubedra.api.kinds import Kind
from kubedra.apiserver.strategies.base import Obj, Strategy, keep_all_but_status, sub_dict
from kubedra.validation import field
from kubedra.validation.field import FieldError
from kubedra.validation.registry import Rules, rules_for


def _field_label_not_supported(label: str) -> str:
    return f"field label not supported: {label}"


def _dig(obj: Obj, *path: str) -> Any:
    cur: Any = obj
    for p in path:
        if not isinstance(cur, dict):
            return None
        cur = cur.get(p)
    return cur


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class RulesStrategy(Strategy):
    """A kind whose defaulter and validators are in the validation registry."""

    def __init__(self, kind: Kind, gates: FeatureGates) -> None:
        self.kind = kind
        self.gates = gates
        rules = rules_for(kind.group, kind.kind)
        assert rules is not None, f"no validation rules for {kind.kind}"
        self.rules: Rules = rules

    def _typed(self, obj: Obj) -> Any:
        return codec.decode(obj, self.kind.model)

    def default(self, obj: Obj) -> None:
        if self.rules.default is None:
            return
        typed = self._typed(obj)
        self.rules.default(typed, self.gates)
        obj.clear()
        obj.update(codec.to_builtins(typed))

    def validate(self, obj: Obj) -> list[FieldError]:
        return self.rules.validate(self._typed(obj), self.gates)

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return self.rules.validate_update(self._typed(new), self._typed(old), self.gates)

    def validate_status_update(self, new: Obj, old: Obj) -> list[FieldError]:
        if self.rules.validate_status_update is None:
            return []
        return self.rules.validate_status_update(self._typed(new), self._typed(old),
                                                 self.gates)


class NamespaceStrategy(RulesStrategy):
    """Namespaces start Active with the ``kubernetes`` finalizer (namespace strategy)."""

    has_status_subresource = True
    return_deleted_object = True
    extra_field_labels = ("status.phase",)

    def prepare_for_create(self, obj: Obj) -> None:
        super().prepare_for_create(obj)
        obj["status"] = {"phase": "Active"}
        spec = sub_dict(obj, "spec")
        finalizers = list(spec.get("finalizers") or [])
        if "kubernetes" not in finalizers:
            finalizers.append("kubernetes")
        spec["finalizers"] = finalizers
        obj["spec"] = spec

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        super().prepare_for_update(new, old)
        # spec.finalizers only change through the finalize subresource
        if "spec" in old:
            new["spec"] = copy.deepcopy(old["spec"])

    def selectable_fields(self, obj: Obj) -> dict[str, str]:
        out = super().selectable_fields(obj)
        out["status.phase"] = _text(_dig(obj, "status", "phase"))
        return out

    def field_label_error(self, label: str) -> str:
        return _field_label_not_supported(label)

    def blocks_deletion(self, obj: Obj) -> bool:
        return bool(_dig(obj, "spec", "finalizers"))

    def prepare_for_delete(self, obj: Obj) -> None:
        status = sub_dict(obj, "status")
        status["phase"] = "Terminating"
        obj["status"] = status


class NodeStrategy(RulesStrategy):
    """Nodes are created with their status (the kubelet registers so); updates keep it."""

    has_status_subresource = True
    extra_field_labels = ("spec.unschedulable",)

    def prepare_for_create(self, obj: Obj) -> None:
        """``nodeStrategy.PrepareForCreate`` keeps the status the kubelet sends."""

    def selectable_fields(self, obj: Obj) -> dict[str, str]:
        out = super().selectable_fields(obj)
        out["spec.unschedulable"] = _text(bool(_dig(obj, "spec", "unschedulable")))
        return out

    def field_label_error(self, label: str) -> str:
        return _field_label_not_supported(label)


def _qos_class(pod: Obj) -> str:
    """``qos.GetPodQOS`` for cpu/memory requests and limits (simplified to whole containers)."""
    containers = list(_dig(pod, "spec", "containers") or []) + list(
        _dig(pod, "spec", "initContainers") or []
    )
    any_set = False
    guaranteed = True
    for c in containers:
        res = (c or {}).get("resources") or {}
        requests = res.get("requests") or {}
        limits = res.get("limits") or {}
        if requests or limits:
            any_set = True
        for name in ("cpu", "memory"):
            if name not in limits or requests.get(name, limits[name]) != limits[name]:
                guaranteed = False
    if not any_set:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


class PodStrategy(RulesStrategy):
    """Pods start Pending; DELETE answers with the pod (upstream ``ReturnDeletedObject``)."""

    has_status_subresource = True
    return_deleted_object = True
    graceful_delete = True
    extra_field_labels = (
        "spec.nodeName",
        "spec.restartPolicy",
        "spec.schedulerName",
        "spec.serviceAccountName",
        "spec.hostNetwork",
        "status.phase",
        "status.podIP",
        "status.nominatedNodeName",
    )

    def prepare_for_create(self, obj: Obj) -> None:
        super().prepare_for_create(obj)
        obj["status"] = {"phase": "Pending", "qosClass": _qos_class(obj)}
        if _dig(obj, "spec", "schedulingGates"):
            # applySchedulingGatedCondition
            obj["status"]["conditions"] = [{
                "type": "PodScheduled", "status": "False", "lastProbeTime": None,
                "lastTransitionTime": None, "reason": "SchedulingGated",
                "message": "Scheduling is blocked due to non-empty scheduling gates",
            }]

    def prepare_for_status_update(self, new: Obj, old: Obj) -> None:
        # podStatusStrategy keeps spec and ownerReferences; labels/annotations may change.
        keep_all_but_status(new, old)
        meta = new.setdefault("metadata", {})
        old_meta = old.get("metadata") or {}
        for key in ("ownerReferences", "deletionTimestamp", "deletionGracePeriodSeconds"):
            if key in old_meta:
                meta[key] = copy.deepcopy(old_meta[key])
            else:
                meta.pop(key, None)

    def grace_period(self, obj: Obj, requested: int | None) -> int:
        """``podStrategy.CheckGracefulDelete``: unscheduled or finished pods go at once."""
        if not _dig(obj, "spec", "nodeName"):
            return 0
        if _dig(obj, "status", "phase") in ("Failed", "Succeeded"):
            return 0
        if requested is not None:
            return max(requested, 0)
        spec_grace = _dig(obj, "spec", "terminationGracePeriodSeconds")
        return int(spec_grace) if isinstance(spec_grace, int) else 30

    def selectable_fields(self, obj: Obj) -> dict[str, str]:
        out = super().selectable_fields(obj)
        out["spec.nodeName"] = _text(_dig(obj, "spec", "nodeName"))
        out["spec.restartPolicy"] = _text(_dig(obj, "spec", "restartPolicy"))
        out["spec.schedulerName"] = _text(_dig(obj, "spec", "schedulerName"))
        out["spec.serviceAccountName"] = _text(_dig(obj, "spec", "serviceAccountName"))
        out["spec.hostNetwork"] = _text(bool(_dig(obj, "spec", "hostNetwork")))
        out["status.phase"] = _text(_dig(obj, "status", "phase"))
        out["status.podIP"] = _text(_dig(obj, "status", "podIP"))
        out["status.nominatedNodeName"] = _text(_dig(obj, "status", "nominatedNodeName"))
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
    if _dig(pod, "spec", "nodeName"):
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


class EventStrategy(RulesStrategy):
    allow_create_on_update = True
    extra_field_labels = (
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


class ServiceStrategy(RulesStrategy):
    """Services are served read-only (get, list, watch); the API server writes the
    ``kubernetes`` Service itself at start."""


class LeaseStrategy(RulesStrategy):
    """Leases have no status and no registry rules beyond validation."""

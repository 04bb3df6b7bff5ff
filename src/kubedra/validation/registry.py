"""Which defaulter and validators apply to each kind: one table, looked up by group and kind.

Every entry takes the feature gates, so callers need not know which kinds care about them
(only Jobs do). Functions work on typed objects and mutate nothing but in ``default``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubedra.api.features import FeatureGates
from kubedra.validation import corekinds, job, pod, resource
from kubedra.validation.defaults_resource import (
    default_resource_claim,
    default_resource_claim_template,
)
from kubedra.validation.field import ErrorList
from kubedra.validation.pod_template import default_pod_spec

Defaulter = Callable[[Any, FeatureGates], None]
Validator = Callable[[Any, FeatureGates], ErrorList]
UpdateValidator = Callable[[Any, Any, FeatureGates], ErrorList]


@dataclass(frozen=True, slots=True)
class Rules:
    """Defaulting and validation of one kind (``status_update`` only for kinds with status)."""

    validate: Validator
    validate_update: UpdateValidator
    default: Defaulter | None = None
    validate_status_update: UpdateValidator | None = None


def _no_gates(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Adapt a function that takes no gates to the table's signature."""

    def call(*args: Any) -> Any:
        return fn(*args[:-1])

    call.__name__ = fn.__name__
    call.__doc__ = fn.__doc__
    return call


def _meta_status_update(new: Any, old: Any, gates: FeatureGates) -> ErrorList:
    return corekinds.validate_meta_update(new.metadata, old.metadata)


def _default_pod(obj: Any, gates: FeatureGates) -> None:
    default_pod_spec(obj.spec)


RULES: dict[tuple[str, str], Rules] = {
    ("", "Namespace"): Rules(
        _no_gates(corekinds.validate_namespace),
        _no_gates(corekinds.validate_namespace_update),
        _no_gates(corekinds.default_namespace),
        _meta_status_update,
    ),
    ("", "Node"): Rules(
        _no_gates(corekinds.validate_node),
        _no_gates(corekinds.validate_node_update),
        None,
        _meta_status_update,
    ),
    ("", "Pod"): Rules(
        _no_gates(pod.validate_pod),
        _no_gates(pod.validate_pod_update),
        _default_pod,
        _no_gates(pod.validate_pod_status_update),
    ),
    ("", "Event"): Rules(
        _no_gates(corekinds.validate_event), _no_gates(corekinds.validate_event_update)
    ),
    ("", "Service"): Rules(
        _no_gates(corekinds.validate_service), _no_gates(corekinds.validate_service_update)
    ),
    ("coordination.k8s.io", "Lease"): Rules(
        _no_gates(corekinds.validate_lease), _no_gates(corekinds.validate_lease_update)
    ),
    ("batch", "Job"): Rules(
        job.validate_job, job.validate_job_update, job.default_job, job.validate_job_status_update
    ),
    ("resource.k8s.io", "ResourceClass"): Rules(
        _no_gates(resource.validate_resource_class),
        _no_gates(resource.validate_resource_class_update),
    ),
    ("resource.k8s.io", "ResourceClassParameters"): Rules(
        _no_gates(resource.validate_resource_class_parameters),
        _no_gates(resource.validate_resource_class_parameters_update),
    ),
    ("resource.k8s.io", "ResourceClaimParameters"): Rules(
        _no_gates(resource.validate_resource_claim_parameters),
        _no_gates(resource.validate_resource_claim_parameters_update),
    ),
    ("resource.k8s.io", "ResourceSlice"): Rules(
        _no_gates(resource.validate_resource_slice),
        _no_gates(resource.validate_resource_slice_update),
    ),
    ("resource.k8s.io", "ResourceClaim"): Rules(
        _no_gates(resource.validate_resource_claim),
        _no_gates(resource.validate_resource_claim_update),
        _no_gates(default_resource_claim),
        _no_gates(resource.validate_resource_claim_status_update),
    ),
    ("resource.k8s.io", "ResourceClaimTemplate"): Rules(
        _no_gates(resource.validate_resource_claim_template),
        _no_gates(resource.validate_resource_claim_template_update),
        _no_gates(default_resource_claim_template),
    ),
    ("resource.k8s.io", "PodSchedulingContext"): Rules(
        _no_gates(resource.validate_pod_scheduling_context),
        _no_gates(resource.validate_pod_scheduling_context_update),
        None,
        _no_gates(resource.validate_pod_scheduling_context_status_update),
    ),
}


def rules_for(group: str, kind: str) -> Rules | None:
    return RULES.get((group, kind))

"""Validation of the resource.k8s.io/v1 kinds as Kubernetes 1.34 does it
(``pkg/apis/resource/validation/validation.go``; spec dra-v1 §4): same checks, order, paths
and texts, with apimachinery v0.34's field-error rendering.

The validators take the hub (v1) models of :mod:`kubedra.api.resource.v1`, whatever version
the client sent, so paths are v1 paths. Per kind: ``validate_<kind>(obj)`` for create,
``validate_<kind>_update(obj, old)``, and ``validate_resource_claim_status_update`` for the
status subresource. ``consumable_capacity`` is the DRAConsumableCapacity gate, the one gate
the validators read themselves (the CEL ``device`` type and the empty-constraint text); the
registry strategy drops the fields of disabled gates before validating.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

from kubedra.validation.devices import claim, deviceclass
from kubedra.validation.devices import slice as slice_spec
from kubedra.validation.field import Apimachinery, ErrorList, Path, apimachinery
from kubedra.validation.meta import (
    validate_immutable_field,
    validate_object_meta,
    validate_object_meta_update,
    validate_template_object_meta,
)
from kubedra.validation.names import name_is_dns_subdomain

__all__ = [
    "validate_device_class",
    "validate_device_class_update",
    "validate_resource_claim",
    "validate_resource_claim_status_update",
    "validate_resource_claim_template",
    "validate_resource_claim_template_update",
    "validate_resource_claim_update",
    "validate_resource_slice",
    "validate_resource_slice_update",
]

P = ParamSpec("P")
R = TypeVar("R")
METADATA = Path("metadata")
SPEC = Path("spec")


def _v034(validator: Callable[P, R]) -> Callable[P, R]:
    """Run ``validator`` with apimachinery v0.34's field errors."""

    @functools.wraps(validator)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        with apimachinery(Apimachinery.V0_34):
            return validator(*args, **kwargs)

    return run


def _meta(obj: Any, namespaced: bool) -> ErrorList:
    return validate_object_meta(obj.metadata, namespaced, name_is_dns_subdomain, METADATA)


# --- ResourceSlice ---------------------------------------------------------------------------


@_v034
def validate_resource_slice(obj: Any) -> ErrorList:
    return _meta(obj, False) + slice_spec.validate_spec(obj.spec, None, SPEC)


@_v034
def validate_resource_slice_update(obj: Any, old: Any) -> ErrorList:
    errs = validate_object_meta_update(obj.metadata, old.metadata, METADATA)
    return errs + slice_spec.validate_spec(obj.spec, old.spec, SPEC)


# --- DeviceClass -----------------------------------------------------------------------------


@_v034
def validate_device_class(obj: Any, *, consumable_capacity: bool = False) -> ErrorList:
    return _meta(obj, False) + deviceclass.validate_spec(obj.spec, None, SPEC,
                                                         consumable_capacity)


@_v034
def validate_device_class_update(obj: Any, old: Any, *, consumable_capacity: bool = False
                                 ) -> ErrorList:
    """Selectors (config) unchanged from ``old`` count as stored: the StoredExpressions env
    (no 10 KiB parameters limit)."""
    errs = validate_object_meta_update(obj.metadata, old.metadata, METADATA)
    return errs + deviceclass.validate_spec(obj.spec, old.spec, SPEC, consumable_capacity)


# --- ResourceClaim ---------------------------------------------------------------------------


@_v034
def validate_resource_claim(obj: Any, *, consumable_capacity: bool = False) -> ErrorList:
    return _meta(obj, True) + claim.validate_claim_spec(obj.spec, SPEC, False,
                                                         consumable_capacity)


@_v034
def validate_resource_claim_update(obj: Any, old: Any, *, consumable_capacity: bool = False
                                   ) -> ErrorList:
    errs = validate_object_meta_update(obj.metadata, old.metadata, METADATA)
    return errs + claim.validate_claim_spec_update(obj.spec, old.spec, SPEC, consumable_capacity)


@_v034
def validate_resource_claim_status_update(obj: Any, old: Any) -> ErrorList:
    errs = validate_object_meta_update(obj.metadata, old.metadata, METADATA)
    names = claim.request_names(obj.spec.devices)
    deleted = obj.metadata.deletion_timestamp is not None
    return errs + claim.validate_status_update(obj.status, old.status, deleted, names,
                                               Path("status"))


# --- ResourceClaimTemplate -------------------------------------------------------------------


def _template_spec(spec: Any, stored: bool, consumable_capacity: bool) -> ErrorList:
    errs = validate_template_object_meta(spec.metadata, SPEC.child("metadata"))
    return errs + claim.validate_claim_spec(spec.spec, SPEC.child("spec"), stored,
                                            consumable_capacity)


@_v034
def validate_resource_claim_template(obj: Any, *, consumable_capacity: bool = False
                                     ) -> ErrorList:
    return _meta(obj, True) + _template_spec(obj.spec, False, consumable_capacity)


@_v034
def validate_resource_claim_template_update(obj: Any, old: Any, *,
                                            consumable_capacity: bool = False) -> ErrorList:
    errs = validate_object_meta_update(obj.metadata, old.metadata, METADATA)
    errs += validate_immutable_field(obj.spec, old.spec, SPEC)
    return errs + _template_spec(obj.spec, True, consumable_capacity)

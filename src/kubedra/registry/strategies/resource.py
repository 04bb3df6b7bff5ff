"""Registry strategies of resource.k8s.io/v1alpha2 (k8s v1.30 ``pkg/registry/resource/*``).

What upstream does, per kind, on top of the generic store (:class:`.base.Strategy`):

- every kind: DELETE returns the deleted object; no generation tracking (a client-supplied
  generation is kept on create, the stored one on update); no create-on-update;
- ResourceClaim and PodSchedulingContext have a ``status`` subresource: main writes keep the
  stored status, status writes keep the stored spec and most metadata;
- claims and claim templates get ``allocationMode: WaitForFirstConsumer`` when it is empty;
- validation combines the validators as upstream strategies do, so a claim, class, template or
  scheduling-context update reports create-validation errors twice (as the API does);
- ResourceSlices are selectable by ``nodeName`` and ``driverName``.

Pure: no I/O; the write hooks get typed objects (:mod:`.base`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from kubedra.api.base import Obj
from kubedra.api.meta import TypedObject
from kubedra.api.resource import v1alpha2 as r
from kubedra.registry.strategies.base import Strategy
from kubedra.validation import resource as v
from kubedra.validation.defaults_resource import (
    default_resource_claim,
    default_resource_claim_template,
)
from kubedra.validation.field import FieldError

T = TypeVar("T", bound=TypedObject)
Errors = list[FieldError]


class ResourceStrategy(Strategy[T], Generic[T]):
    """A resource.k8s.io kind: typed validators plus the flags above."""

    return_deleted_object = True

    def __init__(
        self,
        create: Callable[[T], Errors],
        update: Callable[[T, T], Errors],
        *,
        revalidate_on_update: bool,
        status_update: Callable[[T, T], Errors] | None = None,
        default: Callable[[T], None] | None = None,
        compiles_cel: bool = False,
    ) -> None:
        self.compiles_cel = compiles_cel
        self._create = create
        self._update = update
        self._revalidate = revalidate_on_update
        self._status_update = status_update
        self._default = default
        self.has_status_subresource = status_update is not None

    def default(self, obj: T) -> None:
        if self._default is not None:
            self._default(obj)

    def validate(self, obj: T) -> list[FieldError]:
        return self._create(obj)

    def validate_update(self, new: T, old: T) -> list[FieldError]:
        errors = self._create(new) if self._revalidate else []
        return errors + self._update(new, old)

    def validate_status_update(self, new: T, old: T) -> list[FieldError]:
        if self._status_update is None:
            return []
        return self._status_update(new, old)


class ResourceSliceStrategy(ResourceStrategy[r.ResourceSlice]):
    # Upstream's conversion function for slices knows no metadata.namespace.
    generic_field_labels: tuple[str, ...] = ("metadata.name",)
    extra_field_labels: tuple[str, ...] = ("nodeName", "driverName")

    def __init__(self) -> None:
        super().__init__(
            v.validate_resource_slice, v.validate_resource_slice_update,
            revalidate_on_update=False,
        )

    def selectable_fields(self, obj: Obj) -> dict[str, str]:
        meta = obj.get("metadata") or {}
        return {
            "metadata.name": str(meta.get("name") or ""),
            "nodeName": str(obj.get("nodeName") or ""),
            "driverName": str(obj.get("driverName") or ""),
        }

    def field_label_error(self, label: str) -> str:
        return f"field label not supported for {r.API_VERSION}, Kind=ResourceSlice: {label}"


def resource_class() -> ResourceStrategy[r.ResourceClass]:
    return ResourceStrategy(v.validate_resource_class, v.validate_resource_class_update,
                            revalidate_on_update=True)


def resource_claim() -> ResourceStrategy[r.ResourceClaim]:
    return ResourceStrategy(
        v.validate_resource_claim, v.validate_resource_claim_update,
        revalidate_on_update=True, status_update=v.validate_resource_claim_status_update,
        default=default_resource_claim,
    )


def resource_claim_template() -> ResourceStrategy[r.ResourceClaimTemplate]:
    return ResourceStrategy(
        v.validate_resource_claim_template, v.validate_resource_claim_template_update,
        revalidate_on_update=True, default=default_resource_claim_template,
    )


def pod_scheduling_context() -> ResourceStrategy[r.PodSchedulingContext]:
    return ResourceStrategy(
        v.validate_pod_scheduling_context, v.validate_pod_scheduling_context_update,
        revalidate_on_update=True,
        status_update=v.validate_pod_scheduling_context_status_update,
    )


def resource_claim_parameters() -> ResourceStrategy[r.ResourceClaimParameters]:
    return ResourceStrategy(
        v.validate_resource_claim_parameters, v.validate_resource_claim_parameters_update,
        revalidate_on_update=False, compiles_cel=True,
    )


def resource_class_parameters() -> ResourceStrategy[r.ResourceClassParameters]:
    return ResourceStrategy(
        v.validate_resource_class_parameters, v.validate_resource_class_parameters_update,
        revalidate_on_update=False, compiles_cel=True,
    )

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

Pure: no I/O; objects are the request's JSON dicts, decoded to typed models for validation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Generic, TypeVar

from kubedra.api import codec
from kubedra.api import resource as r
from kubedra.api.features import FeatureGates
from kubedra.apiserver.strategies.base import Obj, Strategy
from kubedra.validation import resource as v
from kubedra.validation.field import FieldError

T = TypeVar("T")
Errors = list[FieldError]


class ResourceStrategy(Strategy, Generic[T]):
    """A resource.k8s.io kind: typed validators plus the flags above."""

    return_deleted_object = True

    def __init__(
        self,
        model: type[T],
        create: Callable[[T], Errors],
        update: Callable[[T, T], Errors],
        *,
        revalidate_on_update: bool,
        status_update: Callable[[T, T], Errors] | None = None,
    ) -> None:
        self.model = model
        self._create = create
        self._update = update
        self._revalidate = revalidate_on_update
        self._status_update = status_update
        self.has_status_subresource = status_update is not None

    def _typed(self, obj: Obj) -> T:
        return codec.decode(obj, self.model)

    def validate(self, obj: Obj) -> list[FieldError]:
        return self._create(self._typed(obj))

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        typed_new, typed_old = self._typed(new), self._typed(old)
        errors = self._create(typed_new) if self._revalidate else []
        return errors + self._update(typed_new, typed_old)

    def validate_status_update(self, new: Obj, old: Obj) -> list[FieldError]:
        if self._status_update is None:
            return []
        return self._status_update(self._typed(new), self._typed(old))


def _default_allocation_mode(spec: Any) -> None:
    """``SetDefaults_ResourceClaimSpec`` on a raw spec (see validation.defaults_resource)."""
    if isinstance(spec, dict) and not spec.get("allocationMode"):
        spec["allocationMode"] = r.ALLOCATION_MODE_WAIT_FOR_FIRST_CONSUMER


class ResourceClaimStrategy(ResourceStrategy[r.ResourceClaim]):
    def __init__(self) -> None:
        super().__init__(
            r.ResourceClaim, v.validate_resource_claim, v.validate_resource_claim_update,
            revalidate_on_update=True, status_update=v.validate_resource_claim_status_update,
        )

    def default(self, obj: Obj) -> None:
        _default_allocation_mode(obj.get("spec"))


class ResourceClaimTemplateStrategy(ResourceStrategy[r.ResourceClaimTemplate]):
    def __init__(self) -> None:
        super().__init__(
            r.ResourceClaimTemplate, v.validate_resource_claim_template,
            v.validate_resource_claim_template_update, revalidate_on_update=True,
        )

    def default(self, obj: Obj) -> None:
        spec = obj.get("spec")
        if isinstance(spec, dict):
            _default_allocation_mode(spec.get("spec"))


class ResourceSliceStrategy(ResourceStrategy[r.ResourceSlice]):
    # Upstream's conversion function for slices knows no metadata.namespace.
    generic_field_labels = ("metadata.name",)
    extra_field_labels = ("nodeName", "driverName")

    def __init__(self) -> None:
        super().__init__(
            r.ResourceSlice, v.validate_resource_slice, v.validate_resource_slice_update,
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


def strategies(gates: FeatureGates) -> Mapping[str, Strategy]:
    """The strategy of every resource.k8s.io kind, by Kind (the registry's entry point)."""
    del gates  # structured parameters have no gate of their own in 1.30
    return {
        "ResourceClass": ResourceStrategy(
            r.ResourceClass, v.validate_resource_class, v.validate_resource_class_update,
            revalidate_on_update=True,
        ),
        "ResourceClaim": ResourceClaimStrategy(),
        "ResourceClaimTemplate": ResourceClaimTemplateStrategy(),
        "PodSchedulingContext": ResourceStrategy(
            r.PodSchedulingContext, v.validate_pod_scheduling_context,
            v.validate_pod_scheduling_context_update, revalidate_on_update=True,
            status_update=v.validate_pod_scheduling_context_status_update,
        ),
        "ResourceSlice": ResourceSliceStrategy(),
        "ResourceClaimParameters": ResourceStrategy(
            r.ResourceClaimParameters, v.validate_resource_claim_parameters,
            v.validate_resource_claim_parameters_update, revalidate_on_update=False,
        ),
        "ResourceClassParameters": ResourceStrategy(
            r.ResourceClassParameters, v.validate_resource_class_parameters,
            v.validate_resource_class_parameters_update, revalidate_on_update=False,
        ),
    }

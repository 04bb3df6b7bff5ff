"""Conversion between the served versions of the devices model and its one stored form, the
v1 classes (the hub), as upstream's ``pkg/apis/resource/v1beta1/conversion.go`` does it.

Each served version has a :class:`Conversion`: ``to_hub`` (a decoded request body of that
version to the hub), ``from_hub`` (a hub object to that version's model) and ``field_path``
(a field path on the hub back to the same field in that version, so a field error names what
the client sent). v1 and v1beta2 share the hub classes: their conversion is the identity.

v1beta1 ↔ v1 (spec §6):

- a v1beta1 request becomes ``exactly`` as soon as one of its exact-request fields is set
  (``deviceClassName``, ``selectors``, ``allocationMode``, ``count``, ``adminAccess``,
  ``tolerations``, ``capacity``); ``firstAvailable`` is copied, so both may end up set (which
  validation rejects); v1's ``exactly`` is flattened back into the request;
- a device's ``basic`` fields move onto the device (no ``basic``: only the name); back,
  every device gets a ``basic``, possibly empty;
- a slice's ``nodeName: ""`` and ``allNodes: false`` are unset in v1; unset ones come back as
  ``""`` and ``false``.

Pure functions over models: the result shares unchanged parts (metadata, status, lists of
shared types) with the input, which callers must not keep using.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import msgspec

from kubedra.api.resource import v1, v1beta1

# The fields v1beta1 nests under a device's ``basic`` (all of v1's device but its name).
_BASIC_FIELDS: Final = tuple(f for f in v1.Device.__struct_fields__ if f != "name")
# The fields of v1's ``exactly``, which v1beta1 has on the request.
_EXACT_FIELDS: Final = v1.ExactDeviceRequest.__struct_fields__


@dataclass(frozen=True, slots=True)
class Conversion:
    """How one served version reaches the hub and back."""

    to_hub: Callable[[Any], Any]
    from_hub: Callable[[Any], Any]
    field_path: Callable[[str], str]


def _same(value: Any) -> Any:
    return value


IDENTITY: Final = Conversion(_same, _same, _same)


# --- v1beta1 -> v1 ----------------------------------------------------------------------------


def _request_to_hub(req: v1beta1.DeviceRequest) -> v1.DeviceRequest:
    exact = (req.device_class_name != "" or req.selectors is not None
             or req.allocation_mode != "" or req.count != 0 or req.admin_access is not None
             or req.tolerations is not None or req.capacity is not None)
    exactly = v1.ExactDeviceRequest(**{f: getattr(req, f) for f in _EXACT_FIELDS}) \
        if exact else None
    return v1.DeviceRequest(name=req.name, exactly=exactly, first_available=req.first_available)


def _claim_spec_to_hub(spec: v1beta1.ResourceClaimSpec) -> v1.ResourceClaimSpec:
    d = spec.devices
    return v1.ResourceClaimSpec(devices=v1.DeviceClaim(
        requests=[_request_to_hub(r) for r in d.requests], constraints=d.constraints,
        config=d.config))


def _device_to_hub(dev: v1beta1.Device) -> v1.Device:
    if dev.basic is None:
        return v1.Device(name=dev.name)
    return v1.Device(name=dev.name, **{f: getattr(dev.basic, f) for f in _BASIC_FIELDS})


def _slice_spec_to_hub(spec: v1beta1.ResourceSliceSpec) -> v1.ResourceSliceSpec:
    return v1.ResourceSliceSpec(
        driver=spec.driver, pool=spec.pool, node_name=spec.node_name or None,
        node_selector=spec.node_selector, all_nodes=True if spec.all_nodes else None,
        devices=[_device_to_hub(d) for d in spec.devices],
        per_device_node_selection=spec.per_device_node_selection,
        shared_counters=spec.shared_counters)


# --- v1 -> v1beta1 ----------------------------------------------------------------------------


def _request_from_hub(req: v1.DeviceRequest) -> v1beta1.DeviceRequest:
    exact = {f: getattr(req.exactly, f) for f in _EXACT_FIELDS} if req.exactly else {}
    return v1beta1.DeviceRequest(name=req.name, first_available=req.first_available, **exact)


def _claim_spec_from_hub(spec: v1.ResourceClaimSpec) -> v1beta1.ResourceClaimSpec:
    d = spec.devices
    return v1beta1.ResourceClaimSpec(devices=v1beta1.DeviceClaim(
        requests=[_request_from_hub(r) for r in d.requests], constraints=d.constraints,
        config=d.config))


def _device_from_hub(dev: v1.Device) -> v1beta1.Device:
    return v1beta1.Device(name=dev.name, basic=v1beta1.BasicDevice(
        **{f: getattr(dev, f) for f in _BASIC_FIELDS}))


def _slice_spec_from_hub(spec: v1.ResourceSliceSpec) -> v1beta1.ResourceSliceSpec:
    return v1beta1.ResourceSliceSpec(
        driver=spec.driver, pool=spec.pool, node_name=spec.node_name or "",
        node_selector=spec.node_selector, all_nodes=bool(spec.all_nodes),
        devices=[_device_from_hub(d) for d in spec.devices],
        per_device_node_selection=spec.per_device_node_selection,
        shared_counters=spec.shared_counters)


# --- whole objects ----------------------------------------------------------------------------


def _api_version(obj: Any, version: str) -> str:
    """The converted object's apiVersion: the target's, unless the input left it unset."""
    return f"{v1.GROUP}/{version}" if getattr(obj, "api_version", "") else ""


def v1beta1_to_hub(obj: Any) -> Any:
    """A v1beta1 object (or list) as the hub's v1 object; a DeviceClass is the same class."""
    av = _api_version(obj, v1.VERSION)
    if isinstance(obj, v1beta1.ResourceClaim):
        return v1.ResourceClaim(api_version=av, kind=obj.kind, metadata=obj.metadata,
                                spec=_claim_spec_to_hub(obj.spec), status=obj.status)
    if isinstance(obj, v1beta1.ResourceClaimTemplate):
        spec = v1.ResourceClaimTemplateSpec(metadata=obj.spec.metadata,
                                            spec=_claim_spec_to_hub(obj.spec.spec))
        return v1.ResourceClaimTemplate(api_version=av, kind=obj.kind, metadata=obj.metadata,
                                        spec=spec)
    if isinstance(obj, v1beta1.ResourceSlice):
        return v1.ResourceSlice(api_version=av, kind=obj.kind, metadata=obj.metadata,
                                spec=_slice_spec_to_hub(obj.spec))
    return _convert_other(obj, av, _LISTS_TO_HUB, v1beta1_to_hub)


def v1beta1_from_hub(obj: Any) -> Any:
    """A hub (v1) object (or list) as v1beta1; a DeviceClass is the same class."""
    av = _api_version(obj, v1beta1.VERSION)
    if isinstance(obj, v1.ResourceClaim):
        return v1beta1.ResourceClaim(api_version=av, kind=obj.kind, metadata=obj.metadata,
                                     spec=_claim_spec_from_hub(obj.spec), status=obj.status)
    if isinstance(obj, v1.ResourceClaimTemplate):
        spec = v1beta1.ResourceClaimTemplateSpec(metadata=obj.spec.metadata,
                                                 spec=_claim_spec_from_hub(obj.spec.spec))
        return v1beta1.ResourceClaimTemplate(api_version=av, kind=obj.kind,
                                             metadata=obj.metadata, spec=spec)
    if isinstance(obj, v1.ResourceSlice):
        return v1beta1.ResourceSlice(api_version=av, kind=obj.kind, metadata=obj.metadata,
                                     spec=_slice_spec_from_hub(obj.spec))
    return _convert_other(obj, av, _LISTS_FROM_HUB, v1beta1_from_hub)


_LISTS_TO_HUB: Final[dict[type, type]] = {
    v1beta1.ResourceClaimList: v1.ResourceClaimList,
    v1beta1.ResourceClaimTemplateList: v1.ResourceClaimTemplateList,
    v1beta1.ResourceSliceList: v1.ResourceSliceList,
    v1.DeviceClassList: v1.DeviceClassList,
}
_LISTS_FROM_HUB: Final = {hub: beta for beta, hub in _LISTS_TO_HUB.items()}


def _convert_other(obj: Any, api_version: str, lists: dict[type, type],
                   item: Callable[[Any], Any]) -> Any:
    """DeviceClass (one class in every version) and the List kinds."""
    if isinstance(obj, v1.DeviceClass):
        return msgspec.structs.replace(obj, api_version=api_version)
    target = lists.get(type(obj))
    if target is None:
        raise TypeError(f"no {v1beta1.VERSION} conversion for {type(obj).__name__}")
    return target(api_version=api_version, kind=obj.kind, metadata=obj.metadata,
                  items=[item(i) for i in obj.items])


# --- field paths ------------------------------------------------------------------------------

# ``spec.devices.requests[i].exactly`` (claims) or ``spec.spec.devices...`` (templates).
_EXACTLY_RE: Final = re.compile(r"^((?:spec\.)?spec\.devices\.requests\[\d+\])\.exactly(?=[.[]|$)")
# A basic field of ``spec.devices[i]`` (slices); map keys in brackets may hold dots.
_BASIC_RE: Final = re.compile(
    r"^(spec\.devices\[\d+\])\.("
    + "|".join(n for n in v1.Device.__struct_encode_fields__ if n != "name") + r")(?=[.[]|$)")


def v1beta1_field_path(path: str) -> str:
    """A hub field path as the v1beta1 client wrote the field: ``exactly`` is not there, and a
    device's fields are under ``basic``. Other paths are the same in both versions."""
    path = _EXACTLY_RE.sub(r"\1", path, count=1)
    return _BASIC_RE.sub(r"\1.basic.\2", path, count=1)


V1BETA1: Final = Conversion(v1beta1_to_hub, v1beta1_from_hub, v1beta1_field_path)

#: The conversion of each served version of the devices model.
CONVERSIONS: Final[dict[str, Conversion]] = {
    v1.VERSION: IDENTITY,
    "v1beta2": IDENTITY,
    v1beta1.VERSION: V1BETA1,
}

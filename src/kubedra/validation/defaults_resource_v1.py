"""Defaulting of the devices model (resource.k8s.io v1, v1beta2, v1beta1; k8s v1.34
``pkg/apis/resource/<version>/defaults.go`` and the ``+default`` markers of types.go).

Upstream defaults an object in the version it was decoded from, before converting it to the
internal form, so each served version has its defaulter and runs on that version's model:

- an exact request and a ``firstAvailable`` subrequest: ``allocationMode`` "" → ``ExactCount``,
  then ``count`` 0 → 1 under ``ExactCount``; a v1beta1 request (flat) only when it names a
  ``deviceClassName`` (its ``firstAvailable`` form has none);
- every toleration (requests, subrequests, allocation results): ``operator`` "" → ``Equal``;
- a device taint without ``timeAdded``: now, in whole seconds.

v1beta2 is served with the v1 classes and uses :func:`default_v1`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any, Final

from kubedra.api.meta import format_time
from kubedra.api.resource import v1, v1beta1

_ExactLike = v1.ExactDeviceRequest | v1.DeviceSubRequest | v1beta1.DeviceRequest


def _request(req: _ExactLike) -> None:
    if not req.allocation_mode:
        req.allocation_mode = v1.ALLOCATION_MODE_EXACT_COUNT
    if req.allocation_mode == v1.ALLOCATION_MODE_EXACT_COUNT and req.count == 0:
        req.count = 1
    _tolerations(req.tolerations)


def _tolerations(tolerations: Iterable[v1.DeviceToleration] | None) -> None:
    for t in tolerations or ():
        if not t.operator:
            t.operator = v1.TOLERATION_OP_EQUAL


def _taints(taints: Iterable[v1.DeviceTaint] | None, now: str) -> None:
    for t in taints or ():
        if t.time_added is None:
            t.time_added = now


def _subrequests(subs: Iterable[v1.DeviceSubRequest] | None) -> None:
    for sub in subs or ():
        _request(sub)


def _status(status: v1.ResourceClaimStatus) -> None:
    if status.allocation is not None:
        for result in status.allocation.devices.results or ():
            _tolerations(result.tolerations)


def _claim_spec_v1(spec: v1.ResourceClaimSpec) -> None:
    for req in spec.devices.requests:
        if req.exactly is not None:
            _request(req.exactly)
        _subrequests(req.first_available)


def _claim_spec_v1beta1(spec: v1beta1.ResourceClaimSpec) -> None:
    for req in spec.devices.requests:
        if req.device_class_name:
            _request(req)
        else:
            _tolerations(req.tolerations)
        _subrequests(req.first_available)


def _now(now: float | None) -> str:
    return format_time(time.time() if now is None else now)


def default_v1(obj: Any, now: float | None = None) -> None:
    """Default a v1 (or v1beta2) object or list in place; ``now`` (epoch seconds, default the
    clock) stamps taints."""
    if isinstance(obj, v1.ResourceClaim):
        _claim_spec_v1(obj.spec)
        _status(obj.status)
    elif isinstance(obj, v1.ResourceClaimTemplate):
        _claim_spec_v1(obj.spec.spec)
    elif isinstance(obj, v1.ResourceSlice):
        stamp = _now(now)
        for dev in obj.spec.devices:
            _taints(dev.taints, stamp)
    elif isinstance(obj, v1.ResourceClaimList | v1.ResourceClaimTemplateList
                    | v1.ResourceSliceList):
        for item in obj.items:
            default_v1(item, now)


def default_v1beta1(obj: Any, now: float | None = None) -> None:
    """Default a v1beta1 object or list in place, before it is converted to the hub."""
    if isinstance(obj, v1beta1.ResourceClaim):
        _claim_spec_v1beta1(obj.spec)
        _status(obj.status)
    elif isinstance(obj, v1beta1.ResourceClaimTemplate):
        _claim_spec_v1beta1(obj.spec.spec)
    elif isinstance(obj, v1beta1.ResourceSlice):
        stamp = _now(now)
        for dev in obj.spec.devices:
            if dev.basic is not None:
                _taints(dev.basic.taints, stamp)
    elif isinstance(obj, v1beta1.ResourceClaimList | v1beta1.ResourceClaimTemplateList
                    | v1beta1.ResourceSliceList):
        for item in obj.items:
            default_v1beta1(item, now)


#: The defaulter of each served version of the devices model.
DEFAULTERS: Final[Mapping[str, Callable[[Any, float | None], None]]] = MappingProxyType({
    v1.VERSION: default_v1,
    "v1beta2": default_v1,
    v1beta1.VERSION: default_v1beta1,
})

"""The input of resource.k8s.io/v1 ``device`` selectors, converted once per device.

Upstream (DRA:cel/compile.go ``DeviceMatches``) rebuilds the ``device`` variable for every
evaluation; the allocator evaluates many selectors per device, so :func:`prepare_device` does
that work once: attributes grouped by domain (an unqualified name goes under the device's
driver), version values parsed strictly (blang ``semver.Parse``) into ``kubernetes.Semver``,
capacities as ``kubernetes.Quantity``. A device whose attributes cannot be converted keeps
upstream's error text, which every evaluation on it raises.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any, Final

from kubedra.api.resource.v1 import DeviceAttribute, DeviceCapacity
from kubedra.api.semver import SemverError
from kubedra.cel import _env, _k8s
from kubedra.cel._ast import size_bucket

# the declared maxima a device selector's worst case is estimated with (types.go): 32
# attributes/capacities per device, strings of at most 64 bytes
DEVICE_MAX_ENTRIES: Final = 32
DEVICE_MAX_STRING: Final = 64


class PreparedDevice:
    """One device as the ``device`` variable; keep it per device and pass it to
    ``Program.evaluate`` for each selector. ``error`` is set when the device cannot be
    evaluated at all (then ``activation`` is None and ``Program.evaluate`` raises it)."""

    __slots__ = ("activation", "cost_key", "error", "within_maxima")

    def __init__(self, data: dict[str, Any], error: str | None, cost_key: tuple[int, int]) -> None:
        self.error = error
        # what the static estimate of a program depends on for this device (see _program.py)
        self.cost_key = cost_key
        self.within_maxima = cost_key[0] <= DEVICE_MAX_ENTRIES and cost_key[1] <= DEVICE_MAX_STRING
        self.activation: Any = None
        if error is None:
            env, touch = _evaluation_env()
            self.activation = env.Activation(data)
            # cel-expr-python converts a variable's value on its first use (~3 us, ~2 us per
            # Quantity); pay that here, once per device, not in the first selector's evaluation
            touch.eval(self.activation)


def _attribute_value(attr: DeviceAttribute) -> Any:
    """The CEL value of one attribute (``getAttributeValue``); raises ValueError with the
    text after upstream's ``attribute <name>: ``."""
    if attr.int_ is not None:
        return attr.int_
    if attr.bool_ is not None:
        return attr.bool_
    if attr.string is not None:
        return attr.string
    if attr.version is not None:
        try:
            return _k8s.version_msg(attr.version)
        except SemverError as e:
            raise ValueError(f"parse semantic version: {e}") from None
    raise ValueError("unsupported attribute value")


def _split(name: str, driver: str) -> tuple[str, str]:
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (driver, name)


def prepare_device(
    driver: str,
    attributes: Mapping[str, DeviceAttribute] | None,
    capacity: Mapping[str, DeviceCapacity] | None,
    allow_multiple_allocations: bool | None = None,
) -> PreparedDevice:
    """The ``device`` variable of a v1 device (its driver, ``attributes``, ``capacity`` and
    ``allowMultipleAllocations`` as in the v1 model; names qualified or not)."""
    attrs: dict[str, dict[str, Any]] = {}
    error = None
    longest = 0
    for name, attr in (attributes or {}).items():
        try:
            value = _attribute_value(attr)
        except ValueError as e:
            error = error or f"attribute {name}: {e}"
            continue
        if value.__class__ is str:
            longest = max(longest, len(value))
        domain, ident = _split(name, driver)
        attrs.setdefault(domain, {})[ident] = value
    caps: dict[str, dict[str, Any]] = {}
    for name, cap in (capacity or {}).items():
        domain, ident = _split(name, driver)
        caps.setdefault(domain, {})[ident] = _k8s.quantity_msg(cap.value)
    largest = max((len(m) for m in (*attrs.values(), *caps.values())), default=0)
    largest = max(largest, len(attrs), len(caps))
    data = {"device": {
        "driver": driver,
        "allowMultipleAllocations": bool(allow_multiple_allocations),
        "attributes": attrs,
        "capacity": caps,
    }}
    return PreparedDevice(data, error, (size_bucket(largest), size_bucket(longest)))


_ENV: list[tuple[Any, Any]] = []
_ENV_LOCK: Final = threading.Lock()


def _evaluation_env() -> tuple[Any, Any]:
    """The evaluation env and an expression that reads ``device``."""
    if not _ENV:
        with _ENV_LOCK:
            if not _ENV:
                env = _env.build_device_evaluation()
                _ENV.append((env, env.compile("device.driver")))
    return _ENV[0]


def deserialize(serialized: bytes) -> Any:
    """A device program's checked AST, ready to run on :class:`PreparedDevice` data."""
    return _evaluation_env()[0].deserialize(serialized)

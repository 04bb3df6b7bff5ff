"""DeviceClass (``validateDeviceClassSpec`` of k8s 1.34): selectors and config, each treated
as stored when unchanged by an update, and the extended resource name."""

from __future__ import annotations

from typing import Any, Final

from kubedra.validation.devices._common import (
    each,
    validate_device_configuration,
    validate_selectors,
)
from kubedra.validation.equality import semantic_equal
from kubedra.validation.field import ErrorList, Path, invalid
from kubedra.validation.names import is_qualified_name

DEVICE_CONFIG_MAX_SIZE: Final = 32
_NATIVE_PREFIX: Final = "kubernetes.io/"
_REQUESTS_PREFIX: Final = "requests."


def is_extended_resource_name(name: str) -> bool:
    """core ``IsExtendedResourceName``: a domain-prefixed, non-native name that is still a
    qualified name once prefixed with ``requests.`` (as quota names it)."""
    if "/" not in name or _NATIVE_PREFIX in name or name.startswith(_REQUESTS_PREFIX):
        return False
    return not is_qualified_name(_REQUESTS_PREFIX + name)


def validate_spec(spec: Any, old: Any | None, path: Path, consumable_capacity: bool) -> ErrorList:
    stored = old is not None and semantic_equal(spec.selectors, old.selectors)
    errs = validate_selectors(spec.selectors, path.child("selectors"), stored, consumable_capacity)
    stored = old is not None and semantic_equal(spec.config, old.config)
    errs += each(spec.config, DEVICE_CONFIG_MAX_SIZE,
                 lambda c, p: validate_device_configuration(c, p, stored), path.child("config"))
    name = spec.extended_resource_name
    if name is not None and not is_extended_resource_name(name):
        errs.append(invalid(path.child("extendedResourceName"), name,
                            "must be a valid extended resource name"))
    return errs

"""Validation of the "named resources" structured model (k8s v1.30
``pkg/apis/resource/structured/namedresources/validation``): slice instances and attributes,
request/filter selectors, allocation results.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from kubedra import cel
from kubedra.api.resource.v1alpha2 import (
    NamedResourcesAllocationResult,
    NamedResourcesAttribute,
    NamedResourcesInstance,
    NamedResourcesResources,
)
from kubedra.validation.field import (
    ErrorList,
    Path,
    duplicate,
    internal_error,
    invalid,
    required,
)
from kubedra.validation.names import is_dns1123_subdomain

# semver.org 2.0.0, as upstream's anchored RE2 pattern (``\d`` is ASCII there, so [0-9] here).
_NUM = "(0|[1-9][0-9]*)"
_PRE_ID = "(0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*)"
SEMVER_RE = re.compile(
    rf"{_NUM}\.{_NUM}\.{_NUM}(-{_PRE_ID}(\.{_PRE_ID})*)?(\+[0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*)?"
)
SEMVER_MSG = "must be a string compatible with semver.org spec 2.0.0"

__all__ = [
    "validate_allocation_result",
    "validate_dns_subdomain",
    "validate_resources",
    "validate_selector",
]


def validate_dns_subdomain(value: str, path: Path) -> ErrorList:
    """``corevalidation.ValidateDNS1123Subdomain``: instance, attribute and result names."""
    return [invalid(path, value, msg) for msg in is_dns1123_subdomain(value)]


def validate_resources(resources: NamedResourcesResources, path: Path) -> ErrorList:
    return _validate_instances(resources.instances, path.child("instances"))


def _validate_list_name(name: str, seen: set[str], path: Path, i: int) -> ErrorList:
    """Entry ``i``'s name: a DNS subdomain, unique in its list (``seen`` collects the names).

    The path is built only when there is something to report: slices are large and hot."""
    msgs = is_dns1123_subdomain(name)
    repeated = name in seen
    seen.add(name)
    if not msgs and not repeated:
        return []
    p = path.index(i).child("name")
    errs = [invalid(p, name, msg) for msg in msgs]
    if repeated:
        errs.append(duplicate(p, name))
    return errs


def _validate_instances(instances: Sequence[NamedResourcesInstance], path: Path) -> ErrorList:
    errs: ErrorList = []
    seen: set[str] = set()
    for i, instance in enumerate(instances):
        errs += _validate_list_name(instance.name, seen, path, i)
        if instance.attributes:
            errs += _validate_attributes(instance.attributes, path.index(i).child("attributes"))
    return errs


# Value members as (JSON name, attribute), in byte-wise order of the JSON names (Go sorts them).
_VALUE_MEMBERS = (
    ("bool", "bool_"),
    ("int", "int_"),
    ("intSlice", "int_slice"),
    ("quantity", "quantity"),
    ("string", "string"),
    ("stringSlice", "string_slice"),
    ("version", "version"),
)


def _validate_attributes(attributes: Sequence[NamedResourcesAttribute], path: Path) -> ErrorList:
    errs: ErrorList = []
    seen: set[str] = set()
    for i, attr in enumerate(attributes):
        errs += _validate_list_name(attr.name, seen, path, i)
        if attr.version is not None and not SEMVER_RE.fullmatch(attr.version):
            errs.append(invalid(path.index(i).child("version"), attr.version, SEMVER_MSG))
        members = [json for json, field in _VALUE_MEMBERS if getattr(attr, field) is not None]
        if len(members) != 1:
            if members:
                errs.append(invalid(path.index(i), members,
                                    "exactly one field must be set, not several"))
            else:
                errs.append(required(path.index(i), "exactly one value must be set"))
    return errs


def validate_selector(selector: str, stored: bool, path: Path) -> ErrorList:
    """A request or filter selector: required, must compile to a bool CEL expression.

    ``stored`` picks the StoredExpressions environment (unchanged expressions on update).
    Compile failures, including our static cost and size limits, are Invalid; a failure of
    the environment itself would be InternalError, as upstream maps ``cel.Error`` types."""
    if not selector:
        return [required(path)]
    env = cel.EnvType.STORED_EXPRESSIONS if stored else cel.EnvType.NEW_EXPRESSIONS
    try:
        cel.compile_expression(selector, env)
    except cel.CompileError as err:
        if err.kind == "Invalid":
            return [invalid(path, selector, err.detail)]
        return [internal_error(path, err.detail)]
    return []


def validate_allocation_result(result: NamedResourcesAllocationResult, path: Path) -> ErrorList:
    return validate_dns_subdomain(result.name, path.child("name"))

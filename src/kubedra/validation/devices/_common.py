"""Building blocks shared by the resource.k8s.io/v1 validators (k8s 1.34
``pkg/apis/resource/validation/validation.go``): list/set/map walkers, the name rules, CEL
selectors, opaque configuration, taints and tolerations, request references.

Every function builds its errors in the current ``field.apimachinery`` release; the public
validators (package ``__init__``) select v0.34.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, Final, TypeVar

import msgspec

from kubedra import cel
from kubedra.api import codec
from kubedra.api.goformat import go_json_syntax_error
from kubedra.validation.field import (
    VALUE_OMITTED,
    ErrorList,
    Path,
    duplicate,
    forbidden,
    internal_error,
    invalid,
    not_supported,
    required,
    too_long,
    too_many,
)
from kubedra.validation.meta import validate_label_name
from kubedra.validation.names import (
    is_c_identifier,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_valid_label_value,
    name_is_dns_subdomain,
)

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)

DRIVER_NAME_MAX_LENGTH: Final = 63
DEVICE_MAX_DOMAIN_LENGTH: Final = 63
DEVICE_MAX_ID_LENGTH: Final = 32
POOL_NAME_MAX_LENGTH: Final = 253
# map keys in field paths are shortened to this (domain/id at their longest)
ATTRIBUTE_KEY_MAX_LENGTH: Final = DEVICE_MAX_DOMAIN_LENGTH + 1 + DEVICE_MAX_ID_LENGTH
CEL_SELECTOR_EXPRESSION_MAX_COST: Final = 1_000_000
CEL_SELECTOR_EXPRESSION_MAX_LENGTH: Final = cel.DEVICE_MAX_EXPRESSION_LENGTH
DEVICE_SELECTORS_MAX_SIZE: Final = 32
BINDING_CONDITIONS_MAX_SIZE: Final = 4
TAINT_EFFECTS: Final = ("NoExecute", "NoSchedule")
TOLERATION_OPERATORS: Final = ("Equal", "Exists")
BAD_REQUEST_REF: Final = (
    "must be the name of a request in the claim or the name of a request and a subrequest "
    "separated by '/'"
)

# --- walkers (validateSlice / validateSet / validateMap) -----------------------------------


def each(
    items: Sequence[T] | None, max_size: int, check: Callable[[T, Path], ErrorList], path: Path
) -> ErrorList:
    """``validateSlice``: every item, then ``TooMany`` past ``max_size`` (< 0: no limit)."""
    errs: ErrorList = []
    for i, item in enumerate(items or ()):
        errs += check(item, path.index(i))
    if max_size >= 0 and len(items or ()) > max_size:
        errs.append(too_many(path, len(items or ()), max_size))
    return errs


def each_unique(
    items: Sequence[T] | None,
    max_size: int,
    check: Callable[[T, Path], ErrorList],
    key: Callable[[T], tuple[K, str]],
    path: Path,
) -> ErrorList:
    """``validateSet``: as :func:`each`, then ``Duplicate`` at ``[i].<field>`` on a repeat."""
    errs = each(items, max_size, check, path)
    seen: set[K] = set()
    for i, item in enumerate(items or ()):
        k, child = key(item)
        p = path.index(i).child(child) if child else path.index(i)
        if k in seen:
            errs.append(duplicate(p, k))
        else:
            seen.add(k)
    return errs


def string_key(item: str) -> tuple[str, str]:
    return item, ""


def truncate_key(key: str, max_len: int) -> str:
    """``truncateIfTooLong``: a long map key is shortened in the middle with ``...``."""
    max_len = max(max_len, 16)
    if len(key) <= max_len:
        return key
    remaining = max_len - 3
    return key[: (remaining + 1) // 2] + "..." + key[len(key) - remaining // 2:]


def each_entry(
    entries: Mapping[str, T] | None,
    key_max_len: int,
    check_key: Callable[[str, Path], ErrorList],
    check_item: Callable[[T, Path], ErrorList],
    path: Path,
) -> ErrorList:
    """``validateMap`` without a size limit. Go visits keys in random order; we sort them."""
    errs: ErrorList = []
    for key in sorted(entries or {}):
        p = path.key(truncate_key(key, key_max_len))
        errs += check_key(key, p)
        errs += check_item((entries or {})[key], p)
    return errs


# --- names ---------------------------------------------------------------------------------


def _blen(value: str) -> int:
    return len(value.encode())


def validate_driver_name(name: str, path: Path) -> ErrorList:
    """``ValidateCSIDriverName``: Required, at most 63 bytes, a DNS subdomain once lower-cased
    (upper case passes; an empty name is Required and Invalid)."""
    errs: ErrorList = []
    if not name:
        errs.append(required(path))
    if _blen(name) > DRIVER_NAME_MAX_LENGTH:
        errs.append(too_long(path, name, DRIVER_NAME_MAX_LENGTH))
    errs += [invalid(path, name, msg) for msg in is_dns1123_subdomain(name.lower())]
    return errs


def validate_dns_label(name: str, path: Path) -> ErrorList:
    """Device, request, subrequest and counter names."""
    return [invalid(path, name, msg) for msg in is_dns1123_label(name)]


def validate_dns_subdomain(name: str, path: Path) -> ErrorList:
    return [invalid(path, name, msg) for msg in is_dns1123_subdomain(name)]


def validate_node_name(name: str, path: Path) -> ErrorList:
    return [invalid(path, name, msg) for msg in name_is_dns_subdomain(name, False)]


def validate_pool_name(name: str, path: Path) -> ErrorList:
    if not name:
        return [required(path)]
    errs: ErrorList = []
    if _blen(name) > POOL_NAME_MAX_LENGTH:
        errs.append(too_long(path, "", POOL_NAME_MAX_LENGTH))
    for part in name.split("/"):
        errs += validate_dns_subdomain(part, path)
    return errs


def validate_device_class_ref(name: str, path: Path) -> ErrorList:
    return [required(path)] if not name else validate_dns_subdomain(name, path)


def _validate_c_identifier(name: str, path: Path) -> ErrorList:
    errs: ErrorList = []
    if _blen(name) > DEVICE_MAX_ID_LENGTH:
        errs.append(too_long(path, "", DEVICE_MAX_ID_LENGTH))
    return errs + [invalid(path, name, msg) for msg in is_c_identifier(name)]


def validate_qualified_name(name: str, path: Path) -> ErrorList:
    """An attribute/capacity name: a C identifier, or ``<domain>/<C identifier>``."""
    if not name:
        return [required(path, "name required")]
    parts = name.split("/")
    if len(parts) == 1:
        return _validate_c_identifier(name, path)
    if len(parts) != 2:
        return []  # upstream checks only the one- and two-part forms
    domain, ident = parts
    errs: ErrorList = []
    if not domain:
        errs.append(required(path, "the domain must not be empty"))
    else:
        errs += validate_driver_name(domain, path)
    if not ident:
        errs.append(required(path, "the name must not be empty"))
    else:
        errs += _validate_c_identifier(ident, path)
    return errs


def validate_fully_qualified_name(name: str, path: Path) -> ErrorList:
    errs = validate_qualified_name(name, path)
    if name and "/" not in name:
        errs.append(invalid(path, name, "must include a domain"))
    return errs


# --- request references ----------------------------------------------------------------------

RequestNames = dict[str, frozenset[str] | None]


def has_request(names: RequestNames, ref: str) -> bool:
    """``requestNames.Has``: ``req`` or ``req/sub`` of the claim's requests."""
    segments = ref.split("/")
    if len(segments) > 2 or segments[0] not in names:
        return False
    if len(segments) == 1:
        return True
    subs = names[segments[0]]
    return subs is not None and segments[1] in subs


def validate_request_ref(ref: str, path: Path, names: RequestNames) -> ErrorList:
    """``validateRequestNameRef``: each segment a DNS label, and a known request."""
    segments = ref.split("/")
    if len(segments) > 2:
        return [invalid(path, ref, BAD_REQUEST_REF)]
    errs: ErrorList = []
    for segment in segments:
        errs += validate_dns_label(segment, path)
    if not has_request(names, ref):
        errs.append(invalid(path, ref, BAD_REQUEST_REF))
    return errs


def validate_request_refs(refs: Sequence[str] | None, path: Path, names: RequestNames) -> ErrorList:
    return each_unique(refs, 32, lambda r, p: validate_request_ref(r, p, names), string_key, path)


# --- CEL selectors -------------------------------------------------------------------------


def validate_cel_expression(
    expression: str, path: Path, stored: bool, consumable_capacity: bool
) -> ErrorList:
    """``validateCELSelector``: too long (not compiled), compile errors, then the cost."""
    if _blen(expression) > CEL_SELECTOR_EXPRESSION_MAX_LENGTH:
        return [too_long(path, "", CEL_SELECTOR_EXPRESSION_MAX_LENGTH)]
    env_type = cel.EnvType.STORED_EXPRESSIONS if stored else cel.EnvType.NEW_EXPRESSIONS
    try:
        program = cel.compile_expression(expression, cel.DeviceEnv(env_type, consumable_capacity))
    except cel.CompileError as e:
        if e.kind == "Internal":
            return [internal_error(path, e.detail)]
        return [invalid(path, expression, e.detail)]
    if program.max_cost > CEL_SELECTOR_EXPRESSION_MAX_COST:
        return [forbidden(path, "too complex, exceeds cost limit")]
    return []


def validate_selectors(
    selectors: Sequence[Any] | None, path: Path, stored: bool, consumable_capacity: bool
) -> ErrorList:
    """A list of ``DeviceSelector`` (``cel`` required)."""

    def check(selector: Any, p: Path) -> ErrorList:
        if selector.cel is None:
            return [required(p.child("cel"))]
        return validate_cel_expression(selector.cel.expression, p.child("cel", "expression"),
                                       stored, consumable_capacity)

    return each(selectors, DEVICE_SELECTORS_MAX_SIZE, check, path)


# --- opaque configuration --------------------------------------------------------------------


def raw_bytes(value: Any) -> bytes:
    """A RawExtension's bytes: as received (``msgspec.Raw``) or the JSON of a decoded value
    (``None`` is the empty extension)."""
    if value is None:
        return b""
    if isinstance(value, msgspec.Raw):
        return bytes(value)
    return codec.encode(value) if isinstance(value, msgspec.Struct) else msgspec.json.encode(value)


def validate_raw_extension(value: Any, path: Path, stored: bool, max_length: int) -> ErrorList:
    """``validateRawExtension``: present, at most ``max_length`` bytes unless stored, JSON,
    not ``null``, an object."""
    raw = raw_bytes(value)
    if not raw:
        return [required(path)]
    if not stored and len(raw) > max_length:
        return [too_long(path, "", max_length)]
    error = go_json_syntax_error(raw)
    if error is not None:
        return [invalid(path, VALUE_OMITTED, f"error parsing data as JSON: {error}")]
    value_text = raw.strip(b" \t\r\n")
    if value_text == b"null":
        return [required(path)]
    if not value_text.startswith(b"{"):
        return [invalid(path, VALUE_OMITTED, "must be a valid JSON object")]
    return []


OPAQUE_PARAMETERS_MAX_LENGTH: Final = 10_240


def validate_device_configuration(config: Any, path: Path, stored: bool) -> ErrorList:
    """``validateDeviceConfiguration``: the one member ``opaque`` (driver, parameters)."""
    opaque = config.opaque
    if opaque is None:
        return [required(path.child("opaque"))]
    p = path.child("opaque")
    errs = validate_driver_name(opaque.driver, p.child("driver"))
    return errs + validate_raw_extension(opaque.parameters, p.child("parameters"), stored,
                                         OPAQUE_PARAMETERS_MAX_LENGTH)


# --- taints, tolerations, binding conditions -------------------------------------------------


def validate_label_value(value: str, path: Path) -> ErrorList:
    return [invalid(path, value, msg) for msg in is_valid_label_value(value)]


def validate_taint(taint: Any, path: Path) -> ErrorList:
    errs = validate_label_name(taint.key, path.child("key"))
    if taint.value:
        errs += validate_label_value(taint.value, path.child("value"))
    if not taint.effect:
        errs.append(required(path.child("effect")))
    elif taint.effect not in TAINT_EFFECTS:
        errs.append(not_supported(path.child("effect"), taint.effect, TAINT_EFFECTS))
    return errs


def validate_toleration(toleration: Any, path: Path) -> ErrorList:
    errs: ErrorList = []
    if toleration.key:
        errs += validate_label_name(toleration.key, path.child("key"))
    operator = toleration.operator or ""
    if operator == "Exists":
        if toleration.value:
            errs.append(invalid(path.child("value"), toleration.value,
                                "must be empty for operator `Exists`"))
    elif operator == "Equal":
        errs += validate_label_value(toleration.value or "", path.child("value"))
    elif operator == "":
        errs.append(required(path.child("operator")))
    else:
        errs.append(not_supported(path.child("operator"), operator, TOLERATION_OPERATORS))
    if toleration.effect and toleration.effect not in TAINT_EFFECTS:
        errs.append(not_supported(path.child("effect"), toleration.effect, TAINT_EFFECTS))
    return errs


def validate_binding_conditions(
    conditions: Sequence[str] | None, failure_conditions: Sequence[str] | None, path: Path
) -> ErrorList:
    """``validateDeviceBindingParameters``: label names, at most 4 each, no repeats, no
    overlap, and each list only together with the other."""
    good, bad = list(conditions or ()), list(failure_conditions or ())
    cond_path, fail_path = path.child("bindingConditions"), path.child("bindingFailureConditions")
    errs = each(good, BINDING_CONDITIONS_MAX_SIZE, validate_label_name, cond_path)
    errs += each(bad, BINDING_CONDITIONS_MAX_SIZE, validate_label_name, fail_path)
    seen: set[str] = set()
    for i, c in enumerate(good):
        if c in seen:
            errs.append(duplicate(cond_path.index(i), c))
        seen.add(c)
    seen_bad: set[str] = set()
    for i, c in enumerate(bad):
        if c in seen_bad:
            errs.append(duplicate(fail_path.index(i), c))
        seen_bad.add(c)
        if c in seen:
            errs.append(invalid(fail_path.index(i), c,
                                "bindingFailureConditions must not overlap with bindingConditions"))
    if not good and bad:
        errs.append(invalid(cond_path, conditions,
                            "bindingConditions are required to use bindingFailureConditions"))
    if not bad and good:
        errs.append(invalid(fail_path, failure_conditions,
                            "bindingFailureConditions are required to use bindingConditions"))
    return errs

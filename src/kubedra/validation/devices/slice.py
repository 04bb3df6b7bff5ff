"""ResourceSlice (``validateResourceSliceSpec`` / ``validateDevice`` of k8s 1.34)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from kubedra.api.quantity import Quantity
from kubedra.validation.devices._common import (
    ATTRIBUTE_KEY_MAX_LENGTH,
    each,
    each_entry,
    each_unique,
    validate_binding_conditions,
    validate_dns_label,
    validate_driver_name,
    validate_node_name,
    validate_pool_name,
    validate_qualified_name,
    validate_taint,
)
from kubedra.validation.field import (
    ErrorList,
    Path,
    forbidden,
    invalid,
    required,
    too_long,
)
from kubedra.validation.meta import validate_immutable_field
from kubedra.validation.names import DNS1123_LABEL_MAX_LENGTH
from kubedra.validation.nodeselector import validate_node_selector

MAX_DEVICES: Final = 128
MAX_ATTRIBUTES_AND_CAPACITIES: Final = 32
MAX_SHARED_COUNTERS: Final = 32
MAX_COUNTERS_PER_DEVICE: Final = 32
MAX_DEVICE_COUNTERS_PER_SLICE: Final = 1024
MAX_TAINTS: Final = 4
ATTRIBUTE_VALUE_MAX_LENGTH: Final = 64
REQUEST_POLICY_MAX_OPTIONS: Final = 10
_SLICE_SELECTION: Final = (
    "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"
)
_DEVICE_SELECTION: Final = (
    "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when "
    "`perDeviceNodeSelection` is set to true in the ResourceSlice spec"
)
_ONE_VALUE: Final = "exactly one value must be specified"
_NUMERIC = r"(0|[1-9]\d*)"
_PRE_RELEASE = r"(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)"
_BUILD = r"[0-9a-zA-Z-]+"
_SEMVER: Final = re.compile(
    _NUMERIC + r"\." + _NUMERIC + r"\." + _NUMERIC
    + r"(-" + _PRE_RELEASE + r"(\." + _PRE_RELEASE + r")*)?"
    + r"(\+" + _BUILD + r"(\." + _BUILD + r")*)?"
)


def validate_spec(spec: Any, old: Any | None, path: Path) -> ErrorList:
    errs = validate_driver_name(spec.driver, path.child("driver"))
    errs += _validate_pool(spec.pool, path.child("pool"))
    if old is not None:
        errs += validate_immutable_field(spec.pool.name, old.pool.name, path.child("pool", "name"))
        errs += validate_immutable_field(spec.driver, old.driver, path.child("driver"))
        errs += validate_immutable_field(spec.node_name, old.node_name, path.child("nodeName"))
    errs += _validate_node_selection(spec, path)
    counter_names = {s.name: set(s.counters or {}) for s in spec.shared_counters or ()}
    per_device = bool(spec.per_device_node_selection)
    errs += each_unique(
        spec.devices, MAX_DEVICES,
        lambda d, p: _validate_device(d, p, counter_names, per_device),
        lambda d: (d.name, "name"), path.child("devices"),
    )
    in_devices = sum(len(c.counters or {}) for d in spec.devices or ()
                     for c in d.consumes_counters or ())
    if in_devices > MAX_DEVICE_COUNTERS_PER_SLICE:
        errs.append(invalid(path.child("devices"), in_devices,
                            "the total number of counters in devices must not exceed "
                            f"{MAX_DEVICE_COUNTERS_PER_SLICE}"))
    shared = sum(len(s.counters or {}) for s in spec.shared_counters or ())
    if shared > MAX_SHARED_COUNTERS:
        errs.append(invalid(path.child("sharedCounters"), shared,
                            f"the total number of shared counters must not exceed "
                            f"{MAX_SHARED_COUNTERS}"))
    errs += each_unique(spec.shared_counters, -1, _validate_counter_set, lambda s: (s.name, "name"),
                        path.child("sharedCounters"))
    return errs


def _validate_pool(pool: Any, path: Path) -> ErrorList:
    errs = validate_pool_name(pool.name, path.child("name"))
    if pool.resource_slice_count <= 0:
        errs.append(invalid(path.child("resourceSliceCount"), pool.resource_slice_count,
                            "must be greater than zero"))
    if pool.generation < 0:
        errs.append(invalid(path.child("generation"), pool.generation,
                            "must be greater than or equal to zero"))
    return errs


def _validate_node_selection(spec: Any, path: Path) -> ErrorList:
    errs: ErrorList = []
    chosen: list[str] = []
    if spec.node_name is not None:
        if spec.node_name:
            chosen.append("`nodeName`")
            errs += validate_node_name(spec.node_name, path.child("nodeName"))
        else:
            errs.append(invalid(path.child("nodeName"), "",
                                "must be either unset or set to a non-empty string"))
    if spec.node_selector is not None:
        chosen.append("`nodeSelector`")
        errs += validate_node_selector(spec.node_selector, path.child("nodeSelector"))
        terms = spec.node_selector.node_selector_terms
        if len(terms or ()) != 1:
            errs.append(invalid(path.child("nodeSelector", "nodeSelectorTerms"), terms or None,
                                "must have exactly one node selector term"))
    for attr, name in (("all_nodes", "allNodes"),
                       ("per_device_node_selection", "perDeviceNodeSelection")):
        value = getattr(spec, attr)
        if value is not None:
            if value:
                chosen.append(f"`{name}`")
            else:
                errs.append(invalid(path.child(name), False, "must be either unset or set to true"))
    if not chosen:
        errs.append(required(path, _SLICE_SELECTION))
    elif len(chosen) > 1:
        errs.append(invalid(path, "{" + ", ".join(chosen) + "}",
                            _SLICE_SELECTION + ", but multiple fields are set"))
    return errs


def _validate_device(
    device: Any, path: Path, counter_names: Mapping[str, set[str]], per_device: bool
) -> ErrorList:
    errs = validate_dns_label(device.name, path.child("name"))
    attributes, capacity = device.attributes or {}, device.capacity or {}
    total = len(attributes) + len(capacity)
    if total > MAX_ATTRIBUTES_AND_CAPACITIES:
        errs.append(invalid(path, total, "the total number of attributes and capacities must "
                                         f"not exceed {MAX_ATTRIBUTES_AND_CAPACITIES}"))
    errs += each_entry(attributes, ATTRIBUTE_KEY_MAX_LENGTH, validate_qualified_name,
                       _validate_attribute, path.child("attributes"))
    check_capacity = (_validate_shared_capacity if device.allow_multiple_allocations
                      else _validate_exclusive_capacity)
    errs += each_entry(capacity, ATTRIBUTE_KEY_MAX_LENGTH, validate_qualified_name,
                       check_capacity, path.child("capacity"))
    errs += each(device.taints, MAX_TAINTS, validate_taint, path.child("taints"))
    consumes = device.consumes_counters or []
    errs += each_unique(consumes, -1, _validate_consumption, lambda c: (c.counter_set,
                                                                          "counterSet"),
                        path.child("consumesCounters"))
    counters = sum(len(c.counters or {}) for c in consumes)
    if counters > MAX_COUNTERS_PER_DEVICE:
        errs.append(invalid(path, counters, "the total number of counters must not exceed "
                                            f"{MAX_COUNTERS_PER_DEVICE}"))
    for i, consumption in enumerate(consumes):
        p = path.child("consumesCounters").index(i)
        names = counter_names.get(consumption.counter_set)
        if names is None:
            errs.append(invalid(p.child("counterSet"), consumption.counter_set,
                                "must reference a counterSet defined in the ResourceSlice "
                                "sharedCounters"))
            continue
        for name in sorted(consumption.counters or {}):
            if name not in names:
                errs.append(invalid(p.child("counters"), name, "must reference a counter "
                                    "defined in the ResourceSlice sharedCounters"))
    errs += _validate_device_node_selection(device, path, per_device)
    return errs + validate_binding_conditions(device.binding_conditions,
                                              device.binding_failure_conditions, path)


def _validate_device_node_selection(device: Any, path: Path, per_device: bool) -> ErrorList:
    errs: ErrorList = []
    if not per_device:
        if device.node_name is not None or device.node_selector is not None \
                or device.all_nodes is not None:
            errs.append(invalid(path, None, "`nodeName`, `nodeSelector` and `allNodes` can only "
                                "be set if `perDeviceNodeSelection` is set to true in the "
                                "ResourceSlice spec"))
        return errs
    chosen: list[str] = []
    if device.node_name is not None:
        if device.node_name:
            chosen.append("`nodeName`")
            errs += validate_node_name(device.node_name, path.child("nodeName"))
        else:
            errs.append(invalid(path.child("nodeName"), "", "must not be empty"))
    if device.node_selector is not None:
        chosen.append("`nodeSelector`")
        errs += validate_node_selector(device.node_selector, path.child("nodeSelector"))
    if device.all_nodes is not None:
        if device.all_nodes:
            chosen.append("`allNodes`")
        else:
            errs.append(invalid(path.child("allNodes"), False,
                                "must be either unset or set to true"))
    if not chosen:
        errs.append(required(path, _DEVICE_SELECTION))
    elif len(chosen) > 1:
        errs.append(invalid(path, "{" + ", ".join(chosen) + "}", _DEVICE_SELECTION))
    return errs


def _validate_attribute(attribute: Any, path: Path) -> ErrorList:
    errs: ErrorList = []
    values = 0
    if attribute.bool_ is not None:
        values += 1
    if attribute.int_ is not None:
        values += 1
    if attribute.string is not None:
        values += 1
        if len(attribute.string.encode()) > ATTRIBUTE_VALUE_MAX_LENGTH:
            errs.append(too_long(path.child("string"), "", ATTRIBUTE_VALUE_MAX_LENGTH))
    if attribute.version is not None:
        values += 1
        p = path.child("version")
        if not _SEMVER.fullmatch(attribute.version):
            errs.append(invalid(p, attribute.version,
                                "must be a string compatible with semver.org spec 2.0.0"))
        if len(attribute.version.encode()) > ATTRIBUTE_VALUE_MAX_LENGTH:
            errs.append(too_long(p, "", ATTRIBUTE_VALUE_MAX_LENGTH))
    if values == 0:
        errs.append(required(path, _ONE_VALUE))
    elif values > 1:
        errs.append(invalid(path, attribute, _ONE_VALUE))
    return errs


def _validate_exclusive_capacity(capacity: Any, path: Path) -> ErrorList:
    if capacity.request_policy is not None:
        return [forbidden(path.child("requestPolicy"), "allowMultipleAllocations must be true")]
    return []


def _validate_shared_capacity(capacity: Any, path: Path) -> ErrorList:
    policy = capacity.request_policy
    if policy is None:
        return []
    p = path.child("requestPolicy")
    if policy.valid_values and policy.valid_range is not None:
        return [forbidden(p, 'exactly one policy can be specified, cannot specify "validValues" '
                             'and "validRange" at the same time')]
    if policy.valid_values:
        if policy.default is None:
            return [required(p.child("default"), "required when validValues is defined")]
        return _validate_valid_values(policy.default, capacity.value, policy.valid_values,
                                      p.child("validValues"))
    if policy.valid_range is not None:
        if policy.default is None:
            return [required(p.child("default"), "required when validRange is defined")]
        return _validate_range(policy.default, capacity.value, policy.valid_range,
                               p.child("validRange"))
    return []


def _validate_valid_values(
    default: Quantity, limit: Quantity, values: Sequence[Quantity], path: Path
) -> ErrorList:
    errs: ErrorList = []
    for i in range(len(values) - 1):
        if values[i].cmp(values[i + 1]) > 0:
            errs.append(invalid(path.index(i + 1), str(values[i + 1]),
                                "values must be sorted in ascending order"))
    found = False

    def check(option: Quantity, p: Path) -> ErrorList:
        nonlocal found
        out: ErrorList = []
        if option.cmp(limit) > 0:
            out.append(invalid(p, str(option), f"option is larger than capacity value: {limit}"))
        if option.cmp(default) == 0:
            found = True
        return out

    errs += each_unique(list(values), REQUEST_POLICY_MAX_OPTIONS, check,
                        lambda q: (str(q.scaled_value(0)), ""), path)
    if not found:
        errs.append(invalid(path, str(default),
                            "default value is not valid according to the requestPolicy"))
    return errs


def _validate_range(default: Quantity, limit: Quantity, valid: Any, path: Path) -> ErrorList:
    low, high, step = valid.min, valid.max, valid.step
    if low is None:
        return [required(path.child("min"), "required when validRange is defined")]
    errs: ErrorList = []
    if low.cmp(limit) > 0:
        errs.append(invalid(path.child("min"), str(low),
                            f"min is larger than capacity value: {limit}"))
    if default.cmp(low) < 0:
        errs.append(invalid(path.child("min"), str(default), f"default is less than min: {low}"))
    if high is not None:
        if low.cmp(high) > 0:
            errs.append(invalid(path.child("max"), str(low), f"min is larger than max: {high}"))
        if high.cmp(limit) > 0:
            errs.append(invalid(path.child("max"), str(high),
                                f"max is larger than capacity value: {limit}"))
        if default.cmp(high) > 0:
            errs.append(invalid(path.child("max"), str(default),
                                f"default is more than max: {high}"))
    if step is not None:
        one_step = low.add(step)
        if one_step.cmp(limit) > 0:
            errs.append(invalid(path.child("step"), str(step),
                                f"one step {one_step} is larger than capacity value: {limit}"))
        for value in (default, high):
            if value is not None:
                errs += _validate_step(value, low, step, path.child("step"))
    return errs


def _validate_step(value: Quantity, low: Quantity, step: Quantity, path: Path) -> ErrorList:
    step_value = step.scaled_value(0)
    if step_value and (value.scaled_value(0) - low.scaled_value(0)) % step_value != 0:
        return [invalid(path, str(value),
                        f"value is not a multiple of a given step ({step}) from ({low})")]
    return []


def _validate_consumption(consumption: Any, path: Path) -> ErrorList:
    errs: ErrorList = []
    if not consumption.counter_set:
        errs.append(required(path.child("counterSet")))
    if not consumption.counters:
        errs.append(required(path.child("counters")))
    else:
        errs += each_entry(consumption.counters, DNS1123_LABEL_MAX_LENGTH, validate_dns_label,
                           lambda _c, _p: [], path.child("counters"))
    return errs


def _validate_counter_set(counter_set: Any, path: Path) -> ErrorList:
    errs: ErrorList = []
    if not counter_set.name:
        errs.append(required(path.child("name")))
    else:
        errs += validate_dns_label(counter_set.name, path.child("name"))
    if not counter_set.counters:
        errs.append(required(path.child("counters")))
    else:
        errs += each_entry(counter_set.counters, DNS1123_LABEL_MAX_LENGTH, validate_dns_label,
                           lambda _c, _p: [], path.child("counters"))
    return errs

"""ResourceClaim and ResourceClaimTemplate (``validateDeviceClaim`` and
``validateResourceClaimStatusUpdate`` of k8s 1.34)."""

from __future__ import annotations

import ipaddress
import re
from typing import Final

from kubedra.api.goformat import go_quote
from kubedra.api.resource import v1 as r
from kubedra.api.resource.device_id import SharedDeviceID
from kubedra.validation.devices._common import (
    RequestNames,
    each,
    each_unique,
    string_key,
    validate_binding_conditions,
    validate_device_class_ref,
    validate_device_configuration,
    validate_dns_label,
    validate_driver_name,
    validate_fully_qualified_name,
    validate_pool_name,
    validate_raw_extension,
    validate_request_ref,
    validate_request_refs,
    validate_selectors,
    validate_toleration,
)
from kubedra.validation.field import (
    ErrorList,
    Path,
    forbidden,
    invalid,
    not_supported,
    required,
    too_long,
    too_many,
)
from kubedra.validation.meta import validate_conditions, validate_immutable_field
from kubedra.validation.nodeselector import validate_node_selector

ALLOCATION_MODES: Final = ("All", "ExactCount")
CONFIG_SOURCES: Final = ("FromClaim", "FromClass")
_ONE_REQUEST_KIND: Final = "exactly one of `exactly` or `firstAvailable` is required"
_UID_FORM: Final = (
    "uid must be in RFC 4122 normalized form, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` with "
    "lowercase hexadecimal characters"
)
_NOT_CIDR: Final = (
    "must be a valid address in CIDR form, (e.g. 10.9.8.7/24 or 2001:db8::1/64)"
)
_HEX: Final = re.compile(r"[0-9a-fA-F]{32}")


def request_names(claim: r.DeviceClaim) -> RequestNames:
    """``gatherRequestNames``: each request, with its subrequests if it has any."""
    out: RequestNames = {}
    for request in claim.requests or ():
        subs = request.first_available or ()
        out[request.name] = frozenset(s.name for s in subs) if subs else None
    return out


# --- spec ------------------------------------------------------------------------------------


def validate_claim_spec(
    spec: r.ResourceClaimSpec, path: Path, stored: bool, consumable_capacity: bool
) -> ErrorList:
    claim, p = spec.devices, path.child("devices")
    names = request_names(claim)
    errs = each_unique(
        claim.requests, r.DEVICE_REQUESTS_MAX_SIZE,
        lambda r, rp: _validate_request(r, rp, stored, consumable_capacity),
        lambda r: (r.name, "name"), p.child("requests"),
    )
    errs += each(claim.constraints, r.DEVICE_CONSTRAINTS_MAX_SIZE,
                 lambda c, cp: _validate_constraint(c, cp, names, consumable_capacity),
                 p.child("constraints"))
    return errs + each(
        claim.config, r.DEVICE_CONFIG_MAX_SIZE,
        lambda c, cp: validate_request_refs(c.requests, cp.child("requests"), names)
        + validate_device_configuration(c, cp, stored),
        p.child("config"),
    )


def _validate_request(
    request: r.DeviceRequest, path: Path, stored: bool, consumable_capacity: bool
) -> ErrorList:
    errs = validate_dns_label(request.name, path.child("name"))
    kinds = 0
    if request.first_available:
        kinds += 1
        errs += each_unique(
            request.first_available, r.FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE,
            lambda s, sp: validate_dns_label(s.name, sp.child("name"))
            + _validate_exact(s, sp, stored, consumable_capacity),
            lambda s: (s.name, "name"), path.child("firstAvailable"),
        )
    if request.exactly is not None:
        kinds += 1
        errs += _validate_exact(request.exactly, path.child("exactly"), stored,
                                consumable_capacity)
    if kinds == 0:
        errs.append(required(path, _ONE_REQUEST_KIND))
    elif kinds > 1:
        errs.append(invalid(path, None, _ONE_REQUEST_KIND + ", but multiple fields are set"))
    return errs


def _validate_exact(
    request: r.ExactDeviceRequest | r.DeviceSubRequest, path: Path, stored: bool,
    consumable_capacity: bool,
) -> ErrorList:
    """An ``exactly`` request or a ``firstAvailable`` subrequest (same checks)."""
    errs = validate_device_class_ref(request.device_class_name, path.child("deviceClassName"))
    errs += validate_selectors(request.selectors, path.child("selectors"), stored,
                               consumable_capacity)
    mode, count = request.allocation_mode or "", request.count or 0
    if mode == "All":
        if count != 0:
            errs.append(invalid(path.child("count"), count,
                                "must not be specified when allocationMode is 'All'"))
    elif mode == "ExactCount":
        if count <= 0:
            errs.append(invalid(path.child("count"), count, "must be greater than zero"))
    else:
        errs.append(not_supported(path.child("allocationMode"), mode, ALLOCATION_MODES))
    for i, toleration in enumerate(request.tolerations or ()):
        errs += validate_toleration(toleration, path.child("tolerations").index(i))
    return errs


def _validate_constraint(
    constraint: r.DeviceConstraint, path: Path, names: RequestNames, consumable_capacity: bool
) -> ErrorList:
    errs = validate_request_refs(constraint.requests, path.child("requests"), names)
    if constraint.match_attribute is not None:
        errs += validate_fully_qualified_name(constraint.match_attribute,
                                              path.child("matchAttribute"))
    elif constraint.distinct_attribute is not None:
        errs += validate_fully_qualified_name(constraint.distinct_attribute,
                                              path.child("distinctAttribute"))
    elif consumable_capacity:
        errs.append(required(path, 'exactly one of "matchAttribute" or "distinctAttribute" is '
                                   "required, but multiple fields are set"))
    else:
        errs.append(required(path.child("matchAttribute")))
    return errs


def validate_claim_spec_update(
    spec: r.ResourceClaimSpec, old: r.ResourceClaimSpec, path: Path, consumable_capacity: bool
) -> ErrorList:
    """Immutable; a changed spec is validated again too, with stored expressions (they
    must have been stored). Upstream 1.34 validates an unchanged one again as well, which
    only a spec stored under older rules fails, and then no write of the claim (its
    finalizer's removal) passes; later releases check immutability alone
    (docs/deviations.md)."""
    errs = validate_immutable_field(spec, old, path)
    if not errs:
        return errs
    return errs + validate_claim_spec(spec, path, True, consumable_capacity)


# --- status ----------------------------------------------------------------------------------


def _device_id(
        entry: r.DeviceRequestAllocationResult | r.AllocatedDeviceStatus) -> SharedDeviceID:
    return SharedDeviceID(entry.driver, entry.pool, entry.device, entry.share_id)


def validate_status_update(status: r.ResourceClaimStatus, old: r.ResourceClaimStatus,
                           deleted: bool, names: RequestNames, path: Path) -> ErrorList:
    reserved = status.reserved_for or []
    errs = each_unique(reserved, r.RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE, _validate_consumer,
                       lambda r: (r.uid, "uid"), path.child("reservedFor"))
    allocated: set[SharedDeviceID] = set()
    if status.allocation is not None:
        allocated = {_device_id(r) for r in status.allocation.devices.results or ()}
    errs += each_unique(status.devices, -1,
                        lambda d, p: _validate_device_status(d, p, allocated),
                        lambda d: (_device_id(d), "deviceID"),
                        path.child("devices"))
    if reserved:
        if status.allocation is None:
            errs.append(forbidden(path.child("reservedFor"),
                                  "may not be specified when `allocated` is not set"))
        elif deleted:
            old_refs = {_consumer_key(r) for r in old.reserved_for or ()}
            if any(_consumer_key(r) not in old_refs for r in reserved):
                errs.append(forbidden(path.child("reservedFor"),
                                      "new entries may not be added while "
                                      "`deallocationRequested` or `deletionTimestamp` are set"))
    if old.allocation is not None and status.allocation is not None:
        errs += validate_immutable_field(status.allocation, old.allocation,
                                         path.child("allocation"))
    elif status.allocation is not None:
        errs += _validate_allocation(status.allocation, path.child("allocation"), names)
    return errs


def _consumer_key(ref: r.ResourceClaimConsumerReference) -> tuple[str, str, str, str]:
    return (ref.api_group or "", ref.resource, ref.name, ref.uid)


def _validate_consumer(ref: r.ResourceClaimConsumerReference, path: Path) -> ErrorList:
    return [required(path.child(attr)) for attr in ("resource", "name", "uid")
            if not getattr(ref, attr)]


def _validate_allocation(
    allocation: r.AllocationResult, path: Path, names: RequestNames
) -> ErrorList:
    devices, p = allocation.devices, path.child("devices")
    errs = each(devices.results, r.ALLOCATION_RESULTS_MAX_SIZE,
                lambda r, rp: _validate_result(r, rp, names), p.child("results"))
    errs += each(devices.config, 2 * r.DEVICE_CONFIG_MAX_SIZE,
                 lambda c, cp: _validate_allocation_config(c, cp, names), p.child("config"))
    if allocation.node_selector is not None:
        errs += validate_node_selector(allocation.node_selector, path.child("nodeSelector"))
    return errs


def _validate_result(result: r.DeviceRequestAllocationResult, path: Path,
                     names: RequestNames) -> ErrorList:
    errs = validate_request_ref(result.request, path.child("request"), names)
    errs += validate_driver_name(result.driver, path.child("driver"))
    errs += validate_pool_name(result.pool, path.child("pool"))
    errs += validate_dns_label(result.device, path.child("device"))
    errs += validate_binding_conditions(result.binding_conditions,
                                        result.binding_failure_conditions, path)
    if result.share_id is not None:
        errs += validate_uid(result.share_id, path.child("shareID"))
    return errs


def _validate_allocation_config(config: r.DeviceAllocationConfiguration, path: Path,
                                names: RequestNames) -> ErrorList:
    errs: ErrorList = []
    source = config.source or ""
    if not source:
        errs.append(required(path.child("source")))
    elif source not in CONFIG_SOURCES:
        errs.append(not_supported(path.child("source"), source, CONFIG_SOURCES))
    errs += validate_request_refs(config.requests, path.child("requests"), names)
    return errs + validate_device_configuration(config, path, False)


def validate_uid(uid: str, path: Path) -> ErrorList:
    """``validateUID``: google/uuid's ``Validate``, then the normalized lowercase form."""
    error = _uuid_error(uid)
    if error is not None:
        return [invalid(path, uid, f"error validating uid: {error}")]
    if len(uid) != 36 or uid != uid.lower():
        return [invalid(path, uid, _UID_FORM)]
    return []


def _uuid_error(text: str) -> str | None:
    """The error of google/uuid ``Validate`` for ``text``, or None."""
    body = text
    if len(text) == 45:
        if text[:9].lower() != "urn:uuid:":
            return f"invalid urn prefix: {go_quote(text[:9])}"
        body = text[9:]
    elif len(text) == 38:
        if text[0] != "{" or text[-1] != "}":
            return "invalid bracketed UUID format"
        body = text[1:-1]
    elif len(text) == 32:
        return None if _HEX.fullmatch(text) else "invalid UUID format"
    elif len(text) != 36:
        return f"invalid UUID length: {len(text)}"
    if any(body[i] != "-" for i in (8, 13, 18, 23)) or not _HEX.fullmatch(body.replace("-", "")):
        return "invalid UUID format"
    return None


def _validate_device_status(entry: r.AllocatedDeviceStatus, path: Path,
                            allocated: set[SharedDeviceID]) -> ErrorList:
    errs = validate_driver_name(entry.driver, path.child("driver"))
    errs += validate_pool_name(entry.pool, path.child("pool"))
    errs += validate_dns_label(entry.device, path.child("device"))
    if entry.share_id is not None:
        errs += validate_uid(entry.share_id, path.child("shareID"))
    key = _device_id(entry)
    if key not in allocated:
        errs.append(invalid(path, key, "must be an allocated device in the claim"))
    conditions = entry.conditions or []
    if len(conditions) > r.ALLOCATED_DEVICE_STATUS_MAX_CONDITIONS:
        errs.append(too_many(path.child("conditions"), len(conditions),
                             r.ALLOCATED_DEVICE_STATUS_MAX_CONDITIONS))
    errs += validate_conditions(conditions, path.child("conditions"))
    if entry.data is not None:
        errs += validate_raw_extension(entry.data, path.child("data"), False,
                                       r.ALLOCATED_DEVICE_STATUS_DATA_MAX_LENGTH)
    if entry.network_data is not None:
        errs += _validate_network_data(entry.network_data, path.child("networkData"))
    return errs


def _validate_network_data(data: r.NetworkDeviceData, path: Path) -> ErrorList:
    errs: ErrorList = []
    for value, name, limit in (
        (data.interface_name, "interfaceName", r.NETWORK_DEVICE_DATA_INTERFACE_NAME_MAX_LENGTH),
        (data.hardware_address, "hardwareAddress",
         r.NETWORK_DEVICE_DATA_HARDWARE_ADDRESS_MAX_LENGTH),
    ):
        if len((value or "").encode()) > limit:
            errs.append(too_long(path.child(name), "", limit))
    return errs + each_unique(data.ips, r.NETWORK_DEVICE_DATA_MAX_IPS,
                              validate_interface_address, string_key, path.child("ips"))


def validate_interface_address(value: str, path: Path) -> ErrorList:
    """apimachinery ``IsValidInterfaceAddress``: an address in CIDR form (IPv4 octets may
    have leading zeros, read as decimal, as ``ParseCIDRSloppy``), written canonically."""
    canonical = _canonical_interface(value)
    if canonical is None:
        return [invalid(path, value, _NOT_CIDR)]
    if value != canonical:
        return [invalid(path, value, f'must be in canonical form ("{canonical}")')]
    return []


def _canonical_interface(value: str) -> str | None:
    address, slash, bits = value.partition("/")
    if not slash or not bits.isdigit():
        return None
    if ":" not in address:
        octets = address.split(".")
        if len(octets) != 4 or not all(o.isdigit() and int(o) < 256 for o in octets):
            return None
        address = ".".join(str(int(o)) for o in octets)
    try:
        iface = ipaddress.ip_interface(f"{address}/{int(bits)}")
    except ValueError:
        return None
    return f"{iface.ip.compressed}/{iface.network.prefixlen}"


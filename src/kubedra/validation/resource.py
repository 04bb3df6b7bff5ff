"""Validation of every resource.k8s.io/v1alpha2 kind (k8s v1.30
``pkg/apis/resource/validation/validation.go``): same checks, order, paths and texts.

Per kind: ``validate_<kind>(obj)`` for create, ``validate_<kind>_update(obj, old)`` and, for
ResourceClaim and PodSchedulingContext, ``validate_<kind>_status_update(obj, old)``. These are
upstream's validator functions; the REST strategies (apiserver) decide how to combine them
(e.g. a claim update runs create validation twice, as upstream does).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from kubedra.api.resource.v1alpha2 import (
    ALLOCATION_MODE_IMMEDIATE,
    ALLOCATION_MODE_WAIT_FOR_FIRST_CONSUMER,
    ALLOCATION_RESULT_RESOURCE_HANDLES_MAX_SIZE,
    POD_SCHEDULING_NODE_LIST_MAX_SIZE,
    RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE,
    RESOURCE_HANDLE_DATA_MAX_SIZE,
    AllocationResult,
    DriverAllocationResult,
    DriverRequests,
    NamedResourcesFilter,
    NamedResourcesRequest,
    PodSchedulingContext,
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceClaimParameters,
    ResourceClaimParametersReference,
    ResourceClaimSchedulingStatus,
    ResourceClaimSpec,
    ResourceClaimTemplate,
    ResourceClass,
    ResourceClassParameters,
    ResourceClassParametersReference,
    ResourceFilter,
    ResourceHandle,
    ResourceRequest,
    ResourceSlice,
    StructuredResourceHandle,
    VendorParameters,
)
from kubedra.validation.equality import semantic_equal
from kubedra.validation.field import (
    ROOT,
    ErrorList,
    Path,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
    too_long,
    too_long_max_length,
)
from kubedra.validation.meta import (
    validate_immutable_field,
    validate_object_meta,
    validate_object_meta_update,
    validate_template_object_meta,
)
from kubedra.validation.namedresources import (
    validate_allocation_result,
    validate_resources,
    validate_selector,
)
from kubedra.validation.names import (
    is_dns1123_subdomain,
    name_is_dns_label,
    name_is_dns_subdomain,
)
from kubedra.validation.nodeselector import validate_node_selector

METADATA = Path("metadata")
DRIVER_NAME_MAX_LENGTH = 63
SUPPORTED_ALLOCATION_MODES = (ALLOCATION_MODE_IMMEDIATE, ALLOCATION_MODE_WAIT_FOR_FIRST_CONSUMER)
_ONE_MODEL = "exactly one structured model field must be set"
_NOT_SEVERAL = "exactly one field must be set, not several"

# --- building blocks ------------------------------------------------------------------------


def validate_driver_name(name: str, path: Path) -> ErrorList:
    """``ValidateCSIDriverName``: required, at most 63 bytes, a DNS subdomain once lower-cased
    (so an empty name yields both Required and Invalid)."""
    errs: ErrorList = []
    if not name:
        errs.append(required(path))
    if len(name.encode()) > DRIVER_NAME_MAX_LENGTH:
        errs.append(too_long(path, name, DRIVER_NAME_MAX_LENGTH))
    errs += [invalid(path, name, msg) for msg in is_dns1123_subdomain(name.lower())]
    return errs


def validate_node_name(name: str, path: Path) -> ErrorList:
    return [invalid(path, name, msg) for msg in name_is_dns_subdomain(name, False)]


def _one_model(members: Sequence[str], path: Path) -> ErrorList:
    """The "exactly one model member" rule shared by all inline model structs."""
    if not members:
        return [required(path, _ONE_MODEL)]
    if len(members) > 1:
        return [invalid(path, sorted(members), _NOT_SEVERAL)]
    return []


def _validate_selector_model(
    named: NamedResourcesRequest | NamedResourcesFilter | None, stored: bool, path: Path
) -> ErrorList:
    """A request's or filter's model: its one member (``namedResources``) and its selector."""
    if named is None:
        return _one_model([], path)
    return validate_selector(named.selector, stored, path.child("namedResources", "selector"))


def _validate_slice_is_a_set(
    items: Sequence[str] | None,
    max_size: int,
    check: Callable[[str, Path], ErrorList],
    path: Path,
) -> ErrorList:
    """No repeats (a repeat is reported and not checked further), at most ``max_size``."""
    errs: ErrorList = []
    seen: set[str] = set()
    for i, item in enumerate(items or ()):
        if item in seen:
            errs.append(duplicate(path.index(i), item))
        else:
            errs += check(item, path.index(i))
            seen.add(item)
    if len(items or ()) > max_size:
        errs.append(too_long_max_length(path, len(items or ()), max_size))
    return errs


def _driver_entries(names: Sequence[str], path: Path) -> list[ErrorList]:
    """For each per-driver entry: the driver-name check, then ``Duplicate`` on a repeat."""
    out: list[ErrorList] = []
    seen: set[str] = set()
    for i, name in enumerate(names):
        p = path.index(i).child("driverName")
        errs = validate_driver_name(name, p)
        if name in seen:
            errs.append(duplicate(p, name))
        else:
            seen.add(name)
        out.append(errs)
    return out


def _validate_parameters_ref(
    ref: ResourceClaimParametersReference | ResourceClassParametersReference | None, path: Path
) -> ErrorList:
    """Kind and name are required; a class reference's namespace must be a DNS label."""
    errs: ErrorList = []
    if ref is None:
        return errs
    if not ref.kind:
        errs.append(required(path.child("kind")))
    if not ref.name:
        errs.append(required(path.child("name")))
    if isinstance(ref, ResourceClassParametersReference) and ref.namespace:
        errs += [invalid(path.child("namespace"), ref.namespace, msg)
                 for msg in name_is_dns_label(ref.namespace, False)]
    return errs


# --- ResourceClass --------------------------------------------------------------------------


def validate_resource_class(obj: ResourceClass) -> ErrorList:
    errs = validate_object_meta(obj.metadata, False, name_is_dns_subdomain, METADATA)
    errs += validate_driver_name(obj.driver_name, Path("driverName"))
    errs += _validate_parameters_ref(obj.parameters_ref, Path("parametersRef"))
    if obj.suitable_nodes is not None:
        errs += validate_node_selector(obj.suitable_nodes, Path("suitableNodes"))
    return errs


def validate_resource_class_update(obj: ResourceClass, old: ResourceClass) -> ErrorList:
    errs = validate_object_meta_update(obj.metadata, old.metadata, METADATA)
    return errs + validate_resource_class(obj)


# --- ResourceClaim --------------------------------------------------------------------------


def validate_resource_claim_spec(spec: ResourceClaimSpec, path: Path) -> ErrorList:
    errs = [invalid(path.child("resourceClassName"), spec.resource_class_name, msg)
            for msg in name_is_dns_subdomain(spec.resource_class_name, False)]
    errs += _validate_parameters_ref(spec.parameters_ref, path.child("parametersRef"))
    if spec.allocation_mode not in SUPPORTED_ALLOCATION_MODES:
        errs.append(not_supported(path.child("allocationMode"), spec.allocation_mode,
                                  SUPPORTED_ALLOCATION_MODES))
    return errs


def validate_resource_claim(obj: ResourceClaim) -> ErrorList:
    errs = validate_object_meta(obj.metadata, True, name_is_dns_subdomain, METADATA)
    return errs + validate_resource_claim_spec(obj.spec, Path("spec"))


def validate_resource_claim_update(obj: ResourceClaim, old: ResourceClaim) -> ErrorList:
    errs = validate_object_meta_update(obj.metadata, old.metadata, METADATA)
    errs += validate_immutable_field(obj.spec, old.spec, Path("spec"))
    return errs + validate_resource_claim(obj)


def _validate_driver_allocation_results(
    results: Sequence[DriverAllocationResult], path: Path
) -> ErrorList:
    errs: ErrorList = []
    for k, result in enumerate(results):
        p = path.index(k)
        members: list[str] = []
        if result.named_resources is not None:
            members.append("namedResources")
            errs += validate_allocation_result(result.named_resources, p.child("namedResources"))
        errs += _one_model(members, p)
    return errs


def _validate_structured_handle(handle: StructuredResourceHandle, path: Path) -> ErrorList:
    errs: ErrorList = []
    if handle.node_name:
        errs += validate_node_name(handle.node_name, path.child("nodeName"))
    return errs + _validate_driver_allocation_results(handle.results, path.child("results"))


def _validate_resource_handles(handles: Sequence[ResourceHandle], path: Path) -> ErrorList:
    errs: ErrorList = []
    for i, handle in enumerate(handles):
        p = path.index(i)
        errs += validate_driver_name(handle.driver_name, p.child("driverName"))
        data_len = len(handle.data.encode())
        if data_len > RESOURCE_HANDLE_DATA_MAX_SIZE:
            errs.append(too_long_max_length(p.child("data"), data_len,
                                            RESOURCE_HANDLE_DATA_MAX_SIZE))
        if handle.structured_data is not None:
            errs += _validate_structured_handle(handle.structured_data, p.child("structuredData"))
            if handle.data:
                errs.append(invalid(p, None, "data and structuredData are mutually exclusive"))
    if len(handles) > ALLOCATION_RESULT_RESOURCE_HANDLES_MAX_SIZE:
        errs.append(too_long_max_length(path, len(handles),
                                        ALLOCATION_RESULT_RESOURCE_HANDLES_MAX_SIZE))
    return errs


def _validate_allocation(allocation: AllocationResult | None, path: Path) -> ErrorList:
    errs: ErrorList = []
    if allocation is not None:
        if allocation.resource_handles:
            errs += _validate_resource_handles(allocation.resource_handles,
                                               path.child("resourceHandles"))
        if allocation.available_on_nodes is not None:
            errs += validate_node_selector(allocation.available_on_nodes,
                                           path.child("availableOnNodes"))
    return errs


def _validate_consumers(
    consumers: Sequence[ResourceClaimConsumerReference], path: Path
) -> ErrorList:
    errs: ErrorList = []
    uids: set[str] = set()
    for i, ref in enumerate(consumers):
        p = path.index(i)
        if ref.uid in uids:
            errs.append(duplicate(p.child("uid"), ref.uid))
            continue
        uids.add(ref.uid)
        for attr in ("resource", "name", "uid"):
            if not getattr(ref, attr):
                errs.append(required(p.child(attr)))
    if len(consumers) > RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE:
        errs.append(too_long_max_length(path, len(consumers),
                                        RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE))
    return errs


def _consumer_key(ref: ResourceClaimConsumerReference) -> tuple[str, str, str, str]:
    return (ref.api_group, ref.resource, ref.name, ref.uid)


def validate_resource_claim_status_update(obj: ResourceClaim, old: ResourceClaim) -> ErrorList:
    errs = validate_object_meta_update(obj.metadata, old.metadata, METADATA)
    path = Path("status")
    status, old_status = obj.status, old.status
    if status.driver_name:
        errs += validate_driver_name(status.driver_name, path.child("driverName"))
    elif status.allocation is not None:
        errs.append(required(path.child("driverName"),
                             "must be specified when `allocation` is set"))
    errs += _validate_allocation(status.allocation, path.child("allocation"))
    reserved = status.reserved_for or []
    errs += _validate_consumers(reserved, path.child("reservedFor"))

    if reserved:
        if status.allocation is None:
            errs.append(forbidden(path.child("reservedFor"),
                                  "may not be specified when `allocated` is not set"))
        else:
            if not status.allocation.shareable and len(reserved) > 1:
                errs.append(forbidden(path.child("reservedFor"),
                                      "may not be reserved more than once"))
            if obj.metadata.deletion_timestamp is not None or status.deallocation_requested:
                old_set = {_consumer_key(r) for r in old_status.reserved_for or ()}
                if any(_consumer_key(r) not in old_set for r in reserved):
                    errs.append(forbidden(
                        path.child("reservedFor"),
                        "new entries may not be added while `deallocationRequested` or "
                        "`deletionTimestamp` are set",
                    ))

    if old_status.allocation is not None and status.allocation is not None:
        errs += validate_immutable_field(status.allocation, old_status.allocation,
                                         path.child("allocation"))
    if not old_status.deallocation_requested and status.deallocation_requested and reserved:
        errs.append(forbidden(path.child("deallocationRequested"),
                              "deallocation cannot be requested while `reservedFor` is set"))
    if status.allocation is None and status.deallocation_requested:
        errs.append(forbidden(path,
                              "`allocation` must be set when `deallocationRequested` is set"))
    if (old_status.deallocation_requested and not status.deallocation_requested
            and status.allocation is not None):
        errs.append(forbidden(path.child("deallocationRequested"),
                              "may not be cleared when `allocation` is set"))
    return errs


# --- ResourceClaimTemplate ------------------------------------------------------------------


def validate_resource_claim_template(obj: ResourceClaimTemplate) -> ErrorList:
    errs = validate_object_meta(obj.metadata, True, name_is_dns_subdomain, METADATA)
    spec_path = Path("spec")
    errs += validate_template_object_meta(obj.spec.metadata, spec_path.child("metadata"))
    return errs + validate_resource_claim_spec(obj.spec.spec, spec_path.child("spec"))


def validate_resource_claim_template_update(
    obj: ResourceClaimTemplate, old: ResourceClaimTemplate
) -> ErrorList:
    errs = validate_object_meta_update(obj.metadata, old.metadata, METADATA)
    errs += validate_immutable_field(obj.spec, old.spec, Path("spec"))
    return errs + validate_resource_claim_template(obj)


# --- PodSchedulingContext -------------------------------------------------------------------


def validate_pod_scheduling_context(obj: PodSchedulingContext) -> ErrorList:
    errs = validate_object_meta(obj.metadata, True, name_is_dns_subdomain, METADATA)
    return errs + _validate_slice_is_a_set(
        obj.spec.potential_nodes, POD_SCHEDULING_NODE_LIST_MAX_SIZE, validate_node_name,
        Path("spec").child("potentialNodes"),
    )


def validate_pod_scheduling_context_update(
    obj: PodSchedulingContext, old: PodSchedulingContext
) -> ErrorList:
    errs = validate_object_meta_update(obj.metadata, old.metadata, METADATA)
    return errs + validate_pod_scheduling_context(obj)


def _validate_scheduling_claims(
    statuses: Sequence[ResourceClaimSchedulingStatus], path: Path
) -> ErrorList:
    errs: ErrorList = []
    names: set[str] = set()
    for i, status in enumerate(statuses):
        p = path.index(i)
        errs += _validate_slice_is_a_set(status.unsuitable_nodes,
                                         POD_SCHEDULING_NODE_LIST_MAX_SIZE, validate_node_name,
                                         p.child("unsuitableNodes"))
        if status.name in names:
            errs.append(duplicate(p, status.name))
        else:
            names.add(status.name)
    return errs


def validate_pod_scheduling_context_status_update(
    obj: PodSchedulingContext, old: PodSchedulingContext
) -> ErrorList:
    """Upstream quirk kept: errors are reported under ``status.claims``."""
    errs = validate_object_meta_update(obj.metadata, old.metadata, METADATA)
    return errs + _validate_scheduling_claims(obj.status.resource_claims or (),
                                              Path("status").child("claims"))


# --- ResourceSlice --------------------------------------------------------------------------


def validate_resource_slice(obj: ResourceSlice) -> ErrorList:
    errs = validate_object_meta(obj.metadata, False, name_is_dns_subdomain, METADATA)
    if obj.node_name:
        errs += validate_node_name(obj.node_name, Path("nodeName"))
    errs += validate_driver_name(obj.driver_name, Path("driverName"))
    # Upstream passes a nil root path here, so a missing model is reported at "<nil>".
    members: list[str] = []
    if obj.named_resources is not None:
        members.append("namedResources")
        errs += validate_resources(obj.named_resources, ROOT.child("namedResources"))
    return errs + _one_model(members, ROOT)


def validate_resource_slice_update(obj: ResourceSlice, old: ResourceSlice) -> ErrorList:
    errs = validate_object_meta_update(obj.metadata, old.metadata, METADATA)
    errs += validate_resource_slice(obj)
    errs += validate_immutable_field(obj.node_name, old.node_name, Path("nodeName"))
    errs += validate_immutable_field(obj.driver_name, old.driver_name, Path("driverName"))
    return errs


# --- ResourceClaimParameters ----------------------------------------------------------------


def _validate_requests(
    requests: Sequence[ResourceRequest], path: Path, stored: bool
) -> ErrorList:
    errs: ErrorList = []
    for j, request in enumerate(requests):
        errs += _validate_selector_model(request.named_resources, stored, path.index(j))
    if not requests:
        errs.append(required(path, "empty entries with no requests are not allowed"))
    return errs


def _validate_driver_requests(
    entries: Sequence[DriverRequests], path: Path, stored: bool
) -> ErrorList:
    errs: ErrorList = []
    driver_errs = _driver_entries([e.driver_name for e in entries], path)
    for i, entry in enumerate(entries):
        errs += driver_errs[i]
        errs += _validate_requests(entry.requests or (), path.index(i).child("requests"), stored)
    return errs


def _validate_resource_claim_parameters(obj: ResourceClaimParameters, stored: bool) -> ErrorList:
    errs = validate_object_meta(obj.metadata, True, name_is_dns_subdomain, METADATA)
    errs += _validate_parameters_ref(obj.generated_from, Path("generatedFrom"))
    return errs + _validate_driver_requests(obj.driver_requests or (), Path("driverRequests"),
                                            stored)


def validate_resource_claim_parameters(obj: ResourceClaimParameters) -> ErrorList:
    return _validate_resource_claim_parameters(obj, False)


def validate_resource_claim_parameters_update(
    obj: ResourceClaimParameters, old: ResourceClaimParameters
) -> ErrorList:
    """Unchanged selectors compile in the StoredExpressions environment."""
    errs = validate_object_meta_update(obj.metadata, old.metadata, METADATA)
    stored = semantic_equal(old.driver_requests, obj.driver_requests)
    return errs + _validate_resource_claim_parameters(obj, stored)


# --- ResourceClassParameters ----------------------------------------------------------------


def _validate_filters(filters: Sequence[ResourceFilter], path: Path, stored: bool) -> ErrorList:
    errs: ErrorList = []
    driver_errs = _driver_entries([f.driver_name for f in filters], path)
    for i, entry in enumerate(filters):
        errs += driver_errs[i]
        errs += _validate_selector_model(entry.named_resources, stored, path.index(i))
    return errs


def _validate_vendor_parameters(entries: Sequence[VendorParameters], path: Path) -> ErrorList:
    errs: ErrorList = []
    for entry_errs in _driver_entries([e.driver_name for e in entries], path):
        errs += entry_errs
    return errs


def validate_resource_class_parameters(obj: ResourceClassParameters) -> ErrorList:
    errs = validate_object_meta(obj.metadata, True, name_is_dns_subdomain, METADATA)
    errs += _validate_parameters_ref(obj.generated_from, Path("generatedFrom"))
    errs += _validate_filters(obj.filters or (), Path("filters"), False)
    return errs + _validate_vendor_parameters(obj.vendor_parameters or (),
                                              Path("vendorParameters"))


def validate_resource_class_parameters_update(
    obj: ResourceClassParameters, old: ResourceClassParameters
) -> ErrorList:
    """Upstream quirk kept: filters always compile as new expressions, changed or not."""
    errs = validate_object_meta_update(obj.metadata, old.metadata, METADATA)
    return errs + validate_resource_class_parameters(obj)

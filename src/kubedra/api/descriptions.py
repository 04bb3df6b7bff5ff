"""The API's documentation as data: what each type and field means, as the doc comments of
the v1.30 Go types say it (k8s.io/api resource/v1alpha2, core/v1, batch/v1, coordination/v1
and apimachinery meta/v1 at v0.30.0), in our own words; resource/v1 as the v1.34 types say it
(k8s.io/api v0.34).

The OpenAPI documents (``kubectl explain``) read it; keys are kube-openapi's definition names
(:data:`kubedra.api.scheme.OPENAPI_PACKAGES` maps our modules to them), then ``""`` for the
type and the JSON field names for its fields.
"""

from __future__ import annotations

from typing import Final

from kubedra.api.resource import v1 as resource_v1
from kubedra.api.scheme import OPENAPI_PACKAGES, openapi_package

_API_VERSION = (
    "APIVersion defines the versioned schema of this representation of an object. Servers "
    "should convert recognized schemas to the latest internal value, and may reject "
    "unrecognized values. More info: https://git.k8s.io/community/contributors/devel/"
    "sig-architecture/api-conventions.md#resources"
)
_KIND = (
    "Kind is a string value representing the REST resource this object represents. Servers "
    "may infer this from the endpoint the client submits requests to. Cannot be updated. In "
    "CamelCase. More info: https://git.k8s.io/community/contributors/devel/"
    "sig-architecture/api-conventions.md#types-kinds"
)
_METADATA = (
    "Standard object metadata. More info: https://git.k8s.io/community/contributors/devel/"
    "sig-architecture/api-conventions.md#metadata"
)
_SELECTOR = (
    "Selector is a CEL expression which must evaluate to true if a resource instance is "
    "suitable. The language is as defined in https://kubernetes.io/docs/reference/"
    "using-api/cel/\n\nIn addition, for each type in NamedResourcesAttributeValue there is "
    "a map that resolves to the corresponding value of the instance under evaluation. For "
    'example:\n\n   attributes.quantity["a"].isGreaterThan(quantity("0")) &&\n   '
    'attributes.stringslice["b"].isSorted()'
)
_DRIVER_NAME = "DriverName is the name of the DRA driver (a DNS subdomain) these settings are for."


def _object(kind_text: str, **fields: str) -> dict[str, str]:
    """A top-level kind: its description plus the three fields every object has."""
    return {"": kind_text, "apiVersion": _API_VERSION, "kind": _KIND, "metadata": _METADATA,
            **fields}


_RESOURCE: Final[dict[str, dict[str, str]]] = {
    "ResourceClass": _object(
        "ResourceClass is used by administrators to influence how resources are allocated. "
        "This is an alpha type and requires enabling the DynamicResourceAllocation feature "
        "gate.",
        driverName="DriverName defines the name of the dynamic resource driver that is used "
        "for allocation of a ResourceClaim that uses this class. Resource drivers have a "
        "unique name in forward domain order (acme.example.com).",
        parametersRef="ParametersRef references an arbitrary separate object that may hold "
        "parameters that will be used by the driver when allocating a resource that uses "
        "this class. A dynamic resource driver can distinguish between parameters stored "
        "here and those stored in ResourceClaimSpec.",
        suitableNodes="Only nodes matching the selector will be considered by the scheduler "
        "when trying to find a Node that fits a Pod when that Pod uses a ResourceClaim that "
        "has not been allocated yet. Setting this field is optional. If null, all nodes are "
        "candidates.",
        structuredParameters="If and only if allocation of claims using this class is "
        "handled via structured parameters, then StructuredParameters must be set to true.",
    ),
    "ResourceClassParametersReference": {
        "": "ResourceClassParametersReference contains enough information to let you locate "
        "the parameters for a ResourceClass.",
        "apiGroup": "APIGroup is the group for the resource being referenced. It is empty "
        "for the core API. This matches the group in the APIVersion that is used when "
        "creating the resources.",
        "kind": "Kind is the type of resource being referenced. This is the same value as "
        'in the parameter object\'s metadata.',
        "name": "Name is the name of resource being referenced.",
        "namespace": "Namespace that contains the referenced resource. Must be empty for "
        "cluster-scoped resources and non-empty for namespaced resources.",
    },
    "ResourceClaim": _object(
        "ResourceClaim describes which resources are needed by a resource consumer. Its "
        "status tracks whether the resource has been allocated and what the resulting "
        "attributes are.\n\nThis is an alpha type and requires enabling the "
        "DynamicResourceAllocation feature gate.",
        spec="Spec describes the desired attributes of a resource that then needs to be "
        "allocated. It can only be set once when creating the ResourceClaim.",
        status="Status describes whether the resource is available and with which "
        "attributes.",
    ),
    "ResourceClaimSpec": {
        "": "ResourceClaimSpec defines how a resource is to be allocated.",
        "resourceClassName": "ResourceClassName references the driver and additional "
        "parameters via the name of a ResourceClass that was created as part of the driver "
        "deployment.",
        "parametersRef": "ParametersRef references a separate object with arbitrary "
        "parameters that will be used by the driver when allocating a resource for the "
        "claim.\n\nThe object must be in the same namespace as the ResourceClaim.",
        "allocationMode": "Allocation can start immediately or when a Pod wants to use the "
        "resource. \"WaitForFirstConsumer\" is the default.",
    },
    "ResourceClaimParametersReference": {
        "": "ResourceClaimParametersReference contains enough information to let you locate "
        "the parameters for a ResourceClaim. The object must be in the same namespace as "
        "the ResourceClaim.",
        "apiGroup": "APIGroup is the group for the resource being referenced. It is empty "
        "for the core API. This matches the group in the APIVersion that is used when "
        "creating the resources.",
        "kind": "Kind is the type of resource being referenced. This is the same value as "
        "in the parameter object's metadata, for example \"ConfigMap\".",
        "name": "Name is the name of resource being referenced.",
    },
    "ResourceClaimStatus": {
        "": "ResourceClaimStatus tracks whether the resource has been allocated and what the "
        "resulting attributes are.",
        "driverName": "DriverName is a copy of the driver name from the ResourceClass at the "
        "time when allocation started.",
        "allocation": "Allocation is set by the resource driver once a resource or set of "
        "resources has been allocated successfully. If this is not specified, the resources "
        "have not been allocated yet.",
        "reservedFor": "ReservedFor indicates which entities are currently allowed to use "
        "the claim. A Pod which references a ResourceClaim which is not reserved for that "
        "Pod will not be started.\n\nThere can be at most 32 such reservations. This may "
        "get increased in the future, but not reduced.",
        "deallocationRequested": "DeallocationRequested indicates that a ResourceClaim is "
        "to be deallocated.\n\nThe driver then must deallocate this claim and reset the "
        "field together with clearing the Allocation field.\n\nWhile DeallocationRequested "
        "is set, no new consumers may be added to ReservedFor.",
    },
    "AllocationResult": {
        "": "AllocationResult contains attributes of an allocated resource.",
        "resourceHandles": "ResourceHandles contain the state associated with an allocation "
        "that should be maintained throughout the lifetime of a claim. Each ResourceHandle "
        "contains data that should be passed to a specific kubelet plugin once it lands on "
        "a node. This data is returned by the driver after a successful allocation and is "
        "opaque to Kubernetes.\n\nSetting this field is optional. It has a maximum size of "
        "32 entries. If null (or empty), it is assumed this allocation will be processed by "
        "a single kubelet plugin with no ResourceHandle data attached. The name of the "
        "kubelet plugin invoked will match the DriverName set in the ResourceClaimStatus "
        "this AllocationResult is embedded in.",
        "availableOnNodes": "This field will get set by the resource driver after it has "
        "allocated the resource to inform the scheduler where it can schedule Pods using "
        "the ResourceClaim.\n\nSetting this field is optional. If null, the resource is "
        "available everywhere.",
        "shareable": "Shareable determines whether the resource supports more than one "
        "consumer at a time.",
    },
    "ResourceHandle": {
        "": "ResourceHandle holds opaque resource data for processing by a specific kubelet "
        "plugin.",
        "driverName": "DriverName specifies the name of the resource driver whose kubelet "
        "plugin should be invoked to process this ResourceHandle's data once it lands on a "
        "node. This may differ from the DriverName set in ResourceClaimStatus this "
        "ResourceHandle is embedded in.",
        "data": "Data contains the opaque data associated with this ResourceHandle. It is "
        "set by the controller component of the resource driver whose name matches the "
        "DriverName set in the ResourceClaimStatus this ResourceHandle is embedded in. It "
        "is set at allocation time and is intended for processing by the kubelet plugin "
        "whose name matches the DriverName set in this ResourceHandle.\n\nThe maximum size "
        "of this field is 16KiB. This may get increased in the future, but not reduced.",
        "structuredData": "If StructuredData is set, then it needs to be used instead of "
        "Data.",
    },
    "StructuredResourceHandle": {
        "": "StructuredResourceHandle is the in-tree representation of the allocation "
        "result.",
        "vendorClassParameters": "VendorClassParameters are the per-claim configuration "
        "parameters from the resource class at the time that the claim was allocated.",
        "vendorClaimParameters": "VendorClaimParameters are the per-claim configuration "
        "parameters from the resource claim parameters at the time that the claim was "
        "allocated.",
        "nodeName": "NodeName is the name of the node providing the necessary resources if "
        "the resources are local to a node.",
        "results": "Results lists all allocated driver resources.",
    },
    "DriverAllocationResult": {
        "": "DriverAllocationResult contains vendor parameters and the allocation result "
        "for one request.",
        "vendorRequestParameters": "VendorRequestParameters are the per-request "
        "configuration parameters from the time that the claim was allocated.",
        "namedResources": "NamedResources describes the allocation result when using the "
        "named resources model.",
    },
    "NamedResourcesAllocationResult": {
        "": "NamedResourcesAllocationResult is used in AllocationResultModel.",
        "name": "Name is the name of the selected resource instance.",
    },
    "ResourceClaimConsumerReference": {
        "": "ResourceClaimConsumerReference contains enough information to let you locate "
        "the consumer of a ResourceClaim. The user must be a resource in the same namespace "
        "as the ResourceClaim.",
        "apiGroup": "APIGroup is the group for the resource being referenced. It is empty "
        "for the core API. This matches the group in the APIVersion that is used when "
        "creating the resources.",
        "resource": "Resource is the type of resource being referenced, for example "
        "\"pods\".",
        "name": "Name is the name of resource being referenced.",
        "uid": "UID identifies exactly one incarnation of the resource.",
    },
    "ResourceClaimTemplate": _object(
        "ResourceClaimTemplate is used to produce ResourceClaim objects.",
        spec="Describes the ResourceClaim that is to be generated.\n\nThis field is "
        "immutable. A ResourceClaim will get created by the control plane for a Pod when "
        "needed and then not get updated anymore.",
    ),
    "ResourceClaimTemplateSpec": {
        "": "ResourceClaimTemplateSpec contains the metadata and fields for a ResourceClaim.",
        "metadata": "ObjectMeta may contain labels and annotations that will be copied into "
        "the ResourceClaim when creating it. No other fields are allowed and will be "
        "rejected during validation.",
        "spec": "Spec for the ResourceClaim. The entire content is copied unchanged into "
        "the ResourceClaim that gets created from this template. The same fields as in a "
        "ResourceClaim are also valid here.",
    },
    "PodSchedulingContext": _object(
        "PodSchedulingContext objects hold information that is needed to schedule a Pod "
        "with ResourceClaims that use \"WaitForFirstConsumer\" allocation mode.\n\nThis "
        "is an alpha type and requires enabling the DynamicResourceAllocation feature gate.",
        spec="Spec describes where resources for the Pod are needed.",
        status="Status describes where resources for the Pod can be allocated.",
    ),
    "PodSchedulingContextSpec": {
        "": "PodSchedulingContextSpec describes where resources for the Pod are needed.",
        "selectedNode": "SelectedNode is the node for which allocation of ResourceClaims "
        "that are referenced by the Pod and that use \"WaitForFirstConsumer\" allocation "
        "is to be attempted.",
        "potentialNodes": "PotentialNodes lists nodes where the Pod might be able to run.\n\n"
        "The size of this field is limited to 128. This is large enough for many clusters. "
        "Larger clusters may need more attempts to find a node that suits all pending "
        "resources. This may get increased in the future, but not reduced.",
    },
    "PodSchedulingContextStatus": {
        "": "PodSchedulingContextStatus describes where resources for the Pod can be "
        "allocated.",
        "resourceClaims": "ResourceClaims describes resource availability for each "
        "pod.spec.resourceClaim entry where the corresponding ResourceClaim uses "
        "\"WaitForFirstConsumer\" allocation mode.",
    },
    "ResourceClaimSchedulingStatus": {
        "": "ResourceClaimSchedulingStatus contains information about one particular "
        "ResourceClaim with \"WaitForFirstConsumer\" allocation mode.",
        "name": "Name matches the pod.spec.resourceClaims[*].Name field.",
        "unsuitableNodes": "UnsuitableNodes lists nodes that the ResourceClaim cannot be "
        "allocated for.\n\nThe size of this field is limited to 128, the same as for "
        "PodSchedulingSpec.PotentialNodes. This may get increased in the future, but not "
        "reduced.",
    },
    "ResourceSlice": _object(
        "ResourceSlice provides information about available resources on individual nodes.",
        nodeName="NodeName identifies the node which provides the resources if they are "
        "local to a node.\n\nA field selector can be used to list only ResourceSlice "
        "objects with a certain node name.",
        driverName="DriverName identifies the DRA driver providing the capacity information. "
        "A field selector can be used to list only ResourceSlice objects with a certain "
        "driver name.",
        namedResources="NamedResources describes available resources using the named "
        "resources model.",
    ),
    "NamedResourcesResources": {
        "": "NamedResourcesResources is used in ResourceModel.",
        "instances": "The list of all individual resources instances currently available.",
    },
    "NamedResourcesInstance": {
        "": "NamedResourcesInstance represents one individual hardware instance that can be "
        "selected based on its attributes.",
        "name": "Name is unique identifier among all resource instances managed by the "
        "driver on the node. It must be a DNS subdomain.",
        "attributes": "Attributes defines the attributes of this resource instance. The "
        "name of each attribute must be unique.",
    },
    "NamedResourcesAttribute": {
        "": "NamedResourcesAttribute is a combination of an attribute name and its value.",
        "name": "Name is unique identifier among all resource instances managed by the "
        "driver on the node. It must be a DNS subdomain.",
        "quantity": "QuantityValue is a quantity.",
        "bool": "BoolValue is a true/false value.",
        "int": "IntValue is a 64-bit integer.",
        "intSlice": "IntSliceValue is an array of 64-bit integers.",
        "string": "StringValue is a string.",
        "stringSlice": "StringSliceValue is an array of strings.",
        "version": "VersionValue is a semantic version according to semver.org spec 2.0.0.",
    },
    "NamedResourcesIntSlice": {
        "": "NamedResourcesIntSlice contains a slice of 64-bit integers.",
        "ints": "Ints is the slice of 64-bit integers.",
    },
    "NamedResourcesStringSlice": {
        "": "NamedResourcesStringSlice contains a slice of strings.",
        "strings": "Strings is the slice of strings.",
    },
    "ResourceClaimParameters": _object(
        "ResourceClaimParameters defines resource requests for a ResourceClaim in an "
        "in-tree format understood by Kubernetes.",
        generatedFrom="If this object was created from some other resource, then this "
        "links back to that resource. This field is used to find the in-tree representation "
        "of the claim parameters when the parameter reference of the claim refers to some "
        "unknown type.",
        shareable="Shareable indicates whether the allocated claim is meant to be shareable "
        "by multiple consumers at the same time.",
        driverRequests="DriverRequests describes all resources that are needed for the "
        "allocated claim. A single claim may use resources coming from different drivers. "
        "For each driver, this array has at most one entry which then may have one or more "
        "per-driver requests.\n\nMay be empty, in which case the claim can always be "
        "allocated.",
    ),
    "DriverRequests": {
        "": "DriverRequests describes all resources that are needed from one particular "
        "driver.",
        "driverName": _DRIVER_NAME,
        "vendorParameters": "VendorParameters are arbitrary setup parameters for all "
        "requests of the claim. They are ignored while allocating the claim.",
        "requests": "Requests describes all resources that are needed from the driver.",
    },
    "ResourceRequest": {
        "": "ResourceRequest is a request for resources from one particular driver.",
        "vendorParameters": "VendorParameters are arbitrary setup parameters for the "
        "requested resource. They are ignored while allocating a claim.",
        "namedResources": "NamedResources describes a request for resources with the named "
        "resources model.",
    },
    "NamedResourcesRequest": {
        "": "NamedResourcesRequest is used in ResourceRequestModel.",
        "selector": _SELECTOR,
    },
    "ResourceClassParameters": _object(
        "ResourceClassParameters defines resource requests for a ResourceClass in an "
        "in-tree format understood by Kubernetes.",
        generatedFrom="If this object was created from some other resource, then this "
        "links back to that resource. This field is used to find the in-tree representation "
        "of the class parameters when the parameter reference of the class refers to some "
        "unknown type.",
        vendorParameters="VendorParameters are arbitrary setup parameters for all claims "
        "using this class. They are ignored while allocating the claim. There must not be "
        "more than one entry per driver.",
        filters="Filters describes additional contraints that must be met when using the "
        "class.",
    ),
    "VendorParameters": {
        "": "VendorParameters are opaque parameters for one particular driver.",
        "driverName": _DRIVER_NAME,
        "parameters": "Parameters can be arbitrary setup parameters. They are ignored while "
        "allocating a claim.",
    },
    "ResourceFilter": {
        "": "ResourceFilter is a filter for resources from one particular driver.",
        "driverName": _DRIVER_NAME,
        "namedResources": "NamedResources describes a resource filter using the named "
        "resources model.",
    },
    "NamedResourcesFilter": {
        "": "NamedResourcesFilter is used in ResourceFilterModel.",
        "selector": _SELECTOR,
    },
}

_RESOURCE_V1: Final[dict[str, dict[str, str]]] = {
    "ResourcePool": {
        "": "ResourcePool describes the pool that ResourceSlices belong to.",
        "name": "Name is used to identify the pool. For node-local devices, this is often the "
        "node name, but this is not required.\n\nIt must not be longer than 253 characters and "
        "must consist of one or more DNS sub-domains separated by slashes. This field is "
        "immutable.",
        "generation": "Generation tracks the change in a pool over time. Whenever a driver "
        "changes something about one or more of the resources in a pool, it must change the "
        "generation in all ResourceSlices which are part of that pool. Consumers of "
        "ResourceSlices should only consider resources from the pool with the highest generation "
        "number. The generation may be reset by drivers, which should be fine for consumers, "
        "assuming that all ResourceSlices in a pool are updated to match or deleted.\n\nCombined "
        "with ResourceSliceCount, this mechanism enables consumers to detect pools which are "
        "comprised of multiple ResourceSlices and are in an incomplete state.",
        "resourceSliceCount": "ResourceSliceCount is the total number of ResourceSlices in the "
        "pool at this generation number. Must be greater than zero.\n\nConsumers can use this to "
        "check whether they have seen all ResourceSlices belonging to the same pool.",
    },
    "Counter": {
        "": "Counter describes a quantity associated with a device.",
        "value": "Value defines how much of a certain device counter is available.",
    },
    "CounterSet": {
        "": "CounterSet defines a named set of counters that are available to be used by devices "
        "defined in the ResourceSlice.\n\nThe counters are not allocatable by themselves, but can "
        "be referenced by devices. When a device is allocated, the portion of counters it uses "
        "will no longer be available for use by other devices.",
        "name": "Name defines the name of the counter set. It must be a DNS label.",
        "counters": "Counters defines the set of counters for this CounterSet The name of each "
        "counter must be unique in that set and must be a DNS label.\n\nThe maximum number of "
        "counters in all sets is 32.",
    },
    "DeviceCounterConsumption": {
        "": "DeviceCounterConsumption defines a set of counters that a device will consume from a "
        "CounterSet.",
        "counterSet": "CounterSet is the name of the set from which the counters defined will be "
        "consumed.",
        "counters": "Counters defines the counters that will be consumed by the device.\n\nThe "
        "maximum number counters in a device is 32. In addition, the maximum number of all "
        "counters in all devices is 1024 (for example, 64 devices with 16 counters each).",
    },
    "DeviceAttribute": {
        "": "DeviceAttribute must have exactly one field set.",
        "int": "IntValue is a number.",
        "bool": "BoolValue is a true/false value.",
        "string": "StringValue is a string. Must not be longer than 64 characters.",
        "version": "VersionValue is a semantic version according to semver.org spec 2.0.0. Must "
        "not be longer than 64 characters.",
    },
    "CapacityRequestPolicyRange": {
        "": "CapacityRequestPolicyRange defines a valid range for consumable capacity values.\n\n "
        " - If the requested amount is less than Min, it is rounded up to the Min value.\n  - If "
        "Step is set and the requested amount is between Min and Max but not aligned with Step,\n "
        "   it will be rounded up to the next value equal to Min + (n * Step).\n  - If Step is "
        "not set, the requested amount is used as-is if it falls within the range Min to Max (if "
        "set).\n  - If the requested or rounded amount exceeds Max (if set), the request does not "
        "satisfy the policy,\n    and the device cannot be allocated.",
        "min": "Min specifies the minimum capacity allowed for a consumption request.\n\nMin must "
        "be greater than or equal to zero, and less than or equal to the capacity value. "
        "requestPolicy.default must be more than or equal to the minimum.",
        "max": "Max defines the upper limit for capacity that can be requested.\n\nMax must be "
        "less than or equal to the capacity value. Min and requestPolicy.default must be less "
        "than or equal to the maximum.",
        "step": "Step defines the step size between valid capacity amounts within the "
        "range.\n\nMax (if set) and requestPolicy.default must be a multiple of Step. Min + Step "
        "must be less than or equal to the capacity value.",
    },
    "CapacityRequestPolicy": {
        "": "CapacityRequestPolicy defines how requests consume device capacity.\n\nMust not set "
        "more than one ValidRequestValues.",
        "default": "Default specifies how much of this capacity is consumed by a request that "
        "does not contain an entry for it in DeviceRequest's Capacity.",
        "validValues": "ValidValues defines a set of acceptable quantity values in consuming "
        "requests.\n\nMust not contain more than 10 entries. Must be sorted in ascending "
        "order.\n\nIf this field is set, Default must be defined and it must be included in "
        "ValidValues list.\n\nIf the requested amount does not match any valid value but smaller "
        "than some valid values, the scheduler calculates the smallest valid value that is "
        "greater than or equal to the request. That is: min(ceil(requestedValue) ∈ validValues), "
        "where requestedValue ≤ max(validValues).\n\nIf the requested amount exceeds all valid "
        "values, the request violates the policy, and this device cannot be allocated.",
        "validRange": "ValidRange defines an acceptable quantity value range in consuming "
        "requests.\n\nIf this field is set, Default must be defined and it must fall within the "
        "defined ValidRange.\n\nIf the requested amount does not fall within the defined range, "
        "the request violates the policy, and this device cannot be allocated.\n\nIf the request "
        "doesn't contain this capacity entry, Default value is used.",
    },
    "DeviceCapacity": {
        "": "DeviceCapacity describes a quantity associated with a device.",
        "value": "Value defines how much of a certain capacity that device has.\n\nThis field "
        "reflects the fixed total capacity and does not change. The consumed amount is tracked "
        "separately by scheduler and does not affect this value.",
        "requestPolicy": "RequestPolicy defines how this DeviceCapacity must be consumed when the "
        "device is allowed to be shared by multiple allocations.\n\nThe Device must have "
        "allowMultipleAllocations set to true in order to set a requestPolicy.\n\nIf unset, "
        "capacity requests are unconstrained: requests can consume any amount of capacity, as "
        "long as the total consumed across all allocations does not exceed the device's defined "
        "capacity. If request is also unset, default is the full capacity value.",
    },
    "DeviceTaint": {
        "": "The device this taint is attached to has the \"effect\" on any claim which does not "
        "tolerate the taint and, through the claim, to pods using the claim.",
        "key": "The taint key to be applied to a device. Must be a label name.",
        "value": "The taint value corresponding to the taint key. Must be a label value.",
        "effect": "The effect of the taint on claims that do not tolerate the taint and through "
        "such claims on the pods using them. Valid effects are NoSchedule and NoExecute. "
        "PreferNoSchedule as used for nodes is not valid here.",
        "timeAdded": "TimeAdded represents the time at which the taint was added. Added "
        "automatically during create or update if not set.",
    },
    "Device": {
        "": "Device represents one individual hardware instance that can be selected based on its "
        "attributes. Besides the name, exactly one field must be set.",
        "name": "Name is unique identifier among all devices managed by the driver in the pool. "
        "It must be a DNS label.",
        "attributes": "Attributes defines the set of attributes for this device. The name of each "
        "attribute must be unique in that set.\n\nThe maximum number of attributes and capacities "
        "combined is 32.",
        "capacity": "Capacity defines the set of capacities for this device. The name of each "
        "capacity must be unique in that set.\n\nThe maximum number of attributes and capacities "
        "combined is 32.",
        "consumesCounters": "ConsumesCounters defines a list of references to sharedCounters and "
        "the set of counters that the device will consume from those counter sets.\n\nThere can "
        "only be a single entry per counterSet.\n\nThe total number of device counter consumption "
        "entries must be <= 32. In addition, the total number in the entire ResourceSlice must be "
        "<= 1024 (for example, 64 devices with 16 counters each).",
        "nodeName": "NodeName identifies the node where the device is available.\n\nMust only be "
        "set if Spec.PerDeviceNodeSelection is set to true. At most one of NodeName, NodeSelector "
        "and AllNodes can be set.",
        "nodeSelector": "NodeSelector defines the nodes where the device is available.\n\nMust "
        "use exactly one term.\n\nMust only be set if Spec.PerDeviceNodeSelection is set to true. "
        "At most one of NodeName, NodeSelector and AllNodes can be set.",
        "allNodes": "AllNodes indicates that all nodes have access to the device.\n\nMust only be "
        "set if Spec.PerDeviceNodeSelection is set to true. At most one of NodeName, NodeSelector "
        "and AllNodes can be set.",
        "taints": "If specified, these are the driver-defined taints.\n\nThe maximum number of "
        "taints is 4.\n\nThis is an alpha field and requires enabling the DRADeviceTaints feature "
        "gate.",
        "bindsToNode": "BindsToNode indicates if the usage of an allocation involving this device "
        "has to be limited to exactly the node that was chosen when allocating the claim. If set "
        "to true, the scheduler will set the ResourceClaim.Status.Allocation.NodeSelector to "
        "match the node where the allocation was made.\n\nThis is an alpha field and requires "
        "enabling the DRADeviceBindingConditions and DRAResourceClaimDeviceStatus feature gates.",
        "bindingConditions": "BindingConditions defines the conditions for proceeding with "
        "binding. All of these conditions must be set in the per-device status conditions with a "
        "value of True to proceed with binding the pod to the node while scheduling the "
        "pod.\n\nThe maximum number of binding conditions is 4.\n\nThe conditions must be a valid "
        "condition type string.\n\nThis is an alpha field and requires enabling the "
        "DRADeviceBindingConditions and DRAResourceClaimDeviceStatus feature gates.",
        "bindingFailureConditions": "BindingFailureConditions defines the conditions for binding "
        "failure. They may be set in the per-device status conditions. If any is set to \"True\", "
        "a binding failure occurred.\n\nThe maximum number of binding failure conditions is "
        "4.\n\nThe conditions must be a valid condition type string.\n\nThis is an alpha field "
        "and requires enabling the DRADeviceBindingConditions and DRAResourceClaimDeviceStatus "
        "feature gates.",
        "allowMultipleAllocations": "AllowMultipleAllocations marks whether the device is allowed "
        "to be allocated to multiple DeviceRequests.\n\nIf AllowMultipleAllocations is set to "
        "true, the device can be allocated more than once, and all of its capacity is consumable, "
        "regardless of whether the requestPolicy is defined or not.",
    },
    "ResourceSliceSpec": {
        "": "ResourceSliceSpec contains the information published by the driver in one "
        "ResourceSlice.",
        "driver": "Driver identifies the DRA driver providing the capacity information. A field "
        "selector can be used to list only ResourceSlice objects with a certain driver "
        "name.\n\nMust be a DNS subdomain and should end with a DNS domain owned by the vendor of "
        "the driver. This field is immutable.",
        "pool": "Pool describes the pool that this ResourceSlice belongs to.",
        "nodeName": "NodeName identifies the node which provides the resources in this pool. A "
        "field selector can be used to list only ResourceSlice objects belonging to a certain "
        "node.\n\nThis field can be used to limit access from nodes to ResourceSlices with the "
        "same node name. It also indicates to autoscalers that adding new nodes of the same type "
        "as some old node might also make new resources available.\n\nExactly one of NodeName, "
        "NodeSelector, AllNodes, and PerDeviceNodeSelection must be set. This field is immutable.",
        "nodeSelector": "NodeSelector defines which nodes have access to the resources in the "
        "pool, when that pool is not limited to a single node.\n\nMust use exactly one "
        "term.\n\nExactly one of NodeName, NodeSelector, AllNodes, and PerDeviceNodeSelection "
        "must be set.",
        "allNodes": "AllNodes indicates that all nodes have access to the resources in the "
        "pool.\n\nExactly one of NodeName, NodeSelector, AllNodes, and PerDeviceNodeSelection "
        "must be set.",
        "devices": "Devices lists some or all of the devices in this pool.\n\nMust not have more "
        "than 128 entries.",
        "perDeviceNodeSelection": "PerDeviceNodeSelection defines whether the access from nodes "
        "to resources in the pool is set on the ResourceSlice level or on each device. If it is "
        "set to true, every device defined the ResourceSlice must specify this "
        "individually.\n\nExactly one of NodeName, NodeSelector, AllNodes, and "
        "PerDeviceNodeSelection must be set.",
        "sharedCounters": "SharedCounters defines a list of counter sets, each of which has a "
        "name and a list of counters available.\n\nThe names of the SharedCounters must be unique "
        "in the ResourceSlice.\n\nThe maximum number of counters in all sets is 32.",
    },
    "ResourceSlice": _object(
        "ResourceSlice represents one or more resources in a pool of similar resources, managed "
        "by a common driver. A pool may span more than one ResourceSlice, and exactly how many "
        "ResourceSlices comprise a pool is determined by the driver.\n\nAt the moment, the only "
        "supported resources are devices with attributes and capacities. Each device in a given "
        "pool, regardless of how many ResourceSlices, must have a unique name. The ResourceSlice "
        "in which a device gets published may change over time. The unique identifier for a "
        "device is the tuple <driver name>, <pool name>, <device name>.\n\nWhenever a driver "
        "needs to update a pool, it increments the pool.Spec.Pool.Generation number and updates "
        "all ResourceSlices with that new number and new resource definitions. A consumer must "
        "only use ResourceSlices with the highest generation number and ignore all "
        "others.\n\nWhen allocating all resources in a pool matching certain criteria or when "
        "looking for the best solution among several different alternatives, a consumer should "
        "check the number of ResourceSlices in a pool (included in each ResourceSlice) to "
        "determine whether its view of a pool is complete and if not, should wait until the "
        "driver has completed updating the pool.\n\nFor resources that are not local to a node, "
        "the node name is not set. Instead, the driver may use a node selector to specify where "
        "the devices are available.\n\nThis is an alpha type and requires enabling the "
        "DynamicResourceAllocation feature gate.",
        spec="Contains the information published by the driver.\n\nChanging the spec "
        "automatically increments the metadata.generation number.",
    ),
    "CELDeviceSelector": {
        "": "CELDeviceSelector contains a CEL expression for selecting a device.",
        "expression": "Expression is a CEL expression which evaluates a single device. It must "
        "evaluate to true when the device under consideration satisfies the desired criteria, and "
        "false when it does not. Any other result is an error and causes allocation of devices to "
        "abort.\n\nThe expression's input is an object named \"device\", which carries the "
        "following properties:\n\n- driver (string): the name of the driver which defines this "
        "device.\n\n- attributes (map[string]object): the device's attributes, grouped by "
        "prefix\n   (e.g. device.attributes[\"dra.example.com\"] evaluates to an object with "
        "all\n   of the attributes which were prefixed by \"dra.example.com\".\n\n- capacity "
        "(map[string]object): the device's capacities, grouped by prefix.\n\n- "
        "allowMultipleAllocations (bool): the allowMultipleAllocations property of the device\n   "
        "(v1.34+ with the DRAConsumableCapacity feature enabled).\n\nExample: Consider a device "
        "with driver=\"dra.example.com\", which exposes two attributes named \"model\" and "
        "\"ext.example.com/family\" and which exposes one capacity named \"modules\". This input "
        "to this expression would have the following fields:\n     device.driver\n    "
        "device.attributes[\"dra.example.com\"].model\n    "
        "device.attributes[\"ext.example.com\"].family\n    "
        "device.capacity[\"dra.example.com\"].modules\n\nThe device.driver field can be used to "
        "check for a specific driver, either as a high-level precondition (i.e. you only want to "
        "consider devices from this driver) or as part of a multi-clause expression that is meant "
        "to consider devices from different drivers.\n\nThe value type of each attribute is "
        "defined by the device definition, and users who write these expressions must consult the "
        "documentation for their specific drivers. The value type of each capacity is "
        "Quantity.\n\nIf an unknown prefix is used as a lookup in either device.attributes or "
        "device.capacity, an empty map will be returned. Any reference to an unknown field will "
        "cause an evaluation error and allocation to abort.\n\nA robust expression should check "
        "for the existence of attributes before referencing them.\n\nFor ease of use, the "
        "cel.bind() function is enabled, and can be used to simplify expressions that access "
        "multiple attributes with the same domain. For example:\n     cel.bind(dra, "
        "device.attributes[\"dra.example.com\"], dra.someBool && dra.anotherBool)\n\nThe length "
        "of the expression must be smaller or equal to 10 Ki. The cost of evaluating it is also "
        "limited based on the estimated number of logical steps.",
    },
    "DeviceSelector": {
        "": "DeviceSelector must have exactly one field set.",
        "cel": "CEL contains a CEL expression for selecting a device.",
    },
    "OpaqueDeviceConfiguration": {
        "": "OpaqueDeviceConfiguration contains configuration parameters for a driver in a format "
        "defined by the driver vendor.",
        "driver": "Driver is used to determine which kubelet plugin needs to be passed these "
        "configuration parameters.\n\nAn admission policy provided by the driver developer could "
        "use this to decide whether it needs to validate them.\n\nMust be a DNS subdomain and "
        "should end with a DNS domain owned by the vendor of the driver.",
        "parameters": "Parameters can contain arbitrary data. It is the responsibility of the "
        "driver developer to handle validation and versioning. Typically this includes "
        "self-identification and a version (\"kind\" + \"apiVersion\" for Kubernetes types), with "
        "conversion between different versions.\n\nThe length of the raw data must be smaller or "
        "equal to 10 Ki.",
    },
    "DeviceClassConfiguration": {
        "": "DeviceClassConfiguration is used in DeviceClass.",
        "opaque": "Opaque provides driver-specific configuration parameters.",
    },
    "DeviceToleration": {
        "": "The ResourceClaim this DeviceToleration is attached to tolerates any taint that "
        "matches the triple <key,value,effect> using the matching operator <operator>.",
        "key": "Key is the taint key that the toleration applies to. Empty means match all taint "
        "keys. If the key is empty, operator must be Exists; this combination means to match all "
        "values and all keys. Must be a label name.",
        "operator": "Operator represents a key's relationship to the value. Valid operators are "
        "Exists and Equal. Defaults to Equal. Exists is equivalent to wildcard for value, so that "
        "a ResourceClaim can tolerate all taints of a particular category.",
        "value": "Value is the taint value the toleration matches to. If the operator is Exists, "
        "the value must be empty, otherwise just a regular string. Must be a label value.",
        "effect": "Effect indicates the taint effect to match. Empty means match all taint "
        "effects. When specified, allowed values are NoSchedule and NoExecute.",
        "tolerationSeconds": "TolerationSeconds represents the period of time the toleration "
        "(which must be of effect NoExecute, otherwise this field is ignored) tolerates the "
        "taint. By default, it is not set, which means tolerate the taint forever (do not evict). "
        "Zero and negative values will be treated as 0 (evict immediately) by the system. If "
        "larger than zero, the time when the pod needs to be evicted is calculated as <time when "
        "taint was adedd> + <toleration seconds>.",
    },
    "DeviceClassSpec": {
        "": "DeviceClassSpec is used in a [DeviceClass] to define what can be allocated and how "
        "to configure it.",
        "selectors": "Each selector must be satisfied by a device which is claimed via this class.",
        "config": "Config defines configuration parameters that apply to each device that is "
        "claimed via this class. Some classses may potentially be satisfied by multiple drivers, "
        "so each instance of a vendor configuration applies to exactly one driver.\n\nThey are "
        "passed to the driver, but are not considered while allocating the claim.",
        "extendedResourceName": "ExtendedResourceName is the extended resource name for the "
        "devices of this class. The devices of this class can be used to satisfy a pod's extended "
        "resource requests. It has the same format as the name of a pod's extended resource. It "
        "should be unique among all the device classes in a cluster. If two device classes have "
        "the same name, then the class created later is picked to satisfy a pod's extended "
        "resource requests. If two classes are created at the same time, then the name of the "
        "class lexicographically sorted first is picked.\n\nThis is an alpha field.",
    },
    "DeviceClass": _object(
        "DeviceClass is a vendor- or admin-provided resource that contains device configuration "
        "and selectors. It can be referenced in the device requests of a claim to apply these "
        "presets. Cluster scoped.\n\nThis is an alpha type and requires enabling the "
        "DynamicResourceAllocation feature gate.",
        spec="Spec defines what can be allocated and how to configure it.\n\nThis is mutable. "
        "Consumers have to be prepared for classes changing at any time, either because they get "
        "updated or replaced. Claim allocations are done once based on whatever was set in "
        "classes at the time of allocation.\n\nChanging the spec automatically increments the "
        "metadata.generation number.",
    ),
    "CapacityRequirements": {
        "": "CapacityRequirements defines the capacity requirements for a specific device request.",
        "requests": "Requests represent individual device resource requests for distinct "
        "resources, all of which must be provided by the device.\n\nThis value is used as an "
        "additional filtering condition against the available capacity on the device. This is "
        "semantically equivalent to a CEL selector with "
        "`device.capacity[<domain>].<name>.compareTo(quantity(<request quantity>)) >= 0`. For "
        "example, device.capacity['test-driver.cdi.k8s.io'].counters.compareTo(quantity('2')) >= "
        "0.\n\nWhen a requestPolicy is defined, the requested amount is adjusted upward to the "
        "nearest valid value based on the policy. If the requested amount cannot be adjusted to a "
        "valid value—because it exceeds what the requestPolicy allows— the device is considered "
        "ineligible for allocation.\n\nFor any capacity that is not explicitly requested: - If no "
        "requestPolicy is set, the default consumed capacity is equal to the full device "
        "capacity\n  (i.e., the whole device is claimed). - If a requestPolicy is set, the "
        "default consumed capacity is determined according to that policy.\n\nIf the device "
        "allows multiple allocation, the aggregated amount across all requests must not exceed "
        "the capacity value. The consumed capacity, which may be adjusted based on the "
        "requestPolicy if defined, is recorded in the resource claim\u2019s "
        "status.devices[*].consumedCapacity field.",
    },
    "ExactDeviceRequest": {
        "": "ExactDeviceRequest is a request for one or more identical devices.",
        "deviceClassName": "DeviceClassName references a specific DeviceClass, which can define "
        "additional configuration and selectors to be inherited by this request.\n\nA "
        "DeviceClassName is required.\n\nAdministrators may use this to restrict which devices "
        "may get requested by only installing classes with selectors for permitted devices. If "
        "users are free to request anything without restrictions, then administrators can create "
        "an empty DeviceClass for users to reference.",
        "selectors": "Selectors define criteria which must be satisfied by a specific device in "
        "order for that device to be considered for this request. All selectors must be satisfied "
        "for a device to be considered.",
        "allocationMode": "AllocationMode and its related fields define how devices are allocated "
        "to satisfy this request. Supported values are:\n\n- ExactCount: This request is for a "
        "specific number of devices.\n  This is the default. The exact number is provided in "
        "the\n  count field.\n\n- All: This request is for all of the matching devices in a "
        "pool.\n  At least one device must exist on the node for the allocation to succeed.\n  "
        "Allocation will fail if some devices are already allocated,\n  unless adminAccess is "
        "requested.\n\nIf AllocationMode is not specified, the default mode is ExactCount. If the "
        "mode is ExactCount and count is not specified, the default count is one. Any other "
        "requests must specify this field.\n\nMore modes may get added in the future. Clients "
        "must refuse to handle requests with unknown modes.",
        "count": "Count is used only when the count mode is \"ExactCount\". Must be greater than "
        "zero. If AllocationMode is ExactCount and this field is not specified, the default is "
        "one.",
        "adminAccess": "AdminAccess indicates that this is a claim for administrative access to "
        "the device(s). Claims with AdminAccess are expected to be used for monitoring or other "
        "management services for a device.\n\nThey ignore all ordinary claims to the device with "
        "respect to access modes and any resource allocations.\n\nThis is an alpha field and "
        "requires enabling the DRAAdminAccess feature gate. Admin access is disabled if this "
        "field is unset or set to false, otherwise it is enabled.",
        "tolerations": "If specified, the request's tolerations.\n\nTolerations for NoSchedule "
        "are required to allocate a device which has a taint with that effect. The same applies "
        "to NoExecute.\n\nIn addition, should any of the allocated devices get tainted with "
        "NoExecute after allocation and that effect is not tolerated, then all pods consuming the "
        "ResourceClaim get deleted to evict them. The scheduler will not let new pods reserve the "
        "claim while it has these tainted devices. Once all pods are evicted, the claim will get "
        "deallocated.\n\nThe maximum number of tolerations is 16.\n\nThis is an alpha field and "
        "requires enabling the DRADeviceTaints feature gate.",
        "capacity": "Capacity define resource requirements against each capacity.\n\nIf this "
        "field is unset and the device supports multiple allocations, the default value will be "
        "applied to each capacity according to requestPolicy. For the capacity that has no "
        "requestPolicy, default is the full capacity value.\n\nApplies to each device allocation. "
        "If Count > 1, the request fails if there aren't enough devices that meet the "
        "requirements. If AllocationMode is set to All, the request fails if there are devices "
        "that otherwise match the request, and have this capacity, with a value >= the requested "
        "amount, but which cannot be allocated to this request.",
    },
    "DeviceSubRequest": {
        "": "DeviceSubRequest describes a request for device provided in the "
        "claim.spec.devices.requests[].firstAvailable array. Each is typically a request for a "
        "single resource like a device, but can also ask for several identical "
        "devices.\n\nDeviceSubRequest is similar to ExactDeviceRequest, but doesn't expose the "
        "AdminAccess field as that one is only supported when requesting a specific device.",
        "name": "Name can be used to reference this subrequest in the list of constraints or the "
        "list of configurations for the claim. References must use the format <main "
        "request>/<subrequest>.\n\nMust be a DNS label.",
        "deviceClassName": "DeviceClassName references a specific DeviceClass, which can define "
        "additional configuration and selectors to be inherited by this subrequest.\n\nA class is "
        "required. Which classes are available depends on the cluster.\n\nAdministrators may use "
        "this to restrict which devices may get requested by only installing classes with "
        "selectors for permitted devices. If users are free to request anything without "
        "restrictions, then administrators can create an empty DeviceClass for users to reference.",
        "selectors": "Selectors define criteria which must be satisfied by a specific device in "
        "order for that device to be considered for this subrequest. All selectors must be "
        "satisfied for a device to be considered.",
        "allocationMode": "AllocationMode and its related fields define how devices are allocated "
        "to satisfy this subrequest. Supported values are:\n\n- ExactCount: This request is for a "
        "specific number of devices.\n  This is the default. The exact number is provided in "
        "the\n  count field.\n\n- All: This subrequest is for all of the matching devices in a "
        "pool.\n  Allocation will fail if some devices are already allocated,\n  unless "
        "adminAccess is requested.\n\nIf AllocationMode is not specified, the default mode is "
        "ExactCount. If the mode is ExactCount and count is not specified, the default count is "
        "one. Any other subrequests must specify this field.\n\nMore modes may get added in the "
        "future. Clients must refuse to handle requests with unknown modes.",
        "count": "Count is used only when the count mode is \"ExactCount\". Must be greater than "
        "zero. If AllocationMode is ExactCount and this field is not specified, the default is "
        "one.",
        "tolerations": "If specified, the request's tolerations.\n\nTolerations for NoSchedule "
        "are required to allocate a device which has a taint with that effect. The same applies "
        "to NoExecute.\n\nIn addition, should any of the allocated devices get tainted with "
        "NoExecute after allocation and that effect is not tolerated, then all pods consuming the "
        "ResourceClaim get deleted to evict them. The scheduler will not let new pods reserve the "
        "claim while it has these tainted devices. Once all pods are evicted, the claim will get "
        "deallocated.\n\nThe maximum number of tolerations is 16.\n\nThis is an alpha field and "
        "requires enabling the DRADeviceTaints feature gate.",
        "capacity": "Capacity define resource requirements against each capacity.\n\nIf this "
        "field is unset and the device supports multiple allocations, the default value will be "
        "applied to each capacity according to requestPolicy. For the capacity that has no "
        "requestPolicy, default is the full capacity value.\n\nApplies to each device allocation. "
        "If Count > 1, the request fails if there aren't enough devices that meet the "
        "requirements. If AllocationMode is set to All, the request fails if there are devices "
        "that otherwise match the request, and have this capacity, with a value >= the requested "
        "amount, but which cannot be allocated to this request.",
    },
    "DeviceRequest": {
        "": "DeviceRequest is a request for devices required for a claim. This is typically a "
        "request for a single resource like a device, but can also ask for several identical "
        "devices. With FirstAvailable it is also possible to provide a prioritized list of "
        "requests.",
        "name": "Name can be used to reference this request in a "
        "pod.spec.containers[].resources.claims entry and in a constraint of the "
        "claim.\n\nReferences using the name in the DeviceRequest will uniquely identify a "
        "request when the Exactly field is set. When the FirstAvailable field is set, a reference "
        "to the name of the DeviceRequest will match whatever subrequest is chosen by the "
        "scheduler.\n\nMust be a DNS label.",
        "exactly": "Exactly specifies the details for a single request that must be met exactly "
        "for the request to be satisfied.\n\nOne of Exactly or FirstAvailable must be set.",
        "firstAvailable": "FirstAvailable contains subrequests, of which exactly one will be "
        "selected by the scheduler. It tries to satisfy them in the order in which they are "
        "listed here. So if there are two entries in the list, the scheduler will only check the "
        "second one if it determines that the first one can not be used.\n\nDRA does not yet "
        "implement scoring, so the scheduler will select the first set of devices that satisfies "
        "all the requests in the claim. And if the requirements can be satisfied on more than one "
        "node, other scheduling features will determine which node is chosen. This means that the "
        "set of devices allocated to a claim might not be the optimal set available to the "
        "cluster. Scoring will be implemented later.",
    },
    "DeviceConstraint": {
        "": "DeviceConstraint must have exactly one field set besides Requests.",
        "requests": "Requests is a list of the one or more requests in this claim which must "
        "co-satisfy this constraint. If a request is fulfilled by multiple devices, then all of "
        "the devices must satisfy the constraint. If this is not specified, this constraint "
        "applies to all requests in this claim.\n\nReferences to subrequests must include the "
        "name of the main request and may include the subrequest using the format <main "
        "request>[/<subrequest>]. If just the main request is given, the constraint applies to "
        "all subrequests.",
        "matchAttribute": "MatchAttribute requires that all devices in question have this "
        "attribute and that its type and value are the same across those devices.\n\nFor example, "
        "if you specified \"dra.example.com/numa\" (a hypothetical example!), then only devices "
        "in the same NUMA node will be chosen. A device which does not have that attribute will "
        "not be chosen. All devices should use a value of the same type for this attribute "
        "because that is part of its specification, but if one device doesn't, then it also will "
        "not be chosen.\n\nMust include the domain qualifier.",
        "distinctAttribute": "DistinctAttribute requires that all devices in question have this "
        "attribute and that its type and value are unique across those devices.\n\nThis acts as "
        "the inverse of MatchAttribute.\n\nThis constraint is used to avoid allocating multiple "
        "requests to the same device by ensuring attribute-level differentiation.\n\nThis is "
        "useful for scenarios where resource requests must be fulfilled by separate physical "
        "devices. For example, a container requests two network interfaces that must be allocated "
        "from two different physical NICs.",
    },
    "DeviceClaimConfiguration": {
        "": "DeviceClaimConfiguration is used for configuration parameters in DeviceClaim.",
        "requests": "Requests lists the names of requests where the configuration applies. If "
        "empty, it applies to all requests.\n\nReferences to subrequests must include the name of "
        "the main request and may include the subrequest using the format <main "
        "request>[/<subrequest>]. If just the main request is given, the configuration applies to "
        "all subrequests.",
        "opaque": "Opaque provides driver-specific configuration parameters.",
    },
    "DeviceClaim": {
        "": "DeviceClaim defines how to request devices with a ResourceClaim.",
        "requests": "Requests represent individual requests for distinct devices which must all "
        "be satisfied. If empty, nothing needs to be allocated.",
        "constraints": "These constraints must be satisfied by the set of devices that get "
        "allocated for the claim.",
        "config": "This field holds configuration for multiple potential drivers which could "
        "satisfy requests in this claim. It is ignored while allocating the claim.",
    },
    "ResourceClaimSpec": {
        "": "ResourceClaimSpec defines what is being requested in a ResourceClaim and how to "
        "configure it.",
        "devices": "Devices defines how to request devices.",
    },
    "ResourceClaimConsumerReference": {
        "": "ResourceClaimConsumerReference contains enough information to let you locate the "
        "consumer of a ResourceClaim. The user must be a resource in the same namespace as the "
        "ResourceClaim.",
        "apiGroup": "APIGroup is the group for the resource being referenced. It is empty for the "
        "core API. This matches the group in the APIVersion that is used when creating the "
        "resources.",
        "resource": "Resource is the type of resource being referenced, for example \"pods\".",
        "name": "Name is the name of resource being referenced.",
        "uid": "UID identifies exactly one incarnation of the resource.",
    },
    "DeviceRequestAllocationResult": {
        "": "DeviceRequestAllocationResult contains the allocation result for one request.",
        "request": "Request is the name of the request in the claim which caused this device to "
        "be allocated. If it references a subrequest in the firstAvailable list on a "
        "DeviceRequest, this field must include both the name of the main request and the "
        "subrequest using the format <main request>/<subrequest>.\n\nMultiple devices may have "
        "been allocated per request.",
        "driver": "Driver specifies the name of the DRA driver whose kubelet plugin should be "
        "invoked to process the allocation once the claim is needed on a node.\n\nMust be a DNS "
        "subdomain and should end with a DNS domain owned by the vendor of the driver.",
        "pool": "This name together with the driver name and the device name field identify which "
        "device was allocated (`<driver name>/<pool name>/<device name>`).\n\nMust not be longer "
        "than 253 characters and may contain one or more DNS sub-domains separated by slashes.",
        "device": "Device references one device instance via its name in the driver's resource "
        "pool. It must be a DNS label.",
        "adminAccess": "AdminAccess indicates that this device was allocated for administrative "
        "access. See the corresponding request field for a definition of mode.\n\nThis is an "
        "alpha field and requires enabling the DRAAdminAccess feature gate. Admin access is "
        "disabled if this field is unset or set to false, otherwise it is enabled.",
        "tolerations": "A copy of all tolerations specified in the request at the time when the "
        "device got allocated.\n\nThe maximum number of tolerations is 16.\n\nThis is an alpha "
        "field and requires enabling the DRADeviceTaints feature gate.",
        "bindingConditions": "BindingConditions contains a copy of the BindingConditions from the "
        "corresponding ResourceSlice at the time of allocation.\n\nThis is an alpha field and "
        "requires enabling the DRADeviceBindingConditions and DRAResourceClaimDeviceStatus "
        "feature gates.",
        "bindingFailureConditions": "BindingFailureConditions contains a copy of the "
        "BindingFailureConditions from the corresponding ResourceSlice at the time of "
        "allocation.\n\nThis is an alpha field and requires enabling the "
        "DRADeviceBindingConditions and DRAResourceClaimDeviceStatus feature gates.",
        "shareID": "ShareID uniquely identifies an individual allocation share of the device, "
        "used when the device supports multiple simultaneous allocations. It serves as an "
        "additional map key to differentiate concurrent shares of the same device.",
        "consumedCapacity": "ConsumedCapacity tracks the amount of capacity consumed per device "
        "as part of the claim request. The consumed amount may differ from the requested amount: "
        "it is rounded up to the nearest valid value based on the device\u2019s requestPolicy if "
        "applicable (i.e., may not be less than the requested amount).\n\nThe total consumed "
        "capacity for each device must not exceed the DeviceCapacity's Value.\n\nThis field is "
        "populated only for devices that allow multiple allocations. All capacity entries are "
        "included, even if the consumed amount is zero.",
    },
    "DeviceAllocationConfiguration": {
        "": "DeviceAllocationConfiguration gets embedded in an AllocationResult.",
        "source": "Source records whether the configuration comes from a class and thus is not "
        "something that a normal user would have been able to set or from a claim.",
        "requests": "Requests lists the names of requests where the configuration applies. If "
        "empty, its applies to all requests.\n\nReferences to subrequests must include the name "
        "of the main request and may include the subrequest using the format <main "
        "request>[/<subrequest>]. If just the main request is given, the configuration applies to "
        "all subrequests.",
        "opaque": "Opaque provides driver-specific configuration parameters.",
    },
    "DeviceAllocationResult": {
        "": "DeviceAllocationResult is the result of allocating devices.",
        "results": "Results lists all allocated devices.",
        "config": "This field is a combination of all the claim and class configuration "
        "parameters. Drivers can distinguish between those based on a flag.\n\nThis includes "
        "configuration parameters for drivers which have no allocated devices in the result "
        "because it is up to the drivers which configuration parameters they support. They can "
        "silently ignore unknown configuration parameters.",
    },
    "AllocationResult": {
        "": "AllocationResult contains attributes of an allocated resource.",
        "devices": "Devices is the result of allocating devices.",
        "nodeSelector": "NodeSelector defines where the allocated resources are available. If "
        "unset, they are available everywhere.",
        "allocationTimestamp": "AllocationTimestamp stores the time when the resources were "
        "allocated. This field is not guaranteed to be set, in which case that time is "
        "unknown.\n\nThis is an alpha field and requires enabling the DRADeviceBindingConditions "
        "and DRAResourceClaimDeviceStatus feature gate.",
    },
    "NetworkDeviceData": {
        "": "NetworkDeviceData provides network-related details for the allocated device. This "
        "information may be filled by drivers or other components to configure or identify the "
        "device within a network context.",
        "interfaceName": "InterfaceName specifies the name of the network interface associated "
        "with the allocated device. This might be the name of a physical or virtual network "
        "interface being configured in the pod.\n\nMust not be longer than 256 characters.",
        "ips": "IPs lists the network addresses assigned to the device's network interface. This "
        "can include both IPv4 and IPv6 addresses. The IPs are in the CIDR notation, which "
        "includes both the address and the associated subnet mask. e.g.: \"192.0.2.5/24\" for "
        "IPv4 and \"2001:db8::5/64\" for IPv6.",
        "hardwareAddress": "HardwareAddress represents the hardware address (e.g. MAC Address) of "
        "the device's network interface.\n\nMust not be longer than 128 characters.",
    },
    "AllocatedDeviceStatus": {
        "": "AllocatedDeviceStatus contains the status of an allocated device, if the driver "
        "chooses to report it. This may include driver-specific information.\n\nThe combination "
        "of Driver, Pool, Device, and ShareID must match the corresponding key in "
        "Status.Allocation.Devices.",
        "driver": "Driver specifies the name of the DRA driver whose kubelet plugin should be "
        "invoked to process the allocation once the claim is needed on a node.\n\nMust be a DNS "
        "subdomain and should end with a DNS domain owned by the vendor of the driver.",
        "pool": "This name together with the driver name and the device name field identify which "
        "device was allocated (`<driver name>/<pool name>/<device name>`).\n\nMust not be longer "
        "than 253 characters and may contain one or more DNS sub-domains separated by slashes.",
        "device": "Device references one device instance via its name in the driver's resource "
        "pool. It must be a DNS label.",
        "shareID": "ShareID uniquely identifies an individual allocation share of the device.",
        "conditions": "Conditions contains the latest observation of the device's state. If the "
        "device has been configured according to the class and claim config references, the "
        "`Ready` condition should be True.\n\nMust not contain more than 8 entries.",
        "data": "Data contains arbitrary driver-specific data.\n\nThe length of the raw data must "
        "be smaller or equal to 10 Ki.",
        "networkData": "NetworkData contains network-related information specific to the device.",
    },
    "ResourceClaimStatus": {
        "": "ResourceClaimStatus tracks whether the resource has been allocated and what the "
        "result of that was.",
        "allocation": "Allocation is set once the claim has been allocated successfully.",
        "reservedFor": "ReservedFor indicates which entities are currently allowed to use the "
        "claim. A Pod which references a ResourceClaim which is not reserved for that Pod will "
        "not be started. A claim that is in use or might be in use because it has been reserved "
        "must not get deallocated.\n\nIn a cluster with multiple scheduler instances, two pods "
        "might get scheduled concurrently by different schedulers. When they reference the same "
        "ResourceClaim which already has reached its maximum number of consumers, only one pod "
        "can be scheduled.\n\nBoth schedulers try to add their pod to the "
        "claim.status.reservedFor field, but only the update that reaches the API server first "
        "gets stored. The other one fails with an error and the scheduler which issued it knows "
        "that it must put the pod back into the queue, waiting for the ResourceClaim to become "
        "usable again.\n\nThere can be at most 256 such reservations. This may get increased in "
        "the future, but not reduced.",
        "devices": "Devices contains the status of each device allocated for this claim, as "
        "reported by the driver. This can include driver-specific information. Entries are owned "
        "by their respective drivers.",
    },
    "ResourceClaim": _object(
        "ResourceClaim describes a request for access to resources in the cluster, for use by "
        "workloads. For example, if a workload needs an accelerator device with specific "
        "properties, this is how that request is expressed. The status stanza tracks whether this "
        "claim has been satisfied and what specific resources have been allocated.\n\nThis is an "
        "alpha type and requires enabling the DynamicResourceAllocation feature gate.",
        spec="Spec describes what is being requested and how to configure it. The spec is "
        "immutable.",
        status="Status describes whether the claim is ready to use and what has been allocated.",
    ),
    "ResourceClaimTemplateSpec": {
        "": "ResourceClaimTemplateSpec contains the metadata and fields for a ResourceClaim.",
        "metadata": "ObjectMeta may contain labels and annotations that will be copied into the "
        "ResourceClaim when creating it. No other fields are allowed and will be rejected during "
        "validation.",
        "spec": "Spec for the ResourceClaim. The entire content is copied unchanged into the "
        "ResourceClaim that gets created from this template. The same fields as in a "
        "ResourceClaim are also valid here.",
    },
    "ResourceClaimTemplate": _object(
        "ResourceClaimTemplate is used to produce ResourceClaim objects.\n\nThis is an alpha type "
        "and requires enabling the DynamicResourceAllocation feature gate.",
        spec="Describes the ResourceClaim that is to be generated.\n\nThis field is immutable. A "
        "ResourceClaim will get created by the control plane for a Pod when needed and then not "
        "get updated anymore.",
    ),
}

_META: Final[dict[str, dict[str, str]]] = {
    "ObjectMeta": {
        "": "ObjectMeta is metadata that all persisted resources must have, which includes "
        "all objects users must create.",
        "name": "Name must be unique within a namespace. Is required when creating "
        "resources, although some resources may allow a client to request the generation "
        "of an appropriate name automatically. Name is primarily intended for creation "
        "idempotence and configuration definition. Cannot be updated.",
        "generateName": "GenerateName is an optional prefix, used by the server, to "
        "generate a unique name ONLY IF the Name field has not been provided. The name "
        "returned to the client will be this prefix followed by a random suffix.",
        "namespace": "Namespace defines the space within which each name must be unique. "
        "An empty namespace is equivalent to the \"default\" namespace. Not all objects "
        "are required to be scoped to a namespace. Cannot be updated.",
        "selfLink": "Deprecated: selfLink is a legacy read-only field that is no longer "
        "populated by the system.",
        "uid": "UID is the unique in time and space value for this object. It is typically "
        "generated by the server on successful creation of a resource and is not allowed "
        "to change on PUT operations. Populated by the system. Read-only.",
        "resourceVersion": "An opaque value that represents the internal version of this "
        "object that can be used by clients to determine when objects have changed. May be "
        "used for optimistic concurrency, change detection, and the watch operation on a "
        "resource or set of resources. Populated by the system. Read-only.",
        "generation": "A sequence number representing a specific generation of the "
        "desired state. Populated by the system. Read-only.",
        "creationTimestamp": "CreationTimestamp is a timestamp representing the server time "
        "when this object was created. Populated by the system. Read-only. Null for lists.",
        "deletionTimestamp": "DeletionTimestamp is RFC 3339 date and time at which this "
        "resource will be deleted. This field is set by the server when a graceful deletion "
        "is requested by the user, and is not directly settable by a client.",
        "deletionGracePeriodSeconds": "Number of seconds allowed for this object to "
        "gracefully terminate before it will be removed from the system. Only set when "
        "deletionTimestamp is also set. May only be shortened. Read-only.",
        "labels": "Map of string keys and values that can be used to organize and "
        "categorize (scope and select) objects.",
        "annotations": "Annotations is an unstructured key value map stored with a resource "
        "that may be set by external tools to store and retrieve arbitrary metadata. They "
        "are not queryable and should be preserved when modifying objects.",
        "ownerReferences": "List of objects depended by this object. If ALL objects in the "
        "list have been deleted, this object will be garbage collected. If this object is "
        "managed by a controller, then an entry in this list will point to this "
        "controller, with the controller field set to true. There cannot be more than one "
        "managing controller.",
        "finalizers": "Must be empty before the object is deleted from the registry. Each "
        "entry is an identifier for the responsible component that will remove the entry "
        "from the list. If the deletionTimestamp of the object is non-nil, entries in this "
        "list can only be removed.",
        "managedFields": "ManagedFields maps workflow-id and version to the set of fields "
        "that are managed by that workflow. This is mostly for internal housekeeping, and "
        "users typically shouldn't need to set or understand this field.",
    },
    "ListMeta": {
        "": "ListMeta describes metadata that synthetic resources must have, including lists "
        "and various status objects. A resource may have only one of {ObjectMeta, "
        "ListMeta}.",
        "selfLink": "Deprecated: selfLink is a legacy read-only field that is no longer "
        "populated by the system.",
        "resourceVersion": "String that identifies the server's internal version of this "
        "object that can be used by clients to determine when objects have changed. Value "
        "must be treated as opaque by clients and passed unmodified back to the server. "
        "Populated by the system. Read-only.",
        "continue": "continue may be set if the user set a limit on the number of items "
        "returned, and indicates that the server has more data available. The value is "
        "opaque and may be used to issue another request to the endpoint that served this "
        "list to retrieve the next set of available objects. Continuing a consistent list "
        "may not be possible if the server configuration has changed or more than a few "
        "minutes have passed.",
        "remainingItemCount": "remainingItemCount is the number of subsequent items in the "
        "list which are not included in this list response. It is only set when the list "
        "is unfiltered and paginated, and is an estimate when the list is served from a "
        "newer resource version.",
    },
    "OwnerReference": {
        "": "OwnerReference contains enough information to let you identify an owning "
        "object. An owning object must be in the same namespace as the dependent, or be "
        "cluster-scoped, so there is no namespace field.",
        "apiVersion": "API version of the referent.",
        "kind": "Kind of the referent.",
        "name": "Name of the referent.",
        "uid": "UID of the referent.",
        "controller": "If true, this reference points to the managing controller.",
        "blockOwnerDeletion": "If true, AND if the owner has the \"foregroundDeletion\" "
        "finalizer, then the owner cannot be deleted from the key-value store until this "
        "reference is removed. Defaults to false.",
    },
    "ManagedFieldsEntry": {
        "": "ManagedFieldsEntry is a workflow-id, a FieldSet and the group version of the "
        "resource that the fieldset applies to.",
        "manager": "Manager is an identifier of the workflow managing these fields.",
        "operation": "Operation is the type of operation which lead to this "
        "ManagedFieldsEntry being created. The only valid values for this field are "
        "'Apply' and 'Update'.",
        "apiVersion": "APIVersion defines the version of this resource that this field set "
        "applies to.",
        "time": "Time is the timestamp of when the ManagedFields entry was added.",
        "fieldsType": "FieldsType is the discriminator for the different fields format and "
        "version. There is currently only one possible value: \"FieldsV1\"",
        "fieldsV1": "FieldsV1 holds the first JSON version format as described in the "
        "\"FieldsV1\" type.",
        "subresource": "Subresource is the name of the subresource used to update that "
        "object, or empty string if the object was updated through the main resource.",
    },
    "LabelSelector": {
        "": "A label selector is a label query over a set of resources. The result of "
        "matchLabels and matchExpressions are ANDed. An empty label selector matches all "
        "objects. A null label selector matches no objects.",
        "matchLabels": "matchLabels is a map of {key,value} pairs. A single {key,value} in "
        "the matchLabels map is equivalent to an element of matchExpressions, whose key "
        "field is \"key\", the operator is \"In\", and the values array contains only "
        "\"value\". The requirements are ANDed.",
        "matchExpressions": "matchExpressions is a list of label selector requirements. "
        "The requirements are ANDed.",
    },
    "LabelSelectorRequirement": {
        "": "A label selector requirement is a selector that contains values, a key, and an "
        "operator that relates the key and values.",
        "key": "key is the label key that the selector applies to.",
        "operator": "operator represents a key's relationship to a set of values. Valid "
        "operators are In, NotIn, Exists and DoesNotExist.",
        "values": "values is an array of string values. If the operator is In or NotIn, the "
        "values array must be non-empty. If the operator is Exists or DoesNotExist, the "
        "values array must be empty.",
    },
}


_CORE: Final[dict[str, dict[str, str]]] = {
    "NodeSelector": {
        "": "A node selector represents the union of the results of one or more label "
        "queries over a set of nodes; that is, it represents the OR of the selectors "
        "represented by the node selector terms.",
        "nodeSelectorTerms": "Required. A list of node selector terms. The terms are ORed.",
    },
    "NodeSelectorTerm": {
        "": "A null or empty node selector term matches no objects. The requirements of them "
        "are ANDed. The TopologySelectorTerm type implements a subset of the "
        "NodeSelectorTerm.",
        "matchExpressions": "A list of node selector requirements by node's labels.",
        "matchFields": "A list of node selector requirements by node's fields.",
    },
    "NodeSelectorRequirement": {
        "": "A node selector requirement is a selector that contains values, a key, and an "
        "operator that relates the key and values.",
        "key": "The label key that the selector applies to.",
        "operator": "Represents a key's relationship to a set of values. Valid operators are "
        "In, NotIn, Exists, DoesNotExist. Gt, and Lt.",
        "values": "An array of string values. If the operator is In or NotIn, the values "
        "array must be non-empty. If the operator is Exists or DoesNotExist, the values "
        "array must be empty. If the operator is Gt or Lt, the values array must have a "
        "single element, which will be interpreted as an integer. This array is replaced "
        "during a strategic merge patch.",
    },
    "Namespace": _object(
        "Namespace provides a scope for Names. Use of multiple namespaces is optional.",
        spec="Spec defines the behavior of the Namespace.",
        status="Status describes the current status of a Namespace."),
    "NamespaceSpec": {
        "": "NamespaceSpec describes the attributes on a Namespace.",
        "finalizers": "Finalizers is an opaque list of values that must be empty to "
        "permanently remove object from storage.",
    },
    "NamespaceStatus": {
        "": "NamespaceStatus is information about the current status of a Namespace.",
        "phase": "Phase is the current lifecycle phase of the namespace: Active or "
        "Terminating.",
        "conditions": "Represents the latest available observations of a namespace's "
        "current state.",
    },
    "Node": _object(
        "Node is a worker node in Kubernetes. Each node will have a unique identifier in the "
        "cache (i.e. in etcd).",
        spec="Spec defines the behavior of a node.",
        status="Most recently observed status of the node. Populated by the system. "
        "Read-only."),
    "Service": _object(
        "Service is a named abstraction of software service (for example, mysql) consisting "
        "of a local port (for example 3306) that the proxy listens on, and the selector that "
        "determines which pods will answer requests sent through the proxy.",
        spec="Spec defines the behavior of a service.",
        status="Most recently observed status of the service. Populated by the system. "
        "Read-only."),
    "ServiceSpec": {
        "": "ServiceSpec describes the attributes that a user creates on a service.",
        "ports": "The list of ports that are exposed by this service.",
        "selector": "Route service traffic to pods with label keys and values matching this "
        "selector. If empty or not present, the service is assumed to have an external "
        "process managing its endpoints.",
        "clusterIP": "The IP address of the service, usually assigned randomly; \"None\" "
        "makes a headless service.",
        "clusterIPs": "The IP addresses assigned to this service, the first being clusterIP; "
        "at most one per IP family.",
        "type": "How the Service is exposed: ClusterIP (default), NodePort, LoadBalancer or "
        "ExternalName.",
        "externalIPs": "IP addresses for which nodes in the cluster also accept traffic for "
        "this service.",
        "sessionAffinity": "ClientIP enables client IP based session affinity; None "
        "(default) disables it.",
        "externalName": "The external reference that discovery mechanisms return as an alias "
        "for this service (a CNAME record); requires type ExternalName.",
        "ipFamilies": "The IP families (IPv4, IPv6) assigned to this service.",
        "ipFamilyPolicy": "The dual-stack-ness requested or required by this Service: "
        "SingleStack, PreferDualStack or RequireDualStack.",
        "internalTrafficPolicy": "How cluster-internal traffic is routed: Cluster (default) "
        "to all endpoints, Local to node-local endpoints only.",
    },
    "ServicePort": {
        "": "ServicePort contains information on a service's port.",
        "name": "The name of this port within the service; a DNS_LABEL, required when the "
        "service has more than one port.",
        "protocol": "The IP protocol for this port: TCP (default), UDP or SCTP.",
        "appProtocol": "The application protocol for this port, used as a hint by "
        "implementations.",
        "port": "The port that will be exposed by this service.",
        "targetPort": "Number or name of the port to access on the pods targeted by the "
        "service; defaults to the value of port.",
        "nodePort": "The port on each node on which this service is exposed when type is "
        "NodePort or LoadBalancer.",
    },
    "ServiceStatus": {
        "": "ServiceStatus represents the current status of a service.",
        "loadBalancer": "LoadBalancer contains the current status of the load-balancer, if "
        "one is present.",
    },
    "NodeSpec": {
        "": "NodeSpec describes the attributes that a node is created with.",
        "podCIDR": "PodCIDR represents the pod IP range assigned to the node.",
        "podCIDRs": "podCIDRs represents the IP ranges assigned to the node for usage by "
        "Pods on that node. If this field is specified, the 0th entry must match the "
        "podCIDR field. It may contain at most 1 value for each of IPv4 and IPv6.",
        "providerID": "ID of the node assigned by the cloud provider in the format: "
        "<ProviderName>://<ProviderSpecificNodeID>",
        "unschedulable": "Unschedulable controls node schedulability of new pods. By "
        "default, node is schedulable.",
        "taints": "If specified, the node's taints.",
        "configSource": "Deprecated: previously used to specify the source of the node's "
        "configuration for the DynamicKubeletConfig feature. This feature is removed.",
        "externalID": "Deprecated. Not all kubelets will set this field. Remove field after "
        "1.13.",
    },
    "Taint": {
        "": "The node this Taint is attached to has the \"effect\" on any pod that does "
        "not tolerate the Taint.",
        "key": "Required. The taint key to be applied to a node.",
        "value": "The taint value corresponding to the taint key.",
        "effect": "Required. The effect of the taint on pods that do not tolerate the taint. "
        "Valid effects are NoSchedule, PreferNoSchedule and NoExecute.",
        "timeAdded": "TimeAdded represents the time at which the taint was added. It is "
        "only written for NoExecute taints.",
    },
    "NodeStatus": {
        "": "NodeStatus is information about the current status of a node.",
        "capacity": "Capacity represents the total resources of a node.",
        "allocatable": "Allocatable represents the resources of a node that are available "
        "for scheduling. Defaults to Capacity.",
        "phase": "NodePhase is the recently observed lifecycle phase of the node. The field "
        "is never populated, and now is deprecated.",
        "conditions": "Conditions is an array of current observed node conditions.",
        "addresses": "List of addresses reachable to the node. Queried from cloud provider, "
        "if available.",
        "daemonEndpoints": "Endpoints of daemons running on the Node.",
        "nodeInfo": "Set of ids/uuids to uniquely identify the node.",
        "images": "List of container images on this node.",
        "volumesInUse": "List of attachable volumes in use (mounted) by the node.",
        "volumesAttached": "List of volumes that are attached to the node.",
        "config": "Status of the config assigned to the node via the dynamic Kubelet config "
        "feature.",
        "runtimeHandlers": "The available runtime handlers.",
    },
    "NodeCondition": {
        "": "NodeCondition contains condition information for a node.",
        "type": "Type of node condition.",
        "status": "Status of the condition, one of True, False, Unknown.",
        "lastHeartbeatTime": "Last time we got an update on a given condition.",
        "lastTransitionTime": "Last time the condition transit from one status to another.",
        "reason": "(brief) reason for the condition's last transition.",
        "message": "Human readable message indicating details about last transition.",
    },
    "NodeAddress": {
        "": "NodeAddress contains information for the node's address.",
        "type": "Node address type, one of Hostname, ExternalIP or InternalIP.",
        "address": "The node address.",
    },
    "NodeSystemInfo": {
        "": "NodeSystemInfo is a set of ids/uuids to uniquely identify the node.",
        "machineID": "MachineID reported by the node. For unique machine identification in "
        "the cluster this field is preferred.",
        "systemUUID": "SystemUUID reported by the node. For unique machine identification "
        "MachineID is preferred.",
        "bootID": "Boot ID reported by the node.",
        "kernelVersion": "Kernel Version reported by the node from 'uname -r'.",
        "osImage": "OS Image reported by the node from /etc/os-release.",
        "containerRuntimeVersion": "ContainerRuntime Version reported by the node through "
        "runtime remote API (e.g. containerd://1.4.2).",
        "kubeletVersion": "Kubelet Version reported by the node.",
        "kubeProxyVersion": "KubeProxy Version reported by the node.",
        "operatingSystem": "The Operating System reported by the node",
        "architecture": "The Architecture reported by the node",
    },
    "Pod": _object(
        "Pod is a collection of containers that can run on a host. This resource is created "
        "by clients and scheduled onto hosts.",
        spec="Specification of the desired behavior of the pod.",
        status="Most recently observed status of the pod. This data may not be up to date. "
        "Populated by the system. Read-only."),
    "PodSpec": {
        "": "PodSpec is a description of a pod.",
        "volumes": "List of volumes that can be mounted by containers belonging to the pod.",
        "initContainers": "List of initialization containers belonging to the pod. Init "
        "containers are executed in order prior to containers being started.",
        "containers": "List of containers belonging to the pod. Containers cannot currently "
        "be added or removed. There must be at least one container in a Pod. Cannot be "
        "updated.",
        "ephemeralContainers": "List of ephemeral containers run in this pod, for user-"
        "initiated activities such as debugging. This list cannot be specified when "
        "creating a pod.",
        "restartPolicy": "Restart policy for all containers within the pod. One of Always, "
        "OnFailure, Never. Default to Always.",
        "terminationGracePeriodSeconds": "Optional duration in seconds the pod needs to "
        "terminate gracefully. Defaults to 30 seconds.",
        "activeDeadlineSeconds": "Optional duration in seconds the pod may be active on the "
        "node relative to StartTime before the system will actively try to mark it failed "
        "and kill associated containers.",
        "dnsPolicy": "Set DNS policy for the pod. Defaults to \"ClusterFirst\".",
        "nodeSelector": "NodeSelector is a selector which must be true for the pod to fit "
        "on a node. Selector which must match a node's labels for the pod to be scheduled "
        "on that node.",
        "serviceAccountName": "ServiceAccountName is the name of the ServiceAccount to use "
        "to run this pod.",
        "serviceAccount": "DeprecatedServiceAccount is a deprecated alias for "
        "ServiceAccountName. Deprecated: Use serviceAccountName instead.",
        "automountServiceAccountToken": "AutomountServiceAccountToken indicates whether a "
        "service account token should be automatically mounted.",
        "nodeName": "NodeName is a request to schedule this pod onto a specific node. If it "
        "is non-empty, the scheduler simply schedules this pod onto that node, assuming that "
        "it fits resource requirements.",
        "hostNetwork": "Host networking requested for this pod. Use the host's network "
        "namespace. Default to false.",
        "hostPID": "Use the host's pid namespace. Optional: Default to false.",
        "hostIPC": "Use the host's ipc namespace. Optional: Default to false.",
        "shareProcessNamespace": "Share a single process namespace between all of the "
        "containers in a pod. Optional: Default to false.",
        "securityContext": "SecurityContext holds pod-level security attributes and common "
        "container settings. Optional: Defaults to empty.",
        "imagePullSecrets": "ImagePullSecrets is an optional list of references to secrets "
        "in the same namespace to use for pulling any of the images used by this PodSpec.",
        "hostname": "Specifies the hostname of the Pod. If not specified, the pod's hostname "
        "will be set to a system-defined value.",
        "subdomain": "If specified, the fully qualified Pod hostname will be "
        "\"<hostname>.<subdomain>.<pod namespace>.svc.<cluster domain>\".",
        "affinity": "If specified, the pod's scheduling constraints",
        "schedulerName": "If specified, the pod will be dispatched by specified scheduler. "
        "If not specified, the pod will be dispatched by default scheduler.",
        "tolerations": "If specified, the pod's tolerations.",
        "hostAliases": "HostAliases is an optional list of hosts and IPs that will be "
        "injected into the pod's hosts file if specified.",
        "priorityClassName": "If specified, indicates the pod's priority.",
        "priority": "The priority value. Various system components use this field to find "
        "the priority of the pod.",
        "dnsConfig": "Specifies the DNS parameters of a pod.",
        "readinessGates": "If specified, all readiness gates will be evaluated for pod "
        "readiness.",
        "runtimeClassName": "RuntimeClassName refers to a RuntimeClass object in the "
        "node.k8s.io group, which should be used to run this pod.",
        "enableServiceLinks": "EnableServiceLinks indicates whether information about "
        "services should be injected into pod's environment variables. Optional: Defaults "
        "to true.",
        "preemptionPolicy": "PreemptionPolicy is the Policy for preempting pods with lower "
        "priority. One of Never, PreemptLowerPriority. Defaults to PreemptLowerPriority if "
        "unset.",
        "overhead": "Overhead represents the resource overhead associated with running a pod "
        "for a given RuntimeClass.",
        "topologySpreadConstraints": "TopologySpreadConstraints describes how a group of "
        "pods ought to spread across topology domains.",
        "setHostnameAsFQDN": "If true the pod's hostname will be configured as the pod's "
        "FQDN, rather than the leaf name (the default).",
        "os": "Specifies the OS of the containers in the pod.",
        "hostUsers": "Use the host's user namespace. Optional: Default to true.",
        "schedulingGates": "SchedulingGates is an opaque list of values that if specified "
        "will block scheduling the pod. If schedulingGates is not empty, the pod will stay "
        "in the SchedulingGated state and the scheduler will not attempt to schedule the "
        "pod.",
        "resourceClaims": "ResourceClaims defines which ResourceClaims must be allocated and "
        "reserved before the Pod is allowed to start. The resources will be made available "
        "to those containers which consume them by name.\n\nThis is an alpha field and "
        "requires enabling the DynamicResourceAllocation feature gate.\n\nThis field is "
        "immutable.",
    },
    "Container": {
        "": "A single application container that you want to run within a pod.",
        "name": "Name of the container specified as a DNS_LABEL. Each container in a pod "
        "must have a unique name (DNS_LABEL). Cannot be updated.",
        "image": "Container image name.",
        "command": "Entrypoint array. Not executed within a shell. The container image's "
        "ENTRYPOINT is used if this is not provided.",
        "args": "Arguments to the entrypoint. The container image's CMD is used if this is "
        "not provided.",
        "workingDir": "Container's working directory. If not specified, the container "
        "runtime's default will be used. Cannot be updated.",
        "ports": "List of ports to expose from the container.",
        "envFrom": "List of sources to populate environment variables in the container.",
        "env": "List of environment variables to set in the container. Cannot be updated.",
        "resources": "Compute Resources required by this container.",
        "resizePolicy": "Resources resize policy for the container.",
        "restartPolicy": "RestartPolicy defines the restart behavior of individual "
        "containers in a pod. This field may only be set for init containers, and the only "
        "allowed value is \"Always\".",
        "volumeMounts": "Pod volumes to mount into the container's filesystem. Cannot be "
        "updated.",
        "volumeDevices": "volumeDevices is the list of block devices to be used by the "
        "container.",
        "livenessProbe": "Periodic probe of container liveness. Container will be restarted "
        "if the probe fails. Cannot be updated.",
        "readinessProbe": "Periodic probe of container service readiness. Container will be "
        "removed from service endpoints if the probe fails. Cannot be updated.",
        "startupProbe": "StartupProbe indicates that the Pod has successfully initialized.",
        "lifecycle": "Actions that the management system should take in response to "
        "container lifecycle events. Cannot be updated.",
        "terminationMessagePath": "Optional: Path at which the file to which the "
        "container's termination message will be written is mounted into the container's "
        "filesystem. Defaults to /dev/termination-log.",
        "terminationMessagePolicy": "Indicate how the termination message should be "
        "populated: File or FallbackToLogsOnError. Defaults to File.",
        "imagePullPolicy": "Image pull policy. One of Always, Never, IfNotPresent. Defaults "
        "to Always if :latest tag is specified, or IfNotPresent otherwise.",
        "securityContext": "SecurityContext defines the security options the container "
        "should be run with.",
        "stdin": "Whether this container should allocate a buffer for stdin in the "
        "container runtime. Default is false.",
        "stdinOnce": "Whether the container runtime should close the stdin channel after it "
        "has been opened by a single attach. Default is false.",
        "tty": "Whether this container should allocate a TTY for itself, also requires "
        "'stdin' to be true. Default is false.",
    },
    "ContainerPort": {
        "": "ContainerPort represents a network port in a single container.",
        "name": "If specified, this must be an IANA_SVC_NAME and unique within the pod.",
        "hostPort": "Number of port to expose on the host. Most containers do not need this.",
        "containerPort": "Number of port to expose on the pod's IP address. This must be a "
        "valid port number, 0 < x < 65536.",
        "protocol": "Protocol for port. Must be UDP, TCP, or SCTP. Defaults to \"TCP\".",
        "hostIP": "What host IP to bind the external port to.",
    },
    "EnvVar": {
        "": "EnvVar represents an environment variable present in a Container.",
        "name": "Name of the environment variable. Must be a C_IDENTIFIER.",
        "value": "Variable references $(VAR_NAME) are expanded using the previously defined "
        "environment variables in the container and any service environment variables. "
        "Defaults to \"\".",
        "valueFrom": "Source for the environment variable's value. Cannot be used if value "
        "is not empty.",
    },
    "ResourceRequirements": {
        "": "ResourceRequirements describes the compute resource requirements.",
        "limits": "Limits describes the maximum amount of compute resources allowed.",
        "requests": "Requests describes the minimum amount of compute resources required. If "
        "Requests is omitted for a container, it defaults to Limits if that is explicitly "
        "specified.",
        "claims": "Claims lists the names of resources, defined in spec.resourceClaims, that "
        "are used by this container.\n\nThis is an alpha field and requires enabling the "
        "DynamicResourceAllocation feature gate.\n\nThis field is immutable. It can only be "
        "set for containers.",
    },
    "ResourceClaim": {
        "": "ResourceClaim references one entry in PodSpec.ResourceClaims.",
        "name": "Name must match the name of one entry in pod.spec.resourceClaims of the Pod "
        "where this field is used. It makes that resource available inside a container.",
        "request": "Request is the name chosen for a request in the referenced claim. If "
        "empty, everything from the claim is made available, otherwise only the result of "
        "this request.",
    },
    "LocalObjectReference": {
        "": "LocalObjectReference contains enough information to let you locate the "
        "referenced object inside the same namespace.",
        "name": "Name of the referent.",
    },
    "Affinity": {
        "": "Affinity is a group of affinity scheduling rules.",
        "nodeAffinity": "Describes node affinity scheduling rules for the pod.",
        "podAffinity": "Describes pod affinity scheduling rules (e.g. co-locate this pod in "
        "the same node, zone, etc. as some other pod(s)).",
        "podAntiAffinity": "Describes pod anti-affinity scheduling rules (e.g. avoid putting "
        "this pod in the same node, zone, etc. as some other pod(s)).",
    },
    "NodeAffinity": {
        "": "Node affinity is a group of node affinity scheduling rules.",
        "requiredDuringSchedulingIgnoredDuringExecution": "If the affinity requirements "
        "specified by this field are not met at scheduling time, the pod will not be "
        "scheduled onto the node.",
        "preferredDuringSchedulingIgnoredDuringExecution": "The scheduler will prefer to "
        "schedule pods to nodes that satisfy the affinity expressions specified by this "
        "field, but it may choose a node that violates one or more of the expressions.",
    },
    "PreferredSchedulingTerm": {
        "": "An empty preferred scheduling term matches all objects with implicit weight 0 "
        "(i.e. it's a no-op). A null preferred scheduling term matches no objects (i.e. is "
        "also a no-op).",
        "weight": "Weight associated with matching the corresponding nodeSelectorTerm, in "
        "the range 1-100.",
        "preference": "A node selector term, associated with the corresponding weight.",
    },
    "Toleration": {
        "": "The pod this Toleration is attached to tolerates any taint that matches the "
        "triple <key,value,effect> using the matching operator <operator>.",
        "key": "Key is the taint key that the toleration applies to. Empty means match all "
        "taint keys.",
        "operator": "Operator represents a key's relationship to the value. Valid operators "
        "are Exists and Equal. Defaults to Equal.",
        "value": "Value is the taint value the toleration matches to. If the operator is "
        "Exists, the value should be empty, otherwise just a regular string.",
        "effect": "Effect indicates the taint effect to match. Empty means match all taint "
        "effects.",
        "tolerationSeconds": "TolerationSeconds represents the period of time the "
        "toleration (which must be of effect NoExecute) tolerates the taint.",
    },
    "PodSchedulingGate": {
        "": "PodSchedulingGate is associated to a Pod to guard its scheduling.",
        "name": "Name of the scheduling gate. Each scheduling gate must have a unique name "
        "field.",
    },
    "PodResourceClaim": {
        "": "PodResourceClaim references exactly one ResourceClaim through a ClaimSource. It "
        "adds a name to it that uniquely identifies the ResourceClaim inside the Pod. "
        "Containers that need access to the ResourceClaim reference it with this name.",
        "name": "Name uniquely identifies this resource claim inside the pod. This must be a "
        "DNS_LABEL.",
        "source": "Source describes where to find the ResourceClaim.",
        "resourceClaimName": "ResourceClaimName is the name of a ResourceClaim object in the "
        "same namespace as this pod.\n\nExactly one of ResourceClaimName and "
        "ResourceClaimTemplateName must be set.",
        "resourceClaimTemplateName": "ResourceClaimTemplateName is the name of a "
        "ResourceClaimTemplate object in the same namespace as this pod.\n\nThe template "
        "will be used to create a new ResourceClaim, which will be bound to this pod. When "
        "this pod is deleted, the ResourceClaim will also be deleted.\n\nExactly one of "
        "ResourceClaimName and ResourceClaimTemplateName must be set.",
    },
    "ClaimSource": {
        "": "ClaimSource describes a reference to a ResourceClaim.\n\nExactly one of these "
        "fields should be set.",
        "resourceClaimName": "ResourceClaimName is the name of a ResourceClaim object in the "
        "same namespace as this pod.",
        "resourceClaimTemplateName": "ResourceClaimTemplateName is the name of a "
        "ResourceClaimTemplate object in the same namespace as this pod.\n\nThe template "
        "will be used to create a new ResourceClaim, which will be bound to this pod. When "
        "this pod is deleted, the ResourceClaim will also be deleted.",
    },
    "PodStatus": {
        "": "PodStatus represents information about the status of a pod.",
        "phase": "The phase of a Pod is a simple, high-level summary of where the Pod is in "
        "its lifecycle: Pending, Running, Succeeded, Failed or Unknown.",
        "conditions": "Current service state of pod.",
        "message": "A human readable message indicating details about why the pod is in "
        "this condition.",
        "reason": "A brief CamelCase message indicating details about why the pod is in "
        "this state.",
        "nominatedNodeName": "nominatedNodeName is set only when this pod preempts other "
        "pods on the node, but it cannot be scheduled right away as preemption victims "
        "receive their graceful termination periods.",
        "hostIP": "hostIP holds the IP address of the host to which the pod is assigned.",
        "hostIPs": "hostIPs holds the IP addresses allocated to the host.",
        "podIP": "podIP address allocated to the pod. Routable at least within the cluster.",
        "podIPs": "podIPs holds the IP addresses allocated to the pod.",
        "startTime": "RFC 3339 date and time at which the object was acknowledged by the "
        "Kubelet. This is before the Kubelet pulled the container image(s) for the pod.",
        "initContainerStatuses": "The list has one entry per init container in the "
        "manifest.",
        "containerStatuses": "The list has one entry per container in the manifest.",
        "qosClass": "The Quality of Service (QOS) classification assigned to the pod based "
        "on resource requirements.",
        "ephemeralContainerStatuses": "Status for any ephemeral containers that have run in "
        "this pod.",
        "resize": "Status of resources resize desired for pod's containers.",
        "resourceClaimStatuses": "Status of resource claims.",
    },
    "PodCondition": {
        "": "PodCondition contains details for the current condition of this pod.",
        "type": "Type is the type of the condition.",
        "status": "Status is the status of the condition. Can be True, False, Unknown.",
        "lastProbeTime": "Last time we probed the condition.",
        "lastTransitionTime": "Last time the condition transitioned from one status to "
        "another.",
        "reason": "Unique, one-word, CamelCase reason for the condition's last transition.",
        "message": "Human-readable message indicating details about last transition.",
    },
    "PodIP": {
        "": "PodIP represents a single IP address allocated to the pod.",
        "ip": "IP is the IP address assigned to the pod",
    },
    "ContainerStatus": {
        "": "ContainerStatus contains details for the current status of this container.",
        "name": "Name is a DNS_LABEL representing the unique name of the container.",
        "state": "State holds details about the container's current condition.",
        "lastState": "LastTerminationState holds the last termination state of the "
        "container.",
        "ready": "Ready specifies whether the container is currently passing its readiness "
        "check.",
        "restartCount": "RestartCount holds the number of times the container has been "
        "restarted.",
        "image": "Image is the name of container image that the container is running.",
        "imageID": "ImageID is the image ID of the container's image.",
        "containerID": "ContainerID is the ID of the container in the format "
        "'<type>://<container_id>'.",
        "started": "Started indicates whether the container has finished its postStart "
        "lifecycle hook and passed its startup probe.",
        "allocatedResources": "AllocatedResources represents the compute resources "
        "allocated for this container by the node.",
        "resources": "Resources represents the compute resource requests and limits that "
        "have been successfully enacted on the running container after it has been started "
        "or has been successfully resized.",
        "volumeMounts": "Status of volume mounts.",
    },
    "PodResourceClaimStatus": {
        "": "PodResourceClaimStatus is stored in the PodStatus for each PodResourceClaim "
        "which references a ResourceClaimTemplate. It stores the generated name for the "
        "corresponding ResourceClaim.",
        "name": "Name uniquely identifies this resource claim inside the pod. This must "
        "match the name of an entry in pod.spec.resourceClaims, which implies that the "
        "string must be a DNS_LABEL.",
        "resourceClaimName": "ResourceClaimName is the name of the ResourceClaim that was "
        "generated for the Pod in the namespace of the Pod. If this is unset, then "
        "generating a ResourceClaim was not necessary.",
    },
    "PodTemplateSpec": {
        "": "PodTemplateSpec describes the data a pod should have when created from a "
        "template",
        "metadata": _METADATA,
        "spec": "Specification of the desired behavior of the pod.",
    },
    "ServiceAccount": _object(
        "ServiceAccount binds together: a name, understood by users, and perhaps by "
        "peripheral systems, for an identity; a principal that can be authenticated and "
        "authorized; a set of secrets.",
        secrets="Secrets is a list of the secrets in the same namespace that pods running "
        "using this ServiceAccount are allowed to use. Not to be used for auto-generated "
        "token secrets since v1.22.",
        imagePullSecrets="ImagePullSecrets is a list of references to secrets in the same "
        "namespace to use for pulling any images in pods that reference this "
        "ServiceAccount.",
        automountServiceAccountToken="AutomountServiceAccountToken indicates whether pods "
        "running as this service account should have an API token automatically mounted. "
        "Can be overridden at the pod level.",
    ),
    "Event": _object(
        "Event is a report of an event somewhere in the cluster. Events have a limited "
        "retention time and triggers and messages may evolve with time.",
        involvedObject="The object that this event is about.",
        reason="This should be a short, machine understandable string that gives the reason "
        "for the transition into the object's current status.",
        message="A human-readable description of the status of this operation.",
        source="The component reporting this event. Should be a short machine "
        "understandable string.",
        firstTimestamp="The time at which the event was first recorded.",
        lastTimestamp="The time at which the most recent occurrence of this event was "
        "recorded.",
        count="The number of times this event has occurred.",
        type="Type of this event (Normal, Warning), new types could be added in the future",
        eventTime="Time when this Event was first observed.",
        series="Data about the Event series this event represents or nil if it's a "
        "singleton Event.",
        action="What action was taken/failed regarding to the Regarding object.",
        related="Optional secondary object for more complex actions.",
        reportingComponent="Name of the controller that emitted this Event, e.g. "
        "`kubernetes.io/kubelet`.",
        reportingInstance="ID of the controller instance, e.g. `kubelet-xyzf`."),
    "EventSource": {
        "": "EventSource contains information for an event.",
        "component": "Component from which the event is generated.",
        "host": "Node name on which the event is generated.",
    },
    "ObjectReference": {
        "": "ObjectReference contains enough information to let you inspect or modify the "
        "referred object.",
        "kind": "Kind of the referent.",
        "namespace": "Namespace of the referent.",
        "name": "Name of the referent.",
        "uid": "UID of the referent.",
        "apiVersion": "API version of the referent.",
        "resourceVersion": "Specific resourceVersion to which this reference is made, if "
        "any.",
        "fieldPath": "If referring to a piece of an object instead of an entire object, this "
        "string should contain a valid JSON/Go field access statement, such as "
        "desiredState.manifest.containers[2].",
    },
}

_BATCH: Final[dict[str, dict[str, str]]] = {
    "Job": _object(
        "Job represents the configuration of a single job.",
        spec="Specification of the desired behavior of a job.",
        status="Current status of a job."),
    "JobSpec": {
        "": "JobSpec describes how the job execution will look like.",
        "parallelism": "Specifies the maximum desired number of pods the job should run at "
        "any given time.",
        "completions": "Specifies the desired number of successfully finished pods the job "
        "should be run with.",
        "activeDeadlineSeconds": "Specifies the duration in seconds relative to the "
        "startTime that the job may be continuously active before the system tries to "
        "terminate it; value must be positive integer.",
        "podFailurePolicy": "Specifies the policy of handling failed pods. In particular, it "
        "allows to specify the set of actions and conditions which need to be satisfied to "
        "take the associated action.",
        "successPolicy": "successPolicy specifies the policy when the Job can be declared as "
        "succeeded. If empty, the default behavior applies - the Job is declared as "
        "succeeded only when the number of succeeded pods equals to the completions.",
        "backoffLimit": "Specifies the number of retries before marking this job failed. "
        "Defaults to 6",
        "backoffLimitPerIndex": "Specifies the limit for the number of retries within an "
        "index before marking this index as failed. It can only be set when Job's "
        "completionMode=Indexed.",
        "maxFailedIndexes": "Specifies the maximal number of failed indexes before marking "
        "the Job as failed, when backoffLimitPerIndex is set.",
        "selector": "A label query over pods that should match the pod count. Normally, the "
        "system sets this field for you.",
        "manualSelector": "manualSelector controls generation of pod labels and pod "
        "selectors. Leave `manualSelector` unset unless you are certain what you are doing.",
        "template": "Describes the pod that will be created when executing a job. The only "
        "allowed template.spec.restartPolicy values are \"Never\" or \"OnFailure\".",
        "ttlSecondsAfterFinished": "ttlSecondsAfterFinished limits the lifetime of a Job "
        "that has finished execution (either Complete or Failed).",
        "completionMode": "completionMode specifies how Pod completions are tracked. It can "
        "be `NonIndexed` (default) or `Indexed`.",
        "suspend": "suspend specifies whether the Job controller should create Pods or not. "
        "Defaults to false.",
        "podReplacementPolicy": "podReplacementPolicy specifies when to create replacement "
        "Pods: TerminatingOrFailed (the default) or Failed.",
        "managedBy": "ManagedBy field indicates the controller that manages a Job. The k8s "
        "Job controller reconciles jobs which don't have this field at all or the field "
        "value is the reserved string `kubernetes.io/job-controller`, but skips reconciling "
        "Jobs with a custom value for this field. The value must be a valid domain-prefixed "
        "path (e.g. acme.io/foo) - all characters before the first \"/\" must be a valid "
        "subdomain as defined by RFC 1123. All characters trailing the first \"/\" must be "
        "valid HTTP Path characters as defined by RFC 3986. The value cannot exceed 64 "
        "characters.\n\nThis field is alpha-level. The job controller accepts setting the "
        "field when the feature gate JobManagedBy is enabled (disabled by default).",
    },
    "PodFailurePolicy": {
        "": "PodFailurePolicy describes how failed pods influence the backoffLimit.",
        "rules": "A list of pod failure policy rules. The rules are evaluated in order. Once "
        "a rule matches a Pod failure, the remaining of the rules are ignored.",
    },
    "PodFailurePolicyRule": {
        "": "PodFailurePolicyRule describes how a pod failure is handled when the "
        "requirements are met. One of onExitCodes and onPodConditions, but not both, can be "
        "used in each rule.",
        "action": "Specifies the action taken on a pod failure when the requirements are "
        "satisfied: FailJob, FailIndex, Ignore or Count.",
        "onExitCodes": "Represents the requirement on the container exit codes.",
        "onPodConditions": "Represents the requirement on the pod conditions. The "
        "requirement is represented as a list of pod condition patterns.",
    },
    "PodFailurePolicyOnExitCodesRequirement": {
        "": "PodFailurePolicyOnExitCodesRequirement describes the requirement for handling a "
        "failed pod based on its container exit codes.",
        "containerName": "Restricts the check for exit codes to the container with the "
        "specified name. When null, the rule applies to all containers.",
        "operator": "Represents the relationship between the container exit code(s) and the "
        "specified values: In or NotIn.",
        "values": "Specifies the set of values. Each returned container exit code (might be "
        "multiple in case of multiple containers) is checked against this set of values "
        "with respect to the operator.",
    },
    "PodFailurePolicyOnPodConditionsPattern": {
        "": "PodFailurePolicyOnPodConditionsPattern describes a pattern for matching an "
        "actual pod condition type.",
        "type": "Specifies the required Pod condition type. To match a pod condition it is "
        "required that specified type equals the pod condition type.",
        "status": "Specifies the required Pod condition status. Defaults to True.",
    },
    "SuccessPolicy": {
        "": "SuccessPolicy describes when a Job can be declared as succeeded based on the "
        "success of some indexes.",
        "rules": "rules represents the list of alternative rules for the declaring the Jobs "
        "as successful before `.status.succeeded >= .spec.completions`.",
    },
    "SuccessPolicyRule": {
        "": "SuccessPolicyRule describes rule for declaring a Job as succeeded. Each rule "
        "must have at least one of the \"succeededIndexes\" or \"succeededCount\" "
        "specified.",
        "succeededIndexes": "succeededIndexes specifies the set of indexes which need to be "
        "contained in the actual set of the succeeded indexes for the Job.",
        "succeededCount": "succeededCount specifies the minimal required size of the actual "
        "set of the succeeded indexes for the Job.",
    },
    "JobStatus": {
        "": "JobStatus represents the current state of a Job.",
        "conditions": "The latest available observations of an object's current state.",
        "startTime": "Represents time when the job controller started processing a job.",
        "completionTime": "Represents time when the job was completed.",
        "active": "The number of pending and running pods which are not terminating.",
        "succeeded": "The number of pods which reached phase Succeeded.",
        "failed": "The number of pods which reached phase Failed.",
        "terminating": "The number of pods which are terminating (in phase Pending or "
        "Running and have a deletionTimestamp).",
        "completedIndexes": "completedIndexes holds the completed indexes when "
        ".spec.completionMode = \"Indexed\" in a text format.",
        "failedIndexes": "FailedIndexes holds the failed indexes when "
        "spec.backoffLimitPerIndex is set.",
        "uncountedTerminatedPods": "uncountedTerminatedPods holds the UIDs of Pods that have "
        "terminated but the job controller hasn't yet accounted for in the status counters.",
        "ready": "The number of pods which have a Ready condition.",
    },
    "JobCondition": {
        "": "JobCondition describes current state of a job.",
        "type": "Type of job condition, Complete or Failed.",
        "status": "Status of the condition, one of True, False, Unknown.",
        "lastProbeTime": "Last time the condition was checked.",
        "lastTransitionTime": "Last time the condition transit from one status to another.",
        "reason": "(brief) reason for the condition's last transition.",
        "message": "Human readable message indicating details about last transition.",
    },
    "UncountedTerminatedPods": {
        "": "UncountedTerminatedPods holds UIDs of Pods that have terminated but haven't "
        "been accounted in Job status counters.",
        "succeeded": "succeeded holds UIDs of succeeded Pods.",
        "failed": "failed holds UIDs of failed Pods.",
    },
}

_COORDINATION: Final[dict[str, dict[str, str]]] = {
    "Lease": _object("Lease defines a lease concept.",
                     spec="spec contains the specification of the Lease."),
    "LeaseSpec": {
        "": "LeaseSpec is a specification of a Lease.",
        "holderIdentity": "holderIdentity contains the identity of the holder of a current "
        "lease.",
        "leaseDurationSeconds": "leaseDurationSeconds is a duration that candidates for a "
        "lease need to wait to force acquire it. This is measure against time of last "
        "observed renewTime.",
        "acquireTime": "acquireTime is a time when the current lease was acquired.",
        "renewTime": "renewTime is a time when the current holder of a lease has last "
        "updated the lease.",
        "leaseTransitions": "leaseTransitions is the number of transitions of a lease "
        "between holders.",
    },
}


_RULES = "Rules holds all the PolicyRules for this Role"
_SUBJECTS = "Subjects holds references to the objects the role applies to."
_ROLE_REF_NS = ("RoleRef can reference a Role in the current namespace or a ClusterRole in the "
                "global namespace. If the RoleRef cannot be resolved, the Authorizer must "
                "return an error. This field is immutable.")
_RBAC: Final[dict[str, dict[str, str]]] = {
    "Role": _object("Role is a namespaced, logical grouping of PolicyRules that can be "
                    "referenced as a unit by a RoleBinding.", rules=_RULES),
    "ClusterRole": _object(
        "ClusterRole is a cluster level, logical grouping of PolicyRules that can be "
        "referenced as a unit by a RoleBinding or ClusterRoleBinding.",
        rules="Rules holds all the PolicyRules for this ClusterRole",
        aggregationRule="AggregationRule is an optional field that describes how to build "
        "the Rules for this ClusterRole. If AggregationRule is set, then the Rules are "
        "controller managed and direct changes to Rules will be stomped by the controller."),
    "RoleBinding": _object(
        "RoleBinding references a role, but does not contain it. It can reference a Role in "
        "the same namespace or a ClusterRole in the global namespace. It adds who "
        "information via Subjects and namespace information by which namespace it exists "
        "in. RoleBindings in a given namespace only have effect in that namespace.",
        subjects=_SUBJECTS, roleRef=_ROLE_REF_NS),
    "ClusterRoleBinding": _object(
        "ClusterRoleBinding references a ClusterRole, but not contain it. It can reference a "
        "ClusterRole in the global namespace, and adds who information via Subject.",
        subjects=_SUBJECTS,
        roleRef="RoleRef can only reference a ClusterRole in the global namespace. If the "
        "RoleRef cannot be resolved, the Authorizer must return an error. This field is "
        "immutable."),
    "PolicyRule": {
        "": "PolicyRule holds information that describes a policy rule, but does not contain "
        "information about who the rule applies to or which namespace the rule applies to.",
        "verbs": "Verbs is a list of Verbs that apply to ALL the ResourceKinds contained in "
        "this rule. '*' represents all verbs.",
        "apiGroups": "APIGroups is the name of the APIGroup that contains the resources. If "
        "multiple API groups are specified, any action requested against one of the "
        "enumerated resources in any API group will be allowed. \"\" represents the core "
        "API group and \"*\" represents all API groups.",
        "resources": "Resources is a list of resources this rule applies to. '*' represents "
        "all resources.",
        "resourceNames": "ResourceNames is an optional white list of names that the rule "
        "applies to.  An empty set means that everything is allowed.",
        "nonResourceURLs": "NonResourceURLs is a set of partial urls that a user should have "
        "access to.  *s are allowed, but only as the full, final step in the path. Since "
        "non-resource URLs are not namespaced, this field is only applicable for "
        "ClusterRoles referenced from a ClusterRoleBinding. Rules can either apply to API "
        "resources (such as \"pods\" or \"secrets\") or non-resource URL paths (such as "
        "\"/api\"),  but not both.",
    },
    "AggregationRule": {
        "": "AggregationRule describes how to locate ClusterRoles to aggregate into the "
        "ClusterRole",
        "clusterRoleSelectors": "ClusterRoleSelectors holds a list of selectors which will "
        "be used to find ClusterRoles and create the rules. If any of the selectors match, "
        "then the ClusterRole's permissions will be added",
    },
    "Subject": {
        "": "Subject contains a reference to the object or user identities a role binding "
        "applies to.  This can either hold a direct API object reference, or a value for "
        "non-objects such as user and group names.",
        "kind": "Kind of object being referenced. Values defined by this API group are "
        "\"User\", \"Group\", and \"ServiceAccount\". If the Authorizer does not "
        "recognized the kind value, the Authorizer should report an error.",
        "apiGroup": "APIGroup holds the API group of the referenced subject. Defaults to "
        "\"\" for ServiceAccount subjects. Defaults to \"rbac.authorization.k8s.io\" for "
        "User and Group subjects.",
        "name": "Name of the object being referenced.",
        "namespace": "Namespace of the referenced object.  If the object kind is non-namespace, "
        "such as \"User\" or \"Group\", and this value is not empty the Authorizer should "
        "report an error.",
    },
    "RoleRef": {
        "": "RoleRef contains information that points to the role being used",
        "apiGroup": "APIGroup is the group for the resource being referenced",
        "kind": "Kind is the type of resource being referenced",
        "name": "Name is the name of resource being referenced",
    },
}

_STATUS = ("Status is filled in by the server and indicates whether the request is allowed "
           "or not")
_AUTHORIZATION: Final[dict[str, dict[str, str]]] = {
    "SelfSubjectAccessReview": _object(
        "SelfSubjectAccessReview checks whether or the current user can perform an action.  "
        "Not filling in a spec.namespace means \"in all namespaces\".  Self is a special "
        "case, because users should always be able to check whether they can perform an "
        "action",
        spec="Spec holds information about the request being evaluated.  user and groups "
        "must be empty", status=_STATUS),
    "SubjectAccessReview": _object(
        "SubjectAccessReview checks whether or not a user or group can perform an action.",
        spec="Spec holds information about the request being evaluated", status=_STATUS),
    "SelfSubjectRulesReview": _object(
        "SelfSubjectRulesReview enumerates the set of actions the current user can perform "
        "within a namespace.",
        spec="Spec holds information about the request being evaluated.",
        status="Status is filled in by the server and indicates the set of actions a user "
        "can perform."),
    "SelfSubjectAccessReviewSpec": {
        "": "SelfSubjectAccessReviewSpec is a description of the access request.  Exactly "
        "one of ResourceAuthorizationAttributes and NonResourceAuthorizationAttributes must "
        "be set",
        "resourceAttributes": "ResourceAuthorizationAttributes describes information for a "
        "resource access request",
        "nonResourceAttributes": "NonResourceAttributes describes information for a "
        "non-resource access request",
    },
    "SubjectAccessReviewSpec": {
        "": "SubjectAccessReviewSpec is a description of the access request.  Exactly one of "
        "ResourceAuthorizationAttributes and NonResourceAuthorizationAttributes must be set",
        "resourceAttributes": "ResourceAuthorizationAttributes describes information for a "
        "resource access request",
        "nonResourceAttributes": "NonResourceAttributes describes information for a "
        "non-resource access request",
        "user": "User is the user you're testing for. If you specify \"User\" but not "
        "\"Groups\", then is it interpreted as \"What if User were not a member of any "
        "groups",
        "groups": "Groups is the groups you're testing for.",
        "extra": "Extra corresponds to the user.Info.GetExtra() method from the "
        "authenticator.  Since that is input to the authorizer it needs a reflection here.",
        "uid": "UID information about the requesting user.",
    },
    "SubjectAccessReviewStatus": {
        "": "SubjectAccessReviewStatus",
        "allowed": "Allowed is required. True if the action would be allowed, false "
        "otherwise.",
        "denied": "Denied is optional. True if the action would be denied, otherwise false. "
        "If both allowed is false and denied is false, then the authorizer has no opinion on "
        "whether to authorize the action. Denied may not be true if Allowed is true.",
        "reason": "Reason is optional.  It indicates why a request was allowed or denied.",
        "evaluationError": "EvaluationError is an indication that some error occurred during "
        "the authorization check. It is entirely possible to get an error and be able to "
        "continue determine authorization status in spite of it. For instance, RBAC can be "
        "missing a role, but enough roles are still present and bound to reason about the "
        "request.",
    },
    "ResourceAttributes": {
        "": "ResourceAttributes includes the authorization attributes available for resource "
        "requests to the Authorizer interface",
        "namespace": "Namespace is the namespace of the action being requested.  Currently, "
        "there is no distinction between no namespace and all namespaces \"\" (empty) is "
        "defaulted for LocalSubjectAccessReviews \"\" (empty) is empty for cluster-scoped "
        "resources \"\" (empty) means \"all\" for namespace scoped resources from a "
        "SubjectAccessReview or SelfSubjectAccessReview",
        "verb": "Verb is a kubernetes resource API verb, like: get, list, watch, create, "
        "update, delete, proxy.  \"*\" means all.",
        "group": "Group is the API Group of the Resource.  \"*\" means all.",
        "version": "Version is the API Version of the Resource.  \"*\" means all.",
        "resource": "Resource is one of the existing resource types.  \"*\" means all.",
        "subresource": "Subresource is one of the existing resource types.  \"\" means "
        "none.",
        "name": "Name is the name of the resource being requested for a \"get\" or deleted "
        "for a \"delete\". \"\" (empty) means all.",
    },
    "NonResourceAttributes": {
        "": "NonResourceAttributes includes the authorization attributes available for "
        "non-resource requests to the Authorizer interface",
        "path": "Path is the URL path of the request",
        "verb": "Verb is the standard HTTP verb",
    },
    "SelfSubjectRulesReviewSpec": {
        "": "SelfSubjectRulesReviewSpec defines the specification for SelfSubjectRulesReview.",
        "namespace": "Namespace to evaluate rules for. Required.",
    },
    "SubjectRulesReviewStatus": {
        "": "SubjectRulesReviewStatus contains the result of a rules check. This check can be "
        "incomplete depending on the set of authorizers the server is configured with and "
        "any errors experienced during evaluation. Because authorization rules are "
        "additive, if a rule appears in a list it's safe to assume the subject has that "
        "permission, even if that list is incomplete.",
        "resourceRules": "ResourceRules is the list of actions the subject is allowed to "
        "perform on resources. The list ordering isn't significant, may contain duplicates, "
        "and possibly be incomplete.",
        "nonResourceRules": "NonResourceRules is the list of actions the subject is allowed "
        "to perform on non-resources. The list ordering isn't significant, may contain "
        "duplicates, and possibly be incomplete.",
        "incomplete": "Incomplete is true when the rules returned by this call are incomplete. "
        "This is most commonly encountered when an authorizer, such as an external "
        "authorizer, doesn't support rules evaluation.",
        "evaluationError": "EvaluationError can appear in combination with Rules. It "
        "indicates an error occurred during rule evaluation, such as an authorizer that "
        "doesn't support rule evaluation, and that ResourceRules and/or NonResourceRules "
        "may be incomplete.",
    },
    "ResourceRule": {
        "": "ResourceRule is the list of actions the subject is allowed to perform on "
        "resources. The list ordering isn't significant, may contain duplicates, and "
        "possibly be incomplete.",
        "verbs": "Verb is a list of kubernetes resource API verbs, like: get, list, watch, "
        "create, update, delete, proxy.  \"*\" means all.",
        "apiGroups": "APIGroups is the name of the APIGroup that contains the resources.  If "
        "multiple API groups are specified, any action requested against one of the "
        "enumerated resources in any API group will be allowed.  \"*\" means all.",
        "resources": "Resources is a list of resources this rule applies to.  \"*\" means "
        "all in the specified apiGroups.",
        "resourceNames": "ResourceNames is an optional white list of names that the rule "
        "applies to.  An empty set means that everything is allowed.  \"*\" means all.",
    },
    "NonResourceRule": {
        "": "NonResourceRule holds information that describes a rule for the non-resource",
        "verbs": "Verb is a list of kubernetes non-resource API verbs, like: get, post, put, "
        "delete, patch, head, options.  \"*\" means all.",
        "nonResourceURLs": "NonResourceURLs is a set of partial urls that a user should have "
        "access to.  *s are allowed, but only as the full, final step in the path.  \"*\" "
        "means all.",
    },
}


_AUTHENTICATION: Final[dict[str, dict[str, str]]] = {
    "SelfSubjectReview": _object(
        "SelfSubjectReview contains the user information that the kube-apiserver has about "
        "the user making this request. When using impersonation, users will receive the user "
        "info of the user being impersonated.  If impersonation or request header "
        "authentication is used, any extra keys will have their case ignored and returned as "
        "lowercase.",
        status="Status is filled in by the server with the user attributes."),
    "SelfSubjectReviewStatus": {
        "": "SelfSubjectReviewStatus is filled by the kube-apiserver and sent back to a user.",
        "userInfo": "User attributes of the user making this request.",
    },
    "UserInfo": {
        "": "UserInfo holds the information about the user needed to implement the user.Info "
        "interface.",
        "username": "The name that uniquely identifies this user among all active users.",
        "uid": "A unique value that identifies this user across time. If this user is deleted "
        "and another user by the same name is added, they will have different UIDs.",
        "groups": "The names of groups this user is a part of.",
        "extra": "Any additional information provided by the authenticator.",
    },
}


def _in_package(package: str, types: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
    return {f"{package}.{name}": fields for name, fields in types.items()}


def _qualified(module: str, types: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
    return _in_package(OPENAPI_PACKAGES[module], types)


# The fields upstream's OpenAPI lists as ``required`` (``kubectl explain`` prints
# ``-required-``): those of the Go types with neither ``+optional`` nor ``omitempty``.
_RESOURCE_V1_REQUIRED: Final[dict[str, tuple[str, ...]]] = {
    "AllocatedDeviceStatus": ("driver", "pool", "device"),
    "CELDeviceSelector": ("expression",),
    "CapacityRequestPolicyRange": ("min",),
    "Counter": ("value",),
    "CounterSet": ("name", "counters"),
    "DeviceAllocationConfiguration": ("source",),
    "DeviceCapacity": ("value",),
    "DeviceClass": ("spec",),
    "DeviceClassList": ("items",),
    "DeviceCounterConsumption": ("counterSet", "counters"),
    "DeviceRequest": ("name",),
    "DeviceRequestAllocationResult": ("request", "driver", "pool", "device"),
    "DeviceSubRequest": ("name", "deviceClassName"),
    "DeviceTaint": ("key", "effect"),
    "Device": ("name",),
    "ExactDeviceRequest": ("deviceClassName",),
    "OpaqueDeviceConfiguration": ("driver", "parameters"),
    "ResourceClaim": ("spec",),
    "ResourceClaimConsumerReference": ("resource", "name", "uid"),
    "ResourceClaimList": ("items",),
    "ResourceClaimTemplate": ("spec",),
    "ResourceClaimTemplateList": ("items",),
    "ResourceClaimTemplateSpec": ("spec",),
    "ResourcePool": ("name", "generation", "resourceSliceCount"),
    "ResourceSlice": ("spec",),
    "ResourceSliceList": ("items",),
    "ResourceSliceSpec": ("driver", "pool"),
}

REQUIRED: Final[dict[str, tuple[str, ...]]] = {
    f"{openapi_package(resource_v1.GROUP, 'v1')}.{name}": fields
    for name, fields in _RESOURCE_V1_REQUIRED.items()
}
"""Required fields by definition name (v1beta2 is served by v1's types, under v1's names)."""


DESCRIPTIONS: Final[dict[str, dict[str, str]]] = {
    **_qualified("kubedra.api.meta", _META),
    **_qualified("kubedra.api.resource.v1alpha2", _RESOURCE),
    # by package: the v1 classes also serve v1beta2, whose types.go words differ
    **_in_package(openapi_package(resource_v1.GROUP, resource_v1.VERSION), _RESOURCE_V1),
    **_qualified("kubedra.api.core", _CORE),
    **_qualified("kubedra.api.batch", _BATCH),
    **_qualified("kubedra.api.coordination", _COORDINATION),
    **_qualified("kubedra.api.rbac", _RBAC),
    **_qualified("kubedra.api.authorization", _AUTHORIZATION),
    **_qualified("kubedra.api.authentication", _AUTHENTICATION),
}

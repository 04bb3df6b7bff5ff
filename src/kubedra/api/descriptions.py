"""The API's documentation as data: what each type and field means, as the doc comments of
the v1.30 Go types say it (k8s.io/api resource/v1alpha2, core/v1, batch/v1, coordination/v1
and apimachinery meta/v1 at v0.30.0), in our own words.

The OpenAPI documents (``kubectl explain``) read it; keys are kube-openapi's definition names
(:data:`PACKAGES` maps our modules to them), then ``""`` for the type and the JSON field
names for its fields.
"""

from __future__ import annotations

from typing import Final

PACKAGES: Final = {
    "kubedra.api.meta": "io.k8s.apimachinery.pkg.apis.meta.v1",
    "kubedra.api.core": "io.k8s.api.core.v1",
    "kubedra.api.batch": "io.k8s.api.batch.v1",
    "kubedra.api.coordination": "io.k8s.api.coordination.v1",
    "kubedra.api.resource": "io.k8s.api.resource.v1alpha2",
}

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
_SPEC = "Spec describes the desired state of the object."
_STATUS = "Status describes the observed state of the object, as written by its controllers."
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
        spec=_SPEC, status=_STATUS),
    "Node": _object(
        "Node is a worker node in Kubernetes. Each node will have a unique identifier in the "
        "cache (i.e. in etcd).", spec=_SPEC, status=_STATUS),
    "Pod": _object(
        "Pod is a collection of containers that can run on a host. This resource is created "
        "by clients and scheduled onto hosts.", spec=_SPEC, status=_STATUS),
    "Event": _object(
        "Event is a report of an event somewhere in the cluster. Events have a limited "
        "retention time and triggers and messages may evolve with time."),
}

_BATCH: Final[dict[str, dict[str, str]]] = {
    "Job": _object("Job represents the configuration of a single job.", spec=_SPEC,
                   status=_STATUS),
}

_COORDINATION: Final[dict[str, dict[str, str]]] = {
    "Lease": _object("Lease defines a lease concept.", spec=_SPEC),
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


def _qualified(package: str, types: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
    return {f"{PACKAGES[package]}.{name}": fields for name, fields in types.items()}


DESCRIPTIONS: Final[dict[str, dict[str, str]]] = {
    **_qualified("kubedra.api.meta", _META),
    **_qualified("kubedra.api.resource", _RESOURCE),
    **_qualified("kubedra.api.core", _CORE),
    **_qualified("kubedra.api.batch", _BATCH),
    **_qualified("kubedra.api.coordination", _COORDINATION),
}

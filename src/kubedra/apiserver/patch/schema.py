"""Patch metadata of the kinds we serve: the upstream Go struct tags, as data.

Strategic merge patch needs, per field, ``patchStrategy`` and ``patchMergeKey``; server-side
apply needs ``listType``/``listMapKey`` and which maps are string-keyed maps rather than
structs. Both come from k8s.io/api v0.30.0 (core/v1, batch/v1, coordination/v1,
resource/v1alpha2, rbac/v1, authorization/v1 ``types.go``) and, for resource.k8s.io/v1,
v1beta2 and v1beta1, from v0.34.10 (the three carry the same tags). Fields not listed behave
as upstream's untagged fields: structs merge key by key, lists are atomic (replaced whole).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from kubedra.api import kinds
from kubedra.api.scheme import (
    AUTHENTICATION,
    AUTHORIZATION,
    DEVICE_VERSIONS,
    GVR,
    RBAC,
    RESOURCE,
)


@dataclass(frozen=True, slots=True)
class Meta:
    """How one field (or the value at one path) patches and is owned.

    ``fields`` describes the members of the struct that is the field's value, or of each list
    element for lists of structs.
    """

    strategy: str = ""  # SMP patchStrategy: "" | "merge" | "replace" ("retainKeys" is implied)
    merge_key: str = ""  # SMP patchMergeKey for lists of objects
    list_keys: tuple[str, ...] = ()  # SSA listType=map keys
    is_set: bool = False  # SSA listType=set
    is_map: bool = False  # a map[string]T: its keys are data, not struct fields
    fields: Mapping[str, Meta] = field(default_factory=lambda: MappingProxyType({}))

    def child(self, key: str) -> Meta:
        """Metadata of member ``key`` (an unknown member behaves as an untagged field)."""
        if self.is_map:
            return UNTYPED
        return self.fields.get(key, UNTYPED)


UNTYPED = Meta()


def struct(**fields: Meta) -> Meta:
    return Meta(fields=MappingProxyType(fields))


def merge_list(key: str, element: Meta = UNTYPED, ssa_keys: tuple[str, ...] = ()) -> Meta:
    """A list merged by ``key`` (patchStrategy=merge, patchMergeKey=key, listType=map)."""
    return Meta(strategy="merge", merge_key=key, list_keys=ssa_keys or (key,),
                fields=element.fields)


def map_list(*keys: str, element: Meta = UNTYPED) -> Meta:
    """A listType=map list without SMP tags: SMP replaces it, SSA merges it by ``keys``."""
    return Meta(list_keys=keys, fields=element.fields)


MAP = Meta(is_map=True)
SET = Meta(is_set=True)
MERGE_SET = Meta(strategy="merge", is_set=True)

OBJECT_META = struct(
    labels=MAP,
    annotations=MAP,
    finalizers=MERGE_SET,
    ownerReferences=merge_list("uid"),
)
LABEL_SELECTOR = struct(matchLabels=MAP)
CONDITIONS = merge_list("type")

RESOURCE_REQUIREMENTS = struct(limits=MAP, requests=MAP, claims=map_list("name"))
CONTAINER = struct(
    ports=merge_list("containerPort", ssa_keys=("containerPort", "protocol")),
    env=merge_list("name"),
    volumeMounts=merge_list("mountPath"),
    volumeDevices=merge_list("devicePath"),
    resources=RESOURCE_REQUIREMENTS,
    resizePolicy=UNTYPED,
)
POD_SPEC = struct(
    volumes=merge_list("name"),
    initContainers=merge_list("name", CONTAINER),
    containers=merge_list("name", CONTAINER),
    ephemeralContainers=merge_list("name", CONTAINER),
    imagePullSecrets=merge_list("name"),
    hostAliases=merge_list("ip"),
    topologySpreadConstraints=merge_list(
        "topologyKey", ssa_keys=("topologyKey", "whenUnsatisfiable")
    ),
    schedulingGates=merge_list("name"),
    resourceClaims=merge_list("name"),
    nodeSelector=MAP,
    overhead=MAP,
)
POD_STATUS = struct(
    conditions=CONDITIONS,
    podIPs=merge_list("ip"),
    hostIPs=merge_list("ip"),
    resourceClaimStatuses=merge_list("name"),
)
POD_TEMPLATE = struct(metadata=OBJECT_META, spec=POD_SPEC)
NODE_SELECTOR = struct()  # nodeSelectorTerms is atomic

POD = struct(metadata=OBJECT_META, spec=POD_SPEC, status=POD_STATUS)
NODE = struct(
    metadata=OBJECT_META,
    spec=struct(podCIDRs=MERGE_SET),
    status=struct(conditions=CONDITIONS, addresses=merge_list("type"), capacity=MAP,
                  allocatable=MAP),
)
NAMESPACE = struct(metadata=OBJECT_META, status=struct(conditions=CONDITIONS))
EVENT = struct(metadata=OBJECT_META)
LEASE = struct(metadata=OBJECT_META)
SERVICE_ACCOUNT = struct(metadata=OBJECT_META, secrets=merge_list("name"))
SERVICE = struct(metadata=OBJECT_META,
                 spec=struct(ports=merge_list("port", ssa_keys=("port", "protocol"))))
JOB = struct(
    metadata=OBJECT_META,
    spec=struct(template=POD_TEMPLATE, selector=LABEL_SELECTOR),
    # JobStatus.conditions: patchStrategy=merge by type, but listType=atomic for SSA.
    status=struct(conditions=Meta(strategy="merge", merge_key="type")),
)

CLAIM_SPEC = struct(parametersRef=struct())
RESOURCE_CLASS = struct(metadata=OBJECT_META, suitableNodes=NODE_SELECTOR)
RESOURCE_CLAIM = struct(
    metadata=OBJECT_META,
    spec=CLAIM_SPEC,
    status=struct(
        reservedFor=merge_list("uid"),
        allocation=struct(availableOnNodes=NODE_SELECTOR),
    ),
)
RESOURCE_CLAIM_TEMPLATE = struct(
    metadata=OBJECT_META, spec=struct(metadata=OBJECT_META, spec=CLAIM_SPEC)
)
POD_SCHEDULING_CONTEXT = struct(
    metadata=OBJECT_META,
    spec=struct(potentialNodes=SET),
    status=struct(resourceClaims=merge_list("name", struct(unsuitableNodes=SET))),
)
# namedResources.instances, driverRequests, vendorParameters and filters are atomic lists.
RESOURCE_SLICE = struct(metadata=OBJECT_META)
RESOURCE_CLAIM_PARAMETERS = struct(metadata=OBJECT_META, generatedFrom=struct())
RESOURCE_CLASS_PARAMETERS = struct(metadata=OBJECT_META, generatedFrom=struct())

# rbac/v1: rules, subjects and clusterRoleSelectors are atomic lists, roleRef a plain struct;
# authorization/v1 reviews are never stored, so never patched.
METADATA_ONLY = struct(metadata=OBJECT_META)

# resource.k8s.io/v1 (v1beta2, v1beta1): requests, selectors, config, devices, results and
# sharedCounters are atomic lists; attributes, capacity and counters string-keyed maps.
DEVICE_CLAIM = struct(
    metadata=OBJECT_META,
    status=struct(
        reservedFor=merge_list("uid"),
        # listType=map without SMP tags (SMP replaces it); conditions listType=map by type
        devices=map_list("driver", "device", "pool", "shareID",
                         element=struct(conditions=map_list("type"))),
    ),
)
DEVICE_CLAIM_TEMPLATE = struct(metadata=OBJECT_META, spec=struct(metadata=OBJECT_META))
DEVICES: Mapping[str, Meta] = {
    "deviceclasses": METADATA_ONLY,
    "resourceclaims": DEVICE_CLAIM,
    "resourceclaimtemplates": DEVICE_CLAIM_TEMPLATE,
    "resourceslices": METADATA_ONLY,
}

#: The tags of each served version, keyed as the resource table
#: (:data:`kubedra.api.scheme.SCHEME`) by (group, version, plural).
SCHEMAS: Mapping[GVR, Meta] = MappingProxyType({
    ("", "v1", "namespaces"): NAMESPACE,
    ("", "v1", "nodes"): NODE,
    ("", "v1", "pods"): POD,
    ("", "v1", "events"): EVENT,
    ("", "v1", "services"): SERVICE,
    ("", "v1", "serviceaccounts"): SERVICE_ACCOUNT,
    ("batch", "v1", "jobs"): JOB,
    ("coordination.k8s.io", "v1", "leases"): LEASE,
    (RESOURCE, "v1alpha2", "resourceclasses"): RESOURCE_CLASS,
    (RESOURCE, "v1alpha2", "resourceclaims"): RESOURCE_CLAIM,
    (RESOURCE, "v1alpha2", "resourceclaimtemplates"): RESOURCE_CLAIM_TEMPLATE,
    (RESOURCE, "v1alpha2", "podschedulingcontexts"): POD_SCHEDULING_CONTEXT,
    (RESOURCE, "v1alpha2", "resourceslices"): RESOURCE_SLICE,
    (RESOURCE, "v1alpha2", "resourceclaimparameters"): RESOURCE_CLAIM_PARAMETERS,
    (RESOURCE, "v1alpha2", "resourceclassparameters"): RESOURCE_CLASS_PARAMETERS,
    (RBAC, "v1", "roles"): METADATA_ONLY,
    (RBAC, "v1", "clusterroles"): METADATA_ONLY,
    (RBAC, "v1", "rolebindings"): METADATA_ONLY,
    (RBAC, "v1", "clusterrolebindings"): METADATA_ONLY,
    (AUTHORIZATION, "v1", "selfsubjectaccessreviews"): METADATA_ONLY,
    (AUTHORIZATION, "v1", "selfsubjectrulesreviews"): METADATA_ONLY,
    (AUTHORIZATION, "v1", "subjectaccessreviews"): METADATA_ONLY,
    (AUTHENTICATION, "v1", "selfsubjectreviews"): METADATA_ONLY,
    **{(RESOURCE, version, plural): meta for plural, meta in DEVICES.items()
       for version in DEVICE_VERSIONS},
})


def schema_for(group: str, version: str, plural: str) -> Meta:
    """Patch metadata of a served version of a resource; unknown ones patch as untagged
    JSON."""
    return SCHEMAS.get((group, version, plural), UNTYPED)


@functools.lru_cache(maxsize=256)
def schema_of(api_version: str, kind: str) -> Meta:
    """Patch metadata of the served version an object's ``apiVersion`` and ``kind`` name
    (every managed-fields write asks: kept for the few pairs clients send)."""
    found = kinds.by_api_version(api_version, kind)
    return UNTYPED if found is None else schema_for(*found.gvr)

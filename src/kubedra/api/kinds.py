"""The kinds table: the single description of every kind the system serves.

Routing, discovery, OpenAPI, the client and the CLI are all generated from :data:`KINDS`.
Adding a kind is one row here plus its model, validation and strategy.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kubedra.api import authentication, authorization, batch, coordination, core, rbac, resource
from kubedra.api.meta import TypedObject


@dataclass(frozen=True, slots=True)
class Kind:
    group: str
    version: str
    kind: str
    plural: str
    singular: str
    namespaced: bool
    model: type[TypedObject]
    list_model: type[object]
    short_names: tuple[str, ...] = ()
    subresources: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    verbs: tuple[str, ...] = field(
        default=("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
    )

    @property
    def list_kind(self) -> str:
        return self.kind + "List"

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def qualified(self) -> str:
        """``<plural>.<group>`` as used in error messages (``resourceslices.resource.k8s.io``)."""
        return f"{self.plural}.{self.group}" if self.group else self.plural


RESOURCE = "resource.k8s.io"
RBAC = "rbac.authorization.k8s.io"
AUTHORIZATION = "authorization.k8s.io"
_CREATE_ONLY = ("create",)

KINDS: tuple[Kind, ...] = (
    Kind("", "v1", "Namespace", "namespaces", "namespace", False, core.Namespace,
         core.NamespaceList, ("ns",), ("status", "finalize"),
         verbs=("create", "delete", "get", "list", "patch", "update", "watch")),
    Kind("", "v1", "Node", "nodes", "node", False, core.Node, core.NodeList, ("no",),
         ("status",)),
    Kind("", "v1", "Pod", "pods", "pod", True, core.Pod, core.PodList, ("po",),
         ("status", "binding"), ("all",)),
    Kind("", "v1", "Event", "events", "event", True, core.Event, core.EventList, ("ev",)),
    # Read-only: the API server keeps the ``kubernetes`` Service itself (see deviations).
    Kind("", "v1", "Service", "services", "service", True, core.Service, core.ServiceList,
         ("svc",), (), ("all",), verbs=("get", "list", "watch")),
    Kind("", "v1", "ServiceAccount", "serviceaccounts", "serviceaccount", True,
         core.ServiceAccount, core.ServiceAccountList, ("sa",), ("token",)),
    Kind("batch", "v1", "Job", "jobs", "job", True, batch.Job, batch.JobList, (),
         ("status",), ("all",)),
    Kind("coordination.k8s.io", "v1", "Lease", "leases", "lease", True, coordination.Lease,
         coordination.LeaseList),
    Kind(RESOURCE, "v1alpha2", "ResourceClass", "resourceclasses", "resourceclass", False,
         resource.ResourceClass, resource.ResourceClassList),
    Kind(RESOURCE, "v1alpha2", "ResourceClaim", "resourceclaims", "resourceclaim", True,
         resource.ResourceClaim, resource.ResourceClaimList, (), ("status",)),
    Kind(RESOURCE, "v1alpha2", "ResourceClaimTemplate", "resourceclaimtemplates",
         "resourceclaimtemplate", True, resource.ResourceClaimTemplate,
         resource.ResourceClaimTemplateList),
    Kind(RESOURCE, "v1alpha2", "PodSchedulingContext", "podschedulingcontexts",
         "podschedulingcontext", True, resource.PodSchedulingContext,
         resource.PodSchedulingContextList, (), ("status",)),
    Kind(RESOURCE, "v1alpha2", "ResourceSlice", "resourceslices", "resourceslice", False,
         resource.ResourceSlice, resource.ResourceSliceList),
    Kind(RESOURCE, "v1alpha2", "ResourceClaimParameters", "resourceclaimparameters",
         "resourceclaimparameters", True, resource.ResourceClaimParameters,
         resource.ResourceClaimParametersList),
    Kind(RESOURCE, "v1alpha2", "ResourceClassParameters", "resourceclassparameters",
         "resourceclassparameters", True, resource.ResourceClassParameters,
         resource.ResourceClassParametersList),
    Kind(RBAC, "v1", "Role", "roles", "role", True, rbac.Role, rbac.RoleList),
    Kind(RBAC, "v1", "ClusterRole", "clusterroles", "clusterrole", False, rbac.ClusterRole,
         rbac.ClusterRoleList),
    Kind(RBAC, "v1", "RoleBinding", "rolebindings", "rolebinding", True, rbac.RoleBinding,
         rbac.RoleBindingList),
    Kind(RBAC, "v1", "ClusterRoleBinding", "clusterrolebindings", "clusterrolebinding", False,
         rbac.ClusterRoleBinding, rbac.ClusterRoleBindingList),
    # Access reviews and SelfSubjectReview are answered, never stored.
    Kind(AUTHORIZATION, "v1", "SelfSubjectAccessReview", "selfsubjectaccessreviews",
         "selfsubjectaccessreview", False, authorization.SelfSubjectAccessReview,
         authorization.SelfSubjectAccessReviewList, verbs=_CREATE_ONLY),
    Kind(AUTHORIZATION, "v1", "SelfSubjectRulesReview", "selfsubjectrulesreviews",
         "selfsubjectrulesreview", False, authorization.SelfSubjectRulesReview,
         authorization.SelfSubjectRulesReviewList, verbs=_CREATE_ONLY),
    Kind(AUTHORIZATION, "v1", "SubjectAccessReview", "subjectaccessreviews",
         "subjectaccessreview", False, authorization.SubjectAccessReview,
         authorization.SubjectAccessReviewList, verbs=_CREATE_ONLY),
    Kind(authentication.GROUP, "v1", "SelfSubjectReview", "selfsubjectreviews",
         "selfsubjectreview", False, authentication.SelfSubjectReview,
         authentication.SelfSubjectReviewList, verbs=_CREATE_ONLY),
)

_BY_GVK = {(k.group, k.version, k.kind): k for k in KINDS}


def by_gvk(group: str, version: str, kind: str) -> Kind | None:
    return _BY_GVK.get((group, version, kind))


def by_api_version(api_version: str, kind: str) -> Kind | None:
    group, _, version = api_version.rpartition("/")
    return _BY_GVK.get((group, version, kind))


def lookup(name: str) -> Kind | None:
    """Find a kind the way a CLI user names it: plural, singular, short name or Kind,
    optionally qualified with its group (``resourceslices.resource.k8s.io``)."""
    base, _, group = name.partition(".")
    low = base.lower()
    for k in KINDS:
        if group and k.group != group:
            continue
        if low in (k.plural, k.singular, k.kind.lower()) or low in k.short_names:
            return k
    return None

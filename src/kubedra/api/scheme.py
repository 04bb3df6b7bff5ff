"""The resource table: every resource the server serves, with its versions (upstream's
scheme plus ``APIGroupInfo``), keyed by group, version and resource.

A :class:`GroupResource` is one resource with all its served versions and the one version
its objects are stored in; strategies and validation are written once, on that stored (hub)
form. Each :class:`Served` row is one version on the wire. The facts of the layers above
``api/`` are bound to these rows under the same :data:`GVR` keys: the strategy of a
resource in ``registry/resources.py`` (under its storage GVR), the patch tags
(``apiserver/patch/schema.py``) and the table columns (``apiserver/tables.py``) under each
served GVR. ``tests/unit/api/test_scheme.py`` checks that every one of them names rows of
this table and that every row has its strategy and patch tags.

:mod:`kubedra.api.kinds` is the view the request path, the codec, the client and the CLI
read: one :class:`~kubedra.api.kinds.Kind` per served version.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from kubedra.api import authentication, authorization, batch, coordination, core, rbac
from kubedra.api.meta import TypedObject
from kubedra.api.resource import v1alpha2

GVR = tuple[str, str, str]
"""(group, version, plural): the key of a served version of a resource."""

RESOURCE = "resource.k8s.io"
RBAC = "rbac.authorization.k8s.io"
AUTHORIZATION = "authorization.k8s.io"
AUTHENTICATION = authentication.GROUP
_CREATE_ONLY = ("create",)
_ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update",
              "watch")

#: Each group's versions in priority order (upstream ``SetVersionPriority``): the first is
#: the group's preferred version, the one discovery names and a CLI user gets by default.
VERSION_PRIORITY: Final[Mapping[str, tuple[str, ...]]] = MappingProxyType({
    "": ("v1",),
    "batch": ("v1",),
    "coordination.k8s.io": ("v1",),
    RESOURCE: ("v1alpha2",),
    RBAC: ("v1",),
    AUTHORIZATION: ("v1",),
    AUTHENTICATION: ("v1",),
})

#: kube-openapi's package of the apimachinery meta types every object embeds.
META_PACKAGE: Final = "io.k8s.apimachinery.pkg.apis.meta.v1"


@dataclass(frozen=True, slots=True)
class Served:
    """One version of a resource on the wire: its models."""

    version: str
    model: type[TypedObject]
    list_model: type[object]


@dataclass(frozen=True, slots=True)
class GroupResource:
    """One resource, all its versions (upstream: one ``NewREST`` per resource)."""

    group: str
    plural: str
    kind: str
    singular: str
    namespaced: bool
    #: The version its objects are written to the store in (the hub form the strategy,
    #: validation and the engine read).
    storage: str
    #: The versions served (which one is preferred is the group's
    #: :data:`VERSION_PRIORITY`, never this order).
    served: tuple[Served, ...]
    short_names: tuple[str, ...] = ()
    subresources: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    verbs: tuple[str, ...] = _ALL_VERBS

    @property
    def preferred(self) -> Served:
        """The served version of highest priority (:data:`VERSION_PRIORITY`)."""
        order = VERSION_PRIORITY[self.group]
        return min(self.served, key=lambda s: order.index(s.version))

    @property
    def storage_gvr(self) -> GVR:
        """The storage version's key: what the resource's strategy is bound under."""
        return (self.group, self.storage, self.plural)

    @property
    def prefix(self) -> str:
        """The store keys of its objects: ``/registry/<group>/<plural>/``."""
        return f"/registry/{self.group or 'core'}/{self.plural}/"


def openapi_package(group: str, version: str) -> str:
    """kube-openapi's package of a group version's types (``io.k8s.api.resource.v1alpha2``):
    the Go package ``k8s.io/api/<first label of the group, or core>/<version>``."""
    return f"io.k8s.api.{group.split('.', 1)[0] or 'core'}.{version}"


def _one(group: str, version: str, kind: str, plural: str, singular: str, namespaced: bool,
         model: type[TypedObject], list_model: type[object], short_names: tuple[str, ...] = (),
         subresources: tuple[str, ...] = (), categories: tuple[str, ...] = (),
         verbs: tuple[str, ...] = _ALL_VERBS) -> GroupResource:
    """A resource served in the one version it is stored in."""
    return GroupResource(group, plural, kind, singular, namespaced, version,
                         (Served(version, model, list_model),), short_names, subresources,
                         categories, verbs)


SCHEME: Final[tuple[GroupResource, ...]] = (
    _one("", "v1", "Namespace", "namespaces", "namespace", False, core.Namespace,
         core.NamespaceList, ("ns",), ("status", "finalize"),
         verbs=("create", "delete", "get", "list", "patch", "update", "watch")),
    _one("", "v1", "Node", "nodes", "node", False, core.Node, core.NodeList, ("no",),
         ("status",)),
    _one("", "v1", "Pod", "pods", "pod", True, core.Pod, core.PodList, ("po",),
         ("status", "binding"), ("all",)),
    _one("", "v1", "Event", "events", "event", True, core.Event, core.EventList, ("ev",)),
    # Read-only: the API server keeps the ``kubernetes`` Service itself (see deviations).
    _one("", "v1", "Service", "services", "service", True, core.Service, core.ServiceList,
         ("svc",), (), ("all",), verbs=("get", "list", "watch")),
    _one("", "v1", "ServiceAccount", "serviceaccounts", "serviceaccount", True,
         core.ServiceAccount, core.ServiceAccountList, ("sa",), ("token",)),
    _one("batch", "v1", "Job", "jobs", "job", True, batch.Job, batch.JobList, (),
         ("status",), ("all",)),
    _one("coordination.k8s.io", "v1", "Lease", "leases", "lease", True, coordination.Lease,
         coordination.LeaseList),
    _one(RESOURCE, "v1alpha2", "ResourceClass", "resourceclasses", "resourceclass", False,
         v1alpha2.ResourceClass, v1alpha2.ResourceClassList),
    _one(RESOURCE, "v1alpha2", "ResourceClaim", "resourceclaims", "resourceclaim", True,
         v1alpha2.ResourceClaim, v1alpha2.ResourceClaimList, (), ("status",)),
    _one(RESOURCE, "v1alpha2", "ResourceClaimTemplate", "resourceclaimtemplates",
         "resourceclaimtemplate", True, v1alpha2.ResourceClaimTemplate,
         v1alpha2.ResourceClaimTemplateList),
    _one(RESOURCE, "v1alpha2", "PodSchedulingContext", "podschedulingcontexts",
         "podschedulingcontext", True, v1alpha2.PodSchedulingContext,
         v1alpha2.PodSchedulingContextList, (), ("status",)),
    _one(RESOURCE, "v1alpha2", "ResourceSlice", "resourceslices", "resourceslice", False,
         v1alpha2.ResourceSlice, v1alpha2.ResourceSliceList),
    _one(RESOURCE, "v1alpha2", "ResourceClaimParameters", "resourceclaimparameters",
         "resourceclaimparameters", True, v1alpha2.ResourceClaimParameters,
         v1alpha2.ResourceClaimParametersList),
    _one(RESOURCE, "v1alpha2", "ResourceClassParameters", "resourceclassparameters",
         "resourceclassparameters", True, v1alpha2.ResourceClassParameters,
         v1alpha2.ResourceClassParametersList),
    _one(RBAC, "v1", "Role", "roles", "role", True, rbac.Role, rbac.RoleList),
    _one(RBAC, "v1", "ClusterRole", "clusterroles", "clusterrole", False, rbac.ClusterRole,
         rbac.ClusterRoleList),
    _one(RBAC, "v1", "RoleBinding", "rolebindings", "rolebinding", True, rbac.RoleBinding,
         rbac.RoleBindingList),
    _one(RBAC, "v1", "ClusterRoleBinding", "clusterrolebindings", "clusterrolebinding",
         False, rbac.ClusterRoleBinding, rbac.ClusterRoleBindingList),
    # Access reviews and SelfSubjectReview are answered, never stored.
    _one(AUTHORIZATION, "v1", "SelfSubjectAccessReview", "selfsubjectaccessreviews",
         "selfsubjectaccessreview", False, authorization.SelfSubjectAccessReview,
         authorization.SelfSubjectAccessReviewList, verbs=_CREATE_ONLY),
    _one(AUTHORIZATION, "v1", "SelfSubjectRulesReview", "selfsubjectrulesreviews",
         "selfsubjectrulesreview", False, authorization.SelfSubjectRulesReview,
         authorization.SelfSubjectRulesReviewList, verbs=_CREATE_ONLY),
    _one(AUTHORIZATION, "v1", "SubjectAccessReview", "subjectaccessreviews",
         "subjectaccessreview", False, authorization.SubjectAccessReview,
         authorization.SubjectAccessReviewList, verbs=_CREATE_ONLY),
    _one(AUTHENTICATION, "v1", "SelfSubjectReview", "selfsubjectreviews",
         "selfsubjectreview", False, authentication.SelfSubjectReview,
         authentication.SelfSubjectReviewList, verbs=_CREATE_ONLY),
)


def _openapi_packages() -> dict[str, str]:
    out = {TypedObject.__module__: META_PACKAGE}
    for res in SCHEME:
        for served in res.served:
            out[served.model.__module__] = openapi_package(res.group, served.version)
    return out


#: Python module of the models -> kube-openapi package of the Go types they mirror.
OPENAPI_PACKAGES: Final[Mapping[str, str]] = MappingProxyType(_openapi_packages())

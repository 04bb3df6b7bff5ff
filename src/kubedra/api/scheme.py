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

A row names the releases it exists in and whether it is on there by default: a server of
one release serves exactly :func:`served` (its rows, with ``--runtime-config`` applied), so
the two eras are never served at once.

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
from kubedra.api.release import R1_30, R1_34, RELEASES, Release
from kubedra.api.resource import v1, v1alpha2, v1beta1
from kubedra.api.resource.convert import CONVERSIONS, IDENTITY, Conversion
from kubedra.api.runtimeconfig import GroupVersion, RuntimeConfig

GVR = tuple[str, str, str]
"""(group, version, plural): the key of a served version of a resource."""

RESOURCE = "resource.k8s.io"
#: The versions of the resource.k8s.io/v1 generation (1.34), stored as v1.
DEVICE_VERSIONS: Final = ("v1", "v1beta2", "v1beta1")
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
    RESOURCE: ("v1", "v1beta2", "v1beta1", "v1alpha2"),
    RBAC: ("v1",),
    AUTHORIZATION: ("v1",),
    AUTHENTICATION: ("v1",),
})

#: Rows of every release (core kinds) and of v1.30's alone (``resource.k8s.io/v1alpha2``).
EVERY_RELEASE: Final = frozenset(RELEASES)
ONLY_1_30: Final = frozenset((R1_30,))
ONLY_1_34: Final = frozenset((R1_34,))
#: No ``--runtime-config``: each release's defaults.
DEFAULTS: Final = RuntimeConfig()

#: kube-openapi's package of the apimachinery meta types every object embeds.
META_PACKAGE: Final = "io.k8s.apimachinery.pkg.apis.meta.v1"


@dataclass(frozen=True, slots=True)
class Served:
    """One version of a resource on the wire: its models, the releases that have it
    (upstream: registered in their scheme) and whether it is on there by default (off:
    ``--runtime-config`` turns it on, as upstream's beta APIs since 1.24)."""

    version: str
    model: type[TypedObject]
    list_model: type[object]
    releases: frozenset[Release] = EVERY_RELEASE
    on: bool = True
    #: To the storage version's model and back (the identity for the storage version).
    conversion: Conversion = IDENTITY


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
    #: The group segment of its store keys when not the group: a later generation of a
    #: group's resources stores apart (``resource.k8s.io@v1``), so a data directory written
    #: under one release shows the other none of its objects.
    segment: str = ""

    @property
    def preferred(self) -> Served:
        """The served version of highest priority (:data:`VERSION_PRIORITY`)."""
        order = VERSION_PRIORITY[self.group]
        return min(self.served, key=lambda s: order.index(s.version))

    def preferred_among(self, gvrs: frozenset[GVR]) -> Served | None:
        """The version of highest priority among ``gvrs`` (a server's :func:`served`)."""
        order = VERSION_PRIORITY[self.group]
        mine = [s for s in self.served if (self.group, s.version, self.plural) in gvrs]
        return min(mine, key=lambda s: order.index(s.version)) if mine else None

    @property
    def storage_gvr(self) -> GVR:
        """The storage version's key: what the resource's strategy is bound under."""
        return (self.group, self.storage, self.plural)

    def row(self, version: str) -> Served:
        """The served row of ``version``."""
        return next(s for s in self.served if s.version == version)

    @property
    def prefix(self) -> str:
        """The store keys of its objects: ``/registry/<group>/<plural>/`` (``<segment>``
        for the group where it has one)."""
        return f"/registry/{self.segment or self.group or 'core'}/{self.plural}/"


def openapi_package(group: str, version: str) -> str:
    """kube-openapi's package of a group version's types (``io.k8s.api.resource.v1alpha2``):
    the Go package ``k8s.io/api/<first label of the group, or core>/<version>``."""
    return f"io.k8s.api.{group.split('.', 1)[0] or 'core'}.{version}"


def _one(group: str, version: str, kind: str, plural: str, singular: str, namespaced: bool,
         model: type[TypedObject], list_model: type[object], short_names: tuple[str, ...] = (),
         subresources: tuple[str, ...] = (), categories: tuple[str, ...] = (),
         verbs: tuple[str, ...] = _ALL_VERBS,
         releases: frozenset[Release] = EVERY_RELEASE) -> GroupResource:
    """A resource served in the one version it is stored in."""
    return GroupResource(group, plural, kind, singular, namespaced, version,
                         (Served(version, model, list_model, releases),), short_names,
                         subresources, categories, verbs)


def _devices(kind: str, plural: str, namespaced: bool,
             models: dict[str, tuple[type[TypedObject], type[object]]],
             subresources: tuple[str, ...] = ()) -> GroupResource:
    """A resource of the resource.k8s.io/v1 generation (1.34): stored as v1 under its own
    segment, served as v1 and, when ``--runtime-config`` turns them on, v1beta2 (v1's
    classes) and v1beta1 (``models`` by version)."""
    served = tuple(Served(version, *models.get(version, models["v1"]), ONLY_1_34,
                          on=version == "v1", conversion=CONVERSIONS[version])
                   for version in DEVICE_VERSIONS)
    return GroupResource(RESOURCE, plural, kind, kind.lower(), namespaced, "v1", served,
                         subresources=subresources, segment=f"{RESOURCE}@v1")


SCHEME: Final[tuple[GroupResource, ...]] = (
    _one("", "v1", "Namespace", "namespaces", "namespace", False, core.Namespace,
         core.NamespaceList, ("ns",), ("status", "finalize"),
         verbs=("create", "delete", "get", "list", "patch", "update", "watch")),
    _one("", "v1", "Node", "nodes", "node", False, core.Node, core.NodeList, ("no",),
         ("status",)),
    _one("", "v1", "Pod", "pods", "pod", True, core.Pod, core.PodList, ("po",),
         ("status", "binding", "eviction", "log"), ("all",)),
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
         v1alpha2.ResourceClass, v1alpha2.ResourceClassList, releases=ONLY_1_30),
    _one(RESOURCE, "v1alpha2", "ResourceClaim", "resourceclaims", "resourceclaim", True,
         v1alpha2.ResourceClaim, v1alpha2.ResourceClaimList, (), ("status",),
         releases=ONLY_1_30),
    _one(RESOURCE, "v1alpha2", "ResourceClaimTemplate", "resourceclaimtemplates",
         "resourceclaimtemplate", True, v1alpha2.ResourceClaimTemplate,
         v1alpha2.ResourceClaimTemplateList, releases=ONLY_1_30),
    _one(RESOURCE, "v1alpha2", "PodSchedulingContext", "podschedulingcontexts",
         "podschedulingcontext", True, v1alpha2.PodSchedulingContext,
         v1alpha2.PodSchedulingContextList, (), ("status",), releases=ONLY_1_30),
    _one(RESOURCE, "v1alpha2", "ResourceSlice", "resourceslices", "resourceslice", False,
         v1alpha2.ResourceSlice, v1alpha2.ResourceSliceList, releases=ONLY_1_30),
    _one(RESOURCE, "v1alpha2", "ResourceClaimParameters", "resourceclaimparameters",
         "resourceclaimparameters", True, v1alpha2.ResourceClaimParameters,
         v1alpha2.ResourceClaimParametersList, releases=ONLY_1_30),
    _one(RESOURCE, "v1alpha2", "ResourceClassParameters", "resourceclassparameters",
         "resourceclassparameters", True, v1alpha2.ResourceClassParameters,
         v1alpha2.ResourceClassParametersList, releases=ONLY_1_30),
    _devices("DeviceClass", "deviceclasses", False, {"v1": (v1.DeviceClass, v1.DeviceClassList)}),
    _devices("ResourceClaim", "resourceclaims", True, {
        "v1": (v1.ResourceClaim, v1.ResourceClaimList),
        "v1beta1": (v1beta1.ResourceClaim, v1beta1.ResourceClaimList)}, ("status",)),
    _devices("ResourceClaimTemplate", "resourceclaimtemplates", True, {
        "v1": (v1.ResourceClaimTemplate, v1.ResourceClaimTemplateList),
        "v1beta1": (v1beta1.ResourceClaimTemplate, v1beta1.ResourceClaimTemplateList)}),
    _devices("ResourceSlice", "resourceslices", False, {
        "v1": (v1.ResourceSlice, v1.ResourceSliceList),
        "v1beta1": (v1beta1.ResourceSlice, v1beta1.ResourceSliceList)}),
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


def registered(release: Release) -> frozenset[GroupVersion]:
    """The group versions ``release`` has, served or not (what ``--runtime-config`` may
    name)."""
    return frozenset((res.group, s.version) for res in SCHEME for s in res.served
                     if release in s.releases)


def served(release: Release, runtime_config: RuntimeConfig = DEFAULTS) -> frozenset[GVR]:
    """The versions a server of ``release`` serves: its rows that are on by default or by
    ``runtime_config``."""
    return frozenset(
        (res.group, s.version, res.plural) for res in SCHEME for s in res.served
        if release in s.releases and runtime_config.enabled(res.group, s.version, res.plural,
                                                            s.on))


def _openapi_packages() -> dict[str, str]:
    """A module shared by several versions (v1's classes serve v1beta2) maps to the
    preferred one."""
    out = {TypedObject.__module__: META_PACKAGE}
    for res in SCHEME:
        order = VERSION_PRIORITY[res.group]
        for served in sorted(res.served, key=lambda s: order.index(s.version)):
            out.setdefault(served.model.__module__, openapi_package(res.group, served.version))
    return out


#: Python module of the models -> kube-openapi package of the Go types they mirror.
OPENAPI_PACKAGES: Final[Mapping[str, str]] = MappingProxyType(_openapi_packages())

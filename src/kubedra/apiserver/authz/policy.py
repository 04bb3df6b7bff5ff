"""The bootstrap RBAC policy (upstream ``bootstrappolicy/policy.go`` and
``controller_policy.go`` at v1.30 and v1.34, for the resources kubedra serves, with the
DynamicResourceAllocation rules on): the ClusterRoles and ClusterRoleBindings the API server
keeps at start. The releases differ only in their DRA rows (:data:`DRA`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from kubedra.api.base import Obj
from kubedra.api.release import R1_30, R1_34, Release
from kubedra.apiserver.authz.rules import Rule

BOOTSTRAP_LABEL = ("kubernetes.io/bootstrapping", "rbac-defaults")
AUTOUPDATE = "rbac.authorization.kubernetes.io/autoupdate"
AGGREGATE = "rbac.authorization.k8s.io/aggregate-to-"

READ = ("get", "list", "watch")
READ_WRITE = ("get", "list", "watch", "create", "update", "patch", "delete", "deletecollection")
READ_UPDATE = ("get", "list", "watch", "update", "patch")
WRITE = ("create", "delete", "deletecollection", "patch", "update")
CORE, BATCH, RBAC, AUTHZ = "", "batch", "rbac.authorization.k8s.io", "authorization.k8s.io"
AUTHN = "authentication.k8s.io"
COORDINATION, RESOURCE, EVENTS = "coordination.k8s.io", "resource.k8s.io", "events.k8s.io"

_EVENTS = Rule(("create", "update", "patch"), (CORE, EVENTS), ("events",))
_REVIEWS = Rule(("create",), (AUTHZ,), ("subjectaccessreviews",))

_DISCOVERY_URLS = ("/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi",
                   "/openapi/*", "/readyz", "/version", "/version/")
_PUBLIC_URLS = ("/healthz", "/livez", "/readyz", "/version", "/version/")


def _role(name: str, rules: tuple[Rule, ...] = (), labels: dict[str, str] | None = None,
          aggregate_from: tuple[str, ...] = ()) -> Obj:
    role: Obj = {"apiVersion": f"{RBAC}/v1", "kind": "ClusterRole",
                 "metadata": {"name": name, "labels": {BOOTSTRAP_LABEL[0]: BOOTSTRAP_LABEL[1],
                                                       **(labels or {})},
                              "annotations": {AUTOUPDATE: "true"}},
                 "rules": [r.to_json() for r in rules]}
    if aggregate_from:
        role["aggregationRule"] = {"clusterRoleSelectors": [
            {"matchLabels": {f"{AGGREGATE}{a}": "true"}} for a in aggregate_from]}
    return role


def _binding(name: str, role: str, *subjects: tuple[str, str]) -> Obj:
    binding: Obj = {"apiVersion": f"{RBAC}/v1", "kind": "ClusterRoleBinding",
                    "metadata": {"name": name,
                                 "labels": {BOOTSTRAP_LABEL[0]: BOOTSTRAP_LABEL[1]},
                                 "annotations": {AUTOUPDATE: "true"}},
                    "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": role}}
    if subjects:
        binding["subjects"] = [{"apiGroup": RBAC, "kind": kind, "name": name}
                               for kind, name in subjects]
    return binding


def _aggregate_labels(*to: str) -> dict[str, str]:
    return {f"{AGGREGATE}{t}": "true" for t in to}


_VIEW = (
    Rule(READ, (CORE,), ("pods", "pods/log", "pods/status", "services", "services/status",
                         "events", "namespaces", "namespaces/status")),
    Rule(READ, (BATCH,), ("jobs", "jobs/status")),
    Rule(READ, (COORDINATION,), ("leases",)),
)
_EDIT = (
    Rule(WRITE, (CORE,), ("pods",)),
    Rule(("create",), (CORE,), ("pods/eviction",)),
    Rule(("impersonate",), (CORE,), ("serviceaccounts",)),
    Rule(WRITE, (BATCH,), ("jobs",)),
    Rule(WRITE, (COORDINATION,), ("leases",)),
)
_ADMIN = (
    Rule(READ_WRITE, (RBAC,), ("roles", "rolebindings")),
    Rule(("create",), (AUTHZ,), ("localsubjectaccessreviews",)),
)

_SCHEDULER = (
    _REVIEWS, _EVENTS,
    Rule(("create",), (COORDINATION,), ("leases",)),
    Rule(("get", "update"), (COORDINATION,), ("leases",), ("kube-scheduler",)),
    Rule(READ, (CORE,), ("nodes", "namespaces", "services")),
    Rule(("get", "list", "watch", "delete"), (CORE,), ("pods",)),
    Rule(("create",), (CORE,), ("pods/binding", "bindings")),
    Rule(("patch", "update"), (CORE,), ("pods/status",)),
)
# kube-controller-manager without --use-service-account-credentials: its own identity runs
# the controllers, so it holds what kubedra's ResourceClaim, Job, TTL, node lifecycle and taint
# eviction controllers do.
_CONTROLLER_MANAGER = (
    _REVIEWS, _EVENTS,
    Rule(("create",), (COORDINATION,), ("leases",)),
    Rule(("get", "update"), (COORDINATION,), ("leases",), ("kube-controller-manager",)),
    Rule(READ, (COORDINATION,), ("leases",)),
    Rule(READ, (CORE,), ("namespaces", "nodes")),
    Rule(("update", "patch"), (CORE,), ("nodes", "nodes/status")),
    Rule(("get", "list", "watch", "create", "update", "patch", "delete"), (CORE,), ("pods",)),
    Rule(("update", "patch"), (CORE,), ("pods/status", "pods/finalizers")),
    Rule(("get", "list", "watch", "update", "patch", "delete"), (BATCH,), ("jobs",)),
    Rule(("update", "patch"), (BATCH,), ("jobs/status", "jobs/finalizers")),
)


@dataclass(frozen=True, slots=True)
class DraRows:
    """One release's DynamicResourceAllocation rules, appended to the roles they extend."""

    view: tuple[Rule, ...]
    edit: tuple[Rule, ...]
    scheduler: tuple[Rule, ...]
    controller_manager: tuple[Rule, ...]
    #: ``system:controller:<name>`` roles, each bound to the service account
    #: ``kube-system/<name>`` (``controller_policy.go``).
    controllers: tuple[tuple[str, tuple[Rule, ...]], ...] = ()


_CLAIM_CONTROLLER_1_34 = (
    Rule(READ, (CORE,), ("pods",)),
    Rule(("update",), (CORE,), ("pods/finalizers",)),
    Rule(("get", "list", "watch", "create", "delete"), (RESOURCE,), ("resourceclaims",)),
    Rule(("update", "patch"), (RESOURCE,), ("resourceclaims", "resourceclaims/status")),
    Rule(("update", "patch"), (CORE,), ("pods/status",)),
    _EVENTS,
)

DRA: Mapping[Release, DraRows] = MappingProxyType({
    R1_30: DraRows(
        view=(Rule(READ, (RESOURCE,), ("resourceclaims", "resourceclaims/status",
                                       "resourceclaimtemplates", "podschedulingcontexts",
                                       "podschedulingcontexts/status",
                                       "resourceclaimparameters")),),
        edit=(Rule(WRITE, (RESOURCE,), ("resourceclaims", "resourceclaimtemplates",
                                        "podschedulingcontexts", "resourceclaimparameters")),),
        scheduler=(
            Rule(READ, (RESOURCE,), ("resourceclasses", "resourceslices",
                                     "resourceclassparameters", "resourceclaimparameters")),
            Rule(READ_UPDATE, (RESOURCE,), ("resourceclaims", "resourceclaims/status")),
            Rule(("get", "list", "watch", "create", "update", "patch", "delete"), (RESOURCE,),
                 ("podschedulingcontexts",)),
            Rule(READ, (RESOURCE,), ("podschedulingcontexts/status",)),
            Rule(READ_UPDATE, (CORE,), ("pods/finalizers",)),
        ),
        controller_manager=(
            Rule(("get", "list", "watch", "create", "update", "patch", "delete"), (RESOURCE,),
                 ("resourceclaims",)),
            Rule(("update", "patch"), (RESOURCE,), ("resourceclaims/status",)),
            Rule(READ, (RESOURCE,), ("resourceclaimtemplates", "resourceclasses",
                                     "podschedulingcontexts")),
            Rule(("delete",), (RESOURCE,), ("podschedulingcontexts",)),
        ),
    ),
    R1_34: DraRows(
        view=(Rule(READ, (RESOURCE,), ("resourceclaims", "resourceclaims/status",
                                       "resourceclaimtemplates")),),
        edit=(Rule(WRITE, (RESOURCE,), ("resourceclaims", "resourceclaimtemplates")),),
        scheduler=(
            Rule(READ, (RESOURCE,), ("deviceclasses",)),
            Rule(READ_UPDATE, (RESOURCE,), ("resourceclaims",)),
            Rule(READ_UPDATE, (RESOURCE,), ("resourceclaims/status",)),
            Rule(READ_UPDATE, (CORE,), ("pods/finalizers",)),
            Rule(READ, (RESOURCE,), ("resourceslices",)),
        ),
        # kubedra's ResourceClaim controller runs as the controller manager itself.
        controller_manager=(
            Rule(("get", "list", "watch", "create", "update", "patch", "delete"), (RESOURCE,),
                 ("resourceclaims",)),
            Rule(("update", "patch"), (RESOURCE,), ("resourceclaims/status",)),
            Rule(READ, (RESOURCE,), ("resourceclaimtemplates",)),
        ),
        controllers=(("resource-claim-controller", _CLAIM_CONTROLLER_1_34),),
    ),
})
CONTROLLER_ROLE_PREFIX = "system:controller:"
CONTROLLER_NAMESPACE = "kube-system"

MASTERS, AUTHENTICATED, UNAUTHENTICATED = ("system:masters", "system:authenticated",
                                           "system:unauthenticated")


def cluster_roles(release: Release, node_rules: tuple[Rule, ...]) -> list[Obj]:
    dra = DRA[release]
    return [
        _role("cluster-admin", (Rule(("*",), ("*",), ("*",)),
                                Rule(("*",), non_resource_urls=("*",)))),
        _role("system:discovery", (Rule(("get",), non_resource_urls=_DISCOVERY_URLS),)),
        _role("system:public-info-viewer", (Rule(("get",), non_resource_urls=_PUBLIC_URLS),)),
        _role("system:monitoring", (Rule(("get",), non_resource_urls=(
            "/healthz", "/healthz/*", "/livez", "/livez/*", "/metrics", "/metrics/slis",
            "/readyz", "/readyz/*")),)),
        _role("system:basic-user", (Rule(("create",), (AUTHZ,),
                                         ("selfsubjectaccessreviews",
                                          "selfsubjectrulesreviews")),
                                    Rule(("create",), (AUTHN,), ("selfsubjectreviews",)))),
        _role("admin", aggregate_from=("admin",)),
        _role("edit", labels=_aggregate_labels("admin"), aggregate_from=("edit",)),
        _role("view", labels=_aggregate_labels("edit"), aggregate_from=("view",)),
        _role("system:aggregate-to-admin", _ADMIN, _aggregate_labels("admin")),
        _role("system:aggregate-to-edit", _EDIT + dra.edit, _aggregate_labels("admin", "edit")),
        _role("system:aggregate-to-view", _VIEW + dra.view,
              _aggregate_labels("admin", "edit", "view")),
        _role("system:kube-scheduler", _SCHEDULER + dra.scheduler),
        _role("system:kube-controller-manager", _CONTROLLER_MANAGER + dra.controller_manager),
        _role("system:node", node_rules),
        *(_role(CONTROLLER_ROLE_PREFIX + name, rules) for name, rules in dra.controllers),
    ]


def _controller_binding(name: str) -> Obj:
    """``system:controller:<name>`` bound to the service account ``kube-system/<name>``."""
    binding = _binding(CONTROLLER_ROLE_PREFIX + name, CONTROLLER_ROLE_PREFIX + name)
    binding["subjects"] = [{"kind": "ServiceAccount", "name": name,
                            "namespace": CONTROLLER_NAMESPACE}]
    return binding


def cluster_role_bindings(release: Release) -> list[Obj]:
    return [
        _binding("cluster-admin", "cluster-admin", ("Group", MASTERS)),
        _binding("system:discovery", "system:discovery", ("Group", AUTHENTICATED)),
        _binding("system:monitoring", "system:monitoring", ("Group", "system:monitoring")),
        _binding("system:basic-user", "system:basic-user", ("Group", AUTHENTICATED)),
        _binding("system:public-info-viewer", "system:public-info-viewer",
                 ("Group", AUTHENTICATED), ("Group", UNAUTHENTICATED)),
        _binding("system:kube-scheduler", "system:kube-scheduler",
                 ("User", "system:kube-scheduler")),
        _binding("system:kube-controller-manager", "system:kube-controller-manager",
                 ("User", "system:kube-controller-manager")),
        # deprecated and without subjects: nodes get their rights from the Node authorizer
        _binding("system:node", "system:node"),
        *(_controller_binding(name) for name, _ in DRA[release].controllers),
    ]

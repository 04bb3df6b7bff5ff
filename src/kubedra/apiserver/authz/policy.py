"""The bootstrap RBAC policy (upstream ``bootstrappolicy/policy.go`` at v1.30, for the
resources kubedra serves, with the DynamicResourceAllocation rules on): the ClusterRoles and
ClusterRoleBindings the API server keeps at start."""

from __future__ import annotations

from kubedra.api.base import Obj
from kubedra.apiserver.authz.rules import Rule

BOOTSTRAP_LABEL = ("kubernetes.io/bootstrapping", "rbac-defaults")
AUTOUPDATE = "rbac.authorization.kubernetes.io/autoupdate"
AGGREGATE = "rbac.authorization.k8s.io/aggregate-to-"

READ = ("get", "list", "watch")
READ_WRITE = ("get", "list", "watch", "create", "update", "patch", "delete", "deletecollection")
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
    Rule(READ, (CORE,), ("pods", "pods/status", "services", "services/status", "events",
                         "namespaces", "namespaces/status")),
    Rule(READ, (BATCH,), ("jobs", "jobs/status")),
    Rule(READ, (COORDINATION,), ("leases",)),
    Rule(READ, (RESOURCE,), ("resourceclaims", "resourceclaims/status",
                             "resourceclaimtemplates", "podschedulingcontexts",
                             "podschedulingcontexts/status", "resourceclaimparameters")),
)
_EDIT = (
    Rule(WRITE, (CORE,), ("pods",)),
    Rule(("create",), (CORE,), ("pods/eviction",)),
    Rule(("impersonate",), (CORE,), ("serviceaccounts",)),
    Rule(WRITE, (BATCH,), ("jobs",)),
    Rule(WRITE, (COORDINATION,), ("leases",)),
    Rule(WRITE, (RESOURCE,), ("resourceclaims", "resourceclaimtemplates",
                              "podschedulingcontexts", "resourceclaimparameters")),
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
    # DynamicResourceAllocation
    Rule(READ, (RESOURCE,), ("resourceclasses", "resourceslices", "resourceclassparameters",
                             "resourceclaimparameters")),
    Rule(("get", "list", "watch", "update", "patch"), (RESOURCE,),
         ("resourceclaims", "resourceclaims/status")),
    Rule(("get", "list", "watch", "create", "update", "patch", "delete"), (RESOURCE,),
         ("podschedulingcontexts",)),
    Rule(READ, (RESOURCE,), ("podschedulingcontexts/status",)),
    Rule(("get", "list", "watch", "update", "patch"), (CORE,), ("pods/finalizers",)),
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
    Rule(("get", "list", "watch", "create", "update", "patch", "delete"), (RESOURCE,),
         ("resourceclaims",)),
    Rule(("update", "patch"), (RESOURCE,), ("resourceclaims/status",)),
    Rule(READ, (RESOURCE,), ("resourceclaimtemplates", "resourceclasses",
                             "podschedulingcontexts")),
    Rule(("delete",), (RESOURCE,), ("podschedulingcontexts",)),
)

MASTERS, AUTHENTICATED, UNAUTHENTICATED = ("system:masters", "system:authenticated",
                                           "system:unauthenticated")


def cluster_roles(node_rules: tuple[Rule, ...]) -> list[Obj]:
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
        _role("system:aggregate-to-edit", _EDIT, _aggregate_labels("admin", "edit")),
        _role("system:aggregate-to-view", _VIEW, _aggregate_labels("admin", "edit", "view")),
        _role("system:kube-scheduler", _SCHEDULER),
        _role("system:kube-controller-manager", _CONTROLLER_MANAGER),
        _role("system:node", node_rules),
    ]


def cluster_role_bindings() -> list[Obj]:
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
    ]

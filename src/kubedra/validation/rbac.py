"""Defaults and validation of rbac.authorization.k8s.io/v1 (k8s v1.30
``pkg/apis/rbac/v1/defaults.go`` and ``pkg/apis/rbac/validation/validation.go``)."""

from __future__ import annotations

from collections.abc import Sequence

from kubedra.api.rbac import (
    ClusterRole,
    ClusterRoleBinding,
    PolicyRule,
    Role,
    RoleBinding,
    RoleRef,
    Subject,
)
from kubedra.validation.field import ErrorList, Path, invalid, not_supported, required
from kubedra.validation.labelselector import validate_label_selector
from kubedra.validation.meta import validate_object_meta, validate_object_meta_update
from kubedra.validation.names import name_is_dns_subdomain

GROUP = "rbac.authorization.k8s.io"
_MAY_NOT_BE = (".", "..")
_MAY_NOT_CONTAIN = ("/", "%")


def validate_rbac_name(name: str, prefix: bool) -> list[str]:
    """``ValidatePathSegmentName``: RBAC names only have to fit in a URL path segment."""
    if not prefix and name in _MAY_NOT_BE:
        return [f"may not be '{name}'"]
    return [f"may not contain '{bad}'" for bad in _MAY_NOT_CONTAIN if bad in name]


# --- defaults -----------------------------------------------------------------------------


def default_binding(obj: RoleBinding | ClusterRoleBinding) -> None:
    """``SetDefaults_RoleBinding``/``Subject``: the RBAC group where a reference omits it."""
    if not obj.role_ref.api_group:
        obj.role_ref.api_group = GROUP
    for s in obj.subjects or ():
        if not s.api_group and s.kind in ("User", "Group"):
            s.api_group = GROUP


# --- roles --------------------------------------------------------------------------------


def validate_policy_rule(rule: PolicyRule, namespaced: bool, path: Path) -> ErrorList:
    errs: ErrorList = []
    if not rule.verbs:
        errs.append(required(path.child("verbs"), "verbs must contain at least one value"))
    if rule.non_resource_ur_ls:
        urls = path.child("nonResourceURLs")
        if namespaced:
            errs.append(invalid(urls, rule.non_resource_ur_ls,
                                "namespaced rules cannot apply to non-resource URLs"))
        if rule.api_groups or rule.resources or rule.resource_names:
            errs.append(invalid(urls, rule.non_resource_ur_ls,
                                "rules cannot apply to both regular resources and "
                                "non-resource URLs"))
        return errs
    if not rule.api_groups:
        errs.append(required(path.child("apiGroups"),
                             "resource rules must supply at least one api group"))
    if not rule.resources:
        errs.append(required(path.child("resources"),
                             "resource rules must supply at least one resource"))
    return errs


def _validate_rules(rules: Sequence[PolicyRule] | None, namespaced: bool) -> ErrorList:
    errs: ErrorList = []
    for i, rule in enumerate(rules or ()):
        errs += validate_policy_rule(rule, namespaced, Path("rules").index(i))
    return errs


def validate_role(role: Role) -> ErrorList:
    return validate_object_meta(role.metadata, True, validate_rbac_name) + _validate_rules(
        role.rules, True)


def validate_role_update(new: Role, old: Role) -> ErrorList:
    return validate_object_meta_update(new.metadata, old.metadata) + validate_role(new)


def validate_cluster_role(role: ClusterRole) -> ErrorList:
    errs = validate_object_meta(role.metadata, False, validate_rbac_name)
    errs += _validate_rules(role.rules, False)
    if role.aggregation_rule is not None:
        selectors = Path("aggregationRule").child("clusterRoleSelectors")
        if not role.aggregation_rule.cluster_role_selectors:
            errs.append(required(selectors, "at least one clusterRoleSelector required if "
                                 "aggregationRule is non-nil"))
        for i, sel in enumerate(role.aggregation_rule.cluster_role_selectors or ()):
            errs += validate_label_selector(sel, selectors.index(i))
    return errs


def validate_cluster_role_update(new: ClusterRole, old: ClusterRole) -> ErrorList:
    return validate_object_meta_update(new.metadata, old.metadata) + validate_cluster_role(new)


# --- bindings -----------------------------------------------------------------------------


def validate_subject(subject: Subject, namespaced: bool, path: Path) -> ErrorList:
    """``ValidateRoleBindingSubject``."""
    errs: ErrorList = []
    name, group = path.child("name"), path.child("apiGroup")
    if not subject.name:
        errs.append(required(name))
    api_group = subject.api_group or ""
    if subject.kind == "ServiceAccount":
        if subject.name:
            errs += [invalid(name, subject.name, m)
                     for m in name_is_dns_subdomain(subject.name, False)]
        if api_group:
            errs.append(not_supported(group, api_group, [""]))
        if not namespaced and not subject.namespace:
            errs.append(required(path.child("namespace")))
    elif subject.kind in ("User", "Group"):
        if api_group != GROUP:
            errs.append(not_supported(group, api_group, [GROUP]))
    else:
        errs.append(not_supported(path.child("kind"), subject.kind,
                                  ["ServiceAccount", "User", "Group"]))
    return errs


def _validate_role_ref(ref: RoleRef, kinds: list[str]) -> ErrorList:
    errs: ErrorList = []
    path = Path("roleRef")
    if ref.api_group != GROUP:
        errs.append(not_supported(path.child("apiGroup"), ref.api_group, [GROUP]))
    if ref.kind not in kinds:
        errs.append(not_supported(path.child("kind"), ref.kind, kinds))
    if not ref.name:
        errs.append(required(path.child("name")))
    else:
        errs += [invalid(path.child("name"), ref.name, m)
                 for m in validate_rbac_name(ref.name, False)]
    return errs


def _validate_binding(obj: RoleBinding | ClusterRoleBinding, namespaced: bool) -> ErrorList:
    errs = validate_object_meta(obj.metadata, namespaced, validate_rbac_name)
    errs += _validate_role_ref(obj.role_ref, ["Role", "ClusterRole"] if namespaced
                               else ["ClusterRole"])
    for i, s in enumerate(obj.subjects or ()):
        errs += validate_subject(s, namespaced, Path("subjects").index(i))
    return errs


def validate_role_binding(obj: RoleBinding) -> ErrorList:
    return _validate_binding(obj, True)


def validate_cluster_role_binding(obj: ClusterRoleBinding) -> ErrorList:
    return _validate_binding(obj, False)


def validate_binding_update(new: RoleBinding | ClusterRoleBinding,
                            old: RoleBinding | ClusterRoleBinding) -> ErrorList:
    errs = validate_object_meta_update(new.metadata, old.metadata)
    if new.role_ref != old.role_ref:
        errs.append(invalid(Path("roleRef"), new.role_ref, "cannot change roleRef"))
    return errs + _validate_binding(new, isinstance(new, RoleBinding))

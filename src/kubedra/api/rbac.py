"""rbac.authorization.k8s.io/v1: Roles, ClusterRoles and their bindings.

``rules`` of a ClusterRole with an ``aggregationRule`` are written by the aggregation
controller, not by users; ``roleRef`` of a binding is immutable.
"""

from __future__ import annotations

import msgspec

from kubedra.api.base import Model, required_list
from kubedra.api.meta import LabelSelector, ObjectList, TypedObject


class PolicyRule(Model):
    verbs: list[str] = required_list()
    api_groups: list[str] | None = None
    resources: list[str] | None = None
    resource_names: list[str] | None = None
    non_resource_ur_ls: list[str] | None = msgspec.field(default=None, name="nonResourceURLs")


class AggregationRule(Model):
    cluster_role_selectors: list[LabelSelector] | None = None


class Subject(Model):
    kind: str = ""
    api_group: str | None = None
    name: str = ""
    namespace: str | None = None


class RoleRef(Model):
    api_group: str = ""
    kind: str = ""
    name: str = ""


class Role(TypedObject):
    rules: list[PolicyRule] | None = None


class ClusterRole(TypedObject):
    rules: list[PolicyRule] | None = None
    aggregation_rule: AggregationRule | None = None


class RoleBinding(TypedObject):
    subjects: list[Subject] | None = None
    role_ref: RoleRef = msgspec.field(default_factory=RoleRef)


class ClusterRoleBinding(TypedObject):
    subjects: list[Subject] | None = None
    role_ref: RoleRef = msgspec.field(default_factory=RoleRef)


class RoleList(ObjectList):
    items: list[Role] = required_list()


class ClusterRoleList(ObjectList):
    items: list[ClusterRole] = required_list()


class RoleBindingList(ObjectList):
    items: list[RoleBinding] = required_list()


class ClusterRoleBindingList(ObjectList):
    items: list[ClusterRoleBinding] = required_list()

"""Strategies of the RBAC kinds (upstream ``pkg/registry/rbac``) and of the access reviews
and SelfSubjectReview, which are answered, never stored, so they need no write rules."""

from __future__ import annotations

from kubedra.api.authentication import SelfSubjectReview
from kubedra.api.authorization import (
    SelfSubjectAccessReview,
    SelfSubjectRulesReview,
    SubjectAccessReview,
)
from kubedra.api.rbac import ClusterRole, ClusterRoleBinding, Role, RoleBinding
from kubedra.registry.strategies.base import Strategy
from kubedra.validation import rbac
from kubedra.validation.field import FieldError


class RoleStrategy(Strategy[Role]):
    def validate(self, obj: Role) -> list[FieldError]:
        return rbac.validate_role(obj)

    def validate_update(self, new: Role, old: Role) -> list[FieldError]:
        return rbac.validate_role_update(new, old)


class ClusterRoleStrategy(Strategy[ClusterRole]):
    def validate(self, obj: ClusterRole) -> list[FieldError]:
        return rbac.validate_cluster_role(obj)

    def validate_update(self, new: ClusterRole, old: ClusterRole) -> list[FieldError]:
        return rbac.validate_cluster_role_update(new, old)


class RoleBindingStrategy(Strategy[RoleBinding]):
    def default(self, obj: RoleBinding) -> None:
        rbac.default_binding(obj)

    def validate(self, obj: RoleBinding) -> list[FieldError]:
        return rbac.validate_role_binding(obj)

    def validate_update(self, new: RoleBinding, old: RoleBinding) -> list[FieldError]:
        return rbac.validate_binding_update(new, old)


class ClusterRoleBindingStrategy(Strategy[ClusterRoleBinding]):
    def default(self, obj: ClusterRoleBinding) -> None:
        rbac.default_binding(obj)

    def validate(self, obj: ClusterRoleBinding) -> list[FieldError]:
        return rbac.validate_cluster_role_binding(obj)

    def validate_update(self, new: ClusterRoleBinding,
                        old: ClusterRoleBinding) -> list[FieldError]:
        return rbac.validate_binding_update(new, old)


class SelfSubjectAccessReviewStrategy(Strategy[SelfSubjectAccessReview]):
    """Answered by the authorizer (``apiserver/authz/reviews.py``)."""


class SubjectAccessReviewStrategy(Strategy[SubjectAccessReview]):
    """Answered by the authorizer (``apiserver/authz/reviews.py``)."""


class SelfSubjectRulesReviewStrategy(Strategy[SelfSubjectRulesReview]):
    """Answered by the authorizer (``apiserver/authz/reviews.py``)."""


class SelfSubjectReviewStrategy(Strategy[SelfSubjectReview]):
    """Answered from the request's user (``apiserver/authn/selfreview.py``)."""

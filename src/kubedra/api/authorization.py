"""authorization.k8s.io/v1: access reviews, create-only questions the server answers in
``status`` and never stores."""

from __future__ import annotations

import msgspec

from kubedra.api.base import Model, always, required_list
from kubedra.api.meta import ObjectList, TypedObject


class ResourceAttributes(Model):
    namespace: str | None = None
    verb: str | None = None
    group: str | None = None
    version: str | None = None
    resource: str | None = None
    subresource: str | None = None
    name: str | None = None


class NonResourceAttributes(Model):
    path: str | None = None
    verb: str | None = None


class SelfSubjectAccessReviewSpec(Model):
    resource_attributes: ResourceAttributes | None = None
    non_resource_attributes: NonResourceAttributes | None = None


class SubjectAccessReviewSpec(SelfSubjectAccessReviewSpec):
    user: str | None = None
    groups: list[str] | None = None
    extra: dict[str, list[str]] | None = None
    uid: str | None = None


class SubjectAccessReviewStatus(Model):
    allowed: bool = always(False)
    denied: bool | None = None
    reason: str | None = None
    evaluation_error: str | None = None


class SelfSubjectAccessReview(TypedObject):
    spec: SelfSubjectAccessReviewSpec = msgspec.field(
        default_factory=SelfSubjectAccessReviewSpec)
    status: SubjectAccessReviewStatus | None = None


class SubjectAccessReview(TypedObject):
    spec: SubjectAccessReviewSpec = msgspec.field(default_factory=SubjectAccessReviewSpec)
    status: SubjectAccessReviewStatus | None = None


class SelfSubjectRulesReviewSpec(Model):
    namespace: str | None = None


class ResourceRule(Model):
    verbs: list[str] = required_list()
    api_groups: list[str] | None = None
    resources: list[str] | None = None
    resource_names: list[str] | None = None


class NonResourceRule(Model):
    verbs: list[str] = required_list()
    non_resource_ur_ls: list[str] | None = msgspec.field(default=None, name="nonResourceURLs")


class SubjectRulesReviewStatus(Model):
    resource_rules: list[ResourceRule] = required_list()
    non_resource_rules: list[NonResourceRule] = required_list()
    incomplete: bool = always(False)
    evaluation_error: str | None = None


class SelfSubjectRulesReview(TypedObject):
    spec: SelfSubjectRulesReviewSpec = msgspec.field(default_factory=SelfSubjectRulesReviewSpec)
    status: SubjectRulesReviewStatus | None = None


class SelfSubjectAccessReviewList(ObjectList):
    items: list[SelfSubjectAccessReview] = required_list()


class SubjectAccessReviewList(ObjectList):
    items: list[SubjectAccessReview] = required_list()


class SelfSubjectRulesReviewList(ObjectList):
    items: list[SelfSubjectRulesReview] = required_list()

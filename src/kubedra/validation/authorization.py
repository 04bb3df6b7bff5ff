"""Validation of the authorization.k8s.io/v1 access reviews (k8s v1.30
``pkg/apis/authorization/validation``)."""

from __future__ import annotations

from kubedra.api.authorization import SelfSubjectAccessReviewSpec, SubjectAccessReviewSpec
from kubedra.validation.field import ErrorList, Path, invalid

_SPEC = Path("spec")


def validate_access_review_spec(spec: SelfSubjectAccessReviewSpec) -> ErrorList:
    """Exactly one of resourceAttributes and nonResourceAttributes; a SubjectAccessReview
    also names a user or a group."""
    errs: ErrorList = []
    if spec.resource_attributes is not None and spec.non_resource_attributes is not None:
        errs.append(invalid(_SPEC.child("nonResourceAttributes"), spec.non_resource_attributes,
                            "cannot be specified in combination with resourceAttributes"))
    if spec.resource_attributes is None and spec.non_resource_attributes is None:
        errs.append(invalid(_SPEC.child("resourceAttributes"), spec.non_resource_attributes,
                            "exactly one of nonResourceAttributes or resourceAttributes must "
                            "be specified"))
    if isinstance(spec, SubjectAccessReviewSpec) and not spec.user and not spec.groups:
        errs.append(invalid(_SPEC.child("user"), spec.user, "at least one of user or group "
                            "must be specified"))
    return errs

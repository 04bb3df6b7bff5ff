"""The access reviews (upstream ``pkg/registry/authorization``): create-only questions
answered by the authorizer chain, never stored. ``kubectl auth can-i`` asks a
SelfSubjectAccessReview, ``--list`` a SelfSubjectRulesReview."""

from __future__ import annotations

from kubedra.api import codec
from kubedra.api.authorization import (
    NonResourceRule,
    ResourceRule,
    SelfSubjectAccessReview,
    SelfSubjectAccessReviewSpec,
    SelfSubjectRulesReview,
    SubjectAccessReview,
    SubjectAccessReviewStatus,
    SubjectRulesReviewStatus,
)
from kubedra.api.base import Obj
from kubedra.api.meta import TypedObject
from kubedra.apiserver import errors
from kubedra.apiserver.auth import User
from kubedra.apiserver.authz.attributes import Attributes, Decision
from kubedra.apiserver.authz.chain import Chain
from kubedra.validation.authorization import validate_access_review_spec

REVIEWS = (SelfSubjectAccessReview, SelfSubjectRulesReview, SubjectAccessReview)


def attributes(user: User, spec: SelfSubjectAccessReviewSpec) -> Attributes:
    ra, nra = spec.resource_attributes, spec.non_resource_attributes
    if ra is not None:
        return Attributes(user, ra.verb or "", True, ra.group or "", ra.resource or "",
                          ra.subresource or "", ra.namespace or "", ra.name or "")
    assert nra is not None
    return Attributes(user, nra.verb or "", False, path=nra.path or "")


def _access(chain: Chain, user: User, spec: SelfSubjectAccessReviewSpec,
            kind: str) -> SubjectAccessReviewStatus:
    errs = validate_access_review_spec(spec)
    if errs:
        raise errors.invalid(kind, "authorization.k8s.io", "", errs)
    verdict = chain.decide(attributes(user, spec))
    return SubjectAccessReviewStatus(
        allowed=verdict.decision is Decision.ALLOW,
        denied=True if verdict.decision is Decision.DENY else None,
        reason=verdict.reason or None)


def _rules(chain: Chain, user: User, namespace: str) -> SubjectRulesReviewStatus:
    if not namespace:
        raise errors.bad_request("no namespace on request")
    status = SubjectRulesReviewStatus()
    for rule in chain.rules_for(user, namespace):
        if rule.non_resource_urls:
            status.non_resource_rules.append(NonResourceRule(
                verbs=list(rule.verbs), non_resource_ur_ls=list(rule.non_resource_urls)))
        else:
            status.resource_rules.append(ResourceRule(
                verbs=list(rule.verbs), api_groups=list(rule.api_groups),
                resources=list(rule.resources) or None,
                resource_names=list(rule.resource_names) or None))
    return status


def answer(chain: Chain, user: User, obj: TypedObject) -> Obj:
    """The review with its ``status`` filled."""
    if isinstance(obj, SubjectAccessReview):
        spec = obj.spec
        subject = User(spec.user or "", tuple(spec.groups or ()))
        obj.status = _access(chain, subject, spec, "SubjectAccessReview")
    elif isinstance(obj, SelfSubjectAccessReview):
        obj.status = _access(chain, user, obj.spec, "SelfSubjectAccessReview")
    elif isinstance(obj, SelfSubjectRulesReview):
        obj.status = _rules(chain, user, obj.spec.namespace or "")
    out: Obj = codec.to_builtins(obj)
    out.setdefault("metadata", {}).setdefault("creationTimestamp", None)
    return out

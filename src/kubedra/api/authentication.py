"""authentication.k8s.io/v1 as ``k8s.io/api/authentication/v1`` at v0.30.0: TokenRequest, the
body of ``serviceaccounts/<name>/token`` (a subresource, not a stored kind), and
SelfSubjectReview (``kubectl auth whoami``), a create-only question answered, never stored."""

from __future__ import annotations

import msgspec

from kubedra.api.base import Int64, Model, always, required_list
from kubedra.api.meta import ObjectList, TypedObject

GROUP = "authentication.k8s.io"
API_VERSION = f"{GROUP}/v1"
#: ``SetDefaults_TokenRequestSpec``: one hour.
DEFAULT_EXPIRATION_SECONDS = 3600


class BoundObjectReference(Model):
    kind: str | None = None
    api_version: str | None = None
    name: str | None = None
    uid: str | None = None


class TokenRequestSpec(Model):
    audiences: list[str] = required_list()
    expiration_seconds: Int64 | None = None
    bound_object_ref: BoundObjectReference | None = None


class TokenRequestStatus(Model):
    token: str = always("")
    expiration_timestamp: str | None = always(None)


class TokenRequest(TypedObject):
    spec: TokenRequestSpec = msgspec.field(default_factory=TokenRequestSpec)
    status: TokenRequestStatus = msgspec.field(default_factory=TokenRequestStatus)


class UserInfo(Model):
    username: str | None = None
    uid: str | None = None
    groups: list[str] | None = None
    extra: dict[str, list[str]] | None = None


class SelfSubjectReviewStatus(Model):
    user_info: UserInfo | None = None


class SelfSubjectReview(TypedObject):
    status: SelfSubjectReviewStatus | None = None


class SelfSubjectReviewList(ObjectList):
    items: list[SelfSubjectReview] = required_list()

"""SelfSubjectReview (``kubectl auth whoami``): the user a request acts as, impersonation
applied, answered and never stored (upstream ``pkg/registry/authentication/
selfsubjectreview``)."""

from __future__ import annotations

from kubedra.api import codec
from kubedra.api.authentication import (
    API_VERSION,
    SelfSubjectReview,
    SelfSubjectReviewStatus,
    UserInfo,
)
from kubedra.api.base import Obj
from kubedra.api.meta import ObjectMeta
from kubedra.apiserver.auth import User
from kubedra.registry.identity import now


def answer(user: User) -> Obj:
    """A new review (nothing of the request's body is kept) with the user in its status."""
    info = UserInfo(username=user.name, uid=user.uid or None,
                    groups=list(user.groups) or None,
                    extra={k: list(v) for k, v in user.extra.items()} or None)
    review = SelfSubjectReview(api_version=API_VERSION, kind="SelfSubjectReview",
                               metadata=ObjectMeta(creation_timestamp=now()),
                               status=SelfSubjectReviewStatus(user_info=info))
    out: Obj = codec.to_builtins(review)
    return out

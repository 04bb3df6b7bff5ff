"""Who a request is: :class:`User`, set on the request by :mod:`kubedra.apiserver.authn`.
What the user may do is :mod:`kubedra.apiserver.authz`'s."""

from __future__ import annotations

from dataclasses import dataclass, field

from aiohttp import web

AUTHENTICATED = "system:authenticated"
UNAUTHENTICATED = "system:unauthenticated"
MASTERS = "system:masters"


@dataclass(frozen=True, slots=True)
class User:
    """``user.Info``: name, groups, uid and extra (scopes, the pod of a token, ...)."""

    name: str
    groups: tuple[str, ...] = ()
    uid: str = ""
    extra: dict[str, tuple[str, ...]] = field(default_factory=dict, hash=False)


#: Who a request acts as (set before routing): the authenticated user, or the user it
#: impersonates.
USER = web.RequestKey("user", User)
#: The authenticated user of a request that impersonates another (for the audit log).
REQUESTOR = web.RequestKey("requestor", User)

ADMIN = User("admin", (MASTERS, AUTHENTICATED))
#: Who every request is on a server built without authentication (embedded in tests).
ANONYMOUS_ADMIN = User("system:admin", (MASTERS,))
#: Who a request without credentials is under ``--anonymous-auth``.
ANONYMOUS = User("system:anonymous", (UNAUTHENTICATED,))

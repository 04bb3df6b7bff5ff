"""Who a request is, tried in kube-apiserver's order: a client certificate signed by the
client CA, then a bearer token (``--token-auth-file``, then ServiceAccount JWTs), then, with
``--anonymous-auth``, ``system:anonymous``. A request with credentials that no authenticator
accepts, or without credentials when anonymous requests are off, is answered 401.
"""

from __future__ import annotations

import time
import weakref
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from kubedra.apiserver import errors
from kubedra.apiserver.auth import ANONYMOUS, ANONYMOUS_ADMIN, AUTHENTICATED, User
from kubedra.apiserver.authn.bearer import bearer_token
from kubedra.apiserver.authn.serviceaccount import TokenKeys, UidLookup, service_account_user
from kubedra.apiserver.authn.x509 import certificate_user


@dataclass(frozen=True, slots=True)
class AuthnOptions:
    """The authenticators a server runs. Client certificates are read whenever the TLS
    layer verified one (the server context names the client CA)."""

    tokens: dict[str, User] = field(default_factory=dict)
    service_accounts: bool = True
    anonymous: bool = False


def with_authenticated(user: User) -> User:
    """``group.AuthenticatedGroupAdder``: every authenticated user is in
    ``system:authenticated``."""
    if AUTHENTICATED in user.groups:
        return user
    return User(user.name, (*user.groups, AUTHENTICATED), user.uid, user.extra)


class Authenticator:
    """The chain of one server; ``options`` None is a server without authentication
    (embedded in tests): every request is an administrator."""

    def __init__(self, options: AuthnOptions | None, keys: TokenKeys,
                 current_uid: UidLookup) -> None:
        self.options = options
        given = options.tokens if options is not None else {}
        self.tokens = {token: with_authenticated(user) for token, user in given.items()}
        self.keys = keys
        self.current_uid = current_uid
        self._by_connection: weakref.WeakKeyDictionary[Any, tuple[User, float] | None] = (
            weakref.WeakKeyDictionary())

    async def authenticate(self, request: web.BaseRequest) -> User:
        options = self.options
        if options is None:
            return ANONYMOUS_ADMIN
        user = self._certificate_user(request)
        if user is not None:
            return user
        token, _ = bearer_token(request.headers.get("Authorization", ""))
        if token is not None:
            user = self.tokens.get(token)
            if user is not None:
                return user
            if options.service_accounts:
                user = await service_account_user(self.keys, token, self.current_uid)
            if user is None:
                raise errors.unauthorized()
            return with_authenticated(user)
        if options.anonymous:
            return ANONYMOUS
        raise errors.unauthorized()

    def _certificate_user(self, request: web.BaseRequest) -> User | None:
        """The verified client certificate's user, read once per connection (a connection
        may outlive its certificate: the end is checked on every request)."""
        transport = request.transport
        tls = transport.get_extra_info("ssl_object") if transport is not None else None
        if tls is None:
            return None
        try:
            known = self._by_connection[tls]
        except KeyError:
            known = certificate_user(tls.getpeercert())
            if known is not None:
                known = (with_authenticated(known[0]), known[1])
            self._by_connection[tls] = known
        if known is None or time.time() >= known[1]:
            return None
        return known[0]

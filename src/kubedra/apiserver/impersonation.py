"""Impersonation, as kube-apiserver v1.30's ``WithImpersonation`` filter, between
authentication and authorization: the ``Impersonate-User``, ``-Group``, ``-Uid`` and
``-Extra-<key>`` headers name whom a request acts as. The authenticated user must be allowed
the verb ``impersonate`` on each part named (``users``, ``serviceaccounts``, ``groups``,
``uids``, ``userextras/<key>``); the request then runs as the impersonated user, and the
audit log records both."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final
from urllib.parse import unquote

from multidict import CIMultiDictProxy

from kubedra.apiserver import errors
from kubedra.apiserver.auth import ANONYMOUS, AUTHENTICATED, UNAUTHENTICATED, User
from kubedra.apiserver.authn import serviceaccount
from kubedra.apiserver.authz.attributes import Attributes

USER_HEADER: Final = "Impersonate-User"
GROUP_HEADER: Final = "Impersonate-Group"
UID_HEADER: Final = "Impersonate-Uid"
EXTRA_PREFIX: Final = "impersonate-extra-"
_HEADER_PREFIX: Final = "impersonate-"
_AUTHENTICATION: Final = "authentication.k8s.io"
# what each kind of part is called by the authorizer, and its API group
_RESOURCES: Final = {"ServiceAccount": ("serviceaccounts", ""), "User": ("users", ""),
                     "Group": ("groups", ""), "UserExtra": ("userextras", _AUTHENTICATION),
                     "UID": ("uids", _AUTHENTICATION)}
# a '%' not followed by two hex digits: Go's url.PathUnescape refuses the whole key
_BAD_ESCAPE: Final = re.compile(r"%(?![0-9A-Fa-f]{2})")

Authorize = Callable[[Attributes], None]


@dataclass(frozen=True, slots=True)
class Part:
    """One thing a request asks to impersonate (upstream: an ObjectReference each)."""

    kind: str  # ServiceAccount, User, Group, UserExtra or UID
    name: str
    namespace: str = ""
    key: str = ""  # a UserExtra's key

    def attributes(self, requestor: User) -> Attributes:
        """What the authorizer is asked: may ``requestor`` impersonate this?"""
        resource, group = _RESOURCES[self.kind]
        return Attributes(requestor, "impersonate", True, group, resource, self.key,
                          self.namespace, self.name)

    def go_text(self) -> str:
        """The part as Go's ``%v`` prints the ObjectReference, in upstream's 4xx text."""
        group = _RESOURCES[self.kind][1]
        fields = (self.kind, self.namespace, self.name, "", f"{group}/v1" if group else "", "",
                  self.key)
        return "{" + " ".join(fields) + "}"


def parts(headers: CIMultiDictProxy[str]) -> list[Part]:
    """The parts the headers name, in upstream's order (user, groups, extras, uid); groups,
    extras or a uid without a user are a 400."""
    out: list[Part] = []
    user = headers.get(USER_HEADER, "")
    if user:
        sa = serviceaccount.split_username(user)
        out.append(Part("ServiceAccount", sa[1], sa[0]) if sa else Part("User", user))
    out += [Part("Group", g) for g in headers.getall(GROUP_HEADER, ())]
    seen: set[str] = set()
    for header in headers:
        low = header.lower()
        if low.startswith(EXTRA_PREFIX) and low not in seen:
            seen.add(low)
            key = _unescape(low[len(EXTRA_PREFIX):])
            out += [Part("UserExtra", v, key=key) for v in headers.getall(header)]
    uid = headers.get(UID_HEADER, "")
    if uid:
        out.append(Part("UID", uid))
    if out and not user:
        # upstream answers this with a 500; a client's mistake is a 400 here (deviations.md)
        raise errors.bad_request(
            f"requested [{' '.join(p.go_text() for p in out)}] without impersonating a user")
    return out


def _unescape(key: str) -> str:
    """An extra's key is percent-encoded in its header name; a malformed one stays as sent."""
    return key if _BAD_ESCAPE.search(key) else unquote(key, errors="replace")


def acting_as(requestor: User, headers: CIMultiDictProxy[str],
              authorize: Authorize) -> User | None:
    """The user the request impersonates (None without impersonation headers), once
    ``authorize`` (which raises the 403) allowed every part."""
    if not any(h.lower().startswith(_HEADER_PREFIX) for h in headers):
        return None
    wanted = parts(headers)
    if not wanted:
        return None
    groups_given = GROUP_HEADER in headers
    name, uid = "", ""
    groups: list[str] = []
    extra: dict[str, tuple[str, ...]] = {}
    for part in wanted:
        authorize(part.attributes(requestor))
        if part.kind == "ServiceAccount":
            name = serviceaccount.username(part.namespace, part.name)
            if not groups_given:
                groups = list(serviceaccount.groups(part.namespace))
        elif part.kind == "User":
            name = part.name
        elif part.kind == "Group":
            groups.append(part.name)
        elif part.kind == "UserExtra":
            extra[part.key] = (*extra.get(part.key, ()), part.name)
        else:
            uid = part.name
    if name == ANONYMOUS.name:
        if UNAUTHENTICATED not in groups:
            groups.append(UNAUTHENTICATED)
    elif AUTHENTICATED not in groups and UNAUTHENTICATED not in groups:
        groups.append(AUTHENTICATED)
    return User(name, tuple(groups), uid, extra)

"""Authentication (bearer tokens): who a request is.

Tokens come from ``--token`` (an admin) and ``--token-auth-file`` (kube-apiserver's CSV:
``token,user,uid,"group1,group2"``). What the user may do is :mod:`kubedra.apiserver.authz`'s.
"""

from __future__ import annotations

import csv
import hmac
import io
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web

from kubedra.apiserver import errors


@dataclass(frozen=True, slots=True)
class User:
    name: str
    groups: tuple[str, ...] = ()


#: The authenticated user of a request (set before routing).
USER = web.RequestKey("user", User)

ADMIN = User("admin", ("system:masters", "system:authenticated"))
#: Who every request is when the server has no tokens (plain http, like the insecure port).
ANONYMOUS_ADMIN = User("system:admin", ("system:masters",))


class AuthFileError(ValueError):
    """A token file line that cannot be used."""


def parse_token_file(text: str) -> dict[str, User]:
    """``token,user,uid[,"group1,group2"]`` per line (blank lines and ``#`` comments skipped)."""
    users: dict[str, User] = {}
    for n, row in enumerate(csv.reader(io.StringIO(text)), start=1):
        if not row or not row[0].strip() or row[0].lstrip().startswith("#"):
            continue
        if len(row) < 3:
            raise AuthFileError(f"token file line {n}: need at least token,user,uid")
        token, name = row[0].strip(), row[1].strip()
        groups = tuple(g.strip() for g in row[3].split(",") if g.strip()) if len(row) > 3 else ()
        users[token] = User(name, (*groups, "system:authenticated"))
    return users


def load_token_file(path: Path) -> dict[str, User]:
    return parse_token_file(path.read_text())


class Authenticator:
    """Bearer tokens to users; with no tokens at all every request is an administrator."""

    def __init__(self, tokens: dict[str, User]) -> None:
        self.tokens = tokens

    @property
    def enabled(self) -> bool:
        return bool(self.tokens)

    def authenticate(self, header: str) -> User:
        if not self.tokens:
            return ANONYMOUS_ADMIN
        given = header[7:].strip() if header.startswith("Bearer ") else ""
        for token, user in self.tokens.items():
            if given and hmac.compare_digest(given.encode(), token.encode()):
                return user
        raise errors.ApiError(errors.status_body(401, "Unauthorized", "Unauthorized"))

"""The ``Authorization: Bearer <token>`` header, read as k8s.io/apiserver's
``request/bearertoken`` reads it."""

from __future__ import annotations

#: The warning upstream adds when a space precedes the token (the token is then ignored).
SPACE_BEFORE_TOKEN = ("the provided Authorization header contains extra space before the "
                      "bearer token, and is ignored")


def bearer_token(header: str) -> tuple[str | None, str | None]:
    """``(token, warning)``: the token of a bearer header, or None when the header carries no
    bearer token (absent, another scheme, no token, a space before the token).

    As upstream: the header is trimmed, split on single spaces into at most three parts, the
    scheme compared case-insensitively, and the second part is the token.
    """
    auth = header.strip()
    if not auth:
        return None, None
    parts = auth.split(" ", 2)
    if len(parts) < 2 or parts[0].lower() != "bearer":
        return None, None
    token = parts[1]
    if not token:
        return None, SPACE_BEFORE_TOKEN if len(parts) == 3 else None
    return token, None

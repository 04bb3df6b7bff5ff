"""Client certificates: the TLS layer has verified the chain against ``--client-ca-file``;
the user is the subject's CN, the groups its O values (upstream's
``x509.CommonNameUserConversion``)."""

from __future__ import annotations

import ssl
import time
from typing import Any

from kubedra.apiserver.auth import User


def certificate_user(peercert: dict[str, Any] | None,
                     now: float | None = None) -> tuple[User, float] | None:
    """The user of a verified peer certificate (``SSLObject.getpeercert()``) and when the
    certificate ends (unix seconds); None when there is none, it has no CN, or it is outside
    its validity."""
    if not peercert:
        return None
    at = time.time() if now is None else now
    try:
        not_before = ssl.cert_time_to_seconds(peercert["notBefore"])
        not_after = ssl.cert_time_to_seconds(peercert["notAfter"])
    except (KeyError, ValueError):
        return None
    if not not_before <= at < not_after:
        return None
    name = ""
    groups: list[str] = []
    for rdn in peercert.get("subject", ()):
        for key, value in rdn:
            if key == "commonName":
                name = value
            elif key == "organizationName":
                groups.append(value)
    return (User(name, tuple(groups)), float(not_after)) if name else None

"""authentication.k8s.io/v1: defaulting and validation of a TokenRequest
(``pkg/apis/authentication/validation``)."""

from __future__ import annotations

from kubedra.api.authentication import DEFAULT_EXPIRATION_SECONDS, TokenRequest
from kubedra.validation.field import ErrorList, Path, invalid

#: Bounds of ``spec.expirationSeconds``: ten minutes to 2^32 seconds.
MIN_EXPIRATION_SECONDS = 600
MAX_EXPIRATION_SECONDS = 1 << 32


def default_token_request(tr: TokenRequest) -> None:
    if tr.spec.expiration_seconds is None:
        tr.spec.expiration_seconds = DEFAULT_EXPIRATION_SECONDS


def validate_token_request(tr: TokenRequest) -> ErrorList:
    """``ValidateTokenRequest`` (on a defaulted request)."""
    seconds = tr.spec.expiration_seconds or 0
    path = Path("spec").child("expirationSeconds")
    if seconds < MIN_EXPIRATION_SECONDS:
        return [invalid(path, seconds, "may not specify a duration less than 10 minutes")]
    if seconds > MAX_EXPIRATION_SECONDS:
        return [invalid(path, seconds, "may not specify a duration larger than 2^32 seconds")]
    return []

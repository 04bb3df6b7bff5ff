"""API errors as upstream ``Status`` objects (apimachinery ``pkg/api/errors``).

Handlers raise :class:`ApiError`; the error middleware writes its ``status`` as the body.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kubedra.validation.field import FieldError, aggregate_message

StatusDict = dict[str, Any]


class ApiError(Exception):
    """An error answer: HTTP code plus the Status body."""

    def __init__(self, status: StatusDict, headers: dict[str, str] | None = None) -> None:
        super().__init__(status.get("message", ""))
        self.status = status
        self.code = int(status["code"])
        self.headers = headers or {}


def status_body(
    code: int, reason: str, message: str, details: dict[str, Any] | None = None
) -> StatusDict:
    body: StatusDict = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
    }
    if details:
        body["details"] = details
    body["code"] = code
    return body


def success_status(details: dict[str, Any] | None = None) -> StatusDict:
    body: StatusDict = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}
    if details:
        body["details"] = details
    return body


def _qualified(plural: str, group: str) -> str:
    return f"{plural}.{group}" if group else plural


def _details(name: str, group: str, kind: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if name:
        out["name"] = name
    if group:
        out["group"] = group
    out["kind"] = kind
    return out


def not_found(plural: str, group: str, name: str) -> ApiError:
    msg = f'{_qualified(plural, group)} "{name}" not found'
    return ApiError(status_body(404, "NotFound", msg, _details(name, group, plural)))


def already_exists(plural: str, group: str, name: str) -> ApiError:
    msg = f'{_qualified(plural, group)} "{name}" already exists'
    return ApiError(status_body(409, "AlreadyExists", msg, _details(name, group, plural)))


def conflict(plural: str, group: str, name: str, why: str) -> ApiError:
    msg = f'Operation cannot be fulfilled on {_qualified(plural, group)} "{name}": {why}'
    return ApiError(status_body(409, "Conflict", msg, _details(name, group, plural)))


MODIFIED = (
    "the object has been modified; please apply your changes to the latest version and try again"
)


def invalid(kind: str, group: str, name: str, errors: Iterable[FieldError]) -> ApiError:
    errs = list(errors)
    causes = [
        {"reason": e.type.value, "message": e.body(), "field": str(e.field)} for e in errs
    ]
    qualified = f"{kind}.{group}" if group else kind
    msg = f'{qualified} "{name}" is invalid: {aggregate_message(errs)}'
    details = _details(name, group, kind)
    details["causes"] = causes
    return ApiError(status_body(422, "Invalid", msg, details))


def bad_request(message: str) -> ApiError:
    return ApiError(status_body(400, "BadRequest", message))


def unauthorized() -> ApiError:
    """What ``responsewriters.Unauthorized`` answers a request no authenticator accepted."""
    return ApiError(status_body(401, "Unauthorized", "Unauthorized"))


def forbidden_object(plural: str, group: str, name: str, why: str) -> ApiError:
    msg = f'{_qualified(plural, group)} "{name}" is forbidden: {why}'
    return ApiError(status_body(403, "Forbidden", msg, _details(name, group, plural)))


def resource_expired(message: str) -> ApiError:
    return ApiError(status_body(410, "Expired", message))


def method_not_allowed(method: str) -> ApiError:
    msg = f"the server does not allow this method on the requested resource ({method})"
    return ApiError(status_body(405, "MethodNotAllowed", msg))


def path_not_found() -> ApiError:
    msg = "the server could not find the requested resource"
    return ApiError(status_body(404, "NotFound", msg))


def unsupported_media_type(accepted: Iterable[str]) -> ApiError:
    msg = (
        "the body of the request was in an unknown format - accepted media types include: "
        + ", ".join(accepted)
    )
    return ApiError(status_body(415, "UnsupportedMediaType", msg))


def not_acceptable(accepted: Iterable[str]) -> ApiError:
    msg = "only the following media types are accepted: " + ", ".join(accepted)
    return ApiError(status_body(406, "NotAcceptable", msg))


def too_large(limit: int) -> ApiError:
    msg = f"Request entity too large: limit is {limit}"
    return ApiError(status_body(413, "RequestEntityTooLarge", msg))


def too_many_requests() -> ApiError:
    body = status_body(
        429, "TooManyRequests", "Too many requests, please try again later.",
        {"retryAfterSeconds": 1},
    )
    return ApiError(body, {"Retry-After": "1"})


def internal(message: str) -> ApiError:
    body = status_body(
        500, "InternalError", f"Internal error occurred: {message}",
        {"causes": [{"message": message}]},
    )
    return ApiError(body)


def request_timeout() -> ApiError:
    """A request that outlived its deadline (upstream's NewTimeoutError: empty details)."""
    body = status_body(504, "Timeout",
                       "Timeout: request did not complete within the allotted timeout")
    body["details"] = {}
    body["code"] = body.pop("code")  # code stays last, as upstream writes it
    return ApiError(body)


def timeout(message: str) -> ApiError:
    return ApiError(status_body(504, "Timeout", message))

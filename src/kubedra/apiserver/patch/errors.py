"""Patch failures as API errors, so the server's error middleware answers them as upstream.

Upstream codes (k8s.io/apiserver handlers/patch.go @v1.30): a patch body that cannot be decoded
is 400 BadRequest; a JSON patch that decodes but cannot be applied is 422 Invalid (upstream loses
the reason and says only "the server rejected our request due to an error in our request"; we
keep the reason in the message); SMP format errors are 400, "lists of lists" and
"$retainKeys does not match" are 422; server-side apply conflicts are 409 Conflict.
"""

from __future__ import annotations

from kubedra.apiserver.errors import ApiError, status_body


class PatchError(ApiError):
    """A patch that cannot be decoded (400) or applied (422)."""

    def __init__(self, message: str, code: int = 422) -> None:
        reason = "BadRequest" if code == 400 else "Invalid"
        super().__init__(status_body(code, reason, message))
        self.message = message


def bad_request(message: str) -> PatchError:
    return PatchError(message, 400)


def unprocessable(message: str) -> PatchError:
    return PatchError(message, 422)


def too_large(message: str) -> ApiError:
    """413, as upstream answers a JSON patch with too many operations."""
    return ApiError(
        status_body(413, "RequestEntityTooLarge", f"Request entity too large: {message}")
    )

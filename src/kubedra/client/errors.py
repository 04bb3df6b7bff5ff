"""Errors the API server answered, carrying its ``Status`` body."""

from __future__ import annotations

from kubedra.api.meta import Status


class ApiError(Exception):
    def __init__(self, code: int, status: Status) -> None:
        super().__init__(f"{code} {status.reason or ''}: {status.message or ''}".strip())
        self.code = code
        self.status = status

    @property
    def reason(self) -> str:
        return self.status.reason or ""


def is_not_found(e: BaseException) -> bool:
    return isinstance(e, ApiError) and e.code == 404


def is_conflict(e: BaseException) -> bool:
    return isinstance(e, ApiError) and e.code == 409


def is_gone(e: BaseException) -> bool:
    return isinstance(e, ApiError) and e.code == 410


def is_already_exists(e: BaseException) -> bool:
    return isinstance(e, ApiError) and e.code == 409 and e.reason == "AlreadyExists"

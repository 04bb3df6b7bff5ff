"""Field errors as apimachinery's ``field.Error``: type, path, bad value, detail.

``str(error)`` is Go's ``Error()`` (``<path>: <body>``) and :meth:`FieldError.body` is
``ErrorBody()``, the text an API ``StatusCause.message`` carries.

Two apimachinery releases render differently (spec dra-v1 §4.1): v0.30 (Kubernetes 1.30, the
default) and v0.34 (1.34: ``TooLong`` omits its value and says ``may not be more than N
bytes``, non-scalar bad values print as ``json.Marshal``). The constructors below build the
errors of the release selected with :func:`apimachinery` for the current context, so shared
validators (object meta, node selectors) give each era its own texts.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from contextvars import ContextVar, Token
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final, final

import msgspec

from kubedra.api.goformat import go_quote
from kubedra.api.release import R1_30, Release


class ErrorType(StrEnum):
    REQUIRED = "FieldValueRequired"
    INVALID = "FieldValueInvalid"
    DUPLICATE = "FieldValueDuplicate"
    NOT_SUPPORTED = "FieldValueNotSupported"
    FORBIDDEN = "FieldValueForbidden"
    TOO_LONG = "FieldValueTooLong"
    TOO_MANY = "FieldValueTooMany"
    INTERNAL = "InternalError"
    NOT_FOUND = "FieldValueNotFound"


_NO_VALUE: Any = object()


class _OmitValue:
    """Go's ``field.OmitValueType{}``: the message names the error type but no bad value."""

    def __repr__(self) -> str:
        return "OMIT_VALUE"


OMIT_VALUE: Any = _OmitValue()
_OMITTED_HEAD = {
    ErrorType.INVALID: "Invalid value",
    ErrorType.DUPLICATE: "Duplicate value",
    ErrorType.NOT_SUPPORTED: "Unsupported value",
    ErrorType.TOO_MANY: "Too many",
    ErrorType.NOT_FOUND: "Not found",
}


@final
class Path:
    """A field path rendered as Go's ``field.Path.String()``: ``spec.items[0].name``.

    A plain class, not a frozen dataclass: validators build one per field they look at, and
    compiled, a frozen dataclass's constructor runs as Python (about ten times the cost)."""

    __slots__ = ("text",)

    def __init__(self, text: str = "") -> None:
        self.text: Final = text

    def child(self, name: str, *more: str) -> Path:
        text = f"{self.text}.{name}" if self.text else name
        for part in more:
            text = f"{text}.{part}"
        return Path(text)

    def index(self, i: int) -> Path:
        return Path(f"{self.text}[{i}]")

    def key(self, k: str) -> Path:
        return Path(f"{self.text}[{k}]")

    def __str__(self) -> str:
        return self.text if self.text else "<nil>"

    def __repr__(self) -> str:
        return f"Path({self.text!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Path) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)


ROOT = Path()


class Apimachinery(enum.Enum):
    """Which apimachinery ``field`` package the constructors imitate."""

    V0_30 = "v0.30"
    V0_34 = "v0.34"


_RELEASE: ContextVar[Apimachinery] = ContextVar("apimachinery", default=Apimachinery.V0_30)
VALUE_OMITTED = "<value omitted>"


class apimachinery:
    """Build the field errors of ``release`` inside the block (validators of one era). A
    class, not a generator: every write enters one."""

    def __init__(self, release: Apimachinery) -> None:
        self._release = release
        self._token: Token[Apimachinery] | None = None

    def __enter__(self) -> None:
        self._token = _RELEASE.set(self._release)

    def __exit__(self, *_: object) -> None:
        if self._token is not None:
            _RELEASE.reset(self._token)


def apimachinery_of(release: Release) -> Apimachinery:
    """The apimachinery whose texts a server of ``release`` answers with."""
    return Apimachinery.V0_30 if release.name == R1_30.name else Apimachinery.V0_34


def _v034() -> bool:
    return _RELEASE.get() is Apimachinery.V0_34


def go_value(value: Any) -> str:
    """Format a bad value as Go's ``%v``/``%q`` in ``field.Error`` does."""
    if value is None:  # a nil pointer prints as the quoted string "null"
        return '"null"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, msgspec.Struct) or (
        isinstance(value, list | tuple) and any(isinstance(v, msgspec.Struct) for v in value)
    ):
        # Go prints structs with %#v (Go syntax, not reproducible); JSON is our stand-in.
        return msgspec.json.encode(value, enc_hook=str).decode()
    if isinstance(value, list | tuple):
        return "[]string{" + ", ".join(go_quote(str(v)) for v in value) + "}" if all(
            isinstance(v, str) for v in value
        ) else "[" + " ".join(str(v) for v in value) + "]"
    return str(value)


def _marshal(value: Any) -> Any:
    """What ``json.Marshal`` writes for a value msgspec cannot encode: the ``json_value`` a
    Go type with its own ``MarshalJSON`` names (``metav1.Time``: RFC 3339), else its text."""
    json_value = getattr(value, "json_value", None)
    return str(value) if json_value is None else json_value


def go_json_value(value: Any) -> str:
    """v0.34's ``ErrorBody`` value: scalars as ``%v``/``%q``, anything else ``json.Marshal``
    (which escapes ``<``, ``>`` and ``&``); structs print with their wire (JSON) names."""
    if value is None or isinstance(value, bool | str | int | float):
        return go_value(value)
    text = msgspec.json.encode(value, enc_hook=_marshal).decode()
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


@dataclass(frozen=True, slots=True)
class FieldError:
    type: ErrorType
    field: Path
    bad_value: Any = _NO_VALUE
    detail: str = ""
    json_values: bool = False  # rendered as apimachinery v0.34 does (see go_json_value)

    def body(self) -> str:
        t = self.type
        show = go_json_value if self.json_values else go_value
        if t is ErrorType.REQUIRED:
            head = "Required value"
        elif t is ErrorType.FORBIDDEN:
            head = "Forbidden"
        elif t is ErrorType.TOO_LONG:
            head = "Too long"
        elif t is ErrorType.INTERNAL:
            head = "Internal error"
        elif self.bad_value is OMIT_VALUE:
            head = _OMITTED_HEAD[t]
        elif t is ErrorType.NOT_FOUND:
            head = "Not found: " + show(self.bad_value)
        elif t is ErrorType.INVALID:
            head = "Invalid value: " + show(self.bad_value)
        elif t is ErrorType.DUPLICATE:
            head = "Duplicate value: " + show(self.bad_value)
        elif t is ErrorType.NOT_SUPPORTED:
            head = "Unsupported value: " + show(self.bad_value)
        elif t is ErrorType.TOO_MANY:
            head = "Too many: " + show(self.bad_value)
        else:  # pragma: no cover - exhaustive above
            head = str(t.value)
        return f"{head}: {self.detail}" if self.detail else head

    @property
    def has_bad_value(self) -> bool:
        return self.bad_value is not _NO_VALUE

    def __str__(self) -> str:
        return f"{self.field}: {self.body()}"


ErrorList = list[FieldError]


def _error(t: ErrorType, path: Path, value: Any, detail: str = "") -> FieldError:
    return FieldError(t, path, value, detail, _v034())


def required(path: Path, detail: str = "") -> FieldError:
    return _error(ErrorType.REQUIRED, path, "", detail)


def invalid(path: Path, value: Any, detail: str) -> FieldError:
    return _error(ErrorType.INVALID, path, value, detail)


def duplicate(path: Path, value: Any) -> FieldError:
    return _error(ErrorType.DUPLICATE, path, value)


def forbidden(path: Path, detail: str) -> FieldError:
    return _error(ErrorType.FORBIDDEN, path, "", detail)


def not_supported(path: Path, value: Any, valid: Sequence[str]) -> FieldError:
    detail = "supported values: " + ", ".join(go_quote(v) for v in valid) if valid else ""
    return _error(ErrorType.NOT_SUPPORTED, path, value, detail)


def _too_long_v034(path: Path, limit: int) -> FieldError:
    """v0.34 ``TooLong`` (and its deprecated alias ``TooLongMaxLength``)."""
    unit = "byte" if limit == 1 else "bytes"
    detail = f"may not be more than {limit} {unit}" if limit >= 0 else "value is too long"
    return _error(ErrorType.TOO_LONG, path, VALUE_OMITTED, detail)


def too_long(path: Path, value: Any, limit: int) -> FieldError:
    if _v034():
        return _too_long_v034(path, limit)
    return FieldError(ErrorType.TOO_LONG, path, value, f"must have at most {limit} bytes")


def too_long_max_length(path: Path, value: Any, limit: int) -> FieldError:
    if _v034():
        return _too_long_v034(path, limit)
    return FieldError(ErrorType.TOO_LONG, path, value, f"may not be longer than {limit}")


def too_many(path: Path, actual: int, limit: int) -> FieldError:
    unit = "item" if limit == 1 and _v034() else "items"
    return _error(ErrorType.TOO_MANY, path, actual, f"must have at most {limit} {unit}")


def internal_error(path: Path, err: str) -> FieldError:
    return _error(ErrorType.INTERNAL, path, None, err)


def aggregate_message(errors: Iterable[FieldError]) -> str:
    """The aggregate ``Error()`` of an ErrorList: one message, or ``[a, b]`` without repeats."""
    msgs: list[str] = []
    for e in errors:
        s = str(e)
        if s not in msgs:
            msgs.append(s)
    if len(msgs) == 1:
        return msgs[0]
    return "[" + ", ".join(msgs) + "]"

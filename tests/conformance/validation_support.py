"""Shared checks for the validation-*.json vectors: decode objects, compare error lists."""

from __future__ import annotations

from typing import Any

from kubedra.api import codec
from kubedra.validation.field import FieldError


def decode(raw: dict[str, Any], model: type[Any]) -> Any:
    return codec.decode(raw, model)


def actual(errors: list[FieldError]) -> list[dict[str, Any]]:
    """Errors in the vectors' shape (badValue as JSON values, left out when there is none)."""
    out: list[dict[str, Any]] = []
    for e in errors:
        item: dict[str, Any] = {"type": e.type.value, "field": str(e.field), "detail": e.detail}
        if e.has_bad_value and e.type.value not in ("FieldValueRequired", "FieldValueForbidden"):
            item["badValue"] = codec.to_builtins(e.bad_value)
        out.append(item)
    return out


def assert_errors(errors: list[FieldError], expected: list[dict[str, Any]],
                  field_key: str = "field") -> None:
    """Exact types, fields, bad values and details, in order. A ``detailMatch`` entry (a
    cel-go text) is checked by its documented prefix plus the gist of the message."""
    got = actual(errors)
    want: list[dict[str, Any]] = []
    for i, exp in enumerate(expected):
        item = {"type": exp["type"], "field": exp[field_key], "detail": exp.get("detail", "")}
        if "badValue" in exp:
            item["badValue"] = exp["badValue"]
        if "detailPrefix" in exp or "detailMatch" in exp:
            prefix = exp.get("detailPrefix", "compilation failed: ")
            if i < len(got):
                assert got[i]["detail"].startswith(prefix), got[i]
                item["detail"] = got[i]["detail"]
        want.append(item)
    assert got == want
    # Every error renders as Go's Error(): "<field>: <body>".
    for e in errors:
        assert str(e).startswith(f"{e.field}: ")

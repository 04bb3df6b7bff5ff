"""Shared helpers for the Job vector tests: decoding objects and the vectors' error shape."""

from __future__ import annotations

from typing import Any

from kubedra.api import codec
from kubedra.api.batch import Job
from kubedra.api.features import FeatureGates
from kubedra.validation.field import FieldError


def job(raw: dict[str, Any]) -> Job:
    return codec.decode(raw, Job)


def gates(raw: dict[str, bool] | None) -> FeatureGates:
    """The vector's ``gates`` object (upstream names) over kubedra's defaults."""
    return FeatureGates().with_gates(raw or {})


def errors(errs: list[FieldError], keys: tuple[str, ...]) -> list[dict[str, str]]:
    """Errors as the vectors write them: only the listed keys (``message`` is Go's Error())."""
    out = []
    for e in errs:
        full = {"type": e.type.value, "field": str(e.field), "detail": e.detail, "message": str(e)}
        out.append({k: full[k] for k in keys})
    return out


def expected(items: list[dict[str, Any]], keys: tuple[str, ...]) -> list[dict[str, str]]:
    return [{k: item[k] for k in keys} for item in items]

"""Shared checks for the v1-validation-*.json vectors (resource.k8s.io/v1, Kubernetes 1.34).

Beyond validation_support: ``{"$rawJSON": S}`` markers become a RawExtension holding the bytes
S verbatim (``msgspec.Raw``), errors of one map's keys compare as a multiset (Go map order),
and ``badValueKind: "object"`` asks for a struct-valued bad value without comparing it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import msgspec

from kubedra.api import codec
from kubedra.validation.field import FieldError
from tests.conformance.validation_support import actual

RAW = "$rawJSON"
# the map-valued fields whose errors come out in Go map order
_MAP_KEY = re.compile(r"^(.*\.(?:attributes|capacity|counters))\[")


def raw_paths(value: Any, path: tuple[str | int, ...] = ()) -> list[tuple[tuple[str | int, ...],
                                                                      str]]:
    """Where the ``$rawJSON`` markers sit in an expanded JSON object, with their bytes."""
    if isinstance(value, dict):
        if RAW in value:
            return [(path, value[RAW])]
        return [hit for k, v in value.items() for hit in raw_paths(v, (*path, k))]
    if isinstance(value, list):
        return [hit for i, v in enumerate(value) for hit in raw_paths(v, (*path, i))]
    return []


def _without_raw(value: Any) -> Any:
    if isinstance(value, dict):
        if RAW in value:
            return None
        return {k: _without_raw(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_raw(v) for v in value]
    return value


def _attribute(obj: Any, json_name: str) -> str:
    for f in msgspec.structs.fields(type(obj)):
        if f.encode_name == json_name:
            return f.name
    raise KeyError(json_name)


def decode(raw: dict[str, Any], model: type[Any]) -> Any:
    """``raw`` as ``model``; each ``$rawJSON`` field holds its bytes as ``msgspec.Raw``."""
    obj = codec.decode(_without_raw(raw), model)
    for path, text in raw_paths(raw):
        parent: Any = obj
        for step in path[:-1]:
            parent = parent[step] if isinstance(step, int) else getattr(
                parent, _attribute(parent, step))
        last = path[-1]
        assert isinstance(last, str)
        setattr(parent, _attribute(parent, last), msgspec.Raw(text.encode()))
    return obj


def json_text(raw: dict[str, Any]) -> bytes:
    """The object as a JSON document with each ``$rawJSON`` value's bytes written verbatim
    (only valid JSON can travel this way: over HTTP the rest is a decoding error)."""
    holes = raw_paths(raw)
    marked = _mark(raw, [p for p, _ in holes])
    text = msgspec.json.encode(marked).decode()
    for i, (_, value) in enumerate(holes):
        text = text.replace(f'"\\u0000raw{i}\\u0000"', value, 1)
    return text.encode()


def _mark(value: Any, holes: Sequence[tuple[str | int, ...]], path: tuple[str | int, ...] = ()
          ) -> Any:
    if path in holes:
        return f"\0raw{holes.index(path)}\0"
    if isinstance(value, dict):
        return {k: _mark(v, holes, (*path, k)) for k, v in value.items()}
    if isinstance(value, list):
        return [_mark(v, holes, (*path, i)) for i, v in enumerate(value)]
    return value


def _groups(items: list[dict[str, Any]]) -> list[Any]:
    """Consecutive errors under one map's keys become one sorted group."""
    out: list[Any] = []
    for item in items:
        m = _MAP_KEY.match(item["field"])
        key = m.group(1) if m else None
        if key is not None and out and isinstance(out[-1], tuple) and out[-1][0] == key:
            out[-1][1].append(item)
        elif key is not None:
            out.append((key, [item]))
        else:
            out.append(item)
    return [(g[0], sorted(g[1], key=repr)) if isinstance(g, tuple) else g for g in out]


def expected(errors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    want: list[dict[str, Any]] = []
    for exp in errors:
        item = {"type": exp["type"], "field": exp["field"], "detail": exp.get("detail", "")}
        if "badValue" in exp:
            item["badValue"] = exp["badValue"]
        elif exp.get("badValueKind") == "object":
            item["badValue"] = "<object>"
        want.append(item)
    return want


def observed(errors: list[FieldError]) -> list[dict[str, Any]]:
    got = actual(errors)
    for item in got:
        if isinstance(item.get("badValue"), dict):
            item["badValue"] = "<object>"  # a Go struct: its rendering is not compared
    return got


def assert_errors(errors: list[FieldError], want: list[dict[str, Any]]) -> None:
    """Same errors as the vector, in order, map-key runs as multisets."""
    assert _groups(observed(errors)) == _groups(expected(want))
    for e in errors:
        assert str(e).startswith(f"{e.field}: ")

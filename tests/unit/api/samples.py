"""Realistic objects to round-trip: the manifests in ``examples/``, the complete JSON objects
in the spec's fenced ``json`` blocks, and what kubectl 1.30 really sent (transcript vector)."""

from __future__ import annotations

import json
import re
from typing import Any

from kubedra.api import codec, kinds
from tests.vectors import EXAMPLES, VECTORS, example_files, load

SPEC = VECTORS.parent / "spec"


def _served(obj: Any) -> bool:
    return (
        isinstance(obj, dict)
        and isinstance(obj.get("apiVersion"), str)
        and isinstance(obj.get("kind"), str)
        and kinds.by_api_version(obj["apiVersion"], obj["kind"]) is not None
    )


def example_objects() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path in example_files():
        for i, doc in enumerate(codec.load_documents(path.read_text())):
            out.append((f"{path.relative_to(EXAMPLES)}#{i}", doc))
    return out


def _json_values(block: str) -> list[Any]:
    """Every JSON value of a block holding several in a row; a fragment ends the block."""
    decoder = json.JSONDecoder()
    values: list[Any] = []
    i = 0
    while True:
        while i < len(block) and block[i].isspace():
            i += 1
        if i >= len(block):
            return values
        try:
            value, i = decoder.raw_decode(block, i)
        except ValueError:
            return values
        values.append(value)


def spec_objects() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path in sorted(SPEC.glob("*.md")):
        blocks = re.findall(r"```json\n(.*?)```", path.read_text(), re.S)
        for b, block in enumerate(blocks):
            for i, value in enumerate(_json_values(block)):
                if _served(value):
                    out.append((f"{path.name}:block{b}#{i}", value))
    return out


def transcript_objects() -> list[tuple[str, dict[str, Any]]]:
    """Manifests, create and replace bodies (plus the last-applied annotations, which are
    whole objects too) from kubectl's request transcript."""
    data = load("kubectl_1.30_request_transcript.json")
    out = []
    for name, text in data["manifests"].items():
        for i, doc in enumerate(codec.load_documents(text)):
            out.append((f"transcript:{name}#{i}", doc))
    for s, step in enumerate(data["steps"]):
        for r, request in enumerate(step["requests"]):
            body = request.get("body")
            if not body or request["method"] not in ("POST", "PUT"):
                continue
            obj = json.loads(body)
            if _served(obj):
                out.append((f"transcript:step{s}.{r}", obj))
            applied = (
                obj.get("metadata", {})
                .get("annotations", {})
                .get("kubectl.kubernetes.io/last-applied-configuration")
            )
            if applied and _served(json.loads(applied)):
                out.append((f"transcript:step{s}.{r}:last-applied", json.loads(applied)))
    return out


def _collect(value: Any, where: str, out: list[tuple[str, dict[str, Any]]]) -> None:
    if isinstance(value, dict):
        if _served(value) and isinstance(value.get("metadata"), dict):
            out.append((where, value))
        for k, v in value.items():
            _collect(v, f"{where}.{k}", out)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _collect(v, f"{where}[{i}]", out)


def vector_objects() -> list[tuple[str, dict[str, Any]]]:
    """Every whole object (apiVersion, kind and metadata) inside the conformance vectors."""
    out: list[tuple[str, dict[str, Any]]] = []
    for path in sorted(VECTORS.glob("*.json")):
        _collect(load(path.name), path.name, out)
    return out


def all_objects() -> list[tuple[str, dict[str, Any]]]:
    return example_objects() + spec_objects() + transcript_objects()


def omit_empty(value: Any, lists: bool = False) -> Any:
    """``value`` without the keys Go's ``omitempty`` may drop or add: null, {}, false, 0 and "".
    Round-trip tests compare in this form; lists are kept exactly ([] stays []) unless
    ``lists`` is set, for inputs that leave out lists we always write."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            v = omit_empty(v, lists)
            if v is None or v is False or v == {} or v == "" or (type(v) is int and v == 0):
                continue
            if lists and v == []:
                continue
            out[k] = v
        return out
    if isinstance(value, list):
        return [omit_empty(v, lists) for v in value]
    return value
